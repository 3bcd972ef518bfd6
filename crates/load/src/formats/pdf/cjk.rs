//! Character classes of Chinese, Japanese and Korean text, which is set and wrapped without
//! spaces between words: glyph widths, word gaps, page numbers and line joins all depend on them.

pub(super) fn is_closing_cjk_punctuation(c: char) -> bool {
    "、。，．：；！？」』）】〉》〕〗〙〛｝］".contains(c)
}

pub(super) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF      // Hangul Jamo
        | 0x2E80..=0x2FDF    // CJK radicals
        | 0x3000..=0x303F    // CJK symbols and punctuation
        | 0x3040..=0x30FF    // Hiragana, Katakana
        | 0x3100..=0x312F    // Bopomofo
        | 0x3130..=0x318F    // Hangul compatibility Jamo
        | 0x31A0..=0x31FF
        | 0x3200..=0x4DBF    // enclosed, compatibility, extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xA960..=0xA97F
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0xFE30..=0xFE4F    // CJK compatibility forms
        | 0xFF00..=0xFF60    // full-width forms
        | 0xFFE0..=0xFFE6
        | 0x20000..=0x3FFFF) // extensions B and later
}
