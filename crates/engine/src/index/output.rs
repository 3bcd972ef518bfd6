//! The embed and write stages of indexing one skill.

use super::{Progress, SkillReport};
use crate::EngineError;
use skillrag_core::Chunk;
use skillrag_embed::{EmbedKind, Embedder};
use skillrag_store::{EmbeddingCache, IndexMeta, Manifest, NewChunk};

/// The embed and write stages: new chunks are embedded in batches as they arrive and written
/// at once; the generation is begun with the first file that changes, so an index that is
/// already up to date is never rewritten.
pub(super) struct Output<'a> {
    pub(super) store: &'a dyn skillrag_store::Store,
    pub(super) wanted: &'a IndexMeta,
    pub(super) writer: Option<Box<dyn skillrag_store::IndexWriter>>,
    /// Unchanged files seen before the writer was begun.
    pub(super) kept: Vec<String>,
    pub(super) pending: Vec<Chunk>,
    pub(super) batch: usize,
    pub(super) embedder: Option<&'a dyn Embedder>,
    pub(super) cache: Option<&'a mut EmbeddingCache>,
    pub(super) skill: &'a str,
    pub(super) progress: &'a dyn Progress,
}

impl Output<'_> {
    fn writer(&mut self) -> Result<&mut Box<dyn skillrag_store::IndexWriter>, EngineError> {
        if self.writer.is_none() {
            let mut writer = self.store.begin(self.skill, self.wanted.clone())?;
            for source in self.kept.drain(..) {
                writer.keep(&source)?;
            }
            self.writer = Some(writer);
        }
        self.writer.as_mut().ok_or_else(|| EngineError::Internal("no index writer"))
    }

    /// Carries `source` over from the previous generation (once the writer is begun).
    pub(super) fn keep(&mut self, source: String) -> Result<(), EngineError> {
        match self.writer.as_mut() {
            Some(writer) => {
                writer.keep(&source)?;
            }
            None => self.kept.push(source),
        }
        Ok(())
    }

    pub(super) fn queue(
        &mut self,
        chunks: Vec<Chunk>,
        manifest: &mut Manifest,
        report: &mut SkillReport,
    ) -> Result<(), EngineError> {
        self.progress.embed_queued(self.skill, chunks.len());
        self.pending.extend(chunks);
        while self.pending.len() >= self.batch {
            let rest = self.pending.split_off(self.batch);
            let batch = std::mem::replace(&mut self.pending, rest);
            self.write(batch, manifest, report)?;
        }
        Ok(())
    }

    pub(super) fn flush(&mut self, manifest: &mut Manifest, report: &mut SkillReport) -> Result<(), EngineError> {
        let batch = std::mem::take(&mut self.pending);
        if !batch.is_empty() {
            self.write(batch, manifest, report)?;
        }
        Ok(())
    }

    pub(super) fn into_writer(mut self) -> Result<Box<dyn skillrag_store::IndexWriter>, EngineError> {
        self.writer()?;
        self.writer.ok_or_else(|| EngineError::Internal("no index writer"))
    }

    /// Embeds one batch of new chunks (cache first) and writes it.
    fn write(
        &mut self,
        batch: Vec<Chunk>,
        manifest: &mut Manifest,
        report: &mut SkillReport,
    ) -> Result<(), EngineError> {
        let Some(embedder) = self.embedder else {
            let n = batch.len();
            report.chunks += n;
            self.writer()?
                .add(batch.into_iter().map(|chunk| NewChunk { chunk, vector: None, visibility: 0.0 }).collect())?;
            self.progress.embedded(self.skill, n);
            return Ok(());
        };
        let min_visibility = self.wanted.min_visibility;
        let texts: Vec<String> = batch.iter().map(Chunk::indexed_text).collect();
        let mut vectors: Vec<Option<(Vec<f32>, f32)>> =
            texts.iter().map(|t| self.cache.as_ref().and_then(|c| c.get(t))).collect();
        let hits = vectors.iter().filter(|v| v.is_some()).count();
        report.cache_hits += hits;
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| vectors[i].is_none()).collect();
        // What the model cannot see is never searched densely (retrieval drops a dense signal
        // below `min_visibility`): tokenizing tells, and is far cheaper than embedding. Those
        // passages are stored without a vector. (A cached passage below the threshold is
        // stored as one never embedded.)
        let unseen_share = |visibility: f32| (visibility < min_visibility).then_some(visibility);
        let mut unseen: Vec<Option<f32>> =
            vectors.iter().map(|v| v.as_ref().and_then(|&(_, visibility)| unseen_share(visibility))).collect();
        if min_visibility > 0.0 && !missing.is_empty() {
            let missing_texts: Vec<&str> = missing.iter().map(|&i| texts[i].as_str()).collect();
            for (&i, visibility) in missing.iter().zip(embedder.visibility(&missing_texts, EmbedKind::Passage)?) {
                unseen[i] = unseen_share(visibility);
            }
        }
        let missing: Vec<usize> = missing.into_iter().filter(|&i| unseen[i].is_none()).collect();
        // Cached and unseen passages cost nothing more: counted as done at once.
        self.progress.embedded(self.skill, texts.len() - missing.len());
        if !missing.is_empty() {
            let missing_texts: Vec<&str> = missing.iter().map(|&i| texts[i].as_str()).collect();
            let embedded = embedder.embed(&missing_texts, EmbedKind::Passage)?;
            for (&i, e) in missing.iter().zip(embedded) {
                if let Some(c) = self.cache.as_deref_mut() {
                    c.put(&texts[i], &e.vector, e.visibility);
                }
                vectors[i] = Some((e.vector, e.visibility));
            }
            // Flushed per batch: an interrupted run keeps what it embedded.
            if let Some(c) = self.cache.as_deref_mut() {
                c.flush()?;
            }
            report.embedded += missing.len();
            self.progress.embedded(self.skill, missing.len());
        }
        let chunks: Vec<NewChunk> = batch
            .into_iter()
            .zip(vectors.into_iter().zip(unseen))
            .map(|(chunk, stored)| match stored {
                (_, Some(visibility)) => NewChunk { chunk, vector: None, visibility },
                (Some((vector, visibility)), None) => NewChunk { chunk, vector: Some(vector), visibility },
                (None, None) => NewChunk { chunk, vector: None, visibility: 0.0 },
            })
            .collect();
        for c in chunks.iter().filter(|c| c.vector.is_none()) {
            if let Some(entry) = manifest.files.get_mut(&c.chunk.source) {
                entry.vectorless += 1;
            }
        }
        report.chunks += chunks.len();
        self.writer()?.add(chunks)?;
        Ok(())
    }
}
