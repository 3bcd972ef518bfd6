//! Retrieval inside one or more skills: hybrid BM25 + dense search with RRF fusion.

use crate::{Engine, EngineError};
use serde::Serialize;
use skillrag_core::Hit;
use skillrag_embed::EmbedKind;
use skillrag_store::hybrid::{self, Mode, Params, Query};
use skillrag_store::Filter;
use std::time::Instant;

#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// Skills to search; empty means every skill.
    pub skills: Vec<String>,
    /// Hits to return; `None` uses the configuration (or the skill's own `top_k`).
    pub k: Option<usize>,
    pub filter: Filter,
    pub mode: Mode,
    /// RRF weights (BM25, dense) instead of the configured ones.
    pub weights: Option<(f32, f32)>,
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
    pub timings_ms: Timings,
}

impl Engine {
    /// Retrieval parameters from the configuration.
    pub fn retrieval_params(&self) -> Params {
        let r = &self.project.config.retrieval;
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
        let min_visibility = self.project.config.retrieval.min_visibility;
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
    /// unindexed ones are reported in `skills[].notice` and skipped.
    pub fn search(&self, query: &str, options: &SearchOptions) -> Result<SearchResult, EngineError> {
        let started = Instant::now();
        let prepared = self.prepare_query(query, options.mode)?;
        let embedded = Instant::now();
        let mut result = self.search_prepared(query, &prepared, options)?;
        let done = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1000.0;
        result.timings_ms =
            Timings { embed: ms(started, embedded), retrieve: ms(embedded, done), total: ms(started, done) };
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

        let mut hits: Vec<Hit> = Vec::new();
        let mut reports = Vec::new();
        for skill_id in &skills {
            let skill = self.skill(skill_id)?;
            let mut report = SkillSearch {
                skill: skill_id.clone(),
                bm25_used: false,
                dense_used: false,
                dense_skipped: None,
                notice: None,
            };
            let Some(index) = self.index_of(skill_id)? else {
                if explicit {
                    return Err(EngineError::NotIndexed(skill_id.clone()));
                }
                report.notice = Some(format!("not indexed yet: run `skillrag index --skill {skill_id}`"));
                reports.push(report);
                continue;
            };
            let mut params = self.retrieval_params();
            params.mode = options.mode;
            if let Some((bm25, dense)) = options.weights {
                params.bm25_weight = bm25;
                params.dense_weight = dense;
            }
            params.k = options.k.or(skill.settings.top_k).unwrap_or(params.k);
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
            let retrieval = hybrid::search(index.as_ref(), &skill_query, &params, &options.filter)?;
            report.bm25_used = retrieval.bm25_used;
            report.dense_used = retrieval.dense_used;
            report.dense_skipped = retrieval.dense_skipped;
            hits.extend(retrieval.hits);
            reports.push(report);
        }
        // Fused scores are rank-based and therefore comparable across skills.
        // Stable: ties keep each skill's own order (and skills their order).
        hits.sort_by(|a, b| b.scores.fused.total_cmp(&a.scores.fused));
        let k = options.k.unwrap_or(self.project.config.retrieval.top_k);
        if skills.len() > 1 {
            hits.truncate(k);
        }
        Ok(SearchResult {
            query: query.to_string(),
            terms: q.terms.clone(),
            query_visibility: q.visibility,
            hits,
            skills: reports,
            timings_ms: Timings::default(),
        })
    }
}
