//! Character classes of Chinese, Japanese and Korean text, which is set and wrapped without
//! spaces between words: glyph widths, word gaps, page numbers and line joins all depend on them.
//! The code-point ranges themselves live in `skillrag_core` (`is_han_kana_hangul_or_fullwidth`).

pub(super) fn is_closing_cjk_punctuation(c: char) -> bool {
    "、。，．：；！？」』）】〉》〕〗〙〛｝］".contains(c)
}
