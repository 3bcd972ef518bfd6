//! The chunk stage of the index path (docs/design.md §3).
//!
//! Text is cut into pieces of at most `size` characters that overlap by up to `overlap`
//! characters. Splitting is recursive — paragraph, then line, then sentence (`。！？；.!?;`),
//! then word, then grapheme — so a piece ends at the strongest boundary that keeps it small
//! enough. Markdown headings become each piece's heading path, and a fenced code block stays
//! in one piece with the paragraph that explains it. Same input, same pieces.
//!
//! Written by hand rather than with a text-splitting crate because the three properties
//! above (heading paths as metadata, code kept with its explanation, overlap that starts at
//! a sentence boundary) are exactly what the general splitters do not offer together.

mod markdown;
mod preset;
mod split;

pub use preset::{article_label, detect, is_question_line, Preset};

use std::ops::Range;

/// Bumped whenever chunk boundaries change for the same input and settings; indexes chunked
/// by another version are re-chunked.
pub const CHUNKER_VERSION: u32 = 6;

/// The smallest chunk size accepted: below it a chunk cannot hold a sentence.
pub const MIN_CHUNK_SIZE: usize = 16;

/// Chunk size and overlap, in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkConfig {
    pub size: usize,
    pub overlap: usize,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig { size: 500, overlap: 80 }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("chunk size must be at least {MIN_CHUNK_SIZE} characters, got {0}")]
    SizeTooSmall(usize),
    #[error("chunk overlap ({overlap}) must be less than half the chunk size ({size})")]
    OverlapTooLarge { size: usize, overlap: usize },
}

impl ChunkConfig {
    /// Identifies the chunking settings and algorithm version, e.g. `v1/500/80`.
    pub fn fingerprint(&self) -> String {
        format!("v{CHUNKER_VERSION}/{}/{}", self.size, self.overlap)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.size < MIN_CHUNK_SIZE {
            return Err(ConfigError::SizeTooSmall(self.size));
        }
        if self.overlap * 2 > self.size {
            return Err(ConfigError::OverlapTooLarge { size: self.size, overlap: self.overlap });
        }
        Ok(())
    }
}

/// One chunk of a document, before it gets an id and metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// Markdown heading path, outermost first. Empty for plain text.
    pub heading: Vec<String>,
    pub text: String,
    /// Character (not byte) span in the input text.
    pub span: (usize, usize),
    /// The header line and delimiter row of the Markdown table the piece continues, when the
    /// table began before the piece: later rows of a long table still say what their columns
    /// are. Carried beside the text, as the heading path is, not in it: `text` stays the
    /// document's text at `span`, which quotes, overlaps between neighbours and chunk edits
    /// rely on. `None` for a header row left blank (a table without a recognizable header).
    pub table_header: Option<String>,
}

/// Splits text into sentences (at `。！？；.!?;` and line breaks), each with its byte offset;
/// the same boundaries the chunker uses.
pub fn sentences(text: &str) -> Vec<(usize, &str)> {
    split::sentences(text)
}

/// Chunks a Markdown document.
pub fn chunk_markdown(text: &str, config: &ChunkConfig) -> Vec<Piece> {
    chunk_document(text, true, Preset::General, config)
}

/// Chunks plain text: no headings, no code blocks, only the text's own boundaries.
pub fn chunk_text(text: &str, config: &ChunkConfig) -> Vec<Piece> {
    chunk_document(text, false, Preset::General, config)
}

/// A document that would yield more pieces than the limit given to [`chunk_document_within`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("yields more than {limit} chunks")]
pub struct TooManyPieces {
    pub limit: usize,
}

/// Chunks a document, Markdown or plain text, with the cuts of `preset` (articles, questions)
/// made before the size-driven splitting.
pub fn chunk_document(text: &str, markdown: bool, preset: Preset, config: &ChunkConfig) -> Vec<Piece> {
    chunk_document_within(text, markdown, preset, config, usize::MAX).unwrap_or_default()
}

/// [`chunk_document`] that gives up as soon as the document yields more than `limit` pieces,
/// rather than chunking a generated or hostile file to the end only to refuse it.
pub fn chunk_document_within(
    text: &str,
    markdown: bool,
    preset: Preset,
    config: &ChunkConfig,
    limit: usize,
) -> Result<Vec<Piece>, TooManyPieces> {
    let (sections, tables) = if markdown {
        markdown::sections(text)
    } else {
        (vec![markdown::Section { heading: Vec::new(), body: 0..text.len(), code: Vec::new() }], Vec::new())
    };
    let sections = preset::apply(text, sections, preset, config);
    build(text, sections, &tables, config, limit)
}

fn build(
    text: &str,
    sections: Vec<markdown::Section>,
    tables: &[markdown::Table],
    config: &ChunkConfig,
    limit: usize,
) -> Result<Vec<Piece>, TooManyPieces> {
    let size = config.size.max(MIN_CHUNK_SIZE);
    let config = ChunkConfig { size, overlap: config.overlap.min(size / 2) };
    let mut ranges: Vec<(usize, Range<usize>)> = Vec::new();
    for (i, section) in sections.iter().enumerate() {
        let left = limit.saturating_sub(ranges.len());
        for range in split::chunk_section(text, section.body.clone(), &section.code, &config, left) {
            ranges.push((i, range));
        }
        if ranges.len() > limit {
            return Err(TooManyPieces { limit });
        }
    }
    // Starts and ends each grow from chunk to chunk, but a start (the overlap) falls before the
    // previous end: one cursor for each keeps the conversion linear.
    let (mut starts, mut ends) = (CharOffsets::new(text), CharOffsets::new(text));
    Ok(ranges
        .into_iter()
        .map(|(i, range)| Piece {
            heading: sections[i].heading.clone(),
            text: text[range.clone()].to_string(),
            span: (starts.at(range.start), ends.at(range.end)),
            table_header: table_header(text, tables, range.start),
        })
        .collect())
}

/// The header of the table a piece starting at byte `start` continues: one whose data rows the
/// start lies in (a piece starting on the header holds it already).
fn table_header(text: &str, tables: &[markdown::Table], start: usize) -> Option<String> {
    let i = tables.partition_point(|t| t.range.start <= start).checked_sub(1)?;
    let table = tables.get(i).filter(|t| start >= t.head_end && start < t.range.end)?;
    let head = text.get(table.range.start..table.head_end)?.trim();
    let header_line = head.lines().next().unwrap_or_default();
    // A blank header row names nothing; repeating it would only add noise.
    if header_line.chars().all(|c| c == '|' || c.is_whitespace()) {
        return None;
    }
    Some(head.to_string())
}

/// Converts byte offsets to character offsets for offsets visited mostly in increasing order.
struct CharOffsets<'a> {
    text: &'a str,
    byte: usize,
    char: usize,
}

impl<'a> CharOffsets<'a> {
    fn new(text: &'a str) -> Self {
        CharOffsets { text, byte: 0, char: 0 }
    }

    fn at(&mut self, byte: usize) -> usize {
        if byte < self.byte {
            self.byte = 0;
            self.char = 0;
        }
        self.char += self.text[self.byte..byte].chars().count();
        self.byte = byte;
        self.char
    }
}

#[cfg(test)]
mod tests;
