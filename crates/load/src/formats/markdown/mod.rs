//! The Markdown block model shared by the DOCX and HTML extractors: both read their source into
//! [`Block`]s (tables through a [`TableBuilder`]), rendered here as the Markdown the chunker
//! understands.

mod table;

use unicode_normalization::UnicodeNormalization;

pub(super) use table::{Cell, TableBuilder};

/// One block of the Markdown output.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Block {
    /// `#`×level heading (level 1..=6).
    Heading(u8, String),
    Para(String),
    /// `- ` item, indented two spaces per nesting level (0 = top).
    ListItem(u8, String),
    /// Preformatted text, fenced.
    Code(String),
    /// One rendered table row; rows of the same table (same id) are kept on consecutive lines.
    Row(u32, String),
}

impl Block {
    fn text(&self) -> &str {
        match self {
            Block::Heading(_, t) | Block::Para(t) | Block::ListItem(_, t) | Block::Code(t) | Block::Row(_, t) => t,
        }
    }
}

/// Renders blocks as Markdown: blank lines between blocks, single newlines between the items of a
/// list and the rows of a table, consecutive code blocks in one fence.
pub(super) fn render_blocks(blocks: &[Block]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < blocks.len() {
        let block = &blocks[i];
        if i > 0 {
            let tight = matches!((&blocks[i - 1], block), (Block::ListItem(..), Block::ListItem(..)))
                || matches!((&blocks[i - 1], block), (Block::Row(a, _), Block::Row(b, _)) if a == b);
            out.push_str(if tight { "\n" } else { "\n\n" });
        }
        match block {
            Block::Heading(level, text) => {
                out.push_str(&"#".repeat(usize::from((*level).clamp(1, 6))));
                out.push(' ');
                out.push_str(&clean_inline(text));
            }
            Block::Para(text) => out.push_str(&escape_line_starts(text)),
            Block::ListItem(level, text) => {
                out.push_str(&"  ".repeat(usize::from(*level)));
                out.push_str("- ");
                out.push_str(&clean_inline(text));
            }
            Block::Row(_, text) => out.push_str(&escape_line_starts(text)),
            Block::Code(_) => {
                let mut code = Vec::new();
                while let Some(Block::Code(text)) = blocks.get(i) {
                    code.push(text.as_str());
                    i += 1;
                }
                i -= 1;
                let code = code.join("\n");
                let mut fence = "```".to_string();
                while code.contains(&fence) {
                    fence.push('`');
                }
                out.push_str(&fence);
                out.push('\n');
                out.push_str(&code);
                out.push('\n');
                out.push_str(&fence);
            }
        }
        i += 1;
    }
    out
}

/// Keeps text lines that happen to start like Markdown structure (`# `, a code fence) from being
/// read as such by the chunker.
fn escape_line_starts(text: &str) -> String {
    text.lines()
        .map(|line| {
            let t = line.trim_start();
            if (t.starts_with('#') && t.trim_start_matches('#').starts_with([' ', '\t'])) || t.starts_with("```") {
                format!("\\{t}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whitespace runs (tabs, newlines) collapsed to single spaces, trimmed.
pub(super) fn clean_inline(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// NFC, `\n` line endings, no control characters but `\n`/`\t`, no trailing spaces, at most one
/// blank line in a row (outside code fences), no leading/trailing blank lines.
pub(super) fn normalize_text(text: &str) -> String {
    let text: String = text
        .replace("\r\n", "\n")
        .replace('\r', "\n")
        .nfc()
        .filter(|&c| c == '\n' || c == '\t' || !c.is_control())
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    let mut in_fence = false;
    for line in text.lines() {
        let line = line.trim_end();
        if line.starts_with("```") {
            in_fence = !in_fence;
        }
        if line.is_empty() && !in_fence {
            blank_run += 1;
            if blank_run > 1 || out.is_empty() {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_string()
}
