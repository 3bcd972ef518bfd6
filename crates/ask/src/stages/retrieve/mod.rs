//! Retrieve (docs/design.md §4.4–4.6): in each routed skill, the question's search (reranked when a
//! reranker is configured), widened by the LLM's wordings, retried with reformulations while the
//! evidence is weak, and as a last resort the LLM's own query; then filtered and merged.
//!
//! Evidence is always measured against the question itself, so a reformulation can find other
//! chunks but never inflate the evidence. Weak evidence after the bounded loop is decided here,
//! in code: the skill is reported weak and the question ends `not_found` (or `out_of_scope`).

mod expand;
mod retry;

use crate::base::evidence::TermStats;
use crate::base::question::Question;
use crate::base::settings::AskSettings;
use crate::error::AskError;
use crate::llm::Assist;
use crate::reader::Reader;
use crate::stages::route::{search_skill, Probe, Routed, RouterModel};
use skillrag_core::{Hit, Language, Query};
use skillrag_engine::Engine;
use skillrag_skill::Skill;

/// One routed skill and the question, as every retrieval step needs them.
#[derive(Clone, Copy)]
pub(crate) struct InSkill<'a> {
    pub engine: &'a Engine,
    pub skill: &'a Skill,
    pub question: &'a Question,
    pub prepared: &'a Query,
    pub stats: &'a TermStats,
    /// Hits each search returns.
    pub hits: usize,
}

/// The retrieve stage's hand-off to compile.
#[derive(Debug, Default)]
pub struct Retrieval {
    /// The kept chunks of every routed skill, best fused score first, at most `hits`.
    pub hits: Vec<Hit>,
    /// The most attempts any skill took.
    pub attempts: usize,
    /// Queries run, in order, without repeats: the question, the LLM's wordings, the retries.
    pub queries: Vec<String>,
    /// Why a skill's search was degraded (a reranker that failed…).
    pub warnings: Vec<String>,
    /// The evidence came from the LLM's own query (the model must judge it).
    pub rescued: bool,
    /// Routed skills whose evidence stayed weak.
    pub weak_skills: Vec<String>,
    /// Evidence below the threshold was kept, within the reader's band: only the reader's
    /// acceptance answers from it.
    pub unsure: bool,
    /// Context pieces at most (the last routed skill's `top_k` overrides the default).
    pub context_k: usize,
}

/// The LLM steps this turn may use in retrieval (`None` when off or over budget).
#[derive(Clone, Copy, Default)]
pub struct Helpers<'a> {
    /// Multi-query and HyDE.
    pub expander: Option<&'a Assist>,
    /// The rescue query.
    pub rewriter: Option<&'a Assist>,
    /// The reader, which may accept weak evidence within its band.
    pub reader: Option<&'a Reader>,
}

/// Retrieves in each of the route's skills, starting from the routing probes.
pub fn retrieve(
    engine: &Engine,
    settings: &AskSettings,
    model: &RouterModel,
    routed: &Routed,
    helpers: Helpers<'_>,
    language: Language,
) -> Result<Retrieval, AskError> {
    let probed = &routed.probed;
    let mut out = Retrieval { context_k: settings.context_k, ..Default::default() };
    let mut kept: Vec<(Hit, f32)> = Vec::new();
    let mut searched = routed.route.skills.clone();
    for skill_id in &routed.route.skills {
        let skill = engine.skill(skill_id)?;
        if let Some(k) = skill.settings.top_k {
            out.context_k = k;
        }
        // A skill's part of a multi-intent question is searched, and judged, on its own.
        let probed = routed.parts.iter().find(|p| &p.skill == skill_id).map_or(probed, |p| &p.probed);
        let at = InSkill {
            engine,
            skill,
            question: &probed.question,
            prepared: &probed.prepared,
            stats: &probed.stats,
            hits: settings.hits,
        };
        let first = probed.probes.get(skill_id).cloned();
        kept.extend(in_skill(&at, settings, model, first, helpers, language, &mut out)?);
        // The skills it uses (`metadata.uses`, one level: a used skill's own dependencies are not
        // followed, so what one route searches stays predictable), each searched for the same
        // question — from routing's probe when it has one — and filtered on its own evidence. Their
        // chunks keep their tiers and skill and compete for the same context budget. A dependency
        // with nothing on the question adds nothing and does not make the question weak; a skill
        // routed to, or used by two routed skills, is searched once. No LLM rescue query here: that
        // is for the routed skill's own weak evidence.
        for id in &skill.settings.uses {
            if searched.contains(id) {
                continue;
            }
            searched.push(id.clone());
            if engine.index_of(id)?.is_none() {
                out.warnings.push(format!("`{skill_id}` uses `{id}`, which is not indexed; answered without it"));
                continue;
            }
            let dependency = InSkill { skill: engine.skill(id)?, ..at };
            let weak = out.weak_skills.len();
            let helpers = Helpers { rewriter: None, reader: None, ..helpers };
            let first = probed.probes.get(id).cloned();
            kept.extend(in_skill(&dependency, settings, model, first, helpers, language, &mut out)?);
            out.weak_skills.truncate(weak);
        }
    }
    kept.sort_by(|a, b| b.0.scores.fused.total_cmp(&a.0.scores.fused));
    out.hits = kept.into_iter().take(settings.hits).map(|(h, _)| h).collect();
    Ok(out)
}

/// Retrieval in one skill; returns its kept chunks with their coverage, and records attempts,
/// queries and warnings in `out`.
fn in_skill(
    at: &InSkill<'_>,
    settings: &AskSettings,
    model: &RouterModel,
    mut first: Option<Probe>,
    helpers: Helpers<'_>,
    language: Language,
    out: &mut Retrieval,
) -> Result<Vec<(Hit, f32)>, AskError> {
    if !matches!(at.engine.reranker(), Ok(None)) {
        let probe = search_skill(at.engine, &at.skill.id, at.question, at.prepared, at.stats, at.hits, true)?;
        out.warnings.extend(probe.notice.clone());
        first = Some(probe);
    }
    let mut expansions = Vec::new();
    if let Some(assist) = helpers.expander {
        (first, expansions) = expand::expand(at, assist, &settings.llm, settings.retrieval.rrf_k, first, language)?;
    }
    let answerable = |probe: &Probe| model.is_answerable(probe.best_coverage);
    let max_attempts = settings.lexical_attempts(helpers.rewriter.is_some());
    let retried = retry::retry(at, first, max_attempts, &answerable)?;
    out.attempts = out.attempts.max(retried.attempts);
    // The question first, then the LLM's wordings searched with it, then the retries.
    let (question_run, retries) = retried.queries.split_at(retried.queries.len().min(1));
    for q in question_run.iter().chain(&expansions).chain(retries) {
        if !out.queries.contains(q) {
            out.queries.push(q.clone());
        }
    }
    if retried.strong {
        return Ok(retry::filter(&retried.probe, model.evidence));
    }
    // Weak evidence the reader may still accept (CRAG's "ambiguous" band): kept, and marked so
    // that only the reader's acceptance answers from it.
    if let Some(reader) = helpers.reader {
        if !retried.probe.hits.is_empty() && retried.probe.best_coverage >= reader.band * model.evidence {
            out.unsure = true;
            return Ok(retry::filter(&retried.probe, model.evidence));
        }
    }
    let rescued = match helpers.rewriter {
        Some(rewriter) => expand::rescue(at, rewriter, out.context_k, language)?,
        None => None,
    };
    match rescued {
        // The lexical evidence check cannot judge another wording: the model does.
        Some((query, hits)) => {
            out.attempts += 1;
            out.queries.push(query);
            out.rescued = true;
            Ok(hits.into_iter().map(|h| (h, 0.0)).collect())
        }
        None => {
            out.weak_skills.push(at.skill.id.clone());
            Ok(Vec::new())
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use skillrag_core::Hit;

    /// A hit of chunk `id` in skill `s`, document `d{id}.md`.
    pub(crate) fn hit(id: u64) -> Hit {
        Hit {
            skill: "s".into(),
            source: format!("d{id}.md"),
            heading: String::new(),
            ordinal: 0,
            text: format!("chunk {id}"),
            scores: Default::default(),
            ranks: Default::default(),
            chunk_id: id,
            title: String::new(),
            span: (0, 10),
            doc_type: Default::default(),
            tier: Default::default(),
            pages: None,
            summary: None,
        }
    }
}
