//! The answer written by an LLM (docs/design.md §4.8): prompt → model → citation check.
//!
//! The model sees the skill's instructions and boundary, the compiled context labelled `[n]`
//! and the question, and is told to answer only from the context and to cite. What it writes is
//! then checked sentence by sentence, in code: citations that point at no passage are removed,
//! and so are placeholder markers that name none (the prompt's `[n]` copied as is, `[citation]`,
//! `【n】`: small models copy them), a sentence left with no citation being checked as uncited;
//! each sentence must be supported by the passage it cites (lexically: most of its terms, and
//! every number, occur there) or by some passage, which is then cited; unsupported sentences are
//! left out and reported. Sentences reach the caller's stream only after their check, so
//! nothing unsupported is ever shown, even while streaming. An answer with no supported
//! sentence, or an LLM failure, falls back to the extractive answer with a notice.

use crate::base::contract::{Citation, Context, GenerationInfo};
use crate::base::prompt::NOT_FOUND_SENTINEL;
use crate::base::settings::GenerateSettings;
use skillrag_core::Language;
use skillrag_generate::{ChatRequest, Generator, Message};
use skillrag_skill::Skill;
use std::collections::HashSet;

/// Receives verified answer text as it is ready.
pub type OnText<'a> = &'a mut dyn FnMut(&str);

/// The model's answer after the check.
pub struct Written {
    pub text: String,
    pub citations: Vec<Citation>,
    pub info: GenerationInfo,
    /// The model said the context does not answer the question.
    pub judged_not_found: bool,
}

/// Why the model's answer cannot be used, with what is known of its attempt.
pub struct Fallback {
    pub reason: String,
    pub info: GenerationInfo,
}

/// The chat messages for one question.
pub fn prompt(skill: &Skill, context: &Context, question: &str, language: Language, judge: bool) -> Vec<Message> {
    let zh = language == Language::Chinese;
    let mut system = if zh {
        format!(
            "你是「{}」知识助手：{}\n只根据下面的【资料】回答，不要使用资料以外的知识。\
             只回答所问的问题，不要介绍其他内容。每句话后面用 [n] 标注它依据的资料编号。回答简洁，使用中文。",
            skill.name, skill.description
        )
    } else {
        format!(
            "You are the knowledge assistant for \"{}\": {}\nAnswer only from the numbered \
             [context] below, never from other knowledge. Answer only what is asked, nothing about \
             other topics. End every sentence with the [n] of the passage it comes from. Be brief. \
             Answer in English.",
            skill.name, skill.description
        )
    };
    if judge {
        system.push_str(&if zh {
            format!("\n如果资料中没有答案，只回答 {NOT_FOUND_SENTINEL}。")
        } else {
            format!("\nIf the context does not contain the answer, reply only {NOT_FOUND_SENTINEL}.")
        });
    }
    if let Some(instructions) = skill.instructions.as_deref().filter(|i| !i.trim().is_empty()) {
        system.push_str(if zh { "\n\n【技能说明】\n" } else { "\n\n[skill instructions]\n" });
        system.push_str(instructions.trim());
    }
    if let Some(boundary) = &skill.boundary {
        if !boundary.not_supported.is_empty() {
            system.push_str(if zh { "\n\n【不支持】" } else { "\n\n[does not support] " });
            system.push_str(&boundary.not_supported.join(if zh { "；" } else { "; " }));
        }
    }
    let context_text = crate::stages::compile::render(context);
    let user = if zh {
        format!("【资料】\n{context_text}\n\n【问题】{question}")
    } else {
        format!("[context]\n{context_text}\n\n[question] {question}")
    };
    vec![Message::system(system), Message::user(user)]
}

/// The reply to a gated request (small talk, or an operation on text the user supplies) with the
/// LLM, without retrieval. Nothing from a knowledge base is involved, so there is nothing to
/// cite or check; the system prompt keeps the model from answering knowledge questions here.
pub fn reply_without_retrieval(
    generator: &dyn Generator,
    kind: crate::base::contract::GateKind,
    text: &str,
    skills: &[(String, String)],
    settings: &GenerateSettings,
    language: Language,
    on_text: Option<OnText<'_>>,
) -> Result<(String, GenerationInfo), Box<Fallback>> {
    let list = skills.iter().map(|(id, d)| format!("{id}: {d}")).collect::<Vec<_>>().join("\n");
    let system = match (kind, language == Language::Chinese) {
        (crate::base::contract::GateKind::Chitchat, true) => format!(
            "你是知识助手 skillrag，可以回答这些技能范围内的问题：\n{list}\n请用一两句话礼貌地回应用户的寒暄，\
             不要回答任何知识性问题。"
        ),
        (crate::base::contract::GateKind::Chitchat, false) => format!(
            "You are skillrag, a knowledge assistant for these skills:\n{list}\nReply to the user's small \
             talk politely in one or two sentences. Do not answer knowledge questions here."
        ),
        (crate::base::contract::GateKind::Rewrite, true) => {
            "按用户的要求处理用户给出的文字（润色、改写、翻译、缩写等），只输出结果，不要添加原文没有的事实。"
                .to_string()
        }
        (crate::base::contract::GateKind::Rewrite, false) => "Do what the user asks with the text they give (polish, \
            rewrite, translate, shorten…). Output only the result; add no facts the text does not contain."
            .to_string(),
    };
    let mut info = GenerationInfo { model: generator.describe(), ..Default::default() };
    let request = ChatRequest {
        messages: vec![Message::system(system), Message::user(text)],
        max_tokens: settings.max_tokens,
        temperature: settings.temperature,
        stop: Vec::new(),
    };
    let mut on_text = on_text;
    let result = generator.generate(&request, &mut |piece| {
        if let Some(f) = on_text.as_mut() {
            f(piece);
        }
    });
    match result {
        Ok(g) => {
            info.record(&g);
            let reply = g.text.trim().to_string();
            if reply.is_empty() {
                return Err(Box::new(Fallback { reason: "the model's reply was empty".into(), info }));
            }
            Ok((reply, info))
        }
        Err(e) => Err(Box::new(Fallback { reason: e.to_string(), info })),
    }
}

/// Runs the model and checks its answer. `Err` says why the extractive answer is given instead.
pub fn write(
    generator: &dyn Generator,
    messages: Vec<Message>,
    context: &Context,
    settings: &GenerateSettings,
    language: Language,
    on_text: Option<OnText<'_>>,
) -> Result<Written, Box<Fallback>> {
    let mut info = GenerationInfo { model: generator.describe(), ..Default::default() };
    let mut checker = Checker::new(context, settings.min_support, language);
    // With a self-check to come, nothing may be shown before it.
    let (mut on_text, mut held) = match settings.self_check {
        true => (None, on_text),
        false => (on_text, None),
    };
    let request =
        ChatRequest { messages, max_tokens: settings.max_tokens, temperature: settings.temperature, stop: Vec::new() };
    let mut buffer = String::new();
    // Hold back the first characters until it is clear the answer is not the sentinel.
    let result = generator.generate(&request, &mut |piece| {
        buffer.push_str(piece);
        if settings.judge && NOT_FOUND_SENTINEL.starts_with(buffer.trim()) {
            return;
        }
        for sentence in take_complete(&mut buffer) {
            checker.check_and_show(&sentence, &mut on_text);
        }
    });
    let generation = match result {
        Ok(g) => g,
        Err(e) => {
            info.raw = checker.raw.clone() + &buffer;
            return Err(Box::new(Fallback { reason: e.to_string(), info }));
        }
    };
    info.record(&generation);
    if settings.judge && generation.text.trim().trim_end_matches(['.', '。']) == NOT_FOUND_SENTINEL {
        return Ok(Written { text: String::new(), citations: vec![], info, judged_not_found: true });
    }
    let rest = std::mem::take(&mut buffer);
    let mut last = split_sentences(&rest);
    if generation.finish == skillrag_generate::FinishReason::Length {
        // Cut off by max_tokens: the last sentence is unfinished.
        last.pop();
    }
    for sentence in last {
        checker.check_and_show(&sentence, &mut on_text);
    }
    if settings.self_check && checker.supported > 0 {
        info.self_checked = Some(checker.self_check(generator, context, language, &mut info));
        if let Some(f) = held.as_mut().filter(|_| !checker.text.trim().is_empty()) {
            f(&checker.text);
        }
    }
    info.sentences = checker.sentences;
    info.supported = checker.supported;
    info.unsupported = checker.unsupported.clone();
    info.removed_citations = checker.removed.clone();
    info.removed_placeholders = checker.removed_placeholders.clone();
    if checker.text.trim().is_empty() {
        let reason = crate::base::messages::nothing_supported(language);
        return Err(Box::new(Fallback { reason: reason.to_string(), info }));
    }
    let citations = checker
        .cited
        .iter()
        .filter_map(|n| context.pieces.iter().find(|p| p.n == *n))
        .enumerate()
        .map(|(i, p)| Citation { n: i + 1, ..p.citation() })
        .collect();
    Ok(Written { text: checker.text.trim().to_string(), citations, info, judged_not_found: false })
}

impl GenerationInfo {
    /// Takes the model's counts, speed and raw text from a finished generation.
    fn record(&mut self, g: &skillrag_generate::Generation) {
        self.prompt_tokens = g.prompt_tokens;
        self.completion_tokens = g.completion_tokens;
        self.first_token_ms = g.first_token.as_secs_f64() * 1000.0;
        self.tokens_per_second = g.tokens_per_second();
        self.raw = g.text.clone();
    }
}

/// A context passage as the check sees it.
struct Passage {
    n: usize,
    /// `skill/source`, as the prompt labels it.
    label: String,
    terms: HashSet<String>,
    numbers: HashSet<String>,
}

/// A list item's text without its number or bullet ("2. ", "- ").
fn list_item_body(claim: &str) -> &str {
    let digits = claim.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &claim[digits..];
    let rest = if digits > 0 { rest.strip_prefix(['.', ')', '、']).unwrap_or(claim) } else { rest };
    let rest = rest.strip_prefix(['-', '*', '•']).unwrap_or(rest);
    rest.trim_start()
}

/// Checks sentences one at a time and builds the shown answer.
struct Checker {
    passages: Vec<Passage>,
    min_support: f32,
    language: Language,
    text: String,
    raw: String,
    cited: Vec<usize>,
    sentences: usize,
    supported: usize,
    unsupported: Vec<String>,
    removed: Vec<usize>,
    removed_placeholders: Vec<String>,
    /// What was shown, in order, to rebuild the text when the self-check rejects a sentence.
    shown: Vec<Shown>,
}

/// One shown sentence.
struct Shown {
    claim: String,
    cited: Vec<usize>,
    new_line: bool,
    /// It states something (it counted among `sentences`), so the self-check judges it.
    checked: bool,
}

impl Checker {
    fn new(context: &Context, min_support: f32, language: Language) -> Checker {
        let passages = context
            .pieces
            .iter()
            .map(|p| Passage {
                n: p.n,
                label: format!("{}/{}", p.skill, p.source),
                terms: skillrag_text::analyze(&p.text).into_iter().collect(),
                numbers: numbers(&p.text).into_iter().collect(),
            })
            .collect();
        Checker {
            passages,
            min_support,
            language,
            text: String::new(),
            raw: String::new(),
            cited: Vec::new(),
            sentences: 0,
            supported: 0,
            unsupported: Vec::new(),
            removed: Vec::new(),
            removed_placeholders: Vec::new(),
            shown: Vec::new(),
        }
    }

    /// Checks a sentence and hands it to the stream when it may be shown.
    fn check_and_show(&mut self, sentence: &str, on_text: &mut Option<OnText<'_>>) {
        if let (Some(text), Some(f)) = (self.check(sentence), on_text.as_mut()) {
            f(&text);
        }
    }

    /// The sentence as it may be shown (with its citations), or `None` when it is left out.
    fn check(&mut self, sentence: &str) -> Option<String> {
        self.raw.push_str(sentence);
        let new_line = sentence.starts_with('\n');
        let (claim, markers, placeholders) = split_markers(sentence);
        // A placeholder cites nothing: it is dropped, and a sentence with no other citation is
        // checked as an uncited one (it gets the passage that supports it, or is left out).
        for p in placeholders {
            if !self.removed_placeholders.contains(&p) {
                self.removed_placeholders.push(p);
            }
        }
        // The model echoing a passage's label line ("skill/source › heading") states nothing;
        // what follows it on other lines (often the passage copied) is checked as usual.
        let claim: String = match self.passages.iter().any(|p| claim.contains(&p.label)) {
            true => claim
                .lines()
                .filter(|line| !self.passages.iter().any(|p| line.contains(&p.label)))
                .collect::<Vec<_>>()
                .join(" "),
            false => claim,
        };
        let claim = claim.trim();
        // "2. " numbering a list item is not a number the passage must contain.
        let body = list_item_body(claim);
        if claim.is_empty() {
            return None;
        }
        let mut cited: Vec<usize> = Vec::new();
        for n in markers {
            if self.passages.iter().any(|p| p.n == n) {
                if !cited.contains(&n) {
                    cited.push(n);
                }
            } else if !self.removed.contains(&n) {
                self.removed.push(n);
            }
        }
        let terms: Vec<String> = content_terms(body);
        // A connective ("Yes.", "如下：") states nothing to check.
        if terms.len() < 2 && !body.chars().any(|c| c.is_ascii_digit()) {
            self.shown.push(Shown { claim: claim.to_string(), cited: cited.clone(), new_line, checked: false });
            return self.show(claim, &cited, new_line);
        }
        self.sentences += 1;
        let supported_by = |passage: &Passage| self.support(body, &terms, passage);
        let mut ok = cited
            .iter()
            .filter_map(|n| self.passages.iter().find(|p| p.n == *n))
            .any(|p| supported_by(p) >= self.min_support);
        if !ok {
            // Uncited or miscited: cite the passage that does support it, if one does.
            let best = self.passages.iter().map(|p| (supported_by(p), p.n)).max_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((score, n)) = best.filter(|b| b.0 >= self.min_support) {
                let _ = score;
                cited = vec![n];
                ok = true;
            }
        }
        if !ok {
            self.unsupported.push(claim.to_string());
            return None;
        }
        self.supported += 1;
        self.shown.push(Shown { claim: claim.to_string(), cited: cited.clone(), new_line, checked: true });
        self.show(claim, &cited, new_line)
    }

    /// The model's check of the sentences that passed the lexical one, one sentence and its
    /// cited passage at a time (a small model handles one yes/no question far more reliably
    /// than a numbered list). Rejected sentences are left out and reported as unsupported; a
    /// sentence whose verdict is unusable keeps the lexical verdict. Returns whether every
    /// verdict was usable.
    fn self_check(
        &mut self,
        generator: &dyn Generator,
        context: &Context,
        language: Language,
        info: &mut GenerationInfo,
    ) -> bool {
        let system = if language == Language::Chinese {
            "判断资料是否支持这个陈述。只回答 yes 或 no。"
        } else {
            "Decide whether the passage supports the statement. Answer only yes or no."
        };
        let mut all_usable = true;
        let mut rejected: Vec<usize> = Vec::new();
        for (i, claim) in self.shown.iter().enumerate().filter(|(_, s)| s.checked) {
            let passage = claim
                .cited
                .first()
                .and_then(|n| context.pieces.iter().find(|p| p.n == *n))
                .map(|p| p.text.chars().take(SELF_CHECK_PASSAGE_CHARS).collect::<String>())
                .unwrap_or_default();
            let user = if language == Language::Chinese {
                format!("资料：{passage}\n\n陈述：{}\n\n资料支持这个陈述吗？", claim.claim)
            } else {
                format!("Passage: {passage}\n\nStatement: {}\n\nDoes the passage support the statement?", claim.claim)
            };
            let request = ChatRequest {
                messages: vec![Message::system(system), Message::user(user)],
                max_tokens: 4,
                temperature: 0.0,
                stop: Vec::new(),
            };
            let verdict = generator.generate(&request, &mut |_| {}).ok().and_then(|g| {
                info.prompt_tokens += g.prompt_tokens;
                info.completion_tokens += g.completion_tokens;
                parse_verdict(&g.text)
            });
            match verdict {
                Some(false) => rejected.push(i),
                Some(true) => {}
                None => all_usable = false,
            }
        }
        if rejected.is_empty() {
            return all_usable;
        }
        let shown = std::mem::take(&mut self.shown);
        self.text.clear();
        self.cited.clear();
        for (i, s) in shown.into_iter().enumerate() {
            if rejected.contains(&i) {
                self.supported -= 1;
                self.unsupported.push(s.claim);
                continue;
            }
            self.show(&s.claim, &s.cited, s.new_line);
            self.shown.push(s);
        }
        all_usable
    }

    /// Share of the claim's terms found in the passage; 0 when a number of the claim is not there.
    fn support(&self, claim: &str, terms: &[String], passage: &Passage) -> f32 {
        if numbers(claim).iter().any(|n| !passage.numbers.contains(n)) {
            return 0.0;
        }
        if terms.is_empty() {
            return 1.0;
        }
        let found = terms.iter().filter(|t| passage.terms.contains(t.as_str())).count();
        found as f32 / terms.len() as f32
    }

    fn show(&mut self, claim: &str, cited: &[usize], new_line: bool) -> Option<String> {
        let mut piece = String::new();
        if !self.text.is_empty() {
            if new_line {
                piece.push('\n');
            } else if self.language != Language::Chinese {
                piece.push(' ');
            }
        }
        piece.push_str(claim);
        // The answer numbers its sources from [1] in the order it first cites them; each
        // citation keeps the passage's context label as `context_n`.
        for n in cited {
            if !self.cited.contains(n) {
                self.cited.push(*n);
            }
            let shown = self.cited.iter().position(|c| c == n).map_or(*n, |i| i + 1);
            piece.push_str(&format!("[{shown}]"));
        }
        self.text.push_str(&piece);
        Some(piece)
    }
}

/// Most characters of a cited passage the self-check prompt quotes.
const SELF_CHECK_PASSAGE_CHARS: usize = 500;

/// A self-check verdict: the reply's first word, yes or no (in English or Chinese); `None` when
/// it is neither.
fn parse_verdict(reply: &str) -> Option<bool> {
    let reply = reply.trim().trim_start_matches(['"', '\'', '`', '*', '[']).to_lowercase();
    let first: String = reply.chars().take_while(char::is_ascii_alphabetic).collect();
    match first.as_str() {
        "yes" | "true" => Some(true),
        "no" | "not" | "false" => Some(false),
        _ if reply.starts_with("不支持") || reply.starts_with("否") || reply.starts_with("不") => Some(false),
        _ if reply.starts_with("支持") || reply.starts_with("是") => Some(true),
        _ => None,
    }
}

/// The sentence without its citation markers, the passage numbers those markers carry, and the
/// placeholder markers (`[n]`, `【n】`, `[citation]`…) that carry none, as written.
fn split_markers(sentence: &str) -> (String, Vec<usize>, Vec<String>) {
    let mut text = String::new();
    let mut markers = Vec::new();
    let mut placeholders = Vec::new();
    let mut rest = sentence;
    let mut after_marker = false;
    while let Some(c) = rest.chars().next() {
        let before = if after_marker { None } else { text.chars().next_back() };
        if let Some((len, marker)) = answer_marker(rest, before) {
            after_marker = true;
            match marker {
                Marker::Cites(numbers) => markers.extend(numbers),
                Marker::Placeholder => placeholders.push(rest[..len].to_string()),
            }
            rest = &rest[len..];
            // "China [n] is" would leave two spaces.
            if text.ends_with(' ') {
                rest = rest.trim_start_matches(' ');
            }
            continue;
        }
        after_marker = false;
        text.push(c);
        rest = &rest[c.len_utf8()..];
    }
    // "foo [1]." leaves "foo ." — close the gap.
    let text = text.replace(" .", ".").replace(" ,", ",").replace(" 。", "。");
    (text, markers, placeholders)
}

/// What a bracketed marker in the model's answer says.
#[derive(Debug, PartialEq)]
enum Marker {
    /// The passage numbers it names: `[2]`, `【2】`, `[passage 2]`, `[1, 2]`, `[1-3]`.
    Cites(Vec<usize>),
    /// It names no passage: the prompt's `[n]` copied as is, `[x]`, `[citation]`, `【来源】`…
    /// Small models copy such markers from the instruction "end every sentence with the [n]".
    Placeholder,
}

/// Brackets a marker may come in: the prompt's, and the full-width ones Chinese text uses.
const MARKER_BRACKETS: [(char, char); 3] = [('[', ']'), ('【', '】'), ('［', '］')];
/// Most characters inside a marker's brackets; a longer bracketed text is text.
const MARKER_MAX_CHARS: usize = 24;
/// Most passages one range marker (`[1-3]`) may name; a wider range names nothing.
const MARKER_MAX_RANGE: usize = 10;
/// Words that name a passage in a marker before its number: `[passage 2]`, `[资料2]`.
const MARKER_WORDS: [&str; 24] = [
    "passage",
    "passages",
    "source",
    "sources",
    "context",
    "ref",
    "reference",
    "references",
    "citation",
    "citations",
    "cite",
    "doc",
    "document",
    "number",
    "num",
    "question",
    "资料",
    "资料编号",
    "来源",
    "引用",
    "文档",
    "段落",
    "编号",
    "出处",
];
/// Bracketed words that stand for a citation and name no passage. The prompt's nouns alone
/// ("根据【资料】，", "the [context] says") are the model's prose, not markers, and stay.
const MARKER_PLACEHOLDERS: [&str; 17] = [
    "citation",
    "citations",
    "cite",
    "citation needed",
    "source",
    "sources",
    "ref",
    "reference",
    "references",
    "number",
    "num",
    "来源",
    "引用",
    "出处",
    "编号",
    "资料编号",
    "序号",
];

/// The byte length and meaning of the citation marker at the start of `s`, if there is one.
/// `before` is the character just before it: right after a Latin letter, digit or underscore the
/// only placeholder is the prompt's own `[n]`, since `a[i]` or `arr[]` is code.
fn answer_marker(s: &str, before: Option<char>) -> Option<(usize, Marker)> {
    let first = s.chars().next()?;
    let &(open, close) = MARKER_BRACKETS.iter().find(|(o, _)| *o == first)?;
    let inner_start = open.len_utf8();
    let inner_len =
        s[inner_start..].find(|c: char| c == close || c == '\n' || MARKER_BRACKETS.iter().any(|b| b.0 == c))?;
    if !s[inner_start + inner_len..].starts_with(close) {
        return None;
    }
    let inner = &s[inner_start..inner_start + inner_len];
    if inner.chars().count() > MARKER_MAX_CHARS {
        return None;
    }
    let len = inner_start + inner_len + close.len_utf8();
    // Full-width digits ("【２】") are the same numbers.
    let inner: String = inner
        .trim()
        .chars()
        .map(|c| match c {
            '０'..='９' => char::from_u32(c as u32 - '０' as u32 + '0' as u32).unwrap_or(c),
            _ => c,
        })
        .collect();
    let marker = read_marker(&inner)?;
    let after_word = before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let code_like = after_word && marker == Marker::Placeholder && !inner.eq_ignore_ascii_case("n");
    (!code_like).then_some((len, marker))
}

/// What the text inside a marker's brackets (trimmed) says; `None` when it is text, not a marker.
fn read_marker(inner: &str) -> Option<Marker> {
    let lower = inner.to_lowercase();
    // One letter ("n", "N", "x"), or nothing but signs ("", "#", "?", "…").
    if lower.chars().count() == 1 && lower.chars().all(|c| c.is_ascii_alphabetic())
        || lower.chars().all(|c| !c.is_alphanumeric())
    {
        return Some(Marker::Placeholder);
    }
    if MARKER_PLACEHOLDERS.contains(&lower.as_str()) {
        return Some(Marker::Placeholder);
    }
    // A naming word, then the numbers: "passage 2", "资料2", "^2", "#2".
    let mut rest = lower.trim_start_matches(['^', '#', ' ']);
    if let Some(word) = MARKER_WORDS.iter().filter(|w| rest.starts_with(*w)).max_by_key(|w| w.len()) {
        rest = rest[word.len()..].trim_start_matches([' ', ':', '：', '.', '#']);
    }
    let mut numbers = Vec::new();
    for item in rest.split([',', '，', '、', ';', '；', ' ', '/']).filter(|i| !i.is_empty()) {
        match item.split_once(['-', '–', '—', '~', '～', '至']) {
            Some((from, to)) => {
                let (from, to): (usize, usize) = (from.trim().parse().ok()?, to.trim().parse().ok()?);
                if to < from || to - from >= MARKER_MAX_RANGE {
                    return Some(Marker::Placeholder);
                }
                numbers.extend(from..=to);
            }
            None => numbers.push(item.parse().ok()?),
        }
    }
    (!numbers.is_empty()).then_some(Marker::Cites(numbers))
}

/// Whether `s` starts a marker that has not arrived whole yet ("[1", "【", "[numb"), so the
/// stream must wait for the rest before cutting the sentence before it.
fn partial_marker(s: &str) -> bool {
    let Some(first) = s.chars().next() else { return false };
    MARKER_BRACKETS.iter().any(|&(open, close)| {
        first == open && !s.contains(close) && !s.contains('\n') && s.chars().count() <= MARKER_MAX_CHARS + 1
    })
}

/// The terms of a sentence that carry content: the project analyzer's, without one-character
/// Latin tokens and common function words.
fn content_terms(text: &str) -> Vec<String> {
    const FUNCTION_WORDS: [&str; 40] = [
        "the", "a", "an", "is", "are", "was", "were", "be", "to", "of", "and", "or", "in", "on", "for", "with", "by",
        "it", "this", "that", "as", "at", "can", "you", "your", "not", "no", "if", "from", "的", "了", "是", "在",
        "和", "与", "或", "也", "就", "都", "而",
    ];
    let mut seen = HashSet::new();
    skillrag_text::analyze(text)
        .into_iter()
        .filter(|t| !FUNCTION_WORDS.contains(&t.as_str()))
        .filter(|t| t.chars().count() > 1 || !t.is_ascii())
        .filter(|t| t.chars().any(char::is_alphanumeric))
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

/// Numbers written in the sentence (digits, with decimal points): each must occur in the passage.
fn numbers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '.' && !current.is_empty()) {
            current.push(c);
        } else if !current.is_empty() {
            let n = current.trim_end_matches('.').to_string();
            if !n.is_empty() {
                out.push(n);
            }
            current.clear();
        }
    }
    out
}

/// The sentences of `text`, each with the citation markers that follow it.
fn split_sentences(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut previous_end = 0;
    for (offset, s) in skillrag_chunk::sentences(text) {
        // A sentence that starts a new line (a list item) keeps its line break.
        let new_line = text.get(previous_end..offset).is_some_and(|gap| gap.contains('\n'));
        previous_end = offset + s.len();
        // Markers that open a sentence belong to the one before ("… 12 days. [1] Next").
        let mut rest = s;
        let mut lead = String::new();
        loop {
            let trimmed = rest.trim_start();
            match answer_marker(trimmed, None) {
                Some((len, _)) => {
                    lead.push_str(&trimmed[..len]);
                    rest = &trimmed[len..];
                }
                None => break,
            }
        }
        match out.last_mut() {
            Some(last) if !lead.is_empty() => last.push_str(&lead),
            _ => rest = s,
        }
        if !rest.trim().is_empty() {
            out.push(if new_line { format!("\n{rest}") } else { rest.to_string() });
        }
    }
    out
}

/// Takes the sentences of `buffer` that are certainly complete — another sentence with text has
/// begun after them, so no more citation markers can follow — leaving the rest in `buffer`.
fn take_complete(buffer: &mut String) -> Vec<String> {
    let Some(&(offset, last)) = skillrag_chunk::sentences(buffer).last() else { return Vec::new() };
    // Skip the markers (and spaces) that open the last sentence: they belong to the one before.
    let mut rest = last;
    loop {
        let trimmed = rest.trim_start();
        match answer_marker(trimmed, None) {
            Some((len, _)) => rest = &trimmed[len..],
            None => {
                rest = trimmed;
                break;
            }
        }
    }
    // A marker still arriving ("[1", "【") is not text yet.
    if offset == 0 || rest.is_empty() || partial_marker(rest) {
        return Vec::new();
    }
    // The line break before the last sentence stays with it (a list item keeps its line).
    let cut = offset + (last.len() - rest.len());
    let cut = buffer[..cut].trim_end().len();
    let done: String = buffer.drain(..cut).collect();
    split_sentences(&done)
}

#[cfg(test)]
mod tests;
