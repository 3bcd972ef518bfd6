use super::*;
use crate::base::contract::ContextPiece;
use skillrag_generate::{FinishReason, GenerateError, Generation, OnPiece};
use std::time::Duration;

/// A model that "writes" a fixed text in small pieces (the checker's input), or fails.
struct Scripted(Result<&'static str, &'static str>);

impl Generator for Scripted {
    fn describe(&self) -> String {
        "scripted".into()
    }
    fn generate(&self, _: &ChatRequest, on_piece: OnPiece<'_>) -> Result<Generation, GenerateError> {
        let text = self.0.map_err(|e| GenerateError::Inference(e.into()))?;
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(3) {
            on_piece(&piece.iter().collect::<String>());
        }
        Ok(Generation {
            text: text.into(),
            finish: FinishReason::Stop,
            prompt_tokens: 10,
            completion_tokens: 5,
            first_token: Duration::from_millis(5),
            elapsed: Duration::from_millis(50),
        })
    }
}

fn context() -> Context {
    let piece = |n: usize, text: &str| ContextPiece {
        n,
        tier: "references".into(),
        skill: "s".into(),
        source: format!("doc{n}.md"),
        heading: "H".into(),
        chunk_id: n as u64,
        text: text.into(),
        pages: None,
        summary: None,
    };
    Context {
        pieces: vec![
            piece(1, "The probation period may not exceed six months for contracts of three years or more."),
            piece(2, "Annual leave is 5 days after one year of service and 10 days after ten years."),
        ],
        ..Default::default()
    }
}

fn settings() -> GenerateSettings {
    GenerateSettings { max_tokens: 100, temperature: 0.0, judge: true, min_support: 0.5, self_check: false }
}

fn run(model: &'static str) -> (Result<Written, Box<Fallback>>, String) {
    let mut streamed = String::new();
    let result = write(
        &Scripted(Ok(model)),
        vec![],
        &context(),
        &settings(),
        Language::Other,
        Some(&mut |t| streamed.push_str(t)),
    );
    (result, streamed)
}

#[test]
fn supported_sentences_keep_their_citations_and_stream_in_order() {
    let (result, streamed) =
        run("The probation period may not exceed six months [1]. Annual leave is 10 days after ten years [2].");
    let w = result.ok().unwrap();
    assert_eq!(
        w.text,
        "The probation period may not exceed six months.[1] Annual leave is 10 days after ten years.[2]"
    );
    assert_eq!(streamed, w.text, "the stream shows exactly the checked answer");
    assert_eq!(w.citations.iter().map(|c| c.n).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!((w.info.sentences, w.info.supported), (2, 2));
}

#[test]
fn unsupported_and_wrong_number_sentences_are_dropped_and_reported() {
    let (result, streamed) =
        run("Annual leave is 15 days after ten years [2]. The moon is made of cheese and rockets [1]. \
         The probation period may not exceed six months [1].");
    let w = result.ok().unwrap();
    assert_eq!(w.text, "The probation period may not exceed six months.[1]");
    assert_eq!(streamed, w.text);
    assert_eq!(w.info.unsupported.len(), 2, "{:?}", w.info.unsupported);
    assert_eq!((w.info.sentences, w.info.supported), (3, 1));
}

#[test]
fn dangling_citations_are_removed_and_uncited_claims_get_their_passage() {
    let (result, _) = run("Annual leave is 5 days after one year of service [7].");
    let w = result.ok().unwrap();
    // Context passage 2 supports it; as the answer's first source it is [1].
    assert_eq!(w.text, "Annual leave is 5 days after one year of service.[1]");
    assert_eq!(w.info.removed_citations, vec![7]);
    assert_eq!((w.citations[0].n, w.citations[0].context_n), (1, 2));
}

#[test]
fn nothing_supported_falls_back_and_not_found_is_a_judgement() {
    let (result, streamed) = run("Bananas are yellow fruits from tropical places [1].");
    let fallback = result.err().unwrap();
    assert!(fallback.reason.contains("no sentence"), "{}", fallback.reason);
    assert!(streamed.is_empty(), "nothing unsupported was shown");
    assert_eq!(fallback.info.unsupported.len(), 1);
    let (result, streamed) = run("NOT_FOUND");
    assert!(result.ok().unwrap().judged_not_found);
    assert!(streamed.is_empty(), "the sentinel is never shown");
}

#[test]
fn model_errors_become_a_fallback_reason() {
    let result = write(&Scripted(Err("server down")), vec![], &context(), &settings(), Language::Other, None);
    let reason = result.err().unwrap().reason;
    assert!(reason.contains("server down"), "{reason}");
}

#[test]
fn list_items_keep_their_lines() {
    let (result, _) = run("Leave is:\n1. 5 days after one year of service [2].\n2. 10 days after ten years [2].");
    assert_eq!(
        result.ok().unwrap().text,
        "Leave is:\n1. 5 days after one year of service.[1]\n2. 10 days after ten years.[1]"
    );
}

#[test]
fn streaming_cuts_only_complete_sentences() {
    let mut buffer = "First sentence here. [1".to_string();
    assert!(take_complete(&mut buffer).is_empty(), "a marker may still be arriving");
    buffer.push_str("] Second one");
    assert_eq!(take_complete(&mut buffer), vec!["First sentence here.[1]"]);
    assert_eq!(buffer, " Second one");
    let mut chinese = "试用期最长六个月。[1]年假".to_string();
    assert_eq!(take_complete(&mut chinese), vec!["试用期最长六个月。[1]"]);
    assert_eq!(chinese, "年假");
}

#[test]
fn prompt_carries_instructions_boundary_context_and_the_sentinel() {
    let skill = Skill {
        name: "labor".into(),
        description: "Labor law".into(),
        instructions: Some("Quote the article.".into()),
        boundary: Some(skillrag_skill::Boundary {
            text: String::new(),
            supports: vec![],
            not_supported: vec!["tax questions".into()],
        }),
        ..test_skill()
    };
    let messages = prompt(&skill, &context(), "How long is probation?", Language::Other, true);
    let system = &messages[0].content;
    assert!(system.contains("Quote the article.") && system.contains("tax questions") && system.contains("NOT_FOUND"));
    assert!(
        messages[1].content.contains("[1] s/doc1.md › H") && messages[1].content.contains("How long is probation?")
    );
    let zh = prompt(&skill, &context(), "试用期多长？", Language::Chinese, false);
    assert!(zh[0].content.contains("只根据") && !zh[0].content.contains("NOT_FOUND"));
}

fn test_skill() -> Skill {
    skillrag_skill::parse_skill_text(std::path::Path::new("/x/t"), "t", "---\nname: t\ndescription: d\n---\n# T\n")
        .skill
        .unwrap()
}

/// A model that gives its replies in turn (the answer, then the self-check's verdicts).
struct Replies(std::sync::Mutex<Vec<&'static str>>);

impl Generator for Replies {
    fn describe(&self) -> String {
        "replies".into()
    }
    fn generate(&self, request: &ChatRequest, on_piece: OnPiece<'_>) -> Result<Generation, GenerateError> {
        let next = self.0.lock().unwrap().remove(0);
        Scripted(Ok(next)).generate(request, on_piece)
    }
}

fn run_self_checked(answer: &'static str, verdicts: &[&'static str]) -> (Written, String, usize) {
    let mut replies = vec![answer];
    replies.extend_from_slice(verdicts);
    let model = Replies(std::sync::Mutex::new(replies));
    let mut streamed = String::new();
    let mut shown = 0;
    let settings = GenerateSettings { self_check: true, ..settings() };
    let result = write(
        &model,
        vec![],
        &context(),
        &settings,
        Language::Other,
        Some(&mut |t| {
            streamed.push_str(t);
            shown += 1;
        }),
    );
    (result.ok().unwrap(), streamed, shown)
}

const TWO_SUPPORTED: &str =
    "The probation period may not exceed six months [1]. Annual leave is 10 days after ten years [2].";

#[test]
fn the_self_check_leaves_out_what_the_model_rejects_before_anything_is_shown() {
    let (w, streamed, shown) = run_self_checked(TWO_SUPPORTED, &["Yes.", "No, it does not."]);
    assert_eq!(w.text, "The probation period may not exceed six months.[1]");
    assert_eq!(streamed, w.text, "only the self-checked answer is shown");
    assert_eq!(shown, 1, "shown whole, after the check");
    assert_eq!(w.info.self_checked, Some(true));
    assert_eq!((w.info.sentences, w.info.supported), (2, 1));
    assert_eq!(w.info.unsupported, vec!["Annual leave is 10 days after ten years.".to_string()]);
    assert_eq!(w.citations.iter().map(|c| c.n).collect::<Vec<_>>(), vec![1]);
    assert_eq!(w.info.prompt_tokens, 30, "all three calls are counted");
}

#[test]
fn an_unusable_self_check_keeps_the_lexical_verdicts() {
    for junk in [["maybe", "I think so"], ["", "[\"yes\", \"no\"]"]] {
        let (w, streamed, _) = run_self_checked(TWO_SUPPORTED, &junk);
        assert_eq!(w.info.self_checked, Some(false), "{junk:?}");
        assert_eq!(w.info.supported, 2, "{junk:?}");
        assert_eq!(streamed, w.text);
    }
}

#[test]
fn self_check_verdicts_are_read_from_the_first_word() {
    for (reply, verdict) in [
        ("Yes", Some(true)),
        ("yes, the passage says so", Some(true)),
        ("\"No\"", Some(false)),
        ("Not supported.", Some(false)),
        ("是的，支持。", Some(true)),
        ("不支持", Some(false)),
        ("否", Some(false)),
        ("The passage", None),
        ("", None),
    ] {
        assert_eq!(parse_verdict(reply), verdict, "{reply:?}");
    }
}

#[test]
fn an_echoed_label_line_is_dropped_but_the_copied_passage_is_checked() {
    let (result, streamed) =
        run("[1] s/doc1.md › H\nThe probation period may not exceed six months for contracts of three years or more.");
    let w = result.ok().unwrap();
    assert_eq!(w.text, "The probation period may not exceed six months for contracts of three years or more.[1]");
    assert_eq!(streamed, w.text);
    // A label line alone states nothing.
    let (result, _) = run("[2] s/doc2.md › H\n");
    assert!(result.is_err(), "nothing supported is left");
}

/// Passages for the answers the issue quotes from a 1.5B model ("China [n]", "John Wesley [n][1]").
fn history_context() -> Context {
    let piece = |n: usize, text: &str| ContextPiece {
        n,
        tier: "references".into(),
        skill: "h".into(),
        source: format!("h{n}.md"),
        heading: "H".into(),
        chunk_id: n as u64,
        text: text.into(),
        pages: None,
        summary: None,
    };
    Context {
        pieces: vec![
            piece(1, "Methodism was founded by John Wesley in eighteenth-century England."),
            piece(2, "The Great Wall runs across northern China for thousands of kilometres."),
            piece(3, "劳动合同期限三年以上的，试用期不得超过六个月。"),
        ],
        ..Default::default()
    }
}

/// A model that writes `text` in pieces of `size` characters, so a marker can arrive split.
struct InPieces(&'static str, usize);

impl Generator for InPieces {
    fn describe(&self) -> String {
        "in-pieces".into()
    }
    fn generate(&self, _: &ChatRequest, on_piece: OnPiece<'_>) -> Result<Generation, GenerateError> {
        let chars: Vec<char> = self.0.chars().collect();
        for piece in chars.chunks(self.1) {
            on_piece(&piece.iter().collect::<String>());
        }
        Ok(Generation {
            text: self.0.into(),
            finish: FinishReason::Stop,
            prompt_tokens: 10,
            completion_tokens: 5,
            first_token: Duration::from_millis(5),
            elapsed: Duration::from_millis(50),
        })
    }
}

/// The checked answer to `model` over the history context, the same whatever the piece size
/// of the stream, and the stream shows exactly it.
fn checked(model: &'static str) -> Result<Written, Box<Fallback>> {
    let mut first: Option<Result<Written, Box<Fallback>>> = None;
    for size in 1..=9 {
        let mut streamed = String::new();
        let result = write(
            &InPieces(model, size),
            vec![],
            &history_context(),
            &settings(),
            Language::Other,
            Some(&mut |t| streamed.push_str(t)),
        );
        match &result {
            Ok(w) => assert_eq!(streamed, w.text, "{model:?} in pieces of {size}"),
            Err(_) => assert!(streamed.is_empty(), "{model:?} in pieces of {size}: {streamed:?}"),
        }
        match &first {
            None => first = Some(result),
            Some(Ok(w)) => {
                let now = result.as_ref().ok().map(|r| r.text.as_str());
                assert_eq!(now, Some(w.text.as_str()), "{model:?} in pieces of {size}");
            }
            Some(Err(_)) => assert!(result.is_err(), "{model:?} in pieces of {size}"),
        }
    }
    first.unwrap_or_else(|| unreachable!())
}

#[test]
fn a_placeholder_marker_is_removed_and_a_real_one_beside_it_kept() {
    // The issue's own answers, as the 1.5B model wrote them.
    let w = checked("John Wesley [n][1]").ok().unwrap();
    assert_eq!(w.text, "John Wesley[1]");
    assert_eq!(w.citations.iter().map(|c| c.context_n).collect::<Vec<_>>(), vec![1]);
    assert_eq!(w.info.removed_placeholders, vec!["[n]".to_string()]);
    // One word states too little to check (a connective's rule): it stays, uncited, without
    // the placeholder.
    let w = checked("China [n]").ok().unwrap();
    assert_eq!(w.text, "China");
    assert!(w.citations.is_empty());
}

#[test]
fn a_sentence_citing_only_placeholders_is_treated_as_uncited() {
    // Supported: it gets the passage that supports it, as an uncited sentence does.
    for model in [
        "Methodism was founded by John Wesley [n].",
        "Methodism was founded by John Wesley [N].",
        "Methodism was founded by John Wesley [x].",
        "Methodism was founded by John Wesley [number].",
        "Methodism was founded by John Wesley [citation].",
        "Methodism was founded by John Wesley [source].",
        "Methodism was founded by John Wesley 【n】.",
        "Methodism was founded by John Wesley [n] [N].",
        "Methodism was founded by John Wesley. [n]",
        "Methodism was founded by John Wesley [?].",
    ] {
        let w = checked(model).ok().unwrap_or_else(|| panic!("{model}"));
        assert_eq!(w.text, "Methodism was founded by John Wesley.[1]", "{model}");
        assert!(!w.info.removed_placeholders.is_empty(), "{model}");
    }
    // Unsupported: left out, as an uncited unsupported sentence is.
    let fallback = checked("The Great Wall was built by John Wesley [n].").err().unwrap();
    assert_eq!(fallback.info.unsupported, vec!["The Great Wall was built by John Wesley.".to_string()]);
    // Chinese, with the brackets of the Chinese prompt.
    let w = checked("试用期不得超过六个月【n】。").ok().unwrap();
    assert_eq!(w.text, "试用期不得超过六个月。[1]");
    assert_eq!(w.citations[0].context_n, 3);
}

#[test]
fn markers_in_other_shapes_are_read_as_the_passages_they_name() {
    for (model, context_n) in [
        ("The Great Wall runs across northern China 【2】.", vec![2]),
        ("The Great Wall runs across northern China [passage 2].", vec![2]),
        ("The Great Wall runs across northern China [资料2].", vec![2]),
        ("The Great Wall runs across northern China [^2].", vec![2]),
        ("The Great Wall runs across northern China [1, 2].", vec![1, 2]),
        ("The Great Wall runs across northern China [1-2].", vec![1, 2]),
    ] {
        let w = checked(model).ok().unwrap_or_else(|| panic!("{model}"));
        assert_eq!(w.citations.iter().map(|c| c.context_n).collect::<Vec<_>>(), context_n, "{model}");
        assert!(w.info.removed_placeholders.is_empty(), "{model}");
        assert!(w.text.starts_with("The Great Wall runs across northern China.[1]"), "{model}: {}", w.text);
    }
    // A range past the passages: the numbers that name none are removed as dangling.
    let w = checked("The Great Wall runs across northern China [2-4].").ok().unwrap();
    assert_eq!(w.info.removed_citations, vec![4]);
}

#[test]
fn brackets_that_are_text_stay() {
    // The prompt's own noun, as the 1.5B model used it in prose, is no marker.
    let sentence = "根据【资料】，红茶的水温应控制在90-95°C之间。";
    assert_eq!(split_markers(sentence), (sentence.to_string(), vec![], vec![]));
    // Code indexing and a bracketed aside are not citation markers.
    let (claim, markers, placeholders) = split_markers("Read a[i] and items[key] [see below] first [1].");
    assert_eq!(claim, "Read a[i] and items[key] [see below] first.");
    assert_eq!(markers, vec![1]);
    assert!(placeholders.is_empty());
    // Right after a word only the prompt's own [n] is a placeholder; after a marker any is.
    let (claim, markers, placeholders) = split_markers("Wesley[n] and Wesley[1][x] and arr[] and Wesley[1, 2].");
    assert_eq!((claim.as_str(), markers), ("Wesley and Wesley and arr[] and Wesley.", vec![1, 1, 2]));
    assert_eq!(placeholders, vec!["[n]".to_string(), "[x]".to_string()]);
}

#[test]
fn a_placeholder_split_across_pieces_waits_for_its_end() {
    let mut buffer = "Methodism was founded by John Wesley. 【".to_string();
    assert!(take_complete(&mut buffer).is_empty(), "a marker may still be arriving");
    buffer.push('n');
    assert!(take_complete(&mut buffer).is_empty(), "a marker may still be arriving");
    buffer.push_str("】 China");
    assert_eq!(take_complete(&mut buffer), vec!["Methodism was founded by John Wesley.【n】"]);
    assert_eq!(buffer, " China");
    let mut buffer = "Methodism was founded by John Wesley. [number".to_string();
    assert!(take_complete(&mut buffer).is_empty(), "a marker may still be arriving");
}
