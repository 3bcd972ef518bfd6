//! Gate (docs/design.md §4.1): requests that need no knowledge base skip retrieval.
//!
//! Without an LLM the gate recognises the *shape* of a request, in Chinese and English, rather
//! than a list of whole questions:
//!
//! - **rewrite**: an operation on text the user supplies. A request (帮我/请/把…, "can you",
//!   an imperative) plus the text it applies to (quoted, after a colon, or pointed at: 这段话,
//!   "the following"), neither part asking for knowledge. "How do you say 'X' in French" and
//!   "“X”用英语怎么说" are the same shape. A request without its text passes: "劳动合同怎么改写才合法？"
//!   asks about knowledge.
//! - **chitchat**: talk about the conversation itself — greetings, thanks, farewells, wishes,
//!   acknowledgements, compliments, questions about the assistant, asking for company — and
//!   requests for entertainment (a joke, a poem). It decides only short utterances made wholly of
//!   such talk, so a knowledge question is never swallowed.

use crate::base::contract::{GateKind, Route};

/// Classifies `question`; `None` when it may need knowledge.
pub fn classify(question: &str) -> Option<GateKind> {
    let lower = skillrag_text::folded_lower(question.trim());
    if lower.is_empty() {
        return None;
    }
    if operates_on_supplied_text(&lower) {
        return Some(GateKind::Rewrite);
    }
    if is_chitchat(&lower) {
        return Some(GateKind::Chitchat);
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Rewrite: an operation on supplied text.

/// Requests in Chinese: the speaker asks the assistant to do something. (请问 asks a question.)
const REQUEST_ZH: &[&str] =
    &["帮我", "帮忙", "麻烦", "把", "将", "给我", "替我", "能不能", "能否", "可不可以", "可以帮", "可否", "试着"];
/// English openers that make the rest a request even when it ends with "?".
const REQUEST_EN: &[&str] = &[
    "please",
    "pls",
    "kindly",
    "can you",
    "could you",
    "would you",
    "will you",
    "help me",
    "i need you to",
    "i want you to",
];
/// Words that start an English question rather than a command.
const NOT_IMPERATIVE_EN: &[&str] = &[
    "what",
    "why",
    "how",
    "where",
    "when",
    "which",
    "who",
    "whom",
    "whose",
    "is",
    "are",
    "was",
    "were",
    "am",
    "do",
    "does",
    "did",
    "can",
    "could",
    "will",
    "would",
    "should",
    "shall",
    "may",
    "might",
    "must",
    "have",
    "has",
    "had",
    "i",
    "my",
    "we",
    "our",
    "you",
    "your",
    "the",
    "a",
    "an",
    "in",
    "on",
    "at",
    "for",
    "if",
    "and",
    "or",
    "there",
    "this",
    "that",
    "it",
    "its",
    "according",
    "under",
    "error",
    "note",
    "question",
    "q",
];
/// What follows an English imperative verb: its object ("turn *this* into", "make *it* shorter").
const IMPERATIVE_OBJECTS_EN: &[&str] =
    &["this", "these", "that", "it", "the following", "the text", "the sentence", "my", "me", "them", "each", "every"];

/// Operations on text, named outright. They mark a request whose text is only pointed at
/// ("帮我润色这段话") or one without a request word ("翻译成英文：…").
const OPERATIONS_ZH: &[&str] = &[
    "润色",
    "改写",
    "重写",
    "翻译",
    "译成",
    "翻成",
    "译为",
    "缩写",
    "扩写",
    "精简",
    "简化",
    "总结",
    "概括",
    "归纳",
    "校对",
    "纠错",
    "改错",
    "改成",
    "改得",
    "改为",
    "换成",
    "换个说法",
    "换一种说法",
    "转述",
    "口语化",
    "书面化",
    "正式一点",
    "委婉",
    "通顺",
    "摘要",
    "提炼",
    "改一下",
    "修改一下",
    "断句",
    "加标点",
    "标点",
    "变成",
    "转成",
    "整理成",
    "列成",
    "排序",
];
const OPERATIONS_EN: &[&str] = &[
    "rewrite",
    "rephrase",
    "paraphrase",
    "polish",
    "proofread",
    "translate",
    "summarize",
    "summarise",
    "shorten",
    "simplify",
    "reword",
    "fix the grammar",
    "correct the grammar",
    "fix grammar",
    "make it more",
    "make this more",
    "make it sound",
    "make this sound",
    "edit this",
    "improve this",
    "tl;dr",
    "punctuate",
    "convert",
    "turn this",
    "format",
    "capitalize",
    "spell-check",
    "spellcheck",
];

/// Text pointed at, when it is not quoted or after a colon.
const TEXT_REFERENCES_ZH: &[&str] = &[
    "这段话",
    "这句话",
    "这段文字",
    "这段内容",
    "这篇",
    "这个句子",
    "这些话",
    "这几句",
    "下面",
    "以下",
    "如下",
    "下列",
    "这段",
    "这句",
    "上面这",
    "这封",
    "这条",
];
const TEXT_REFERENCES_EN: &[&str] = &[
    "this sentence",
    "this text",
    "this paragraph",
    "this passage",
    "this email",
    "this message",
    "the following",
    "below",
    "these sentences",
    "this line",
    "my text",
    "this phrase",
    "this word",
];

/// Asking for knowledge about the text, not an operation on it: "请解释以下条款：…".
const SEEKS_KNOWLEDGE_ZH: &[&str] = &[
    "解释",
    "说明",
    "分析",
    "解读",
    "意思",
    "含义",
    "依据",
    "根据",
    "合法",
    "违法",
    "有效",
    "查",
    "判断",
    "评价",
    "评估",
    "适用",
    "想知道",
    "想问",
    "请问",
    "问一下",
    "咨询",
    "了解",
    "规定",
];
const SEEKS_KNOWLEDGE_EN: &[&str] = &[
    "explain",
    "mean",
    "meaning",
    "analyze",
    "analyse",
    "interpret",
    "according",
    "legal",
    "valid",
    "look up",
    "find",
    "search",
    "cite",
    "why",
    "evidence",
    "i want to know",
];
/// About the form of the text: such a request is an operation even with "check" in it.
const TEXT_FORM: &[&str] =
    &["语法", "错别字", "标点", "语气", "措辞", "grammar", "spelling", "punctuation", "wording", "tone"];

/// Languages a phrase is said or translated in ("how do you say 'X' in French").
const LANGUAGES: &[&str] = &[
    "英语",
    "英文",
    "中文",
    "汉语",
    "日语",
    "日文",
    "法语",
    "德语",
    "韩语",
    "西班牙语",
    "俄语",
    "粤语",
    "文言文",
    "白话文",
    "english",
    "chinese",
    "french",
    "german",
    "japanese",
    "spanish",
    "korean",
    "italian",
    "russian",
    "portuguese",
    "latin",
    "mandarin",
    "cantonese",
];

/// How a request carries its text.
struct Payload<'a> {
    /// The request, without the text.
    instruction: String,
    /// The text, when it is given (quoted or after a colon).
    text: Option<&'a str>,
    quoted: bool,
}

fn operates_on_supplied_text(lower: &str) -> bool {
    let payload = payload(lower);
    if asks_how_to_say(lower, payload.as_ref()) {
        return true;
    }
    let Some(payload) = payload else { return false };
    let instruction = payload.instruction.as_str();
    let names_operation = OPERATIONS_ZH.iter().any(|w| instruction.contains(w))
        || OPERATIONS_EN.iter().any(|w| contains_words(instruction, w));
    let is_request = names_operation || is_request(instruction);
    let about_form = TEXT_FORM.iter().any(|w| instruction.contains(w));
    let seeks_knowledge = !about_form
        && (SEEKS_KNOWLEDGE_ZH.iter().any(|w| instruction.contains(w))
            || SEEKS_KNOWLEDGE_EN.iter().any(|w| contains_words(instruction, w)));
    match payload.text {
        // Text pointed at but not shown: only a named operation says what is asked.
        None => names_operation && !seeks_knowledge,
        Some(text) => {
            // An unquoted question after a colon is the question itself: "问题：试用期多久？".
            let text_is_question = !payload.quoted && is_question(text);
            is_request && !seeks_knowledge && !text_is_question && (!is_question(instruction) || names_operation)
        }
    }
}

/// The request and its text: a quoted span, the text after a colon, or a reference to text.
fn payload(lower: &str) -> Option<Payload<'_>> {
    for (open, close) in [('“', '”'), ('"', '"'), ('「', '」'), ('‘', '’'), ('『', '』'), ('\'', '\'')] {
        let Some(start) = lower.find(open) else { continue };
        let inner_start = start + open.len_utf8();
        let Some(len) = lower[inner_start..].find(close) else { continue };
        let inner = &lower[inner_start..inner_start + len];
        let end = inner_start + len + close.len_utf8();
        // An apostrophe ("don't … it's") is not a quote: a quote opens and closes between words.
        let apostrophe = open == '\''
            && (lower[..start].chars().next_back().is_some_and(char::is_alphanumeric)
                || lower[end..].chars().next().is_some_and(char::is_alphanumeric));
        if inner.chars().count() >= 2 && !apostrophe {
            let instruction = format!("{}{}", &lower[..start], &lower[end..]);
            return Some(Payload { instruction, text: Some(inner), quoted: true });
        }
    }
    if let Some(i) = lower.find(['：', ':']) {
        let colon = lower[i..].chars().next().map_or(1, char::len_utf8);
        let text = lower[i + colon..].trim();
        if text.chars().count() >= 4 {
            return Some(Payload { instruction: lower[..i].to_string(), text: Some(text), quoted: false });
        }
    }
    let references = TEXT_REFERENCES_ZH.iter().any(|w| lower.contains(w))
        || TEXT_REFERENCES_EN.iter().any(|w| contains_words(lower, w));
    references.then(|| Payload { instruction: lower.to_string(), text: None, quoted: false })
}

/// The speaker asks the assistant to do something: a request word, or an English imperative
/// (a verb first, then its object: "turn this into a list").
fn is_request(instruction: &str) -> bool {
    if instruction.contains("请问") {
        return false;
    }
    if REQUEST_ZH.iter().any(|w| instruction.contains(w)) || instruction.trim_start().starts_with('请') {
        return true;
    }
    let words: Vec<&str> =
        instruction.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
    let plain = words.join(" ");
    if REQUEST_EN.iter().any(|w| plain.starts_with(w) && contains_words(&plain, w)) {
        return true;
    }
    match words.as_slice() {
        [verb, rest @ ..] if !rest.is_empty() && verb.chars().all(|c| c.is_ascii_alphabetic()) => {
            let after = rest.join(" ");
            !NOT_IMPERATIVE_EN.contains(verb)
                && IMPERATIVE_OBJECTS_EN.iter().any(|o| after.starts_with(o) && contains_words(&after, o))
        }
        _ => false,
    }
}

/// "How do you say 'good night' in Japanese?", "“不忘初心”用英语怎么说？": a phrase in another language.
/// Quoted, the phrase may be anywhere; unquoted, the language must come right before 怎么说, or
/// after "in" at the end of "how do you say … in X".
fn asks_how_to_say(lower: &str, payload: Option<&Payload<'_>>) -> bool {
    const SAY_ZH: &[&str] = &["怎么说", "如何说", "怎么讲", "怎么表达", "如何表达", "怎么写"];
    const SAY_EN: &[&str] =
        &["how do you say", "how would you say", "how to say", "how do i say", "how can i say", "what is the word for"];
    let quoted = payload.filter(|p| p.quoted);
    let instruction = quoted.map_or(lower, |p| p.instruction.as_str());
    let says_en = SAY_EN.iter().any(|w| instruction.contains(w));
    if quoted.is_some() {
        let says = says_en || SAY_ZH.iter().any(|w| instruction.contains(w));
        return says && LANGUAGES.iter().any(|l| instruction.contains(l));
    }
    let core = lower.trim_end_matches(['?', '？', '.', '。', '!', '！', ' ', '呢', '啊', '呀']);
    let zh = LANGUAGES.iter().any(|l| {
        SAY_ZH.iter().any(|s| {
            [format!("{l}{s}"), format!("{l}里{s}"), format!("{l}中{s}")].iter().any(|p| core.ends_with(p.as_str()))
        })
    });
    let en = says_en && LANGUAGES.iter().any(|l| core.ends_with(&format!(" in {l}")));
    zh || en
}

/// Chinese question words that ask for content (吗 asks only yes or no).
const INTERROGATIVES_ZH: &[&str] = &["什么", "怎么", "为什么", "如何", "多少", "多久", "哪", "是否", "谁"];

/// A question, by its punctuation or question words.
fn is_question(text: &str) -> bool {
    let t = text.trim();
    t.ends_with(['?', '？'])
        || t.contains('吗')
        || INTERROGATIVES_ZH.iter().any(|w| t.contains(w))
        || t.split('几')
            .skip(1)
            .any(|rest| rest.starts_with(['天', '年', '月', '个', '岁', '次', '条', '种', '点', '号', '级', '倍']))
        || t.split_whitespace()
            .next()
            .is_some_and(|w| ["what", "why", "how", "where", "when", "which", "who"].contains(&w))
}

// ---------------------------------------------------------------------------------------------
// Chitchat: talk about the conversation itself.

/// Whole segments (after trailing particles are removed) that are purely social.
const SOCIAL_ZH: &[&str] = &[
    "你好",
    "您好",
    "你们好",
    "大家好",
    "嗨",
    "哈喽",
    "哈啰",
    "喂",
    "在吗",
    "在不在",
    "在么",
    "早",
    "早安",
    "早上好",
    "上午好",
    "中午好",
    "下午好",
    "晚上好",
    "晚安",
    "谢谢",
    "谢谢你",
    "谢谢您",
    "谢",
    "谢了",
    "多谢",
    "感谢",
    "非常感谢",
    "太感谢了",
    "辛苦了",
    "再见",
    "拜拜",
    "回头见",
    "下次见",
    "明天见",
    "下周见",
    "改天见",
    "待会见",
    "一会儿见",
    "晚点见",
    "到时见",
    "下次聊",
    "改天聊",
    "先这样",
    "好久不见",
    "好的",
    "好",
    "好吧",
    "行",
    "行吧",
    "可以",
    "没问题",
    "嗯",
    "嗯嗯",
    "哦",
    "噢",
    "喔",
    "明白",
    "明白了",
    "知道了",
    "我知道了",
    "懂了",
    "收到",
    "了解",
    "对",
    "是的",
    "没错",
    "哈哈",
    "哈哈哈",
    "哈哈哈哈",
    "呵呵",
    "嘿嘿",
    "太好了",
    "太棒了",
    "真棒",
    "厉害",
    "牛",
    "有意思",
    "太有意思了",
    "真有意思",
    "好玩",
    "笑死",
    "笑死我了",
    "不客气",
    "没事",
    "没关系",
    "晕",
    "无聊",
    "好无聊",
    "加油",
    "ok",
    "okk",
];
const SOCIAL_EN: &[&str] = &[
    "hi",
    "hello",
    "hey",
    "hiya",
    "howdy",
    "yo",
    "greetings",
    "good morning",
    "good afternoon",
    "good evening",
    "good night",
    "morning",
    "thanks",
    "thank you",
    "thx",
    "ty",
    "cheers",
    "many thanks",
    "much appreciated",
    "bye",
    "goodbye",
    "bye bye",
    "later",
    "talk later",
    "ok",
    "okay",
    "k",
    "got it",
    "understood",
    "i see",
    "cool",
    "great",
    "nice",
    "awesome",
    "perfect",
    "wonderful",
    "lol",
    "haha",
    "hahaha",
    "sure",
    "yes",
    "no",
    "yep",
    "nope",
    "yeah",
    "right",
    "that's all",
    "that is all",
    "that's it",
    "you're welcome",
    "no problem",
    "how are you",
    "how are you doing",
    "how's it going",
    "what's up",
    "sup",
    "good job",
    "well done",
    "you're great",
    "nice to meet you",
    "long time no see",
    "how have you been",
    "good luck",
    "take care",
    "catch you later",
];
/// Decorations at the end of a social segment ("thanks so much", "bye for now").
const TRAILING_FILLERS_EN: &[&str] = &[
    "there",
    "so much",
    "very much",
    "a lot",
    "for now",
    "again",
    "for your help",
    "for the help",
    "for everything",
    "buddy",
    "mate",
    "friend",
    "everyone",
    "all",
    "guys",
    "skillrag",
    "bot",
    "then",
    "so",
    "too",
];
/// Particles at the end of a Chinese segment: "早上好呀" is "早上好", while "我知道了" stays whole.
const FILLERS_ZH: &[char] = &['呀', '啊', '哦', '吧', '呢', '啦', '嘛', '哈', '了', '~', '哟', '喽', '咯', '嘞', '！'];

/// Openers of a short social segment ("谢谢你的帮助", "thanks for everything").
const SOCIAL_OPENERS_ZH: &[&str] = &["谢谢", "感谢", "多谢", "你好", "您好", "再见", "拜拜", "早上好", "晚安", "哈哈"];
const SOCIAL_OPENERS_EN: &[&str] = &["thanks", "thank you", "hello", "hi", "hey", "good morning", "bye", "goodbye"];

/// Segments about the conversation itself: coming, going, saying hello, asking for company.
const CONVERSATION_ZH: &[&str] =
    &["陪我聊", "陪我说", "陪陪我", "陪我唠", "聊聊天", "聊会儿", "聊一会", "说说话", "说几句话", "唠唠嗑"];
const CONVERSATION_EN: &[&str] = &[
    "say hello",
    "say hi",
    "saying hello",
    "saying hi",
    "dropping by",
    "stopping by",
    "checking in",
    "talk to me",
    "chat with me",
    "keep me company",
    "cheer me up",
    "i'm bored",
    "i am bored",
    "i'm lonely",
    "i feel lonely",
];
/// A wish or a farewell: "周末愉快", "新年快乐", "下周见", "have a nice weekend", "see you tomorrow".
const WISH_ENDINGS_ZH: &[&str] = &["愉快", "快乐", "顺利"];
const WISH_OPENERS_EN: &[&str] =
    &["have a nice", "have a good", "have a great", "happy", "see you", "see ya", "enjoy your"];
/// The speaker's own mood: "心好累", "好烦" — said to be heard, not to look something up.
const MOODS_ZH: &[&str] =
    &["累", "烦", "难过", "伤心", "郁闷", "开心", "高兴", "无聊", "孤单", "寂寞", "心情不好", "不开心"];

/// Questions about the assistant itself.
const ABOUT_ASSISTANT_ZH: &[&str] = &[
    "你是谁",
    "你叫什么",
    "你的名字",
    "你能做什么",
    "你会做什么",
    "你能干什么",
    "你会什么",
    "你可以做什么",
    "你有什么功能",
    "你心情",
    "你好吗",
    "你开心吗",
    "你几岁",
    "你多大",
    "你是机器人",
    "你是人",
    "你在干嘛",
    "你在做什么",
    "你吃饭了吗",
    "你怎么样",
];
/// The same without 你, so only at the end of a segment, after at most two characters (four
/// after 你): "最近忙啥呢", "你今天心情怎么样", but not "劳动者能做什么".
const ABOUT_ADDRESSEE_ZH: &[&str] = &[
    "能做些什么",
    "能做什么",
    "可以做些什么",
    "心情怎么样",
    "忙啥",
    "忙什么",
    "在忙",
    "在忙什么",
    "干嘛呢",
    "干啥呢",
    "干嘛",
    "干啥",
];
const ABOUT_ASSISTANT_EN: &[&str] = &[
    "who are you",
    "what are you",
    "what can you do",
    "what do you do",
    "what's your name",
    "what is your name",
    "are you a bot",
    "are you a robot",
    "are you human",
    "are you real",
    "how old are you",
    "how do you feel",
    "how are you feeling",
    "what do you like",
    "do you like",
    "what's your favorite",
    "what is your favorite",
    "what are you up to",
    "how was your day",
];
/// The assistant's own life, at the start of a short question: "你平时喜欢听什么音乐？".
const ASSISTANT_LIFE_ZH: &[&str] = &["你喜欢", "你平时", "你最近", "你爱好", "你的爱好", "你爱"];
/// Compliments to the assistant: 你 + an intensifier + a short predicate ("你真靠谱", "你太厉害了").
const INTENSIFIERS_ZH: &[&str] = &["真是", "可真", "也太", "真", "太", "好", "很", "挺", "超"];

/// Requests for entertainment or creative writing: a verb, a count word, a creative form.
const CREATIVE_VERBS_ZH: &[&str] = &["讲", "说", "写", "来", "编", "作", "唱", "给我", "想", "出", "起草", "拟"];
const CREATIVE_FORMS_ZH: &[&str] = &[
    "笑话",
    "故事",
    "段子",
    "诗",
    "绝句",
    "律诗",
    "打油诗",
    "顺口溜",
    "祝福",
    "贺词",
    "情话",
    "对联",
    "春联",
    "歌",
    "谜语",
    "绕口令",
    "脑筋急转弯",
    "祝寿词",
    "祝酒词",
    "相声",
    "文案",
    "配文",
    "标语",
    "口号",
    "广告语",
    "开场白",
    "情书",
    "散文",
    "小说",
];
const CREATIVE_VERBS_EN: &[&str] =
    &["tell", "write", "compose", "make", "give", "sing", "share", "create", "draft", "come"];
const CREATIVE_FORMS_EN: &[&str] = &[
    "joke",
    "jokes",
    "story",
    "poem",
    "haiku",
    "limerick",
    "song",
    "riddle",
    "tongue twister",
    "caption",
    "slogan",
    "toast",
    "pun",
    "puns",
    "rhyme",
    "sonnet",
    "lullaby",
];
/// Indefinite determiners: "tell me *a* joke" is entertainment, "tell me *the* story of X" is not.
const INDEFINITE_EN: &[&str] = &["a", "an", "one", "another", "some", "two", "three", "any"];

fn is_chitchat(lower: &str) -> bool {
    let segments: Vec<&str> = lower
        .split(|c: char| {
            matches!(c, '，' | ',' | '。' | '.' | '！' | '!' | '？' | '?' | '；' | ';' | '、' | '\n' | '…' | '~' | '～')
        })
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if segments.is_empty() {
        // Only punctuation or emoji: nothing to look up.
        return lower.chars().any(|c| !c.is_alphanumeric()) && !lower.chars().any(char::is_alphanumeric);
    }
    if segments.iter().map(|s| s.chars().count()).sum::<usize>() > 40 {
        return false;
    }
    if is_creative_request(lower) {
        return true;
    }
    if segments.iter().all(|s| is_social(s) || is_about_assistant(s)) {
        return true;
    }
    // Asking for company, with the mood or news that comes with it ("最近加班多，心好累，陪我说几句话吧"):
    // chitchat as long as nothing in it is a question.
    let asks_for_company = segments
        .iter()
        .any(|s| CONVERSATION_ZH.iter().any(|w| s.contains(w)) || CONVERSATION_EN.iter().any(|w| contains_words(s, w)));
    asks_for_company && !is_question(lower)
}

fn is_creative_request(lower: &str) -> bool {
    if lower.chars().count() <= 30 && creative_request_zh(lower) {
        return true;
    }
    // English: a verb near the start, then an indefinite determiner, then a form within a few
    // words ("tell me a short joke about cats", "write a haiku").
    let words: Vec<&str> =
        lower.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
    let Some(verb) = words.iter().take(4).position(|w| CREATIVE_VERBS_EN.contains(w)) else { return false };
    let after: Vec<&str> =
        words[verb + 1..].iter().copied().filter(|w| !["me", "us", "up", "with"].contains(w)).collect();
    after.first().is_some_and(|d| INDEFINITE_EN.contains(d))
        && after.iter().skip(1).take(4).any(|w| CREATIVE_FORMS_EN.contains(w))
}

/// A verb, then a count word (一首, 个, 一段) or nothing, then a creative form soon after: "讲个笑话",
/// "写一首关于秋天的诗", "编故事". "李白写的诗有哪些" names a poem but asks about knowledge.
fn creative_request_zh(lower: &str) -> bool {
    const COUNTS: &[char] = &['一', '两', '几', '首', '个', '段', '则', '句', '篇', '副', '条', '些', '点', '支'];
    // "能给我讲个笑话吗" is a request; "李白写的诗有哪些" asks for content.
    if lower.contains("请问") || INTERROGATIVES_ZH.iter().any(|w| lower.contains(w)) {
        return false;
    }
    CREATIVE_VERBS_ZH.iter().any(|verb| {
        lower.match_indices(verb).any(|(i, _)| {
            let after = &lower[i + verb.len()..];
            let rest = after.trim_start_matches(COUNTS);
            let counted = rest.len() < after.len();
            let window: String = rest.chars().take(if counted { 14 } else { 0 }).collect();
            CREATIVE_FORMS_ZH.iter().any(|f| rest.starts_with(f) || (counted && window.contains(f)))
        })
    })
}

/// A segment of social talk: greeting, thanks, farewell, wish, acknowledgement, compliment,
/// the conversation itself, or the speaker's mood.
fn is_social(segment: &str) -> bool {
    if !segment.chars().any(char::is_alphanumeric) {
        return true; // emoji, kaomoji, punctuation
    }
    let compact: String = segment.chars().filter(|c| !c.is_whitespace()).collect();
    let zh = compact.trim_end_matches(FILLERS_ZH);
    let n = zh.chars().count();
    if SOCIAL_ZH.contains(&compact.as_str()) || (!zh.is_empty() && SOCIAL_ZH.contains(&zh)) {
        return true;
    }
    if SOCIAL_OPENERS_ZH.iter().any(|p| zh.starts_with(p)) && n <= 8 {
        return true;
    }
    if n <= 6 && WISH_ENDINGS_ZH.iter().any(|w| zh.ends_with(w)) && !is_question(zh) {
        return true;
    }
    if n <= 5 && MOODS_ZH.iter().any(|m| zh.ends_with(m)) && !is_question(zh) {
        return true;
    }
    if is_compliment_zh(zh) || CONVERSATION_ZH.iter().any(|w| zh.contains(w)) && n <= 10 {
        return true;
    }
    let mut en = segment.split_whitespace().collect::<Vec<_>>().join(" ");
    loop {
        if SOCIAL_EN.contains(&en.as_str()) {
            return true;
        }
        let words = en.split(' ').count();
        if SOCIAL_OPENERS_EN
            .iter()
            .any(|p| contains_words(&en, p) && en.starts_with(p) && words <= p.split(' ').count() + 3)
            || WISH_OPENERS_EN.iter().any(|p| en.starts_with(p) && words <= p.split(' ').count() + 2)
            || (words <= 8 && CONVERSATION_EN.iter().any(|w| contains_words(&en, w)))
        {
            return true;
        }
        match TRAILING_FILLERS_EN.iter().find_map(|f| en.strip_suffix(f).filter(|r| r.ends_with(' '))) {
            Some(rest) => en = rest.trim_end().to_string(),
            None => return false,
        }
    }
}

/// "你真靠谱", "你太厉害了": 你/您, an intensifier, a predicate of at most three characters.
fn is_compliment_zh(zh: &str) -> bool {
    let Some(rest) = zh.strip_prefix('你').or_else(|| zh.strip_prefix('您')) else { return false };
    INTENSIFIERS_ZH
        .iter()
        .any(|i| rest.strip_prefix(i).is_some_and(|p| (1..=3).contains(&p.chars().count()) && !is_question(p)))
}

/// A short question about the assistant: the phrase plus a few more characters or words.
fn is_about_assistant(segment: &str) -> bool {
    let compact: String = segment.chars().filter(|c| !c.is_whitespace()).collect();
    let zh = compact.trim_end_matches(FILLERS_ZH);
    let n = zh.chars().count();
    if ABOUT_ASSISTANT_ZH.iter().any(|p| zh.contains(p) && n <= p.chars().count() + 4)
        || ABOUT_ADDRESSEE_ZH.iter().any(|p| {
            let before = n.saturating_sub(p.chars().count());
            zh.ends_with(p) && (before <= 2 || (zh.starts_with(['你', '您']) && before <= 4))
        })
        || ASSISTANT_LIFE_ZH.iter().any(|p| zh.starts_with(p) && n <= 10)
    {
        return true;
    }
    let words = segment.split_whitespace().count();
    ABOUT_ASSISTANT_EN.iter().any(|p| contains_words(segment, p) && words <= p.split(' ').count() + 3)
}

/// `needle` occurs in `haystack` on word boundaries (for English phrases).
fn contains_words(haystack: &str, needle: &str) -> bool {
    haystack.match_indices(needle).any(|(i, _)| {
        let before = haystack[..i].chars().next_back();
        let after = haystack[i + needle.len()..].chars().next();
        before.is_none_or(|c| !c.is_alphanumeric()) && after.is_none_or(|c| !c.is_alphanumeric())
    })
}

/// The gate stage: the kind of a request that needs no knowledge base, `None` for a question.
/// A question for a named skill (`--skill`) is never gated: the caller asked for its knowledge.
pub fn check(question: &str, forced_skill: bool) -> Option<GateKind> {
    if forced_skill {
        None
    } else {
        classify(question)
    }
}

/// The route of a gated request: no skill, and the gate's kind as the reason.
pub fn gated_route(kind: GateKind) -> Route {
    Route { confidence: 1.0, gate: Some(kind.as_str().to_string()), ..Route::none() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::contract::Decision;

    fn kind(q: &str) -> Option<GateKind> {
        classify(q)
    }

    #[test]
    fn greetings_thanks_and_farewells() {
        for q in [
            "你好",
            "您好！",
            "早上好呀",
            "谢谢",
            "谢谢您的耐心解答",
            "再见～",
            "拜拜啦",
            "好的，我知道了",
            "嗯",
            "哈哈，真有意思",
        ] {
            assert_eq!(kind(q), Some(GateKind::Chitchat), "{q}");
        }
        for q in [
            "Hi!",
            "hello there",
            "Thanks a lot!",
            "thank you so much",
            "bye",
            "OK, got it.",
            "how are you?",
            "Thanks, that's all.",
        ] {
            assert_eq!(kind(q), Some(GateKind::Chitchat), "{q}");
        }
    }

    #[test]
    fn questions_about_the_assistant_and_creative_requests() {
        for q in [
            "你是谁？",
            "你能做什么",
            "你最近心情怎么样",
            "Who are you?",
            "What can you do?",
            "讲个故事吧",
            "写一首关于秋天的诗",
            "Tell me a joke",
        ] {
            assert_eq!(kind(q), Some(GateKind::Chitchat), "{q}");
        }
    }

    #[test]
    fn rewrite_requests_need_an_operation_and_text() {
        for q in [
            "帮我润色这段话",
            "翻译成英文：明天下午三点开会。",
            "把“这个方案不行”改得委婉一些",
            "请总结以下内容：……今天的会议讨论了三件事。",
            "Please rewrite this sentence: the meeting are tomorrow.",
            "Translate the following into French: good morning",
            "Can you polish this paragraph for me?",
        ] {
            assert_eq!(kind(q), Some(GateKind::Rewrite), "{q}");
        }
    }

    #[test]
    fn knowledge_questions_pass() {
        for q in [
            "试用期不签劳动合同违法吗？",
            "劳动合同中的竞业限制条款怎么改写才合法？",
            "如何翻译专业术语更准确？",
            "What is the incubation period of SARS-CoV-2?",
            "你好，我想问一下试用期最长多久？",
            "谢谢！另外年休假有几天？",
            "How do I summarize a cohort study's findings?",
            "Hi, how do I reset my router?",
            "你能做什么来帮助劳动者维权，公司拖欠了三个月工资",
            "你能做什么来帮助劳动者维权？",
            "What do you do if the router LED stays amber?",
        ] {
            assert_eq!(kind(q), None, "{q}");
        }
    }

    /// Shapes, not phrases: requests worded unlike any example above.
    #[test]
    fn operations_on_supplied_text_by_shape() {
        for q in [
            "帮我给这句话加上标点：今天下雨了我们改天再去吧",
            "Convert this to passive voice: The cat chased the mouse.",
            "把这句话变成疑问句：他明天来",
            "请把下列词语按拼音排序：苹果、香蕉、橙子",
            "Make this sound friendlier: Your request is denied.",
            "Can you check the spelling in this sentence: \"I recieved the pakage yesterday.\"",
            "帮我检查一下这句话有没有错别字：我门明天去公园",
            "How do you say 'good night' in Japanese?",
            "“不忘初心”用英语怎么说？",
            "谢谢用日语怎么说",
        ] {
            assert_eq!(kind(q), Some(GateKind::Rewrite), "{q}");
        }
    }

    #[test]
    fn talk_about_the_conversation_by_shape() {
        for q in [
            "今天好开心，陪我聊会儿天吧",
            "Have a nice weekend!",
            "你真贴心",
            "哈哈，你太有才了",
            "你最近在忙什么呀",
            "你喜欢吃什么？",
            "晚安，明天见",
            "新年快乐！",
            "See you tomorrow",
            "Thanks again for everything!",
            "I'm bored, talk to me",
            "Long time no see! How have you been?",
            "Can you write me a limerick about a dog?",
            "Tell me a riddle",
            "来一首关于月亮的打油诗",
            "唱首歌给我听吧",
            "编个顺口溜夸夸我们班",
            "帮我起草一段生日贺词",
        ] {
            assert_eq!(kind(q), Some(GateKind::Chitchat), "{q}");
        }
    }

    /// The same shapes around a knowledge question: asking about the text, a question after the
    /// colon, a definite "the story of", a poem named in a question.
    #[test]
    fn knowledge_questions_in_those_shapes_pass() {
        for q in [
            "请解释以下条款：用人单位可以随时解除劳动合同",
            "帮我查一下：试用期最长多久？",
            "问题：离婚后孩子抚养费怎么算？",
            "请问：加班费怎么算？",
            "我想知道：试用期可以延长吗",
            "帮我看看这个条款：甲方有权随时解除合同，合法吗？",
            "劳动合同法第十九条：试用期最长多久",
            "背景：公司拖欠工资三个月，我该怎么办",
            "把劳动合同改成无固定期限需要什么条件？",
            "写一份劳动合同需要注意什么？",
            "你知道试用期最长多久吗？",
            "你觉得公司这样做合法吗",
            "劳动者能做什么",
            "李白写的诗有哪些",
            "《诗经》中说了什么",
            "最近加班太多，好累，加班费怎么算？",
            "Error: E42 when the pump starts",
            "Tell me the story of the SARS outbreak in 2003",
            "How do you say no to overtime legally?",
            "Write the formula for the reproduction number",
            "What does the song \"Happy Birthday\" have to do with copyright?",
            "I don't know what it's for: the amber LED keeps blinking",
        ] {
            assert_eq!(kind(q), None, "{q}");
        }
    }

    #[test]
    fn a_named_skill_is_never_gated() {
        assert_eq!(check("你好", false), Some(GateKind::Chitchat));
        assert_eq!(check("你好", true), None);
        let route = gated_route(GateKind::Rewrite);
        assert_eq!((route.decision, route.gate.as_deref()), (Decision::None, Some("rewrite")));
        assert!(route.skills.is_empty());
    }

    #[test]
    fn traditional_chinese_has_the_same_shapes() {
        for q in ["謝謝你！", "你好嗎？", "你是誰？"] {
            assert_eq!(kind(q), Some(GateKind::Chitchat), "{q}");
        }
        assert_eq!(kind("翻譯成英文：明天下午三點開會。"), Some(GateKind::Rewrite));
        for q in ["勞動者辭職需要賠償違約金嗎？", "請問：加班費怎麼算？"] {
            assert_eq!(kind(q), None, "{q}");
        }
    }

    #[test]
    fn punctuation_and_empty() {
        assert_eq!(kind("？？？"), Some(GateKind::Chitchat));
        assert_eq!(kind("   "), None);
        assert_eq!(kind("🙂"), Some(GateKind::Chitchat));
    }
}
