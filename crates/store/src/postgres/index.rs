//! Reading one published generation from PostgreSQL. Only the settings, the manifest and the
//! BM25 statistics are loaded when it opens; chunks and vectors are read on demand, so a
//! replica opens a million-chunk skill at once and holds little memory.

use super::{db_error, partition, quote_literal, visible_in, Conn, Connections, PostgresStore};
use crate::{IndexMeta, Manifest, NewChunk, SkillIndex, StoreError};
use pgvector::Vector;
use skillrag_core::{Chunk, ChunkId, Filter, Scored};
use std::collections::HashMap;
use std::sync::Mutex;

/// tantivy's BM25 constants, so both stores score alike.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Terms in more than this share of a skill's chunks are "common" for MaxScore pruning.
const COMMON_SHARE: f64 = 0.05;

pub struct PgSkillIndex {
    db: Connections,
    skill: String,
    table: String,
    /// This generation's rows of this skill, as a condition; the skill is named too, so that
    /// Citus routes a query to one shard. Built once: every query uses it.
    visible: String,
    meta: IndexMeta,
    manifest: Manifest,
    chunk_count: u64,
    avg_len: f64,
    mean_visibility: Option<f32>,
    /// Document frequencies already counted; exact, because a generation never changes.
    doc_freqs: Mutex<HashMap<String, u64>>,
}

fn corrupt(skill: &str, detail: String) -> StoreError {
    StoreError::Corrupt { skill: skill.to_string(), detail }
}

impl PgSkillIndex {
    pub(super) fn open(store: &PostgresStore, skill: &str) -> Result<Option<PgSkillIndex>, StoreError> {
        let row = store
            .conn()?
            .query_opt(
                "SELECT part, generation, meta, manifest, chunk_count, token_count, mean_visibility
                 FROM skillrag_skills WHERE skill = $1 AND generation IS NOT NULL",
                &[&skill],
            )
            .map_err(|e| db_error(&format!("opening the index of skill `{skill}`"), e))?;
        let Some(row) = row else { return Ok(None) };
        let part: i64 = row.get(0);
        let meta: IndexMeta = serde_json::from_value(row.get(2)).map_err(|e| corrupt(skill, format!("meta: {e}")))?;
        let manifest: Manifest =
            serde_json::from_value(row.get(3)).map_err(|e| corrupt(skill, format!("manifest: {e}")))?;
        let chunk_count = row.get::<_, i64>(4).max(0) as u64;
        let token_count = row.get::<_, i64>(5).max(0) as f64;
        Ok(Some(PgSkillIndex {
            db: store.db.clone(),
            skill: skill.to_string(),
            table: partition(part),
            visible: format!("skill = {} AND {}", quote_literal(skill), visible_in(row.get(1))),
            meta,
            manifest,
            chunk_count,
            avg_len: if chunk_count == 0 { 1.0 } else { (token_count / chunk_count as f64).max(1.0) },
            mean_visibility: row.get(6),
            doc_freqs: Mutex::new(HashMap::new()),
        }))
    }

    fn conn(&self) -> Result<Conn, StoreError> {
        self.db.get()
    }

    /// `sql` with `{t}` → the partition and `{visible}` → this generation's rows of this skill.
    fn sql(&self, sql: &str) -> String {
        sql.replace("{t}", &self.table).replace("{visible}", &self.visible)
    }

    fn context(&self, what: &str) -> String {
        format!("{what} in skill `{}`", self.skill)
    }

    /// The sources a filter lets through, as a query parameter; `None` when it lets all through.
    fn allowed(&self, filter: &Filter) -> Option<Vec<String>> {
        self.manifest.allowed_sources(filter).map(|s| s.into_iter().collect())
    }

    fn chunks_where(
        &self,
        condition: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<Chunk>, StoreError> {
        let sql = self.sql(&format!("SELECT chunk FROM {{t}} WHERE {condition}"));
        let rows = self.conn()?.query(&sql, params).map_err(|e| db_error(&self.context("reading chunks"), e))?;
        rows.iter()
            .map(|r| serde_json::from_value(r.get(0)).map_err(|e| corrupt(&self.skill, format!("chunk: {e}"))))
            .collect()
    }

    /// BM25 top `limit` over the rows holding any of `candidates`, scored on all `terms`.
    fn bm25(
        &self,
        terms: &[String],
        idfs: &[f64],
        candidates: &[String],
        limit: usize,
        allowed: Option<&Vec<String>>,
    ) -> Result<Vec<Scored>, StoreError> {
        let source_filter = if allowed.is_some() { "AND c.source = ANY($6)" } else { "" };
        // One term of the sum per query term, written out: a per-row subquery over the terms
        // costs ~20 µs a row, the unrolled expression a fraction of that. Absent terms give
        // tf = 0 and add nothing.
        let norm = format!("({K1} * (1 - {B} + {B} * c.len / $3::float8))");
        let score: Vec<String> = (1..=terms.len())
            .map(|i| {
                let tf = format!("coalesce(c.tfs[array_position(c.terms, ($1::text[])[{i}])], 0)");
                format!("($2::float8[])[{i}] * {tf} * {k1p1} / ({tf} + {norm})", k1p1 = K1 + 1.0)
            })
            .collect();
        let sql = self.sql(&format!(
            "SELECT c.id, ({})::real AS score FROM {{t}} c
             WHERE c.terms && $5::text[] AND {{visible}} {source_filter}
             ORDER BY 2 DESC, c.id LIMIT $4",
            score.join(" + ")
        ));
        let limit = limit as i64;
        let mut conn = self.conn()?;
        let rows = match allowed {
            None => conn.query(&sql, &[&terms, &idfs, &self.avg_len, &limit, &candidates]),
            Some(sources) => conn.query(&sql, &[&terms, &idfs, &self.avg_len, &limit, &candidates, sources]),
        }
        .map_err(|e| db_error(&self.context("BM25 search"), e))?;
        Ok(rows.iter().map(|r| Scored { id: r.get::<_, i64>(0) as ChunkId, score: r.get(1) }).collect())
    }
}

impl SkillIndex for PgSkillIndex {
    fn meta(&self) -> &IndexMeta {
        &self.meta
    }

    fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    fn len(&self) -> usize {
        self.chunk_count as usize
    }

    fn lexical(&self, terms: &[String], limit: usize, filter: &Filter) -> Result<Vec<Scored>, StoreError> {
        let mut distinct: Vec<String> = Vec::new();
        for t in terms {
            if !distinct.contains(t) {
                distinct.push(t.clone());
            }
        }
        if distinct.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let n = self.chunk_count as f64;
        let dfs = self.doc_freqs(&distinct)?;
        let (mut used, mut idfs, mut common) = (Vec::new(), Vec::new(), Vec::new());
        for (term, df) in distinct.into_iter().zip(dfs) {
            if df > 0 {
                let df = df as f64;
                idfs.push((1.0 + (n - df + 0.5) / (df + 0.5)).ln());
                common.push(df > n * COMMON_SHARE);
                used.push(term);
            }
        }
        if used.is_empty() {
            return Ok(Vec::new());
        }
        let allowed = self.allowed(filter);
        // MaxScore pruning, exact: a term contributes less than idf × (k1 + 1) to any score, so
        // a row holding only common terms scores below the sum of their bounds. Score the rows
        // that hold a rarer term first; when their k-th best already beats that sum, no row
        // left out could have entered the top k. Otherwise score every candidate row.
        let rare: Vec<String> = used.iter().zip(&common).filter(|(_, c)| !**c).map(|(t, _)| t.clone()).collect();
        let common_bound: f64 = idfs.iter().zip(&common).filter(|(_, c)| **c).map(|(idf, _)| idf * (K1 + 1.0)).sum();
        if !rare.is_empty() && rare.len() < used.len() {
            let top = self.bm25(&used, &idfs, &rare, limit, allowed.as_ref())?;
            let kth = top.get(limit.saturating_sub(1)).map(|s| f64::from(s.score));
            if kth.is_some_and(|kth| kth > common_bound * (1.0 + 1e-6)) {
                return Ok(top);
            }
        }
        self.bm25(&used, &idfs, &used, limit, allowed.as_ref())
    }

    fn doc_freqs(&self, terms: &[String]) -> Result<Vec<u64>, StoreError> {
        let missing: Vec<String> = {
            let cache = self.doc_freqs.lock().unwrap_or_else(|p| p.into_inner());
            let mut m: Vec<String> = terms.iter().filter(|t| !cache.contains_key(*t)).cloned().collect();
            m.sort();
            m.dedup();
            m
        };
        if !missing.is_empty() {
            // One uncorrelated count per term, so each is planned with its term known and
            // runs as a GIN bitmap scan (a correlated subquery over unnest() is planned blind
            // and scans the whole partition once per term).
            let counts: Vec<String> = (1..=missing.len())
                .map(|i| {
                    format!("(SELECT count(*) FROM {{t}} WHERE terms @> ARRAY[($1::text[])[{i}]] AND {{visible}})")
                })
                .collect();
            let sql = self.sql(&format!("SELECT ARRAY[{}]::bigint[]", counts.join(", ")));
            let row = self
                .conn()?
                .query_one(&sql, &[&missing])
                .map_err(|e| db_error(&self.context("counting document frequencies"), e))?;
            let counts: Vec<i64> = row.get(0);
            let mut cache = self.doc_freqs.lock().unwrap_or_else(|p| p.into_inner());
            for (term, n) in missing.into_iter().zip(counts) {
                cache.insert(term, n.max(0) as u64);
            }
        }
        let cache = self.doc_freqs.lock().unwrap_or_else(|p| p.into_inner());
        Ok(terms.iter().map(|t| cache.get(t).copied().unwrap_or(0)).collect())
    }

    fn dense(&self, query: &[f32], limit: usize, filter: &Filter) -> Result<Vec<Scored>, StoreError> {
        if self.meta.model_id.is_none() || limit == 0 {
            return Ok(Vec::new());
        }
        let dim = self.meta.dim;
        if query.len() != dim {
            return Err(StoreError::Dimension { expected: dim, got: query.len() });
        }
        let allowed = self.allowed(filter);
        let source_filter = if allowed.is_some() { "AND source = ANY($3)" } else { "" };
        // The expression and the predicate match the partial HNSW index exactly, so the planner
        // uses it (see `super::hnsw_index`).
        let sql = self.sql(&format!(
            "SELECT id, embedding FROM {{t}}
             WHERE vector_dims(embedding) = {dim} AND {{visible}} {source_filter}
             ORDER BY embedding::vector({dim}) <=> $1::vector({dim}) LIMIT $2"
        ));
        let vector = Vector::from(query.to_vec());
        let limit = limit as i64;
        let mut conn = self.conn()?;
        let rows = match &allowed {
            None => conn.query(&sql, &[&vector, &limit]),
            Some(sources) => conn.query(&sql, &[&vector, &limit, sources]),
        }
        .map_err(|e| db_error(&self.context("vector search"), e))?;
        // Scores are computed here with the dot product the embedded store uses, not taken from
        // pgvector (whose float sums round differently): both stores then score a chunk
        // bit for bit alike, and thresholds fitted on one hold on the other.
        let dot = crate::dense::dot_fn();
        let mut out: Vec<Scored> = rows
            .iter()
            .map(|r| {
                let v: Vector = r.get(1);
                Scored { id: r.get::<_, i64>(0) as ChunkId, score: dot(v.as_slice(), query) }
            })
            .collect();
        // An iterative HNSW scan returns rows in a relaxed order.
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        Ok(out)
    }

    fn chunk(&self, id: ChunkId) -> Option<Chunk> {
        let id = i64::try_from(id).ok()?;
        self.chunks_where("skill = $1 AND id = $2 AND {visible}", &[&self.skill, &id]).ok()?.pop()
    }

    fn vector(&self, id: ChunkId) -> Option<(Option<Vec<f32>>, f32)> {
        self.meta.model_id.as_ref()?;
        let id = i64::try_from(id).ok()?;
        let sql = self.sql("SELECT embedding, visibility FROM {t} WHERE skill = $1 AND id = $2 AND {visible}");
        let row = self.conn().ok()?.query_opt(&sql, &[&self.skill, &id]).ok()??;
        let vector: Option<Vector> = row.get(0);
        Some((vector.map(|v| v.to_vec()), row.get::<_, Option<f32>>(1).unwrap_or(0.0)))
    }

    fn mean_visibility(&self) -> Option<f32> {
        self.mean_visibility
    }

    fn export(&self, source: &str) -> Result<Vec<NewChunk>, StoreError> {
        let sql =
            self.sql("SELECT chunk, embedding, visibility FROM {t} WHERE skill = $1 AND source = $2 AND {visible}");
        let rows =
            self.conn()?.query(&sql, &[&self.skill, &source]).map_err(|e| db_error(&self.context("exporting"), e))?;
        let mut out = rows
            .iter()
            .map(|r| {
                let chunk: Chunk =
                    serde_json::from_value(r.get(0)).map_err(|e| corrupt(&self.skill, format!("chunk: {e}")))?;
                let vector: Option<Vector> = r.get(1);
                Ok(NewChunk {
                    chunk,
                    vector: vector.map(|v| v.to_vec()),
                    visibility: r.get::<_, Option<f32>>(2).unwrap_or(0.0),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        out.sort_by_key(|n| n.chunk.ordinal);
        Ok(out)
    }

    fn chunks_of(&self, source: &str) -> Vec<Chunk> {
        let mut chunks =
            self.chunks_where("skill = $1 AND source = $2 AND {visible}", &[&self.skill, &source]).unwrap_or_default();
        chunks.sort_by_key(|c| c.ordinal);
        chunks
    }
}
