//! Reading one published generation.

use super::lexical::LexicalIndex;
use super::vectors::Vectors;
use crate::checksum::{Checksums, Verified};
use crate::{IndexMeta, Manifest, SkillIndex, StoreError};
use skillrag_core::{Chunk, ChunkId, Filter, Scored};
use std::collections::HashMap;
use std::path::Path;

pub(super) const VECTORS: &str = "vectors.f32";
pub(super) const VISIBILITY: &str = "visibility.f32";
/// The files the store writes itself (the rest of a generation is tantivy's).
const OWN_FILES: [&str; 5] = ["meta.json", "manifest.json", "chunks.jsonl", VECTORS, VISIBILITY];

/// One generation of a skill's index, loaded for searching.
pub struct EmbeddedSkillIndex {
    pub(super) meta: IndexMeta,
    pub(super) manifest: Manifest,
    pub(super) chunks: Vec<Chunk>,
    ids: Vec<ChunkId>,
    row_of: HashMap<ChunkId, usize>,
    rows_of_source: HashMap<String, Vec<usize>>,
    pub(super) vectors: Option<Vectors>,
    lexical: LexicalIndex,
    mean_visibility: Option<f32>,
}

impl EmbeddedSkillIndex {
    pub fn open(skill: &str, dir: &Path) -> Result<EmbeddedSkillIndex, StoreError> {
        Self::open_verified(skill, dir).map(|(index, _)| index)
    }

    /// Opens the generation in `dir`, checking every file against its checksums first (so a
    /// damaged file is reported, never served); `None` for a generation written before
    /// checksums existed.
    pub(super) fn open_verified(skill: &str, dir: &Path) -> Result<(EmbeddedSkillIndex, Option<Verified>), StoreError> {
        let generation = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let corrupt = |detail: String| StoreError::Corrupt {
            skill: skill.to_string(),
            detail: format!("{generation}: {detail}"),
        };
        let sums = Checksums::read(dir).map_err(corrupt)?;
        let mut verified = Verified::default();
        // Our own files are read whole anyway: each is checked from memory, read once.
        let mut read = |name: &str| -> Result<Vec<u8>, StoreError> {
            let bytes = std::fs::read(dir.join(name)).map_err(|e| corrupt(format!("{name}: {e}")))?;
            if let Some(sums) = &sums {
                sums.check_bytes(name, &bytes).map_err(corrupt)?;
                verified.files += 1;
                verified.bytes += bytes.len() as u64;
            }
            Ok(bytes)
        };
        let meta: IndexMeta = parse_json("meta.json", &read("meta.json")?).map_err(corrupt)?;
        let manifest: Manifest = parse_json("manifest.json", &read("manifest.json")?).map_err(corrupt)?;
        let chunks = parse_chunks(&read("chunks.jsonl")?).map_err(corrupt)?;
        let vectors = match meta.model_id {
            Some(_) => Some(
                Vectors::from_bytes(&read(VECTORS)?, &read(VISIBILITY)?, meta.dim)
                    .map_err(|e| corrupt(e.to_string()))?,
            ),
            None => None,
        };
        if let Some(v) = &vectors {
            if v.rows() != chunks.len() {
                return Err(corrupt(format!("{} vectors for {} chunks", v.rows(), chunks.len())));
            }
        }
        // The rest is tantivy's, which reads it through mmap.
        if let Some(sums) = &sums {
            let rest = sums.check_files(dir, &OWN_FILES).map_err(corrupt)?;
            verified.files += rest.files;
            verified.bytes += rest.bytes;
        }
        let lexical = LexicalIndex::open(&dir.join("tantivy")).map_err(|e| corrupt(e.to_string()))?;
        let index = Self::assemble(meta, manifest, chunks, vectors, lexical);
        Ok((index, sums.map(|_| verified)))
    }

    fn assemble(
        meta: IndexMeta,
        manifest: Manifest,
        chunks: Vec<Chunk>,
        vectors: Option<Vectors>,
        lexical: LexicalIndex,
    ) -> Self {
        let ids: Vec<ChunkId> = chunks.iter().map(|c| c.id).collect();
        let row_of = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        let mut rows_of_source: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, c) in chunks.iter().enumerate() {
            rows_of_source.entry(c.source.clone()).or_default().push(i);
        }
        for rows in rows_of_source.values_mut() {
            rows.sort_by_key(|&r| chunks[r].ordinal);
        }
        let mean_visibility = vectors
            .as_ref()
            .filter(|v| !v.visibility.is_empty())
            .map(|v| v.visibility.iter().sum::<f32>() / v.visibility.len() as f32);
        EmbeddedSkillIndex { meta, manifest, chunks, ids, row_of, rows_of_source, vectors, lexical, mean_visibility }
    }

    pub(super) fn rows_of(&self, source: &str) -> &[usize] {
        self.rows_of_source.get(source).map_or(&[], Vec::as_slice)
    }
}

fn parse_json<T: serde::de::DeserializeOwned>(name: &str, bytes: &[u8]) -> Result<T, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("{name}: {e}"))
}

fn parse_chunks(bytes: &[u8]) -> Result<Vec<Chunk>, String> {
    let mut out = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let chunk: Chunk = serde_json::from_slice(line).map_err(|e| format!("chunks.jsonl:{}: {e}", i + 1))?;
        out.push(chunk);
    }
    Ok(out)
}

impl SkillIndex for EmbeddedSkillIndex {
    fn meta(&self) -> &IndexMeta {
        &self.meta
    }

    fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    fn len(&self) -> usize {
        self.chunks.len()
    }

    fn lexical(&self, terms: &[String], limit: usize, filter: &Filter) -> Result<Vec<Scored>, StoreError> {
        let allowed = self.manifest.allowed_sources(filter);
        self.lexical.search(terms, limit, allowed.as_ref())
    }

    fn doc_freqs(&self, terms: &[String]) -> Result<Vec<u64>, StoreError> {
        self.lexical.doc_freqs(terms)
    }

    fn phrase_doc_freqs(&self, pairs: &[(String, String)]) -> Result<Option<Vec<u64>>, StoreError> {
        self.lexical.phrase_doc_freqs(pairs)
    }

    fn dense(&self, query: &[f32], limit: usize, filter: &Filter) -> Result<Vec<Scored>, StoreError> {
        let Some(vectors) = &self.vectors else { return Ok(Vec::new()) };
        if filter.is_empty() {
            return vectors.scan(&self.ids, query, limit, |_| true);
        }
        let chunks = &self.chunks;
        vectors.scan(&self.ids, query, limit, |i| filter.allows(&chunks[i].source, chunks[i].doc_type))
    }

    fn chunk(&self, id: ChunkId) -> Option<Chunk> {
        self.row_of.get(&id).map(|&i| self.chunks[i].clone())
    }

    fn vector(&self, id: ChunkId) -> Option<(Option<Vec<f32>>, f32)> {
        let v = self.vectors.as_ref()?;
        let &i = self.row_of.get(&id)?;
        Some((v.has_vector(i).then(|| v.row(i).to_vec()), v.visibility[i]))
    }

    fn mean_visibility(&self) -> Option<f32> {
        self.mean_visibility
    }

    fn chunks_of(&self, source: &str) -> Vec<Chunk> {
        self.rows_of(source).iter().map(|&i| self.chunks[i].clone()).collect()
    }
}
