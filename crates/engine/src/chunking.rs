//! The chunk stage for one document: which preset applies (a file rule, the skill's `doc_type`,
//! the file format, or detection from the text), the pieces, their pages, and the summary that
//! long documents carry on every chunk.

use crate::config::IndexConfig;
use crate::EngineError;
use globset::{Glob, GlobMatcher};
use skillrag_chunk::{chunk_document_within, ChunkConfig, Piece, Preset, TooManyPieces};
use skillrag_core::{Chunk, DocType, Tier};
use skillrag_load::{Document, Format};
use skillrag_skill::Skill;

/// How documents are chunked, from the `[index]` settings.
pub(crate) struct Chunking {
    rules: Vec<(GlobMatcher, DocType)>,
    /// `None` is `auto`: detect from the text.
    default: Option<DocType>,
    summary_min_chars: usize,
    summary_chars: usize,
    fingerprint: String,
}

fn parse_preset(value: &str, what: &str) -> Result<Option<DocType>, EngineError> {
    if value.trim().eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    DocType::parse(value).map(Some).ok_or_else(|| {
        EngineError::Settings(format!(
            "{what}: unknown chunking preset `{value}` (expected auto, general, faq, legal or technical)"
        ))
    })
}

impl Chunking {
    pub fn new(config: &IndexConfig) -> Result<Chunking, EngineError> {
        let default = parse_preset(&config.preset, "index.preset")?;
        let mut rules = Vec::new();
        for rule in &config.presets {
            let Some((pattern, preset)) = rule.split_once('=') else {
                return Err(EngineError::Settings(format!(
                    "index.presets: `{rule}` is not `GLOB = PRESET` (e.g. \"labor-law/** = legal\")"
                )));
            };
            let glob = Glob::new(pattern.trim())
                .map_err(|e| EngineError::Settings(format!("index.presets: invalid glob `{}`: {e}", pattern.trim())))?;
            let doc_type = parse_preset(preset, "index.presets")?.ok_or_else(|| {
                EngineError::Settings(format!("index.presets: `{rule}`: a rule names a preset, not auto"))
            })?;
            rules.push((glob.compile_matcher(), doc_type));
        }
        let fingerprint = format!(
            "preset={};rules={};summary={}/{}",
            config.preset.trim().to_ascii_lowercase(),
            config.presets.iter().map(|r| r.split_whitespace().collect::<String>()).collect::<Vec<_>>().join(","),
            config.summary_min_chars,
            config.summary_chars
        );
        Ok(Chunking {
            rules,
            default,
            summary_min_chars: config.summary_min_chars,
            summary_chars: config.summary_chars,
            fingerprint,
        })
    }

    /// Identifies the settings that shape chunks beyond size and overlap.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The document type, which selects the preset: a FAQ table is always `faq`; then the
    /// owner's choice for this document (`chosen`, kept with the chunk edits), the first matching
    /// file rule, the skill's `doc_type`, the project preset, and finally detection.
    pub fn doc_type(&self, skill: &Skill, doc: &Document, chosen: Option<DocType>) -> DocType {
        if matches!(doc.format, Format::Faq(_)) {
            return DocType::Faq;
        }
        if let Some(d) = chosen {
            return d;
        }
        let path = format!("{}/{}", skill.id, doc.source);
        if let Some((_, d)) = self.rules.iter().find(|(glob, _)| glob.is_match(&path)) {
            return *d;
        }
        if let Some(d) = skill.settings.doc_type.or(self.default) {
            return d;
        }
        match skillrag_chunk::detect(&doc.text) {
            Some(Preset::Legal) => DocType::Legal,
            Some(Preset::Faq) => DocType::Faq,
            _ => DocType::General,
        }
    }

    /// Cuts `doc` into chunks (ids are assigned by the store); refused as soon as it yields more
    /// than `limit`.
    pub fn chunks(
        &self,
        skill: &Skill,
        doc: &Document,
        config: &ChunkConfig,
        limit: usize,
        chosen: Option<DocType>,
    ) -> Result<Vec<Chunk>, TooManyPieces> {
        let doc_type = self.doc_type(skill, doc, chosen);
        let (preset, config) = match doc_type {
            DocType::General => (Preset::General, *config),
            DocType::Faq => (Preset::Faq, *config),
            DocType::Legal => (Preset::Legal, *config),
            // Code and its explanation need room: twice the size and overlap.
            DocType::Technical => {
                (Preset::Technical, ChunkConfig { size: config.size * 2, overlap: config.overlap * 2 })
            }
        };
        let mut pieces = chunk_document_within(&doc.text, doc.format.is_markdown(), preset, &config, limit)?;
        if doc_type == DocType::Legal {
            // The law's name leads the heading path even in plain-text statutes.
            for p in &mut pieces {
                if !doc.title.is_empty() && !p.heading.first().is_some_and(|h| h.contains(doc.title.as_str())) {
                    p.heading.insert(0, doc.title.clone());
                }
            }
        }
        let summary = self.summary(doc, &pieces);
        let tier = Tier::from_source_path(&doc.source);
        Ok(pieces
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                let pages = pages_of(&doc.pages, p.span);
                Chunk {
                    id: 0,
                    skill: skill.id.clone(),
                    source: doc.source.clone(),
                    title: doc.title.clone(),
                    ocr_confidence: ocr_confidence(doc, pages),
                    keywords: Vec::new(),
                    questions: Vec::new(),
                    pages,
                    heading: p.heading,
                    ordinal: i as u32,
                    span: p.span,
                    doc_type,
                    tier,
                    mtime: doc.mtime,
                    content_hash: doc.content_hash.clone(),
                    text: p.text,
                    summary: summary.clone(),
                    table_header: p.table_header,
                }
            })
            .collect())
    }

    /// For a long document, its title and outline (the distinct headings of its pieces, in
    /// order), cut to `summary_chars`; `None` for short documents and documents without headings.
    fn summary(&self, doc: &Document, pieces: &[Piece]) -> Option<String> {
        if self.summary_min_chars == 0 || doc.text.chars().count() <= self.summary_min_chars {
            return None;
        }
        let mut outline: Vec<&str> = Vec::new();
        for heading in pieces.iter().flat_map(|p| p.heading.iter()) {
            let h = heading.as_str();
            if !h.contains(doc.title.as_str()) && !outline.contains(&h) {
                outline.push(h);
            }
        }
        // Without an outline the summary would be the title alone, which every chunk carries anyway.
        if outline.is_empty() {
            return None;
        }
        let summary = format!("{} — {}", doc.title, outline.join(" · "));
        Some(truncate_chars(&summary, self.summary_chars))
    }
}

/// `text` cut to at most `max` characters, with `…` when cut.
fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The first and last page a character span lies on.
fn pages_of(pages: &[(usize, u32)], span: (usize, usize)) -> Option<(u32, u32)> {
    let page_at = |pos: usize| {
        let i = pages.partition_point(|&(start, _)| start <= pos);
        pages.get(i.checked_sub(1)?).map(|&(_, page)| page)
    };
    let first = page_at(span.0).or_else(|| pages.first().map(|&(_, p)| p))?;
    let last = page_at(span.1.saturating_sub(1).max(span.0)).unwrap_or(first);
    Some((first, last.max(first)))
}

/// The lowest OCR confidence of the pages a chunk lies on (of a picture, its own); `None`
/// when none of its text came from OCR.
fn ocr_confidence(doc: &Document, pages: Option<(u32, u32)>) -> Option<f32> {
    doc.ocr
        .iter()
        .filter(|o| match (o.page, pages) {
            (None, _) => true,
            (Some(page), Some((first, last))) => (first..=last).contains(&page),
            (Some(_), None) => false,
        })
        .map(|o| o.confidence)
        .reduce(f32::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(source: &str, text: &str, format: Format) -> Document {
        Document {
            source: source.into(),
            path: source.into(),
            format,
            title: "Design of the billing service".into(),
            text: text.into(),
            pages: vec![(0, 1), (200, 2)],
            faq: vec![],
            encoding: "UTF-8",
            mtime: 0,
            size: text.len() as u64,
            content_hash: "h".into(),
            ocr: vec![],
            image: None,
        }
    }

    fn skill() -> Skill {
        let parsed = skillrag_skill::parse_skill_text(
            std::path::Path::new("skills/docs"),
            "docs",
            "---\nname: docs\ndescription: Design documents.\n---\n# docs\n",
        );
        parsed.skill.expect("skill")
    }

    #[test]
    fn long_documents_carry_their_outline_and_pages() {
        let body = "The invoice run reads every open subscription and writes one invoice per account. ".repeat(8);
        let text = format!(
            "# Design of the billing service\n\n## Invoicing\n\n{body}\n\n## Retries\n\n{body}\n\n## Storage\n\n{body}\n"
        );
        let config = IndexConfig { summary_min_chars: 1000, ..Default::default() };
        let chunking = Chunking::new(&config).unwrap();
        let chunks = chunking
            .chunks(
                &skill(),
                &document("design.md", &text, Format::Markdown),
                &ChunkConfig::default(),
                usize::MAX,
                None,
            )
            .unwrap();
        assert!(chunks.len() > 3);
        let summary = chunks[2].summary.clone().expect("a long document has a summary");
        assert_eq!(summary, "Design of the billing service — Invoicing · Retries · Storage");
        assert!(chunks.iter().all(|c| c.summary.as_deref() == Some(summary.as_str())));
        // Indexed with the chunk.
        assert!(chunks[2].indexed_text().starts_with(&summary));
        // Pages start at characters 0 and 200.
        assert_eq!(chunks[0].pages.map(|p| p.0), Some(1));
        assert_eq!(chunks.last().and_then(|c| c.pages), Some((2, 2)));
        // Short documents carry none.
        let short = chunking
            .chunks(
                &skill(),
                &document("a.md", "# T\n\n## A\n\nshort", Format::Markdown),
                &ChunkConfig::default(),
                usize::MAX,
                None,
            )
            .unwrap();
        assert_eq!(short[0].summary, None);
    }

    #[test]
    fn faq_tables_and_rules_choose_the_preset() {
        let config = IndexConfig { presets: vec!["docs/knowledge/law/** = legal".into()], ..Default::default() };
        let chunking = Chunking::new(&config).unwrap();
        let skill = skill();
        let law = document("knowledge/law/a.txt", "no articles here", Format::Text);
        assert_eq!(chunking.doc_type(&skill, &law, None), DocType::Legal);
        assert_eq!(chunking.doc_type(&skill, &law, Some(DocType::Faq)), DocType::Faq, "the owner's choice wins");
        let faq = document("knowledge/faq.csv", "Q: a\nA: b", Format::Faq(skillrag_load::formats::FaqFormat::Csv));
        assert_eq!(chunking.doc_type(&skill, &faq, None), DocType::Faq);
        assert_eq!(chunking.doc_type(&skill, &faq, Some(DocType::Legal)), DocType::Faq, "a FAQ table stays one");
        let statute = document("knowledge/s.md", "第一条 甲。\n\n第二条 乙。\n\n第三条 丙。\n", Format::Markdown);
        assert_eq!(chunking.doc_type(&skill, &statute, None), DocType::Legal);
        let plain = IndexConfig { preset: "general".into(), ..Default::default() };
        assert_eq!(Chunking::new(&plain).unwrap().doc_type(&skill, &statute, None), DocType::General);
    }

    #[test]
    fn pages_of_spans() {
        let pages = [(0, 1), (100, 2), (250, 3)];
        assert_eq!(pages_of(&pages, (10, 50)), Some((1, 1)));
        assert_eq!(pages_of(&pages, (90, 120)), Some((1, 2)));
        assert_eq!(pages_of(&pages, (100, 250)), Some((2, 2)));
        assert_eq!(pages_of(&pages, (260, 300)), Some((3, 3)));
        assert_eq!(pages_of(&[], (0, 10)), None);
    }

    #[test]
    fn truncates_by_characters() {
        assert_eq!(truncate_chars("劳动合同法", 10), "劳动合同法");
        assert_eq!(truncate_chars("劳动合同法实施条例", 5), "劳动合同…");
    }

    #[test]
    fn preset_rules_are_validated() {
        let mut config = IndexConfig { presets: vec!["labor-law/** = legal".into()], ..Default::default() };
        assert!(Chunking::new(&config).is_ok());
        config.presets = vec!["labor-law/**".into()];
        assert!(Chunking::new(&config).is_err());
        config.presets = vec!["a/** = statute".into()];
        assert!(Chunking::new(&config).is_err());
        config.presets = vec![];
        config.preset = "legal".into();
        assert!(Chunking::new(&config).is_ok());
    }
}
