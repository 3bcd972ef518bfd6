//! The settings the engine works with, resolved once from the project's configuration when
//! [`Engine::open`](crate::Engine::open) runs. Command-line flags are applied to that
//! configuration before it opens; nothing in the engine reads the raw [`Config`] afterwards.

use crate::config::{Config, RetrievalConfig};
use skillrag_load::ocr::OcrSettings;
use skillrag_load::LoadOptions;

#[derive(Debug, Clone)]
pub struct EngineSettings {
    pub retrieval: RetrievalSettings,
    pub index: IndexSettings,
}

/// `[retrieval]`, and the share of `[rerank]` that search itself needs.
#[derive(Debug, Clone)]
pub struct RetrievalSettings {
    /// `[retrieval]` as written (defaults filled in).
    pub section: RetrievalConfig,
    /// Fused hits a configured reranker rescores (at least 1).
    pub rerank_candidates: usize,
}

/// `[index]`: how knowledge files are read, chunked, embedded and OCRed.
#[derive(Debug, Clone)]
pub struct IndexSettings {
    /// Limits on what one file may cost to read.
    pub load: LoadOptions,
    pub chunk_size: usize,
    pub chunk_overlap: usize,
    pub max_chunks_per_file: usize,
    /// Texts per embedding call (at least 1).
    pub embed_batch: usize,
    /// Whether indexed FAQ questions become routing examples (a skill may say otherwise).
    pub faq_examples: bool,
    /// Whether scans and pictures are read by OCR at all.
    pub ocr: bool,
    pub ocr_settings: OcrSettings,
    /// The Tesseract languages configured; `None`: from each skill's SKILL.md.
    pub ocr_languages: Option<String>,
    /// OCR confidence under which `sources` lists a page as worth checking.
    pub ocr_low_confidence: f32,
}

impl EngineSettings {
    pub fn resolve(config: &Config) -> EngineSettings {
        let i = &config.index;
        EngineSettings {
            retrieval: RetrievalSettings {
                section: config.retrieval.clone(),
                rerank_candidates: config.rerank.candidates.max(1),
            },
            index: IndexSettings {
                load: i.load_options(),
                chunk_size: i.chunk_size,
                chunk_overlap: i.chunk_overlap,
                max_chunks_per_file: i.max_chunks_per_file,
                embed_batch: i.embed_batch.max(1),
                faq_examples: i.faq_examples,
                ocr: i.ocr,
                ocr_settings: i.ocr_settings(),
                ocr_languages: Some(i.ocr_languages.clone()).filter(|l| !l.trim().is_empty()),
                ocr_low_confidence: i.ocr_low_confidence,
            },
        }
    }
}
