//! Tesseract's TSV output (`tesseract IMAGE - tsv`) read back into text and a confidence.
//!
//! TSV rather than plain text because it carries each word's confidence and its block and
//! paragraph, from which the text is rebuilt as the PDF extractor builds it: paragraphs apart
//! by a blank line, a paragraph's lines joined (Chinese without a space, a hyphenated word
//! whole), and no space between Chinese words (Tesseract spaces every word it finds).

use crate::PageText;
use skillrag_core::is_han_kana_or_hangul_syllable;

/// One recognized word.
struct Word<'a> {
    /// (block, paragraph, line) it belongs to.
    line: (u32, u32, u32),
    confidence: f32,
    text: &'a str,
}

/// Parses Tesseract's TSV: one row per page, block, paragraph, line and word (level 5).
pub(crate) fn page_text(tsv: &str) -> PageText {
    let words: Vec<Word> = tsv.lines().skip(1).filter_map(word).collect();
    let (mut weighted, mut chars) = (0.0f64, 0usize);
    for w in &words {
        let n = w.text.chars().count();
        weighted += f64::from(w.confidence) * n as f64;
        chars += n;
    }
    let mut text = String::new();
    let mut previous: Option<(u32, u32, u32)> = None;
    for w in &words {
        let (block, paragraph, _) = w.line;
        match previous {
            Some((b, p, _)) if (b, p) != (block, paragraph) => text.push_str("\n\n"),
            Some(line) if line != w.line => {
                // The next line of the same paragraph: rejoin a word hyphenated at the line end.
                if text.ends_with('-') && text[..text.len() - 1].ends_with(|c: char| c.is_alphabetic()) {
                    text.pop();
                } else if needs_space(&text, w.text) {
                    text.push(' ');
                }
            }
            Some(_) if needs_space(&text, w.text) => text.push(' '),
            _ => {}
        }
        push_word(&mut text, w.text);
        previous = Some(w.line);
    }
    let confidence = if chars == 0 { 0.0 } else { (weighted / chars as f64 / 100.0) as f32 };
    PageText { text, confidence: confidence.clamp(0.0, 1.0), words: words.len() }
}

fn word(row: &str) -> Option<Word<'_>> {
    let cols: Vec<&str> = row.splitn(12, '\t').collect();
    if cols.len() < 12 || cols[0] != "5" {
        return None;
    }
    let text = cols[11].trim();
    let confidence: f32 = cols[10].parse().ok()?;
    if text.is_empty() || confidence < 0.0 {
        return None;
    }
    let n = |i: usize| cols[i].parse::<u32>().ok();
    Some(Word { line: (n(2)?, n(3)?, n(4)?), confidence, text })
}

/// Words are spaced as in the language: Latin words apart, Chinese (and anything next to it)
/// together.
fn needs_space(text: &str, next: &str) -> bool {
    match (text.chars().next_back(), next.chars().next()) {
        (Some(a), Some(b)) => !(is_han_kana_or_hangul_syllable(a) || is_han_kana_or_hangul_syllable(b)),
        _ => false,
    }
}

/// Appends a word; ASCII punctuation right after a Chinese character becomes its full-width
/// form, as Chinese text writes it (Tesseract's Chinese models often read `；` as `;`).
fn push_word(text: &mut String, word: &str) {
    let after_cjk = text.chars().next_back().is_some_and(is_han_kana_or_hangul_syllable);
    let mut chars = word.chars();
    if after_cjk {
        if let Some(first) = chars.clone().next() {
            if let Some(wide) = full_width(first) {
                text.push(wide);
                chars.next();
            }
        }
    }
    text.extend(chars);
}

fn full_width(c: char) -> Option<char> {
    Some(match c {
        ',' => '，',
        ';' => '；',
        ':' => '：',
        '?' => '？',
        '!' => '！',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n";

    fn tsv(words: &[(u32, u32, u32, f32, &str)]) -> String {
        let mut out = HEADER.to_string();
        out.push_str("1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t\n");
        for (i, (b, p, l, conf, text)) in words.iter().enumerate() {
            out.push_str(&format!("5\t1\t{b}\t{p}\t{l}\t{i}\t0\t0\t10\t10\t{conf}\t{text}\n"));
        }
        out
    }

    #[test]
    fn chinese_words_join_and_punctuation_widens() {
        let page = page_text(&tsv(&[
            (1, 1, 1, 96.0, "第十九条"),
            (1, 1, 1, 90.0, "劳动"),
            (1, 1, 1, 80.0, "合同"),
            (1, 1, 1, 70.0, ";"),
            (1, 1, 2, 96.0, "试用期"),
            (2, 1, 1, 50.0, "第二十条"),
        ]));
        assert_eq!(page.text, "第十九条劳动合同；试用期\n\n第二十条");
        assert_eq!(page.words, 6);
        assert!((0.8..0.9).contains(&page.confidence), "{}", page.confidence);
    }

    #[test]
    fn latin_words_space_and_hyphenation_rejoins() {
        let page = page_text(&tsv(&[
            (1, 1, 1, 95.0, "The"),
            (1, 1, 1, 95.0, "warranty"),
            (1, 1, 1, 95.0, "cov-"),
            (1, 1, 2, 95.0, "ers"),
            (1, 1, 2, 95.0, "two"),
            (1, 1, 2, 95.0, "years,"),
            (1, 1, 2, 95.0, "COVID-19"),
            (1, 1, 2, 95.0, "的"),
        ]));
        assert_eq!(page.text, "The warranty covers two years, COVID-19的");
        assert!((page.confidence - 0.95).abs() < 1e-4);
    }

    #[test]
    fn no_words_is_empty_with_zero_confidence() {
        let page = page_text(&tsv(&[]));
        assert_eq!(page.text, "");
        assert_eq!(page.words, 0);
        assert_eq!(page.confidence, 0.0);
        assert_eq!(page_text("").text, "");
    }
}
