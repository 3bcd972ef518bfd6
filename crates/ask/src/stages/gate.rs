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
//!
//! The words each rule looks for are data, in `base/lexicon/{zh,en}.toml` (read by `lexicon`).

use crate::base::contract::{GateKind, Route};
use crate::base::lexicon;
use skillrag_core::question::{has_interrogative_zh, is_question};

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
    let (zh, en) = (&lexicon::zh().gate, &lexicon::en().gate);
    let names_operation = any_in(&zh.operations, instruction) || any_words_in(&en.operations, instruction);
    let is_request = names_operation || is_request(instruction);
    let about_form = any_in(&zh.text_form, instruction) || any_in(&en.text_form, instruction);
    let seeks_knowledge =
        !about_form && (any_in(&zh.seeks_knowledge, instruction) || any_words_in(&en.seeks_knowledge, instruction));
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
    let references =
        any_in(&lexicon::zh().gate.text_references, lower) || any_words_in(&lexicon::en().gate.text_references, lower);
    references.then(|| Payload { instruction: lower.to_string(), text: None, quoted: false })
}

/// The speaker asks the assistant to do something: a request word, or an English imperative
/// (a verb first, then its object: "turn this into a list").
fn is_request(instruction: &str) -> bool {
    if instruction.contains("请问") {
        return false;
    }
    let (zh, en) = (&lexicon::zh().gate, &lexicon::en().gate);
    if any_in(&zh.request, instruction) || instruction.trim_start().starts_with('请') {
        return true;
    }
    let words: Vec<&str> =
        instruction.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
    let plain = words.join(" ");
    if en.request.iter().any(|w| plain.starts_with(w.as_str()) && contains_words(&plain, w)) {
        return true;
    }
    match words.as_slice() {
        [verb, rest @ ..] if !rest.is_empty() && verb.chars().all(|c| c.is_ascii_alphabetic()) => {
            let after = rest.join(" ");
            !is_one_of(&en.not_imperative, verb)
                && en.imperative_objects.iter().any(|o| after.starts_with(o.as_str()) && contains_words(&after, o))
        }
        _ => false,
    }
}

/// "How do you say 'good night' in Japanese?", "“不忘初心”用英语怎么说？": a phrase in another language.
/// Quoted, the phrase may be anywhere; unquoted, the language must come right before 怎么说, or
/// after "in" at the end of "how do you say … in X".
fn asks_how_to_say(lower: &str, payload: Option<&Payload<'_>>) -> bool {
    let (zh, en) = (&lexicon::zh().gate, &lexicon::en().gate);
    // Either language's name counts in either phrasing ("english怎么说"), Chinese names first.
    let languages = || zh.languages.iter().chain(&en.languages);
    let quoted = payload.filter(|p| p.quoted);
    let instruction = quoted.map_or(lower, |p| p.instruction.as_str());
    let says_en = any_in(&en.say, instruction);
    if quoted.is_some() {
        let says = says_en || any_in(&zh.say, instruction);
        return says && languages().any(|l| instruction.contains(l.as_str()));
    }
    let core = lower.trim_end_matches(['?', '？', '.', '。', '!', '！', ' ', '呢', '啊', '呀']);
    let in_zh = languages().any(|l| {
        zh.say.iter().any(|s| {
            [format!("{l}{s}"), format!("{l}里{s}"), format!("{l}中{s}")].iter().any(|p| core.ends_with(p.as_str()))
        })
    });
    let in_en = says_en && languages().any(|l| core.ends_with(&format!(" in {l}")));
    in_zh || in_en
}

// ---------------------------------------------------------------------------------------------
// Chitchat: talk about the conversation itself.

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
    let (zh, en) = (&lexicon::zh().gate, &lexicon::en().gate);
    let asks_for_company = segments.iter().any(|s| any_in(&zh.conversation, s) || any_words_in(&en.conversation, s));
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
    let en = &lexicon::en().gate;
    let Some(verb) = words.iter().take(4).position(|w| is_one_of(&en.creative_verbs, w)) else { return false };
    let after: Vec<&str> = words[verb + 1..].iter().copied().filter(|w| !is_one_of(&en.creative_skipped, w)).collect();
    after.first().is_some_and(|d| is_one_of(&en.indefinite, d))
        && after.iter().skip(1).take(4).any(|w| is_one_of(&en.creative_forms, w))
}

/// A verb, then a count word (一首, 个, 一段) or nothing, then a creative form soon after: "讲个笑话",
/// "写一首关于秋天的诗", "编故事". "李白写的诗有哪些" names a poem but asks about knowledge.
fn creative_request_zh(lower: &str) -> bool {
    // "能给我讲个笑话吗" is a request; "李白写的诗有哪些" asks for content.
    if lower.contains("请问") || has_interrogative_zh(lower) {
        return false;
    }
    let zh = &lexicon::zh().gate;
    zh.creative_verbs.iter().any(|verb| {
        lower.match_indices(verb.as_str()).any(|(i, _)| {
            let after = &lower[i + verb.len()..];
            let rest = after.trim_start_matches(zh.counts.as_slice());
            let counted = rest.len() < after.len();
            let window: String = rest.chars().take(if counted { 14 } else { 0 }).collect();
            zh.creative_forms.iter().any(|f| rest.starts_with(f.as_str()) || (counted && window.contains(f.as_str())))
        })
    })
}

/// A segment of social talk: greeting, thanks, farewell, wish, acknowledgement, compliment,
/// the conversation itself, or the speaker's mood.
fn is_social(segment: &str) -> bool {
    if !segment.chars().any(char::is_alphanumeric) {
        return true; // emoji, kaomoji, punctuation
    }
    let (lex_zh, lex_en) = (&lexicon::zh().gate, &lexicon::en().gate);
    let compact: String = segment.chars().filter(|c| !c.is_whitespace()).collect();
    let zh = compact.trim_end_matches(lex_zh.fillers.as_slice());
    let n = zh.chars().count();
    if is_one_of(&lex_zh.social, &compact) || (!zh.is_empty() && is_one_of(&lex_zh.social, zh)) {
        return true;
    }
    if lex_zh.social_openers.iter().any(|p| zh.starts_with(p.as_str())) && n <= 8 {
        return true;
    }
    if n <= 6 && lex_zh.wish_endings.iter().any(|w| zh.ends_with(w.as_str())) && !is_question(zh) {
        return true;
    }
    if n <= 5 && lex_zh.moods.iter().any(|m| zh.ends_with(m.as_str())) && !is_question(zh) {
        return true;
    }
    if is_compliment_zh(zh) || any_in(&lex_zh.conversation, zh) && n <= 10 {
        return true;
    }
    let mut en = segment.split_whitespace().collect::<Vec<_>>().join(" ");
    loop {
        if is_one_of(&lex_en.social, &en) {
            return true;
        }
        let words = en.split(' ').count();
        if lex_en
            .social_openers
            .iter()
            .any(|p| contains_words(&en, p) && en.starts_with(p.as_str()) && words <= p.split(' ').count() + 3)
            || lex_en.wish_openers.iter().any(|p| en.starts_with(p.as_str()) && words <= p.split(' ').count() + 2)
            || (words <= 8 && any_words_in(&lex_en.conversation, &en))
        {
            return true;
        }
        // The first filler that ends the segment, in the list's order.
        match lex_en.trailing_fillers.iter().find_map(|f| en.strip_suffix(f.as_str()).filter(|r| r.ends_with(' '))) {
            Some(rest) => en = rest.trim_end().to_string(),
            None => return false,
        }
    }
}

/// "你真靠谱", "你太厉害了": 你/您, an intensifier, a predicate of at most three characters.
fn is_compliment_zh(zh: &str) -> bool {
    let Some(rest) = zh.strip_prefix('你').or_else(|| zh.strip_prefix('您')) else { return false };
    lexicon::zh()
        .gate
        .intensifiers
        .iter()
        .any(|i| rest.strip_prefix(i.as_str()).is_some_and(|p| (1..=3).contains(&p.chars().count()) && !is_question(p)))
}

/// A short question about the assistant: the phrase plus a few more characters or words.
fn is_about_assistant(segment: &str) -> bool {
    let (lex_zh, lex_en) = (&lexicon::zh().gate, &lexicon::en().gate);
    let compact: String = segment.chars().filter(|c| !c.is_whitespace()).collect();
    let zh = compact.trim_end_matches(lex_zh.fillers.as_slice());
    let n = zh.chars().count();
    if lex_zh.about_assistant.iter().any(|p| zh.contains(p.as_str()) && n <= p.chars().count() + 4)
        || lex_zh.about_addressee.iter().any(|p| {
            let before = n.saturating_sub(p.chars().count());
            zh.ends_with(p.as_str()) && (before <= 2 || (zh.starts_with(['你', '您']) && before <= 4))
        })
        || lex_zh.assistant_life.iter().any(|p| zh.starts_with(p.as_str()) && n <= 10)
    {
        return true;
    }
    let words = segment.split_whitespace().count();
    lex_en.about_assistant.iter().any(|p| contains_words(segment, p) && words <= p.split(' ').count() + 3)
}

/// Any of `words` occurs in `text`.
fn any_in(words: &[String], text: &str) -> bool {
    words.iter().any(|w| text.contains(w.as_str()))
}

/// Any of `words` occurs in `text` on word boundaries (for English phrases).
fn any_words_in(words: &[String], text: &str) -> bool {
    words.iter().any(|w| contains_words(text, w))
}

/// `word` is one of `words`, whole.
fn is_one_of(words: &[String], word: &str) -> bool {
    words.iter().any(|w| w == word)
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
/// With a named skill (`--skill`) only small talk is gated ("hi there" is no question for any
/// knowledge); a text operation goes to the skill, whose knowledge the caller asked for.
pub fn check(question: &str, forced_skill: bool) -> Option<GateKind> {
    classify(question).filter(|kind| !forced_skill || *kind == GateKind::Chitchat)
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
    fn a_named_skill_gates_only_small_talk() {
        assert_eq!(check("你好", false), Some(GateKind::Chitchat));
        assert_eq!(check("hi there", true), Some(GateKind::Chitchat));
        assert_eq!(check("帮我润色这段话：我们明天开会。", false), Some(GateKind::Rewrite));
        assert_eq!(check("帮我润色这段话：我们明天开会。", true), None);
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
