//! What a paragraph of `word/document.xml` becomes: a heading, a list item, code or plain text,
//! from its own properties first and its style second; table-of-contents entries are dropped.

use super::styles::Styles;
use crate::formats::markdown::Block;

/// A paragraph as read so far; [`super::document`] fills it in.
#[derive(Default)]
pub(super) struct Para {
    pub(super) style: Option<String>,
    pub(super) num_id: Option<String>,
    pub(super) ilvl: Option<u8>,
    pub(super) outline: Option<u8>,
    pub(super) text: String,
    pub(super) run: String,
    pub(super) run_hidden: bool,
    /// The marker paragraphs of the pictures in it, written after it.
    pub(super) pictures: Vec<String>,
}

pub(super) fn finish_paragraph(p: Para, styles: &Styles, out: &mut Vec<Block>) {
    let kind = styles.kind(p.style.as_deref());
    if kind.toc {
        return;
    }
    let text = p.text.trim();
    if text.is_empty() {
        return;
    }
    let heading = match p.outline {
        Some(level) if level < 9 => Some(level.min(5) + 1),
        Some(_) => None,
        None => kind.heading,
    };
    let list = match p.num_id.as_deref() {
        Some(id) => (id.trim() != "0").then(|| p.ilvl.or(kind.list).unwrap_or(0).min(8)),
        None => kind.list.map(|level| p.ilvl.unwrap_or(level).min(8)),
    };
    let block = if let Some(level) = heading {
        Block::Heading(level, text.to_string())
    } else if let Some(level) = list {
        Block::ListItem(level, text.to_string())
    } else if kind.code {
        // Keep the code's own indentation.
        Block::Code(p.text.trim_end().trim_start_matches('\n').to_string())
    } else {
        Block::Para(text.to_string())
    };
    out.push(block);
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;

    #[test]
    fn headings_lists_and_paragraphs() {
        let body = [
            p("TOC1", "Installation\t3"),
            p("Heading1", "Installation"),
            plain("Run the installer &amp; follow the prompts."),
            li(0, "Download"),
            li(1, "Pick the 64-bit build"),
            p("ListBullet", "Run it"),
            p("Heading2", "Configuration"),
            plain("Edit config.toml."),
        ]
        .concat();
        let out = extract(&docx(&body, Some(WORD_STYLES), None));
        assert!(out.markdown);
        assert_eq!(
            out.text,
            "# Installation\n\nRun the installer & follow the prompts.\n\n- Download\n  - Pick the 64-bit build\n- Run it\n\n## Configuration\n\nEdit config.toml."
        );
        assert_eq!(out.title.as_deref(), Some("Installation"));
        assert!(out.pages.is_empty() && out.faq.is_empty());
    }

    #[test]
    fn code_paragraphs_are_fenced() {
        let styles = r#"<w:style w:type="paragraph" w:styleId="SourceCode"><w:name w:val="Source Code"/></w:style>"#;
        let body =
            [plain("Run:"), p("SourceCode", "cargo build"), p("SourceCode", "  --release"), plain("Done.")].concat();
        assert_eq!(
            extract(&docx(&body, Some(styles), None)).text,
            "Run:\n\n```\ncargo build\n  --release\n```\n\nDone."
        );
    }
}
