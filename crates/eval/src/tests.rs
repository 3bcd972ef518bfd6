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
        bench: None,
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
    assert_eq!(m.unanswerable_answered, Some(0.0));
    assert_eq!(m.out_of_scope_rejected, Some(0.0));
    assert_eq!(m.chitchat_without_retrieval, Some(1.0));
    assert_eq!(report.per_skill["law"].questions, 3);
    let md = markdown(&report, &[]);
    assert!(md.contains("| hit@5 (fact) | 1.000 |"), "{md}");
    assert!(svg_chart(&report).starts_with("<svg"));
    assert!(matches!(score("dev", "x", &rows, &answers[..2]), Err(EvalError::Missing(_))));
}

#[test]
fn scores_readable_answers_and_named_articles_per_skill() {
    let bench = std::env::temp_dir().join(format!("skillrag-eval-score-{}", std::process::id()));
    let knowledge = bench.join("skills/law/knowledge");
    std::fs::create_dir_all(&knowledge).unwrap();
    std::fs::write(knowledge.join("a.md"), "# 第二章\n\n第十条 建立劳动关系，应当订立书面劳动合同。\n").unwrap();
    let mut rows = vec![
        row("1", "fact", Some("law")),
        row("2", "fact", Some("law")),
        row("3", "unanswerable", Some("law")),
        row("4", "fact", Some("law")),
    ];
    for r in &mut rows {
        r.bench = Some(bench.clone());
    }
    rows[3].answers = vec!["书面劳动合同".into()];
    let cite = |mut a: Answer, text: &str| {
        a.answer = text.into();
        a.citations = vec![skillrag_ask::Citation {
            n: 1,
            context_n: 1,
            skill: "law".into(),
            source: "knowledge/a.md".into(),
            heading: String::new(),
            pages: None,
            image: None,
            label: None,
        }];
        a
    };
    let hits = [("knowledge/a.md", "第十条 建立劳动关系")];
    let answers = vec![
        cite(answer("1", &["law"], &hits, None, false), "第十条 建立劳动关系，应当订立书面劳动合同。[1]"),
        cite(answer("2", &["law"], &hits, None, false), "应当订立书面劳动合同。[1]"),
        cite(answer("3", &["law"], &hits, None, false), "## 第二章[1]"),
        cite(answer("4", &["law"], &hits, None, false), "第十条 建立劳动关系，应当订立书面劳动合同。[1]"),
    ];
    let report = score("dev", "skillrag", &rows, &answers).unwrap();
    let _ = std::fs::remove_dir_all(&bench);
    let m = &report.overall;
    assert_eq!((m.extractive_answers, m.unreadable_answers, m.readable_unchecked), (4, 2, 0));
    assert_eq!(m.readable_answers, Some(0.5));
    // Rows 1 and 2 ask for 第十条 and retrieved its source; row 2's answer does not name it.
    assert_eq!((m.gold_article_rows, m.names_gold_article), (2, Some(0.5)));
    assert_eq!(report.per_skill["law"].readable_answers, Some(0.5));
    assert_eq!(
        report.rows[1].unreadable.as_deref(),
        Some("fragment: «应当订立书面劳动合同。» starts mid-sentence in knowledge/a.md")
    );
    let md = markdown(&report, &[]);
    assert!(md.contains("| readable answers (extractive) | 0.500 |"), "{md}");
    assert!(md.contains("| statute answers name the gold article (retrieved) | 0.500 |"), "{md}");
    assert!(md.contains("| unreadable / extractive answers | 2 / 4 |"), "{md}");
    assert!(md.contains("| law | 4 |") && md.contains("| 0.500 | 2 | 0.500 |"), "{md}");
    assert!(md.contains("### Unreadable answers: skillrag"), "{md}");
    assert!(md.contains("- `3` (law): heading: «## 第二章»"), "{md}");

    // Without the benchmark folder, fragments are not checked; refusals and the LLM's own answers
    // are not read.
    for r in &mut rows {
        r.bench = None;
    }
    let mut answers = answers;
    answers[0].refusal = Some(Refusal { kind: RefusalKind::NotFound, message: String::new() });
    answers[3].generation = Some(skillrag_ask::GenerationInfo::default());
    let report = score("dev", "skillrag", &rows, &answers).unwrap();
    let m = &report.overall;
    assert_eq!((m.extractive_answers, m.unreadable_answers, m.readable_unchecked), (2, 1, 1));
    assert_eq!(m.names_gold_article, Some(0.0), "a refusal names no article");
    let none = score("dev", "x", &rows[2..3], &answers[2..3]).unwrap();
    assert_eq!(none.overall.names_gold_article, None);
    assert!(markdown(&none, &[]).contains("| statute answers name the gold article (retrieved) | – |"));
}
