//! Gate (docs/design.md §4.1): requests that need no knowledge base skip retrieval.
//!
//! Two kinds, in Chinese and English: *chitchat* (greetings, thanks, farewells,
//! acknowledgements, laughter, questions about the assistant itself, requests for jokes, poems,
//! wishes) and *rewrite* (an operation — polish, rewrite, translate, summarize — applied to text
//! the user supplies). A rewrite needs both the operation and the text: "劳动合同怎么改写才合法？"
//! asks about knowledge and passes the gate.
//!
//! Without an LLM this is a lexicon of conversational forms; it decides only whole short
//! utterances (or explicit text operations), so a knowledge question is never swallowed.

use crate::contract::Route;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateKind {
    Chitchat,
    Rewrite,
}

impl GateKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GateKind::Chitchat => "chitchat",
            GateKind::Rewrite => "rewrite",
        }
    }
}

/// Whole utterances (after fillers are removed) that are purely social.
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
    "多谢",
    "感谢",
    "非常感谢",
    "太感谢了",
    "辛苦了",
    "再见",
    "拜拜",
    "回头见",
    "下次见",
    "下次聊",
    "改天聊",
    "先这样",
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
    "你真棒",
    "你好厉害",
    "你好聪明",
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
    "see you",
    "see ya",
    "see you later",
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
];

/// Words that may decorate a social utterance without changing it.
const FILLERS_ZH: &[char] = &['呀', '啊', '哦', '吧', '呢', '啦', '嘛', '哈', '了', '~', '哟', '喽', '咯', '嘞'];
const FILLERS_EN: &[&str] = &[
    "there",
    "so much",
    "very much",
    "a lot",
    "for now",
    "again",
    "for your help",
    "for the help",
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
];

/// Openers of a short social utterance ("谢谢你的帮助", "thanks for everything").
const SOCIAL_OPENERS_ZH: &[&str] = &["谢谢", "感谢", "多谢", "你好", "您好", "再见", "拜拜", "早上好", "晚安", "哈哈"];
const SOCIAL_OPENERS_EN: &[&str] = &["thanks", "thank you", "hello", "hi", "hey", "good morning", "bye", "goodbye"];

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
    "能做些什么",
    "能做什么",
    "可以做些什么",
    "你有什么功能",
    "你心情",
    "心情怎么样",
    "你好吗",
    "你开心吗",
    "你几岁",
    "你多大",
    "你是机器人",
    "你是人",
    "你喜欢什么",
    "你在干嘛",
    "你在做什么",
    "你吃饭了吗",
    "你怎么样",
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
];

/// Requests for entertainment or creative writing.
const CREATIVE_VERBS_ZH: &[&str] = &["讲", "说", "写", "来", "编", "作", "唱", "给我"];
const CREATIVE_OBJECTS_ZH: &[&str] = &[
    "笑话",
    "故事",
    "段子",
    "诗",
    "祝福",
    "贺词",
    "情话",
    "对联",
    "歌",
    "谜语",
    "绕口令",
    "脑筋急转弯",
    "土味情话",
    "祝寿词",
];
const CREATIVE_EN: &[&str] = &[
    "tell me a joke",
    "tell me a story",
    "tell a joke",
    "write a poem",
    "write me a poem",
    "write a haiku",
    "write a song",
    "sing a song",
    "sing me",
    "write a birthday",
    "make me laugh",
    "tell me something funny",
    "a riddle",
];

/// Operations on supplied text.
const REWRITE_ZH: &[&str] = &[
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
];
const REWRITE_EN: &[&str] = &[
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
];

/// References to text the user supplies with the request.
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
    "this:",
    "these sentences",
    "this line",
    "my text",
    "this paragraph:",
];

/// Classifies `question`; `None` when it may need knowledge.
pub fn classify(question: &str) -> Option<GateKind> {
    let lower = question.trim().to_lowercase();
    if lower.is_empty() {
        return None;
    }
    if is_rewrite(&lower) {
        return Some(GateKind::Rewrite);
    }
    if is_chitchat(&lower) {
        return Some(GateKind::Chitchat);
    }
    None
}

fn is_rewrite(lower: &str) -> bool {
    let has_operation =
        REWRITE_ZH.iter().any(|w| lower.contains(w)) || REWRITE_EN.iter().any(|w| contains_words(lower, w));
    if !has_operation {
        return false;
    }
    let references_text = TEXT_REFERENCES_ZH.iter().any(|w| lower.contains(w))
        || TEXT_REFERENCES_EN.iter().any(|w| contains_words(lower, w));
    references_text || has_quoted_payload(lower) || has_colon_payload(lower)
}

/// A quoted span of some length: the text to operate on.
fn has_quoted_payload(lower: &str) -> bool {
    [('“', '”'), ('"', '"'), ('「', '」'), ('‘', '’'), ('\'', '\''), ('『', '』')].iter().any(|&(open, close)| {
        lower.find(open).is_some_and(|start| {
            let rest = &lower[start + open.len_utf8()..];
            rest.find(close).is_some_and(|end| rest[..end].chars().count() >= 2)
        })
    })
}

/// An instruction, a colon, then the text: "翻译成英文：今天天气很好".
fn has_colon_payload(lower: &str) -> bool {
    lower.find(['：', ':']).is_some_and(|i| {
        let c = lower[i..].chars().next().map_or(1, char::len_utf8);
        lower[i + c..].trim().chars().count() >= 4
    })
}

fn is_chitchat(lower: &str) -> bool {
    let segments: Vec<&str> = lower
        .split(|c: char| {
            matches!(c, '，' | ',' | '。' | '.' | '！' | '!' | '？' | '?' | '；' | ';' | '、' | '\n' | '…' | '~' | '～')
        })
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let total_chars: usize = segments.iter().map(|s| s.chars().count()).sum();
    if segments.is_empty() {
        // Only punctuation or emoji: nothing to look up.
        return lower.chars().any(|c| !c.is_alphanumeric()) && !lower.chars().any(char::is_alphanumeric);
    }
    if total_chars > 40 {
        return false;
    }
    if is_creative_request(lower) {
        return true;
    }
    segments.iter().all(|s| is_social_segment(s) || is_about_assistant(s))
}

fn is_creative_request(lower: &str) -> bool {
    if CREATIVE_EN.iter().any(|p| lower.contains(p)) {
        return true;
    }
    let chars = lower.chars().count();
    chars <= 24
        && CREATIVE_VERBS_ZH.iter().any(|v| lower.contains(v))
        && CREATIVE_OBJECTS_ZH.iter().any(|o| lower.contains(o))
}

fn is_social_segment(segment: &str) -> bool {
    if !segment.chars().any(char::is_alphanumeric) {
        return true; // emoji, kaomoji, punctuation
    }
    let compact: String = segment.chars().filter(|c| !c.is_whitespace()).collect();
    // Particles only at the end: "早上好呀" → "早上好", while "我知道了" stays whole.
    let zh = compact.trim_end_matches(FILLERS_ZH).to_string();
    if SOCIAL_ZH.contains(&compact.as_str()) || (!zh.is_empty() && SOCIAL_ZH.contains(&zh.as_str())) {
        return true;
    }
    if SOCIAL_OPENERS_ZH.iter().any(|p| zh.starts_with(p)) && zh.chars().count() <= 8 {
        return true;
    }
    let plain = segment.split_whitespace().collect::<Vec<_>>().join(" ");
    if SOCIAL_EN.contains(&plain.as_str()) {
        return true;
    }
    let mut en = format!(" {plain} ");
    for filler in FILLERS_EN {
        en = en.replace(&format!(" {filler} "), " ");
    }
    let en = en.trim();
    if en.is_empty() {
        return !segment.trim().is_empty() && !segment.chars().any(char::is_alphanumeric);
    }
    if SOCIAL_EN.contains(&en) {
        return true;
    }
    let words = en.split_whitespace().count();
    SOCIAL_OPENERS_EN.iter().any(|p| en.starts_with(p) && words <= p.split(' ').count() + 3)
        && !en.contains(['?', '？'])
}

/// A short question about the assistant: the phrase plus at most a few more characters or words.
fn is_about_assistant(segment: &str) -> bool {
    let compact: String = segment.chars().filter(|c| !c.is_whitespace()).collect();
    let zh = compact.trim_end_matches(FILLERS_ZH);
    let n = zh.chars().count();
    if ABOUT_ASSISTANT_ZH.iter().any(|p| zh.contains(p) && n <= p.chars().count() + 4) {
        return true;
    }
    let words = segment.split_whitespace().count();
    ABOUT_ASSISTANT_EN.iter().any(|p| contains_words(segment, p) && words <= p.split(' ').count() + 2)
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
    use crate::contract::Decision;

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

    #[test]
    fn a_named_skill_is_never_gated() {
        assert_eq!(check("你好", false), Some(GateKind::Chitchat));
        assert_eq!(check("你好", true), None);
        let route = gated_route(GateKind::Rewrite);
        assert_eq!((route.decision, route.gate.as_deref()), (Decision::None, Some("rewrite")));
        assert!(route.skills.is_empty());
    }

    #[test]
    fn punctuation_and_empty() {
        assert_eq!(kind("？？？"), Some(GateKind::Chitchat));
        assert_eq!(kind("   "), None);
        assert_eq!(kind("🙂"), Some(GateKind::Chitchat));
    }
}
