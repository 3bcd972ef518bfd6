//! Glyphs as `pdf-extract` draws them: each page's upright glyphs with their positions (y flipped
//! to grow downwards), their text cleaned up (ligatures spelled out, odd spaces made plain), and
//! rotated text kept aside.

use pdf_extract::{Document, MediaBox, OutputDev, OutputError, Transform};

use super::cjk::is_closing_cjk_punctuation;
use crate::formats::contained;

/// One glyph on a page, in points, y growing downwards from the top of the media box.
#[derive(Debug, Clone, Copy)]
pub(super) struct Glyph {
    pub(super) x0: f64,
    /// Where the next glyph would start.
    pub(super) x1: f64,
    /// Where the ink ends: closing Chinese punctuation fills only the left half of its box, and
    /// LibreOffice lets it hang past the end of a justified line, into the gutter.
    pub(super) ink1: f64,
    /// Baseline.
    pub(super) y: f64,
    /// Font size on the page.
    pub(super) size: f64,
    /// Byte range of the glyph's text in [`Page::chars`].
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) space: bool,
}

#[derive(Debug, Default)]
pub(super) struct Page {
    pub(super) number: u32,
    /// Upper edge of the media box, where y = 0 after flipping.
    pub(super) top: f64,
    pub(super) width: f64,
    pub(super) height: f64,
    pub(super) glyphs: Vec<Glyph>,
    pub(super) chars: String,
    /// Text of rotated or mirrored glyphs, in drawing order.
    pub(super) rotated: String,
}

impl Page {
    pub(super) fn has_text(&self) -> bool {
        self.glyphs.iter().any(|g| !g.space) || !self.rotated.trim().is_empty()
    }

    /// Bytes of text the page holds, for the per-file text limit.
    pub(super) fn text_len(&self) -> usize {
        self.chars.len() + self.rotated.len()
    }

    pub(super) fn text(&self, g: &Glyph) -> &str {
        &self.chars[g.start as usize..g.end as usize]
    }
}

pub(super) fn collect_page(doc: &Document, number: u32) -> Result<Page, String> {
    let mut page = Page { number, ..Page::default() };
    // See `load`: pdf-extract panics on some malformed content. A page that fails is left out
    // (the others are still indexed); only when every page fails is the file `Corrupt`.
    match contained(|| pdf_extract::output_doc_page(doc, &mut page, number)) {
        Ok(Ok(())) => Ok(page),
        Ok(Err(e)) => Err(e.to_string()),
        Err(msg) => Err(super::operators::describe_panic(&msg)),
    }
}

impl OutputDev for Page {
    fn begin_page(
        &mut self,
        _page_num: u32,
        media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        // Positions are measured from the top of the page: the media box's upper edge.
        self.top = media_box.ury;
        self.width = (media_box.urx - media_box.llx).abs();
        self.height = (media_box.ury - media_box.lly).abs();
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        let top = self.top;
        for g in &mut self.glyphs {
            g.y = top - g.y;
        }
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        text: &str,
    ) -> Result<(), OutputError> {
        let scale_x = trm.m11.hypot(trm.m12);
        let scale_y = trm.m21.hypot(trm.m22);
        let size = font_size.abs() * scale_y;
        let advance = width * font_size.abs() * scale_x;
        if !(size.is_finite() && advance.is_finite() && trm.m31.is_finite() && trm.m32.is_finite()) || size <= 0.0 {
            return Ok(());
        }
        let upright =
            trm.m11 > 0.0 && trm.m22 > 0.0 && trm.m12.abs() <= 0.05 * trm.m11 && trm.m21.abs() <= 0.05 * trm.m22;
        let start = self.chars.len();
        push_glyph_text(&mut self.chars, text);
        if !upright {
            let s = self.chars.split_off(start);
            self.rotated.push_str(&s);
            return Ok(());
        }
        let glyph_text = &self.chars[start..];
        let space = glyph_text.chars().all(char::is_whitespace);
        let advance = advance.max(0.0);
        let half = glyph_text.chars().count() == 1 && glyph_text.chars().all(is_closing_cjk_punctuation);
        self.glyphs.push(Glyph {
            x0: trm.m31,
            x1: trm.m31 + advance,
            ink1: trm.m31 + if half { advance / 2.0 } else { advance },
            // Flipped to top-down in `end_page`, once the media box is surely known.
            y: trm.m32,
            size,
            start: start as u32,
            end: self.chars.len() as u32,
            space,
        });
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

/// Appends a glyph's text: control characters dropped, Latin ligatures spelled out, spaces of
/// every kind made plain spaces, a soft hyphen made visible (it only shows at a line end).
fn push_glyph_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\u{FB00}' => out.push_str("ff"),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FB02}' => out.push_str("fl"),
            '\u{FB03}' => out.push_str("ffi"),
            '\u{FB04}' => out.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => out.push_str("st"),
            '\u{00AD}' | '\u{2010}' | '\u{2011}' => out.push('-'),
            '\u{FFFD}' | '\u{FEFF}' | '\u{200B}' => {}
            c if c.is_whitespace() => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;

    #[test]
    fn identity_h_cid_fonts_give_the_same_text() {
        // The manual again, its Chinese in a CID TrueType font with Identity-H encoding (cairo).
        let cid = extract("manual-cid.pdf");
        let simple = extract("manual.pdf");
        let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        assert_eq!(squash(&cid.text), squash(&simple.text));
        assert_eq!(cid.pages.len(), 3);
    }
}
