use super::*;
use skillrag_ask::{Decision, Refusal};
use skillrag_core::{DocType, Hit, HitRanks, HitScores, Tier};

fn row(id: &str, kind: &str, skill: Option<&str>) -> BenchRow {
    BenchRow {
        id: id.into(),
        query: "q".into(),
        skill: skill.map(str::to_string),
        answers: vec!["第十条".into()],
        gold_sources: vec!["knowledge/a.md".into()],
        kind: kind.into(),
    }
}

fn answer(id: &str, skills: &[&str], hits: &[(&str, &str)], refusal: Option<RefusalKind>, gate: bool) -> Answer {
    let mut answer = Answer::new(Some(id.into()), "q".into());
    answer.route.skills = skills.iter().map(|s| s.to_string()).collect();
    answer.route.confidence = 0.9;
    answer.route.decision = if skills.is_empty() { Decision::None } else { Decision::Single };
    answer.route.gate = gate.then(|| "chitchat".to_string());
    answer.retrieved = !gate && !skills.is_empty();
    answer.attempts = 1;
    answer.hits = hits
        .iter()
        .map(|(source, text)| Hit {
            skill: "law".into(),
            source: source.to_string(),
            heading: String::new(),
            ordinal: 0,
            text: text.to_string(),
            scores: HitScores::default(),
            ranks: HitRanks::default(),
            chunk_id: 0,
            title: String::new(),
            span: (0, 1),
            doc_type: DocType::General,
            tier: Tier::References,
            pages: None,
            summary: None,
        })
        .collect();
    answer.refusal = refusal.map(|kind| Refusal { kind, message: String::new() });
    answer
}

#[test]
fn scores_every_metric() {
    let rows = vec![
        row("1", "fact", Some("law")),
        row("2", "fact", Some("law")),
        row("3", "unanswerable", Some("law")),
        row("4", "out_of_scope", None),
        row("5", "chitchat", None),
    ];
    let answers = vec![
        answer("2", &["law"], &[("knowledge/b.md", "第十条"), ("knowledge/a.md", "…第十条…")], None, false),
        answer("1", &["law"], &[("knowledge/a.md", "第十条 建立劳动关系")], None, false),
        answer("3", &["law"], &[], Some(RefusalKind::NotFound), false),
        answer("4", &["law"], &[], Some(RefusalKind::NotFound), false),
        answer("5", &[], &[], None, true),
    ];
    let report = score("dev", "skillrag", &rows, &answers).unwrap();
    let m = &report.overall;
    assert_eq!(m.routing_accuracy, Some(0.8));
    assert_eq!((m.hit_at_1, m.hit_at_5), (Some(0.5), Some(1.0)));
    assert_eq!(m.mrr_at_10, Some(0.75));
    assert_eq!(m.false_refusals, Some(0.0));
    assert_eq!(m.unanswerable_not_found, Some(1.0));
    assert_eq!(m.out_of_scope_rejected, Some(0.0));
    assert_eq!(m.chitchat_without_retrieval, Some(1.0));
    assert_eq!(report.per_skill["law"].questions, 3);
    let md = markdown(&report, &[]);
    assert!(md.contains("| hit@5 (fact) | 1.000 |"), "{md}");
    assert!(svg_chart(&report).starts_with("<svg"));
    assert!(matches!(score("dev", "x", &rows, &answers[..2]), Err(EvalError::Missing(_))));
}
