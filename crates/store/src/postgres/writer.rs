//! Writing the next generation of one skill in one transaction on a dedicated connection.
//! Dropping the writer closes the connection, and PostgreSQL rolls everything back.

use super::visible_in;
use super::{db_error, hnsw_index, partition, quote_literal, PostgresStore, LOCK_KEY};
use crate::{IndexMeta, IndexWriter, Manifest, NewChunk, StoreError};
use pgvector::Vector;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{ToSql, Type};
use postgres::Client;
use std::collections::{HashMap, HashSet};

pub struct PgWriter {
    client: Client,
    skill: String,
    table: String,
    part: i64,
    meta: IndexMeta,
    /// Continuing the published generation (same settings), so sources can be kept.
    continues: bool,
    kept: HashSet<String>,
    /// Build the HNSW index after loading: the partition has none for this dimension yet.
    build_hnsw: bool,
    vector_type: Type,
}

/// A length as tantivy's BM25 sees it: document lengths are stored in 256 buckets (exact up
/// to 40 tokens, coarser above), and scores use the bucket's value. The same rounding here
/// keeps both stores' BM25 scores equal.
pub(crate) fn quantized_length(tokens: i32) -> i32 {
    use tantivy::fieldnorm::FieldNormReader;
    let tokens = tokens.max(0) as u32;
    // The buckets ascend; the last one not above the length.
    let bucket = (0..=255u8).rev().find(|&id| FieldNormReader::id_to_fieldnorm(id) <= tokens).unwrap_or(0);
    FieldNormReader::id_to_fieldnorm(bucket) as i32
}

/// The project analyzer's distinct terms of a text with their frequencies, and its length in
/// tokens: what BM25 needs, computed here so PostgreSQL tokenizes exactly like the embedded store.
pub(crate) fn term_frequencies(text: &str) -> (Vec<String>, Vec<i32>, i32) {
    let tokens = skillrag_text::tokens(text);
    let mut position: HashMap<&str, usize> = HashMap::new();
    let (mut terms, mut tfs): (Vec<String>, Vec<i32>) = (Vec::new(), Vec::new());
    for t in &tokens {
        match position.get(t.term.as_str()) {
            Some(&i) => tfs[i] += 1,
            None => {
                position.insert(t.term.as_str(), terms.len());
                terms.push(t.term.clone());
                tfs.push(1);
            }
        }
    }
    (terms, tfs, i32::try_from(tokens.len()).unwrap_or(i32::MAX))
}

impl PgWriter {
    pub fn begin(store: &PostgresStore, skill: &str, mut meta: IndexMeta) -> Result<PgWriter, StoreError> {
        let ctx = |what: &str| format!("{what} for skill `{skill}`");
        let mut client = store.dedicated()?;
        let part = ensure_partition(&mut client, skill)?;
        let table = partition(part);

        client.batch_execute("BEGIN").map_err(|e| db_error(&ctx("starting a transaction"), e))?;
        let locked: bool = client
            .query_one(&format!("SELECT pg_try_advisory_xact_lock({LOCK_KEY})"), &[&format!("skill:{skill}")])
            .map_err(|e| db_error(&ctx("locking"), e))?
            .get(0);
        if !locked {
            return Err(StoreError::Locked(skill.to_string()));
        }
        let row = client
            .query_one("SELECT generation, meta FROM skillrag_skills WHERE skill = $1", &[&skill])
            .map_err(|e| db_error(&ctx("reading the published generation"), e))?;
        let current: Option<i64> = row.get(0);
        let previous: Option<IndexMeta> =
            row.get::<_, Option<serde_json::Value>>(1).and_then(|v| serde_json::from_value(v).ok());
        let continues = match &previous {
            Some(prev) => {
                meta.next_chunk_id = prev.next_chunk_id;
                prev.rebuild_reason(&meta).is_none() && prev.dim == meta.dim
            }
            None => false,
        };
        meta.generation = current.unwrap_or(0) as u64 + 1;

        let build_hnsw = match meta.model_id {
            Some(_) => {
                let exists: Option<String> = client
                    .query_one("SELECT to_regclass($1)::text", &[&hnsw_index(part, meta.dim)])
                    .map_err(|e| db_error(&ctx("checking the vector index"), e))?
                    .get(0);
                exists.is_none()
            }
            None => false,
        };
        let vector_type =
            client.prepare("SELECT $1::vector").map_err(|e| db_error("looking up pgvector's type", e))?.params()[0]
                .clone();
        Ok(PgWriter {
            client,
            skill: skill.to_string(),
            table,
            part,
            meta,
            continues,
            kept: HashSet::new(),
            build_hnsw,
            vector_type,
        })
    }

    fn context(&self, what: &str) -> String {
        format!("{what} for skill `{}`", self.skill)
    }

    fn previous_generation(&self) -> i64 {
        self.meta.generation as i64 - 1
    }

    /// Streams rows into the partition with binary COPY; `assign_ids` continues the skill's
    /// id sequence, otherwise the chunks keep theirs (a copy from another store).
    fn write(&mut self, chunks: Vec<NewChunk>, assign_ids: bool) -> Result<(), StoreError> {
        let has_vectors = self.meta.model_id.is_some();
        let mut rows = Vec::with_capacity(chunks.len());
        for new in chunks {
            let mut chunk = new.chunk;
            if self.kept.contains(&chunk.source) {
                return Err(StoreError::Invalid(format!("`{}` was kept and cannot also be added", chunk.source)));
            }
            let vector = self.meta.checked_vector(new.vector)?.map(Vector::from);
            self.meta.number(&mut chunk, !assign_ids);
            chunk.skill = self.skill.clone();
            let (terms, tfs, tokens) = term_frequencies(&chunk.indexed_text());
            let len = quantized_length(tokens);
            let id =
                i64::try_from(chunk.id).map_err(|_| StoreError::Invalid(format!("chunk id {} too large", chunk.id)))?;
            let source = chunk.source.clone();
            let json = serde_json::to_value(&chunk).map_err(|e| StoreError::Invalid(e.to_string()))?;
            let visibility = has_vectors.then_some(new.visibility);
            rows.push((id, source, json, terms, tfs, len, tokens, vector, visibility));
        }
        if rows.is_empty() {
            return Ok(());
        }
        let generation = self.meta.generation as i64;
        let types = [
            Type::TEXT,
            Type::INT8,
            Type::INT8,
            Type::TEXT,
            Type::JSONB,
            Type::TEXT_ARRAY,
            Type::INT4_ARRAY,
            Type::INT4,
            Type::INT4,
            self.vector_type.clone(),
            Type::FLOAT4,
        ];
        let copy = format!(
            "COPY {} (skill, id, born, source, chunk, terms, tfs, len, tokens, embedding, visibility) FROM STDIN (FORMAT binary)",
            self.table
        );
        let context = self.context("writing chunks");
        let sink = self.client.copy_in(&copy).map_err(|e| db_error(&context, e))?;
        let mut writer = BinaryCopyInWriter::new(sink, &types);
        for (id, source, json, terms, tfs, len, tokens, vector, visibility) in &rows {
            let values: [&(dyn ToSql + Sync); 11] =
                [&self.skill, id, &generation, source, json, terms, tfs, len, tokens, vector, visibility];
            writer.write(&values).map_err(|e| db_error(&context, e))?;
        }
        writer.finish().map_err(|e| db_error(&context, e))?;
        Ok(())
    }
}

/// Registers the skill and creates its partition, in a short transaction of its own (creating
/// a partition locks the parent table briefly; a writer's long transaction must not).
///
/// Column storage keeps the BM25 columns (`terms`, `tfs`) inline and uncompressed while the
/// vector and the chunk body move out of line (TOAST) in rows over 2 KB: BM25 then reads
/// narrow rows without decompressing anything, several times faster than over whole rows.
fn ensure_partition(client: &mut Client, skill: &str) -> Result<i64, StoreError> {
    let ctx = format!("creating the partition of skill `{skill}`");
    let mut tx = client.transaction().map_err(|e| db_error(&ctx, e))?;
    tx.execute(&format!("SELECT pg_advisory_xact_lock({LOCK_KEY})"), &[&""]).map_err(|e| db_error(&ctx, e))?;
    tx.execute("INSERT INTO skillrag_skills (skill) VALUES ($1) ON CONFLICT (skill) DO NOTHING", &[&skill])
        .map_err(|e| db_error(&ctx, e))?;
    let part: i64 = tx
        .query_one("SELECT part FROM skillrag_skills WHERE skill = $1", &[&skill])
        .map_err(|e| db_error(&ctx, e))?
        .get(0);
    let table = partition(part);
    let exists: Option<String> =
        tx.query_one("SELECT to_regclass($1)::text", &[&table]).map_err(|e| db_error(&ctx, e))?.get(0);
    if exists.is_none() {
        tx.batch_execute(&format!(
            "CREATE TABLE {table} PARTITION OF skillrag_chunks FOR VALUES IN ({});
             ALTER TABLE {table} ALTER COLUMN terms SET STORAGE MAIN, ALTER COLUMN tfs SET STORAGE MAIN,
                 ALTER COLUMN embedding SET STORAGE EXTERNAL",
            quote_literal(skill)
        ))
        .map_err(|e| db_error(&ctx, e))?;
    }
    tx.commit().map_err(|e| db_error(&ctx, e))?;
    Ok(part)
}

impl IndexWriter for PgWriter {
    fn keep(&mut self, source: &str) -> Result<usize, StoreError> {
        if !self.continues {
            return Err(StoreError::Invalid(format!(
                "cannot keep `{source}`: there is no previous generation to keep it from"
            )));
        }
        if !self.kept.insert(source.to_string()) {
            return Ok(0);
        }
        let sql = format!(
            "SELECT count(*) FROM {} WHERE source = $1 AND {}",
            self.table,
            visible_in(self.previous_generation())
        );
        let context = self.context("keeping a source");
        let n: i64 = self.client.query_one(&sql, &[&source]).map_err(|e| db_error(&context, e))?.get(0);
        Ok(n.max(0) as usize)
    }

    fn add(&mut self, chunks: Vec<NewChunk>) -> Result<(), StoreError> {
        self.write(chunks, true)
    }

    fn import(&mut self, chunks: Vec<NewChunk>) -> Result<(), StoreError> {
        self.write(chunks, false)
    }

    fn commit(mut self: Box<Self>, manifest: Manifest) -> Result<IndexMeta, StoreError> {
        let g = self.meta.generation as i64;
        let context = self.context("publishing the generation");
        let err = |e| db_error(&context, e);
        // Rows of the previous generation that this one does not keep die here: changed and
        // deleted sources, or everything on a rebuild.
        let kept: Vec<String> = if self.continues { self.kept.iter().cloned().collect() } else { Vec::new() };
        self.client
            .execute(
                &format!(
                    "UPDATE {} SET died = $1 WHERE died IS NULL AND born < $1 AND NOT (source = ANY($2))",
                    self.table
                ),
                &[&g, &kept],
            )
            .map_err(err)?;
        if self.build_hnsw {
            let dim = self.meta.dim;
            self.client
                .batch_execute(&format!(
                    "SELECT set_config('maintenance_work_mem', '1GB', true)
                     WHERE (SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem') < 1048576;
                     CREATE INDEX IF NOT EXISTS {} ON {} USING hnsw ((embedding::vector({dim})) vector_cosine_ops)
                     WHERE vector_dims(embedding) = {dim}",
                    hnsw_index(self.part, dim),
                    self.table
                ))
                .map_err(err)?;
        }
        // Fresh statistics, so the planner picks index scans over the new rows.
        self.client.batch_execute(&format!("ANALYZE {}", self.table)).map_err(err)?;
        let stats = self
            .client
            .query_one(
                &format!(
                    "SELECT count(*), coalesce(sum(tokens), 0)::bigint, avg(visibility)::real,
                     count(*) FILTER (WHERE embedding IS NULL AND visibility IS NOT NULL) FROM {} WHERE {}",
                    self.table,
                    visible_in(g)
                ),
                &[],
            )
            .map_err(err)?;
        let (count, tokens, mean_visibility): (i64, i64, Option<f32>) = (stats.get(0), stats.get(1), stats.get(2));
        self.meta.chunks = count.max(0) as usize;
        self.meta.vectorless = stats.get::<_, i64>(3).max(0) as usize;
        self.meta.created_at =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        let meta_json = serde_json::to_value(&self.meta).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let manifest_json = serde_json::to_value(&manifest).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.client
            .execute(
                "UPDATE skillrag_skills SET generation = $2, meta = $3, manifest = $4, chunk_count = $5,
                 token_count = $6, mean_visibility = $7, updated_at = now() WHERE skill = $1",
                &[&self.skill, &g, &meta_json, &manifest_json, &count, &tokens, &mean_visibility],
            )
            .map_err(err)?;
        // Rows neither this generation nor the one before it can see: no reader is left on them.
        self.client
            .execute(&format!("DELETE FROM {} WHERE died IS NOT NULL AND died < $1", self.table), &[&g])
            .map_err(err)?;
        self.client.batch_execute("COMMIT").map_err(err)?;
        Ok(self.meta.clone())
    }
}
