//! Code-point ranges of Chinese, Japanese and Korean script, in one place.
//!
//! Each stage that asks "is this CJK?" needs a different answer (a language guess counts only
//! ideographs, a line joiner also wants kana and full-width punctuation), so there is one
//! function per distinct range set, named after what it covers. The ranges are the ones each
//! stage always used: changing one changes chunking, loading or answers, so do not merge two
//! that look alike unless their code-point sets are equal.

/// Han ideographs: CJK unified ideographs and extension A (3400–4DBF, 4E00–9FFF), compatibility
/// ideographs (F900–FAFF), extensions B–F (20000–2EBEF) and extension G (30000–3134F).
///
/// Used by language detection and the text analyzer (and the ask route's CJK share), which count
/// Chinese words: kana, Hangul and punctuation are not Chinese letters.
pub fn is_han_ideograph(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2EBEF | 0x30000..=0x3134F)
}

/// [`is_han_ideograph`] plus the rest of the Supplementary Ideographic Plane: 3400–4DBF,
/// 4E00–9FFF, F900–FAFF and 20000–3134F in one span (so 2EBF0–2FFFF, with extension I and the
/// compatibility supplement, counts too).
///
/// Used by the chunk splitter: an ASCII `.` directly followed by such a character still ends a
/// sentence (`.` then `中`).
pub fn is_han_ideograph_or_ideographic_plane(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3134F)
}

/// Everything from CJK radicals to the end of the unified ideographs (2E80–9FFF: radicals, CJK
/// punctuation, kana, Bopomofo, Hangul compatibility Jamo, extension A, ideographs),
/// compatibility ideographs (F900–FAFF), half- and full-width forms (FF00–FFEF) and planes 2–3
/// (20000–3FFFF).
///
/// Used by the HTML loader: a line break between two such characters is no space (CSS segment
/// break rules), so wide East Asian text wrapped in the source is joined.
pub fn is_east_asian_or_fullwidth_form(c: char) -> bool {
    matches!(c as u32, 0x2E80..=0x9FFF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x3FFFF)
}

/// Basic-plane CJK only: CJK symbols and punctuation through the unified ideographs (3000–9FFF),
/// compatibility ideographs (F900–FAFF) and half- and full-width forms (FF00–FFEF); no radicals
/// and nothing beyond the basic plane.
///
/// Used where a line break between two such characters is dropped as the answer shows knowledge
/// text: the extractive answer's line unwrapping and the evaluator's readable text, which must
/// agree with it.
pub fn is_bmp_east_asian_or_fullwidth_form(c: char) -> bool {
    matches!(c as u32, 0x3000..=0x9FFF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF)
}

/// Chinese, Japanese and Korean script with its punctuation: Hangul Jamo (1100–11FF), CJK radicals
/// (2E80–2FDF), CJK symbols and punctuation (3000–303F), kana (3040–30FF), Bopomofo (3100–312F),
/// Hangul compatibility Jamo (3130–318F), 31A0–31FF, enclosed and compatibility forms with
/// extension A (3200–4DBF), unified ideographs (4E00–9FFF), Hangul Jamo extended A (A960–A97F),
/// Hangul syllables (AC00–D7AF), compatibility ideographs (F900–FAFF), CJK compatibility forms
/// (FE30–FE4F), full-width forms (FF00–FF60, FFE0–FFE6) and planes 2–3 (20000–3FFFF).
///
/// Used by the PDF loader, where glyph widths, word gaps, page numbers and line joins depend on
/// whether text is set without spaces between words.
pub fn is_han_kana_hangul_or_fullwidth(c: char) -> bool {
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

/// Ideographs, kana and Hangul syllables with CJK and full-width punctuation: CJK radicals
/// (2E80–2FDF), CJK symbols and punctuation (3000–303F), kana (3040–30FF), Bopomofo (3100–312F),
/// extension A (3400–4DBF), unified ideographs (4E00–9FFF), Hangul syllables (AC00–D7AF),
/// compatibility ideographs (F900–FAFF), CJK compatibility forms (FE30–FE4F), half- and
/// full-width forms (FF00–FFEF) and extensions B–F with the compatibility supplement
/// (20000–2FA1F).
///
/// Used by the OCR word joiner: words next to such a character are written without a space, and
/// ASCII punctuation after one becomes full-width.
pub fn is_han_kana_or_hangul_syllable(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x2FDF | 0x3000..=0x303F | 0x3040..=0x30FF | 0x3100..=0x312F | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFFEF
        | 0x20000..=0x2FA1F)
}
