//! Evaluation (docs/design.md §7): scores answers to a benchmark's questions, per skill and overall.
//!
//! A benchmark folder holds `skills/` and `queries.jsonl` rows `{id, query, skill, answers,
//! gold_sources, type}` with `type` in `fact | unanswerable | out_of_scope | chitchat`. Answers
//! are the JSON contract of docs/design.md §6, so answers produced by another system (a peer
//! baseline) are scored by the same code.

mod article;
mod chart;
pub mod leave_gold_out;
mod readable;

pub use chart::svg_chart;

use serde::{Deserialize, Serialize};
use skillrag_ask::{Answer, RefusalKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One benchmark question.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct BenchRow {
    pub id: String,
    pub query: String,
    pub skill: Option<String>,
    #[serde(default)]
    pub answers: Vec<String>,
    #[serde(default)]
    pub gold_sources: Vec<String>,
    #[serde(rename = "type")]
    pub kind: String,
    /// The benchmark folder the row was read from ([`load_queries`] sets it): the readable-answer
    /// check reads the documents answers cite from its `skills/`. `None`: they are not read.
    #[serde(skip)]
    pub bench: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    #[error("{path}:{line}: {message}")]
    Parse { path: String, line: usize, message: String },
    #[error("answers file has no answer for question `{0}`")]
    Missing(String),
    #[error("--share must be more than 0 and at most 1 (the share of each skill's gold files to leave out), not {0}")]
    Share(f64),
    #[error(
        "the benchmark has no fact rows with gold_sources and a skill: leave-gold-out leaves out the files that answer fact rows, so it has nothing to leave out"
    )]
    NoGold,
}

/// Reads `queries.jsonl` of a benchmark folder.
pub fn load_queries(bench: &Path) -> Result<Vec<BenchRow>, EvalError> {
    let mut rows: Vec<BenchRow> = read_jsonl(&bench.join("queries.jsonl"))?;
    for row in &mut rows {
        row.bench = Some(bench.to_path_buf());
    }
    Ok(rows)
}

/// Reads answers (one JSON answer per line, with `id`) in any order.
pub fn load_answers(path: &Path) -> Result<Vec<Answer>, EvalError> {
    read_jsonl(path)
}

fn read_jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::Io(path.display().to_string(), e))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| EvalError::Parse {
                path: path.display().to_string(),
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// Quality metrics of a group of questions. Rates are `null` when the group has no such rows.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Metrics {
    pub questions: usize,
    pub routing_accuracy: Option<f64>,
    pub fact: usize,
    pub hit_at_1: Option<f64>,
    pub hit_at_5: Option<f64>,
    pub mrr_at_10: Option<f64>,
    /// Share of fact rows that were refused.
    pub false_refusals: Option<f64>,
    pub unanswerable: usize,
    /// Share of unanswerable rows refused as `not_found`.
    pub unanswerable_not_found: Option<f64>,
    /// Share of unanswerable rows answered anyway (not refused at all): what a user is misled by.
    #[serde(default)]
    pub unanswerable_answered: Option<f64>,
    pub out_of_scope: usize,
    /// Share of out-of-scope rows refused as `out_of_scope`.
    pub out_of_scope_rejected: Option<f64>,
    pub chitchat: usize,
    /// Share of chitchat rows handled by the gate, without retrieval.
    pub chitchat_without_retrieval: Option<f64>,
    /// Share of fact rows whose answer text contains one of the gold answer strings.
    #[serde(default)]
    pub answer_contains_gold: Option<f64>,
    /// Answers the LLM wrote, and the checked share of their sentences that their citation
    /// supports (before unsupported ones were left out); `null` without an LLM.
    #[serde(default)]
    pub llm_answers: usize,
    #[serde(default)]
    pub sentences_supported: Option<f64>,
    /// Questions where the LLM failed or nothing it wrote was supported (extractive answer given).
    #[serde(default)]
    pub llm_fallbacks: usize,
    /// Mean decode speed of the LLM, tokens/s.
    #[serde(default)]
    pub tokens_per_second: Option<f64>,
    /// Extractive answers (no LLM, or its fallback) to fact and unanswerable rows, neither
    /// refused nor gated: the answers the readable-answer check reads.
    #[serde(default)]
    pub extractive_answers: usize,
    /// Share of the extractive answers that pass the readable-answer check: no sentence is a
    /// question, no line a heading, no table lacks its separator and a row, and each prose
    /// sentence is a whole sentence of the document it cites.
    #[serde(default)]
    pub readable_answers: Option<f64>,
    /// Extractive answers that fail the readable-answer check.
    #[serde(default)]
    pub unreadable_answers: usize,
    /// Extractive answers that pass, but with sentences not checked for fragments because the
    /// document they cite could not be read as text.
    #[serde(default)]
    pub readable_unchecked: usize,
    /// Fact rows whose gold answers are article labels (第十九条, Article 19) and whose gold source
    /// is among the hits.
    #[serde(default)]
    pub gold_article_rows: usize,
    /// Share of those rows whose answer names a gold article (refusals name none).
    #[serde(default)]
    pub names_gold_article: Option<f64>,
}

/// Latency percentiles (ms) of one pipeline stage.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub p50: f64,
    pub p95: f64,
    pub mean: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub bench: String,
    pub system: String,
    pub overall: Metrics,
    pub per_skill: BTreeMap<String, Metrics>,
    pub latency_ms: BTreeMap<String, Latency>,
    /// Per-question outcome, for error analysis.
    pub rows: Vec<RowOutcome>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RowOutcome {
    pub id: String,
    pub kind: String,
    pub expected_skill: Option<String>,
    pub routed: Vec<String>,
    pub decision: String,
    pub refusal: Option<String>,
    /// 1-based rank of the first correct hit (fact rows).
    pub hit_rank: Option<usize>,
    pub route_correct: bool,
    /// For an extractive answer to a fact or unanswerable row (neither refused nor gated):
    /// whether it passes the readable-answer check; `None` for other rows. Set by [`score`].
    #[serde(default)]
    pub readable: Option<bool>,
    /// Why the answer failed the readable-answer check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// Sentences not checked for fragments: their cited document could not be read as text.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unchecked_sentences: usize,
    /// For a fact row whose gold answers are article labels and whose gold source was retrieved:
    /// whether the answer names one of them.
    #[serde(default)]
    pub names_gold_article: Option<bool>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The answer was extracted from the knowledge (no LLM, or the LLM's fallback), not refused, and
/// not the gate's reply.
fn is_extractive(answer: &Answer) -> bool {
    answer.generation.as_ref().is_none_or(|g| g.fallback.is_some())
        && answer.refusal.is_none()
        && answer.route.gate.is_none()
}

#[derive(Default)]
struct Tally {
    questions: usize,
    routed_right: usize,
    fact: usize,
    hit1: usize,
    hit5: usize,
    rr: f64,
    refused_facts: usize,
    unanswerable: usize,
    not_found: usize,
    unanswerable_answered: usize,
    oos: usize,
    oos_rejected: usize,
    chitchat: usize,
    gated: usize,
    gold_in_answer: usize,
    llm_answers: usize,
    sentences: usize,
    supported: usize,
    fallbacks: usize,
    speeds: Vec<f64>,
    extractive: usize,
    readable: usize,
    unchecked: usize,
    article_rows: usize,
    article_named: usize,
}

impl Tally {
    fn add(&mut self, row: &BenchRow, outcome: &RowOutcome, answer: &Answer) {
        self.questions += 1;
        self.routed_right += outcome.route_correct as usize;
        let refusal = answer.refusal.as_ref().map(|r| r.kind);
        match row.kind.as_str() {
            "fact" => {
                self.fact += 1;
                if let Some(r) = outcome.hit_rank {
                    self.hit1 += (r == 1) as usize;
                    self.hit5 += (r <= 5) as usize;
                    self.rr += if r <= 10 { 1.0 / r as f64 } else { 0.0 };
                }
                self.refused_facts += refusal.is_some() as usize;
                self.gold_in_answer += (refusal.is_none()
                    && row.answers.iter().any(|a| !a.is_empty() && answer.answer.contains(a.as_str())))
                    as usize;
            }
            "unanswerable" => {
                self.unanswerable += 1;
                self.not_found += (refusal == Some(RefusalKind::NotFound)) as usize;
                self.unanswerable_answered += refusal.is_none() as usize;
            }
            "out_of_scope" => {
                self.oos += 1;
                self.oos_rejected += (refusal == Some(RefusalKind::OutOfScope)) as usize;
            }
            "chitchat" => {
                self.chitchat += 1;
                self.gated += (answer.route.gate.is_some() && !answer.retrieved) as usize;
            }
            _ => {}
        }
        if let Some(g) = &answer.generation {
            if g.fallback.is_some() {
                self.fallbacks += 1;
            } else {
                self.llm_answers += 1;
                self.sentences += g.sentences;
                self.supported += g.supported;
            }
            if g.tokens_per_second > 0.0 {
                self.speeds.push(g.tokens_per_second);
            }
        }
        if let Some(readable) = outcome.readable {
            self.extractive += 1;
            self.readable += readable as usize;
            self.unchecked += (readable && outcome.unchecked_sentences > 0) as usize;
        }
        if let Some(named) = outcome.names_gold_article {
            self.article_rows += 1;
            self.article_named += named as usize;
        }
    }

    fn metrics(&self) -> Metrics {
        let rate = |a: usize, n: usize| (n > 0).then(|| a as f64 / n as f64);
        Metrics {
            questions: self.questions,
            routing_accuracy: rate(self.routed_right, self.questions),
            fact: self.fact,
            hit_at_1: rate(self.hit1, self.fact),
            hit_at_5: rate(self.hit5, self.fact),
            mrr_at_10: (self.fact > 0).then(|| self.rr / self.fact as f64),
            false_refusals: rate(self.refused_facts, self.fact),
            unanswerable: self.unanswerable,
            unanswerable_not_found: rate(self.not_found, self.unanswerable),
            unanswerable_answered: rate(self.unanswerable_answered, self.unanswerable),
            out_of_scope: self.oos,
            out_of_scope_rejected: rate(self.oos_rejected, self.oos),
            chitchat: self.chitchat,
            chitchat_without_retrieval: rate(self.gated, self.chitchat),
            answer_contains_gold: rate(self.gold_in_answer, self.fact),
            llm_answers: self.llm_answers,
            sentences_supported: rate(self.supported, self.sentences),
            llm_fallbacks: self.fallbacks,
            tokens_per_second: (!self.speeds.is_empty())
                .then(|| self.speeds.iter().sum::<f64>() / self.speeds.len() as f64),
            extractive_answers: self.extractive,
            readable_answers: rate(self.readable, self.extractive),
            unreadable_answers: self.extractive - self.readable,
            readable_unchecked: self.unchecked,
            gold_article_rows: self.article_rows,
            names_gold_article: rate(self.article_named, self.article_rows),
        }
    }
}

/// The outcome of one row: routing, the rank of the first correct hit, and whether a statute
/// answer names the gold article (the readable-answer check is [`score`]'s, which reads documents).
pub fn outcome(row: &BenchRow, answer: &Answer) -> RowOutcome {
    let routed = answer.route.skills.clone();
    let route_correct = match &row.skill {
        Some(s) => routed.first() == Some(s),
        None => routed.is_empty(),
    };
    let hit_rank = if row.kind == "fact" {
        answer
            .hits
            .iter()
            .take(10)
            .position(|h| {
                row.gold_sources.contains(&h.source) && row.answers.iter().any(|a| h.text.contains(a.as_str()))
            })
            .map(|p| p + 1)
    } else {
        None
    };
    RowOutcome {
        id: row.id.clone(),
        kind: row.kind.clone(),
        expected_skill: row.skill.clone(),
        routed,
        decision: answer.route.decision.as_str().to_string(),
        refusal: answer.refusal.as_ref().map(|r| r.kind.as_str().to_string()),
        hit_rank,
        route_correct,
        names_gold_article: article::names_gold_article(row, answer),
        ..Default::default()
    }
}

/// Scores `answers` (matched to rows by `id`, else by position).
pub fn score(bench: &str, system: &str, rows: &[BenchRow], answers: &[Answer]) -> Result<Report, EvalError> {
    let by_id: BTreeMap<&str, &Answer> = answers.iter().filter_map(|a| a.id.as_deref().map(|id| (id, a))).collect();
    let mut overall = Tally::default();
    let mut per: BTreeMap<String, Tally> = BTreeMap::new();
    let mut stages: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut outcomes = Vec::new();
    let mut documents = readable::Documents::default();
    for (i, row) in rows.iter().enumerate() {
        let answer = by_id
            .get(row.id.as_str())
            .copied()
            .or_else(|| answers.get(i).filter(|a| a.id.is_none()))
            .ok_or_else(|| EvalError::Missing(row.id.clone()))?;
        let mut o = outcome(row, answer);
        if matches!(row.kind.as_str(), "fact" | "unanswerable") && is_extractive(answer) {
            let check = readable::check(answer, row.bench.as_deref(), &mut documents);
            o.readable = Some(check.failure.is_none());
            o.unreadable = check.failure;
            o.unchecked_sentences = check.unchecked;
        }
        overall.add(row, &o, answer);
        per.entry(row.skill.clone().unwrap_or_else(|| "(none)".into())).or_default().add(row, &o, answer);
        let t = &answer.timings_ms;
        for (stage, v) in [
            ("gate", t.gate),
            ("route", t.route),
            ("retrieve", t.retrieve),
            ("generate", t.generate),
            ("total", t.total),
        ] {
            stages.entry(stage).or_default().push(v);
        }
        outcomes.push(o);
    }
    let latency_ms = stages
        .into_iter()
        .map(|(stage, mut v)| {
            v.sort_by(f64::total_cmp);
            let at = |p: f64| v.get(((v.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0);
            let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
            (stage.to_string(), Latency { p50: at(0.5), p95: at(0.95), mean })
        })
        .collect();
    Ok(Report {
        bench: bench.to_string(),
        system: system.to_string(),
        overall: overall.metrics(),
        per_skill: per.iter().map(|(k, t)| (k.clone(), t.metrics())).collect(),
        latency_ms,
        rows: outcomes,
    })
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{x:.3}"))
}

/// Reads one metric of a group.
type MetricOf = fn(&Metrics) -> Option<f64>;

const METRIC_ROWS: [(&str, MetricOf); 14] = [
    ("routing accuracy", |m| m.routing_accuracy),
    ("hit@1 (fact)", |m| m.hit_at_1),
    ("hit@5 (fact)", |m| m.hit_at_5),
    ("MRR@10 (fact)", |m| m.mrr_at_10),
    ("false refusals (fact)", |m| m.false_refusals),
    ("unanswerable → not_found", |m| m.unanswerable_not_found),
    ("unanswerable answered anyway", |m| m.unanswerable_answered),
    ("out_of_scope rejected", |m| m.out_of_scope_rejected),
    ("chitchat without retrieval", |m| m.chitchat_without_retrieval),
    ("answer contains gold (fact)", |m| m.answer_contains_gold),
    ("readable answers (extractive)", |m| m.readable_answers),
    ("statute answers name the gold article (retrieved)", |m| m.names_gold_article),
    ("answer sentences supported (LLM)", |m| m.sentences_supported),
    ("LLM tokens/s", |m| m.tokens_per_second),
];

/// The report as Markdown; with `others`, the systems side by side.
pub fn markdown(report: &Report, others: &[&Report]) -> String {
    let mut out = String::new();
    let systems: Vec<&Report> = std::iter::once(report).chain(others.iter().copied()).collect();
    out.push_str(&format!("## Evaluation on `{}` ({} questions)\n\n", report.bench, report.overall.questions));
    out.push_str("| metric | ");
    out.push_str(&systems.iter().map(|r| r.system.as_str()).collect::<Vec<_>>().join(" | "));
    out.push_str(" |\n|---|");
    out.push_str(&"---|".repeat(systems.len()));
    out.push('\n');
    for (name, get) in METRIC_ROWS {
        out.push_str(&format!("| {name} | "));
        out.push_str(&systems.iter().map(|r| pct(get(&r.overall))).collect::<Vec<_>>().join(" | "));
        out.push_str(" |\n");
    }
    out.push_str("| unreadable / extractive answers | ");
    out.push_str(
        &systems
            .iter()
            .map(|r| format!("{} / {}", r.overall.unreadable_answers, r.overall.extractive_answers))
            .collect::<Vec<_>>()
            .join(" | "),
    );
    out.push_str(" |\n");
    for stage in ["total", "route", "retrieve"] {
        out.push_str(&format!("| latency {stage} p50 / p95 (ms) | "));
        out.push_str(
            &systems
                .iter()
                .map(|r| r.latency_ms.get(stage).map_or("–".into(), |l| format!("{:.1} / {:.1}", l.p50, l.p95)))
                .collect::<Vec<_>>()
                .join(" | "),
        );
        out.push_str(" |\n");
    }
    for r in &systems {
        out.push_str(&format!("\n### Per skill: {}\n\n", r.system));
        out.push_str("| skill | questions | routing | hit@1 | hit@5 | MRR@10 | false refusals | unanswerable → not_found | out_of_scope rejected | chitchat gated | answer contains gold | readable | unreadable | names gold article |\n");
        out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (skill, m) in &r.per_skill {
            out.push_str(&format!(
                "| {skill} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                m.questions,
                pct(m.routing_accuracy),
                pct(m.hit_at_1),
                pct(m.hit_at_5),
                pct(m.mrr_at_10),
                pct(m.false_refusals),
                pct(m.unanswerable_not_found),
                pct(m.out_of_scope_rejected),
                pct(m.chitchat_without_retrieval),
                pct(m.answer_contains_gold),
                pct(m.readable_answers),
                m.unreadable_answers,
                pct(m.names_gold_article)
            ));
        }
    }
    for r in &systems {
        unreadable_section(&mut out, r);
    }
    out.push_str("\n### Latency per stage (ms)\n\n| system | stage | p50 | p95 | mean |\n|---|---|---|---|---|\n");
    for r in &systems {
        for (stage, l) in &r.latency_ms {
            out.push_str(&format!("| {} | {stage} | {:.2} | {:.2} | {:.2} |\n", r.system, l.p50, l.p95, l.mean));
        }
    }
    out
}

/// Failing answers listed under "Unreadable answers".
const UNREADABLE_EXAMPLES: usize = 20;

/// The answers that fail the readable-answer check, with the reason, for one system.
fn unreadable_section(out: &mut String, r: &Report) {
    let m = &r.overall;
    if m.extractive_answers == 0 {
        return;
    }
    out.push_str(&format!("\n### Unreadable answers: {}\n\n", r.system));
    out.push_str(&format!(
        "{} of {} extractive answers fail the readable-answer check (no question, heading alone, table header alone or fragment)",
        m.unreadable_answers, m.extractive_answers
    ));
    if m.readable_unchecked > 0 {
        out.push_str(&format!("; {} passing ones cite documents that could not be read as text", m.readable_unchecked));
    }
    out.push_str(".\n");
    let failing: Vec<&RowOutcome> = r.rows.iter().filter(|o| o.readable == Some(false)).collect();
    if !failing.is_empty() {
        out.push('\n');
    }
    for o in failing.iter().take(UNREADABLE_EXAMPLES) {
        let skill = o.expected_skill.as_deref().unwrap_or("(none)");
        out.push_str(&format!("- `{}` ({skill}): {}\n", o.id, o.unreadable.as_deref().unwrap_or("")));
    }
    if failing.len() > UNREADABLE_EXAMPLES {
        out.push_str(&format!("- … and {} more (see `rows` in report.json)\n", failing.len() - UNREADABLE_EXAMPLES));
    }
}

#[cfg(test)]
mod tests;
