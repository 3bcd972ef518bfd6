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
