//! Reading one published generation.

use super::lexical::LexicalIndex;
use super::vectors::Vectors;
use crate::{Filter, IndexMeta, Manifest, Scored, SkillIndex, StoreError};
use skillrag_core::{Chunk, ChunkId};
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

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

pub(super) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, StoreError> {
    let text = std::fs::read_to_string(path).map_err(|e| StoreError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| StoreError::Invalid(format!("{}: {e}", path.display())))
}

impl EmbeddedSkillIndex {
    pub fn open(skill: &str, dir: &Path) -> Result<EmbeddedSkillIndex, StoreError> {
        let corrupt = |detail: String| StoreError::Corrupt { skill: skill.to_string(), detail };
        let meta: IndexMeta = read_json(&dir.join("meta.json")).map_err(|e| corrupt(e.to_string()))?;
        let manifest: Manifest = read_json(&dir.join("manifest.json")).map_err(|e| corrupt(e.to_string()))?;
        let chunks = read_chunks(&dir.join("chunks.jsonl")).map_err(|e| corrupt(e.to_string()))?;
        let vectors = match meta.model_id {
            Some(_) => Some(
                Vectors::read(&dir.join("vectors.f32"), &dir.join("visibility.f32"), meta.dim)
                    .map_err(|e| corrupt(e.to_string()))?,
            ),
            None => None,
        };
        if let Some(v) = &vectors {
            if v.rows() != chunks.len() {
                return Err(corrupt(format!("{} vectors for {} chunks", v.rows(), chunks.len())));
            }
        }
        let lexical = LexicalIndex::open(&dir.join("tantivy")).map_err(|e| corrupt(e.to_string()))?;
        Ok(Self::assemble(meta, manifest, chunks, vectors, lexical))
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

fn read_chunks(path: &Path) -> Result<Vec<Chunk>, StoreError> {
    let file = std::fs::File::open(path).map_err(|e| StoreError::io(path, e))?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| StoreError::io(path, e))?;
        if line.is_empty() {
            continue;
        }
        let chunk: Chunk = serde_json::from_str(&line)
            .map_err(|e| StoreError::Invalid(format!("{}:{}: {e}", path.display(), i + 1)))?;
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
        let allowed = filter.allowed_sources(&self.manifest);
        self.lexical.search(terms, limit, allowed.as_ref())
    }

    fn doc_freqs(&self, terms: &[String]) -> Result<Vec<u64>, StoreError> {
        self.lexical.doc_freqs(terms)
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

    fn vector(&self, id: ChunkId) -> Option<(Vec<f32>, f32)> {
        let v = self.vectors.as_ref()?;
        let &i = self.row_of.get(&id)?;
        Some((v.row(i).to_vec(), v.visibility[i]))
    }

    fn mean_visibility(&self) -> Option<f32> {
        self.mean_visibility
    }

    fn chunks_of(&self, source: &str) -> Vec<Chunk> {
        self.rows_of(source).iter().map(|&i| self.chunks[i].clone()).collect()
    }
}
