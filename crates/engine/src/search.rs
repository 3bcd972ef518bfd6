//! Retrieval inside one or more skills: hybrid BM25 + dense search with RRF fusion, then —
//! when `[rerank]` configures a reranker — a cross-encoder rescoring of the best fused hits.

use crate::fusion::{self, Params};
use crate::{Engine, EngineError};
use serde::Serialize;
use skillrag_core::{Filter, Hit, Mode, Query};
use skillrag_embed::EmbedKind;
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// Skills to search; empty means every skill.
    pub skills: Vec<String>,
    /// Hits to return; `None` uses the configuration (or the skill's own `top_k`).
    pub k: Option<usize>,
    pub filter: Filter,
    pub mode: Mode,
    /// RRF weights (BM25, dense) instead of the configured ones.
    pub weights: Option<(f32, f32)>,
    /// Rescore the best fused hits with the configured reranker (none configured: no effect).
    pub rerank: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            skills: Vec::new(),
            k: None,
            filter: Filter::default(),
            mode: Mode::default(),
            weights: None,
            rerank: true,
        }
    }
}

/// What the rerank stage did.
#[derive(Debug, Clone, Serialize)]
pub struct RerankReport {
    pub model: String,
    /// Fused hits rescored.
    pub candidates: usize,
    pub ms: f64,
    /// Why the fused order was kept (the reranker could not be loaded or reached).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What happened in one skill.
#[derive(Debug, Clone, Serialize)]
pub struct SkillSearch {
    pub skill: String,
    pub bm25_used: bool,
    pub dense_used: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense_skipped: Option<String>,
    /// A problem that kept this skill from being searched (not indexed…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    /// Analyzing and embedding the query.
    pub embed: f64,
    pub retrieve: f64,
    /// Of `retrieve`: the rerank stage.
    pub rerank: f64,
    pub total: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchResult {
    pub query: String,
    /// The analyzed query terms (BM25).
    pub terms: Vec<String>,
    /// Share of the query the embedding model could see, when one is configured.
    pub query_visibility: Option<f32>,
    pub hits: Vec<Hit>,
    pub skills: Vec<SkillSearch>,
    /// The rerank stage, when a reranker is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<RerankReport>,
    pub timings_ms: Timings,
}

/// What one skill's search found, and how many hits the caller wanted from it.
struct SkillHits {
    wanted: usize,
    hits: Vec<Hit>,
}

impl Engine {
    /// Retrieval parameters from the settings.
    pub fn retrieval_params(&self) -> Params {
        let r = &self.settings.retrieval.section;
        Params {
            k: r.top_k,
            candidates: r.candidates,
            rrf_k: r.rrf_k,
            bm25_weight: r.bm25_weight,
            dense_weight: r.dense_weight,
            min_visibility: r.min_visibility,
            mode: Mode::Hybrid,
        }
    }

    /// Analyzes `query` and, when the dense signal may be used in `mode`, embeds it. Tokenizing
    /// first tells how much of the question the model can see; a question it is blind to is not
    /// worth a forward pass in hybrid mode.
    pub fn prepare_query(&self, query: &str, mode: Mode) -> Result<Query, EngineError> {
        let terms = skillrag_text::analyze(query);
        let min_visibility = self.settings.retrieval.section.min_visibility;
        let (vector, visibility) = match (mode != Mode::Lexical, self.embedder()?) {
            (true, Some(e)) => {
                let visibility = e.visibility(&[query], EmbedKind::Query)?.first().copied().unwrap_or(0.0);
                if mode == Mode::Hybrid && visibility < min_visibility {
                    (None, Some(visibility))
                } else {
                    (Some(e.embed_query(query)?.vector), Some(visibility))
                }
            }
            _ => (None, None),
        };
        Ok(Query { terms, vector, visibility })
    }

    /// Searches the selected skills (each inside its own knowledge base) and merges their hits by
    /// fused score. A requested skill without an index is an error; when searching every skill,
    /// unindexed and damaged ones are reported in `skills[].notice` and skipped.
    pub fn search(&self, query: &str, options: &SearchOptions) -> Result<SearchResult, EngineError> {
        let started = Instant::now();
        let prepared = self.prepare_query(query, options.mode)?;
        let embedded = Instant::now();
        let mut result = self.search_prepared(query, &prepared, options)?;
        let done = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1000.0;
        result.timings_ms = Timings {
            embed: ms(started, embedded),
            retrieve: ms(embedded, done),
            rerank: result.timings_ms.rerank,
            total: ms(started, done),
        };
        Ok(result)
    }

    /// [`Engine::search`] with a query already prepared by [`Engine::prepare_query`] (so one
    /// embedding serves many searches).
    pub fn search_prepared(
        &self,
        query: &str,
        q: &Query,
        options: &SearchOptions,
    ) -> Result<SearchResult, EngineError> {
        let explicit = !options.skills.is_empty();
        let skills: Vec<String> = if explicit {
            for s in &options.skills {
                self.skill(s)?;
            }
            options.skills.clone()
        } else {
            self.skills().iter().map(|s| s.id.clone()).collect()
        };

        // With a reranker, fusion returns at least its candidates, which it then reorders.
        let reranker = if options.rerank { self.reranker().transpose() } else { None };
        let candidates = match &reranker {
            Some(_) => self.settings.retrieval.rerank_candidates,
            None => 0,
        };
        let mut hits: Vec<Hit> = Vec::new();
        let mut reports = Vec::new();
        let mut wanted = 0;
        for skill_id in &skills {
            let (report, skill_hits) = self.search_skill(skill_id, q, options, candidates, explicit)?;
            if let Some(found) = skill_hits {
                wanted = found.wanted;
                hits.extend(found.hits);
            }
            reports.push(report);
        }
        // Fused scores are rank-based and therefore comparable across skills.
        // Stable: ties keep each skill's own order (and skills their order).
        hits.sort_by(|a, b| b.scores.fused.total_cmp(&a.scores.fused));
        let k = if skills.len() > 1 { options.k.unwrap_or(self.settings.retrieval.section.top_k) } else { wanted };
        let mut timings = Timings::default();
        let rerank = reranker.map(|r| {
            let started = Instant::now();
            let report = rerank_hits(query, r, candidates, &mut hits, &mut reports);
            timings.rerank = started.elapsed().as_secs_f64() * 1000.0;
            RerankReport { ms: timings.rerank, ..report }
        });
        hits.truncate(k);
        Ok(SearchResult {
            query: query.to_string(),
            terms: q.terms.clone(),
            query_visibility: q.visibility,
            hits,
            skills: reports,
            rerank,
            timings_ms: timings,
        })
    }

    /// Searches one skill: its report, and its hits when it has an index to search. A skill without an index is an error when
    /// asked for `explicit`ly, skipped with a notice otherwise.
    fn search_skill(
        &self,
        skill_id: &str,
        q: &Query,
        options: &SearchOptions,
        candidates: usize,
        explicit: bool,
    ) -> Result<(SkillSearch, Option<SkillHits>), EngineError> {
        let skill = self.skill(skill_id)?;
        let mut report = SkillSearch {
            skill: skill_id.to_string(),
            bm25_used: false,
            dense_used: false,
            dense_skipped: None,
            notice: None,
        };
        let Some(index) = self.index_of(skill_id)? else {
            let damage = self.damage(skill_id);
            if explicit {
                return Err(damage.map_or_else(|| EngineError::NotIndexed(skill_id.to_string()), Into::into));
            }
            // A damaged skill is skipped like an unindexed one: the others keep answering.
            report.notice = Some(match damage {
                Some(damage) => format!("skipped: {damage}"),
                None => format!("not indexed yet: run `skillrag index --skill {skill_id}`"),
            });
            return Ok((report, None));
        };
        let mut params = self.retrieval_params();
        params.mode = options.mode;
        if let Some((bm25, dense)) = options.weights {
            params.bm25_weight = bm25;
            params.dense_weight = dense;
        }
        params.k = options.k.or(skill.settings.top_k).unwrap_or(params.k);
        let wanted = params.k;
        params.k = params.k.max(candidates);
        let mut skill_query = q.clone();
        let built = index.meta().model_id.as_deref();
        let configured = self.model().map(|m| m.id.as_str());
        if built != configured {
            report.notice = Some(format!(
                "the index was built with embedding model {}, but {} is configured: run `skillrag index --skill {skill_id}` to re-index",
                built.unwrap_or("none"),
                configured.unwrap_or("none")
            ));
            skill_query.vector = None;
        }
        let retrieval = fusion::search(index.as_ref(), &skill_query, &params, &options.filter)?;
        report.bm25_used = retrieval.bm25_used;
        report.dense_used = retrieval.dense_used;
        report.dense_skipped = retrieval.dense_skipped;
        Ok((report, Some(SkillHits { wanted, hits: retrieval.hits })))
    }
}

/// The text a reranker reads for a hit: its heading path (when any), then its text.
fn passage(hit: &Hit) -> String {
    if hit.heading.is_empty() {
        hit.text.clone()
    } else {
        format!("{}\n{}", hit.heading, hit.text)
    }
}

/// Scores the first `candidates` hits (in fused order) and moves them into rerank order, ahead
/// of the rest; `fused` scores and ranks are kept. A reranker that cannot be loaded or answers
/// with an error leaves the fused order, with a notice on each skill it concerned.
fn rerank_hits(
    query: &str,
    reranker: Result<std::sync::Arc<dyn skillrag_rerank::Reranker>, EngineError>,
    candidates: usize,
    hits: &mut [Hit],
    reports: &mut [SkillSearch],
) -> RerankReport {
    let n = candidates.min(hits.len());
    let (model, scores) = match reranker {
        Err(e) => ("unavailable".to_string(), Err(e.to_string())),
        Ok(r) if n == 0 => (r.model_id().to_string(), Ok(Vec::new())),
        Ok(r) => {
            let texts: Vec<String> = hits[..n].iter().map(passage).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let scores = r.rerank(query, &refs).map_err(|e| e.to_string()).and_then(|s| {
                if s.len() == n {
                    Ok(s)
                } else {
                    Err(format!("the reranker returned {} scores for {n} passages", s.len()))
                }
            });
            (r.model_id().to_string(), scores)
        }
    };
    match scores {
        Ok(scores) => {
            for (hit, score) in hits.iter_mut().zip(scores) {
                hit.scores.rerank = Some(score);
            }
            // Stable: equal scores keep their fused order.
            hits[..n].sort_by(|a, b| b.scores.rerank.unwrap_or(0.0).total_cmp(&a.scores.rerank.unwrap_or(0.0)));
            RerankReport { model, candidates: n, ms: 0.0, error: None }
        }
        Err(error) => {
            let notice = format!("reranking failed, fused order kept: {error}");
            for report in reports.iter_mut() {
                if hits[..n].iter().any(|h| h.skill == report.skill) {
                    report.notice = Some(match report.notice.take() {
                        Some(earlier) => format!("{earlier}; {notice}"),
                        None => notice.clone(),
                    });
                }
            }
            RerankReport { model, candidates: 0, ms: 0.0, error: Some(error) }
        }
    }
}
