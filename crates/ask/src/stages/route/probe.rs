//! Probing: a question analyzed once (terms, vector, term statistics over every skill) and
//! searched in the candidate skills. Routing reads the probes' evidence; the routed skill's
//! retrieval starts from its probe instead of searching again.

use super::Dispatcher;
use crate::base::evidence::{coverage, NamedIndex, TermStats};
use crate::base::question::Question;
use skillrag_core::{Hit, Mode, Query};
use skillrag_engine::{Engine, EngineError, SearchOptions};
use std::collections::{HashMap, HashSet};

/// What searching one skill's knowledge with the question found.
#[derive(Debug, Clone, Default)]
pub struct Probe {
    pub skill: String,
    pub hits: Vec<Hit>,
    /// Coverage of the question by each hit.
    pub coverages: Vec<f32>,
    /// Coverage by the best single document: the union of its retrieved chunks. An answer spread
    /// over neighbouring chunks (articles of one statute) counts; words scattered over unrelated
    /// documents do not.
    pub best_coverage: f32,
    /// Coverage by each document (union of its retrieved chunks), best first.
    pub source_coverages: Vec<(String, f32)>,
    pub best_dense: Option<f32>,
    pub dense_used: bool,
    pub dense_skipped: Option<String>,
    /// Why this skill's search was degraded (index built with another model…).
    pub notice: Option<String>,
}

impl Probe {
    pub fn new(skill: &str, hits: Vec<Hit>, question: &Question, stats: &TermStats) -> Probe {
        // Only the question's terms matter here, so each hit is asked for those alone.
        let term_sets: Vec<HashSet<&str>> = hits
            .iter()
            .map(|h| skillrag_text::terms_present(&format!("{}\n{}\n{}", h.title, h.heading, h.text), &question.terms))
            .collect();
        let coverages: Vec<f32> =
            term_sets.iter().map(|set| coverage(&question.terms, stats, |t| set.contains(t))).collect();
        let mut by_source: HashMap<&str, HashSet<&str>> = HashMap::new();
        for (hit, set) in hits.iter().zip(&term_sets) {
            by_source.entry(hit.source.as_str()).or_default().extend(set.iter().copied());
        }
        let mut source_coverages: Vec<(String, f32)> = by_source
            .iter()
            .map(|(source, set)| (source.to_string(), coverage(&question.terms, stats, |t| set.contains(t))))
            .collect();
        source_coverages.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let best_coverage = source_coverages.first().map_or(0.0, |s| s.1);
        let best_dense = hits.iter().filter_map(|h| h.scores.dense).max_by(f32::total_cmp);
        Probe {
            skill: skill.to_string(),
            hits,
            coverages,
            best_coverage,
            source_coverages,
            best_dense,
            ..Default::default()
        }
    }
}

/// A question analyzed and searched in some skills.
#[derive(Debug, Clone)]
pub struct Probed {
    pub question: Question,
    pub prepared: Query,
    pub stats: TermStats,
    pub probes: HashMap<String, Probe>,
    /// The skills it was searched in ([`Dispatcher::shortlist`]); the route chooses among them.
    pub shortlist: Vec<String>,
}

/// Every skill's open index (skills not indexed yet are left out).
fn indexes(engine: &Engine) -> Result<Vec<NamedIndex>, EngineError> {
    let mut out = Vec::new();
    for skill in engine.skills() {
        if let Some(index) = engine.index_of(&skill.id)? {
            out.push((skill.id.clone(), index));
        }
    }
    Ok(out)
}

/// Analyzes (and, when visible, embeds) `text` and searches the shortlist of `skills` with it,
/// `hits` each. `leave_out` as in [`Dispatcher::signals`].
pub fn probe(
    engine: &Engine,
    dispatcher: &Dispatcher,
    text: &str,
    skills: &[String],
    hits: usize,
    leave_out: Option<(&str, usize)>,
) -> Result<Probed, EngineError> {
    let prepared = engine.prepare_query(text, Mode::Hybrid)?;
    let question = Question::new(text, prepared.terms.clone(), prepared.vector.clone());
    let indexes = indexes(engine)?;
    let mut stats = TermStats::collect(&indexes, &question.terms)?;
    let shortlist = dispatcher.shortlist(&question, &stats, skills, leave_out);
    let shortlisted: Vec<NamedIndex> = indexes.iter().filter(|(s, _)| shortlist.contains(s)).cloned().collect();
    stats.add_phrases(&shortlisted, &question.terms)?;
    let mut probes = HashMap::new();
    for (skill, _) in &shortlisted {
        let probe = search_skill(engine, skill, &question, &prepared, &stats, hits, false)?;
        probes.insert(skill.clone(), probe);
    }
    Ok(Probed { question, prepared, stats, probes, shortlist })
}

/// Searches one skill with a prepared question. Routing probes every skill without the
/// reranker (a cross-encoder call per skill and per routing example would be the costliest
/// step); the routed skill's retrieval is reranked.
pub fn search_skill(
    engine: &Engine,
    skill: &str,
    question: &Question,
    prepared: &Query,
    stats: &TermStats,
    hits: usize,
    rerank: bool,
) -> Result<Probe, EngineError> {
    let options = SearchOptions { skills: vec![skill.to_string()], k: Some(hits), rerank, ..Default::default() };
    let result = engine.search_prepared(&question.text, prepared, &options)?;
    let mut probe = Probe::new(skill, result.hits, question, stats);
    if let Some(s) = result.skills.first() {
        probe.dense_used = s.dense_used;
        probe.dense_skipped = s.dense_skipped.clone();
        probe.notice = s.notice.clone();
    }
    Ok(probe)
}
