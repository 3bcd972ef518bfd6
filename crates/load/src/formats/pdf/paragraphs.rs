//! Lines joined into paragraphs: blank lines where the vertical gap or the font size says a new
//! paragraph starts, line breaks where a line ends early, hyphenated words and broken Chinese
//! lines joined; page starts counted as the text is written.

use std::collections::HashSet;

use unicode_normalization::UnicodeNormalization;

use super::rows::{Kind, Line};
use skillrag_core::is_han_kana_hangul_or_fullwidth;

enum Sep {
    /// A new paragraph.
    Blank,
    /// A line break inside a paragraph.
    Newline,
    Space,
    /// Joined directly (Chinese, or a hyphenated compound).
    Nothing,
    /// "exam-" + "ple": the hyphen goes.
    Dehyphen,
}

pub(super) fn assemble(lines: &[Line]) -> (String, Vec<(usize, u32)>) {
    let words = WordSets::of(lines);
    let mut text = String::new();
    let mut chars = 0usize;
    let mut pages: Vec<(usize, u32)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line_text: String = line.text.nfc().collect();
        if i > 0 {
            match separator(lines, i, &words) {
                Sep::Blank => {
                    text.push_str("\n\n");
                    chars += 2;
                }
                Sep::Newline => {
                    text.push('\n');
                    chars += 1;
                }
                Sep::Space => {
                    text.push(' ');
                    chars += 1;
                }
                Sep::Nothing => {}
                Sep::Dehyphen => {
                    text.pop();
                    chars -= 1;
                }
            }
        }
        if pages.last().is_none_or(|&(_, p)| p != line.page) {
            pages.push((chars, line.page));
        }
        chars += line_text.chars().count();
        text.push_str(&line_text);
    }
    let normalized: String = text.nfc().collect();
    if normalized.chars().count() != chars {
        // Normalizing across a line join composed characters; recount the page starts.
        for (offset, _) in &mut pages {
            *offset = text.chars().take(*offset).nfc().count();
        }
    }
    let text = normalized;
    (text, pages)
}

fn separator(lines: &[Line], i: usize, words: &WordSets) -> Sep {
    let (a, b) = (&lines[i - 1], &lines[i]);
    let size = a.size.max(b.size);
    let resized = (a.size - b.size).abs() > 0.1 * size;
    // Would the next line's first word have fitted at the end of this one? Then the break was
    // meant: the end of a paragraph, a heading, a list item, a centred line.
    let meant = a.right - a.x1 > b.first_word + 0.4 * a.size + 1.0;
    if a.block == b.block {
        let step = b.y - a.y;
        let spacing = line_spacing(lines, i);
        if resized || step > spacing + 0.4 * size {
            return Sep::Blank;
        }
        if meant && !ends_with_hyphen_break(a, b) {
            return Sep::Newline;
        }
    } else if resized || a.kind == Kind::Full || b.kind == Kind::Full || (meant && !ends_with_hyphen_break(a, b)) {
        // A paragraph flows on from one column or page to the next, never into or out of a
        // full-width title; nor does it when its last line ended early.
        return Sep::Blank;
    }
    join(a, b, words)
}

fn ends_with_hyphen_break(a: &Line, b: &Line) -> bool {
    a.text.ends_with('-') && b.text.chars().next().is_some_and(char::is_lowercase)
}

/// The usual baseline step between lines near line `i` of its block: the smallest step among
/// up to four neighbours on either side, or 1.2 × the font size for a block of two lines.
fn line_spacing(lines: &[Line], i: usize) -> f64 {
    let block = lines[i].block;
    let step = |j: usize| -> Option<f64> {
        let (a, b) = (lines.get(j.checked_sub(1)?)?, lines.get(j)?);
        (a.block == block && b.block == block).then_some(b.y - a.y).filter(|&s| s > 0.5 * b.size)
    };
    let near = (i.saturating_sub(4)..=i + 4).filter(|&j| j != i).filter_map(step);
    near.fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.min(s)))).unwrap_or(1.2 * lines[i].size)
}

fn join(a: &Line, b: &Line, words: &WordSets) -> Sep {
    let (Some(last), Some(first)) = (a.text.chars().next_back(), b.text.chars().next()) else {
        return Sep::Space;
    };
    if last == '–' && a.text.chars().rev().nth(1).is_some_and(|c| c.is_ascii_digit()) && first.is_ascii_digit() {
        return Sep::Nothing; // "95–" + "100°C"
    }
    if last == '-' {
        let before = a.text.chars().rev().nth(1);
        if before.is_some_and(char::is_alphabetic) && first.is_lowercase() {
            let head = a.text[..a.text.len() - 1].rsplit(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
            let tail = b.text.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
            return if words.keeps_hyphen(head, tail) { Sep::Nothing } else { Sep::Dehyphen };
        }
        if before.is_some_and(char::is_alphanumeric) {
            return Sep::Nothing; // "Wi-" + "Fi"
        }
    }
    if cjk_at_edge(&a.text, true) && cjk_at_edge(&b.text, false) {
        return if ends_sentence(&a.text) { Sep::Newline } else { Sep::Nothing };
    }
    if ends_sentence(&a.text) {
        return Sep::Newline;
    }
    Sep::Space
}

/// Words of the document, to tell "non-" + "overlapping" (written "non-overlapping" elsewhere)
/// from "exam-" + "ple".
struct WordSets {
    plain: HashSet<String>,
    hyphenated: HashSet<String>,
}

impl WordSets {
    fn of(lines: &[Line]) -> WordSets {
        let mut plain = HashSet::new();
        let mut hyphenated = HashSet::new();
        for line in lines {
            let tokens: Vec<&str> = line.text.split(|c: char| !(c.is_alphanumeric() || c == '-')).collect();
            // The last token may be a hyphenated line end; it proves nothing.
            for token in tokens.iter().take(tokens.len().saturating_sub(1)) {
                let token = token.trim_matches('-');
                if token.is_empty() {
                    continue;
                }
                if token.contains('-') {
                    hyphenated.insert(token.to_lowercase());
                } else {
                    plain.insert(token.to_lowercase());
                }
            }
        }
        WordSets { plain, hyphenated }
    }

    fn keeps_hyphen(&self, head: &str, tail: &str) -> bool {
        let (head, tail) = (head.to_lowercase(), tail.to_lowercase());
        self.hyphenated.contains(&format!("{head}-{tail}")) && !self.plain.contains(&format!("{head}{tail}"))
    }
}

/// Whether a line's last (or first) character is Chinese, Japanese or Korean text or its
/// punctuation, quotes after or before such a character included.
fn cjk_at_edge(text: &str, end: bool) -> bool {
    let quote = |c: char| "“”‘’\"'…—·".contains(c);
    let mut chars: Box<dyn Iterator<Item = char>> =
        if end { Box::new(text.chars().rev()) } else { Box::new(text.chars()) };
    for c in &mut chars {
        if is_han_kana_hangul_or_fullwidth(c) {
            return true;
        }
        if !quote(c) {
            return false;
        }
    }
    false
}

/// Ends with sentence-final punctuation of Chinese text (closing quotes and brackets skipped).
fn ends_sentence(text: &str) -> bool {
    let last = text.trim_end_matches(|c: char| "”’」』）)】\"'".contains(c)).chars().next_back();
    last.is_some_and(|c| "。！？!?…".contains(c)) && cjk_at_edge(text, true)
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

    const ZH_P1: &str = "路由器的摆放位置往往比任何高级设置都重要。把路由器放在房屋中央、离地一米以上、远离微波炉和厚重承重墙的开阔位置，\
        通常就能明显改善信号覆盖。调整位置后，请等待两分钟，再用同一台设备在相同的位置重新测速，这样前后结果才有可比性。";
    const ZH_P6: &str = "最便宜的排障工具是一份记录。把无线网络名称、信道规划、每个子节点的位置以及最近一次固件更新的日期写在同一页纸上，\
        等到网络出问题的时候，这页纸能省下好几个小时，尤其是在当初安装网络的人已经无法解释其设置思路的时候。";

    #[test]
    fn hyphenated_line_ends_are_joined() {
        let t = extract("two-column.pdf").text;
        // pdftotext shows these split at line ends ("trou-", "consider-", "televi-", "cabi-", ...).
        for word in
            ["troubleshoot", "considerable", "television", "cabinet", "approximations", "separate", "unobstructed"]
        {
            assert!(t.contains(word), "{word} not joined:\n{t}");
        }
        // A real hyphen stays: the document writes "known-good" and "non-overlapping" elsewhere too.
        assert!(t.contains("known-good cable") && t.contains("non-overlapping channels"), "{t}");
        assert!(t.contains("twelve-volt adapter"), "{t}");
        // No hyphen left at a line end before a lowercase letter.
        let chars: Vec<char> = t.chars().collect();
        assert!(!chars.windows(3).any(|w| w[0] == '-' && w[1] == '\n' && w[2].is_lowercase()), "{t}");
    }

    #[test]
    fn broken_chinese_lines_are_joined() {
        let x = extract("two-column.pdf");
        // Each Chinese paragraph wraps over four to six lines in its column.
        pos(&x.text, ZH_P1);
        pos(&x.text.replace("。\n", "。"), ZH_P6);
        let manual = extract("manual.pdf").text;
        pos(
            &manual,
            "普洱茶以云南大叶种晒青毛茶为原料，分为生茶和熟茶。生茶未经渥堆，新茶滋味浓烈、略带苦涩，存放多年后逐渐转为醇和；",
        );
        // Mixed lines: Chinese followed by English on the same line, English wrapped.
        pos(&manual, "常见的西湖龙井、碧螺春、黄山毛峰、信阳毛尖都属于绿茶。Green tea is not oxidised; its young leaves scald easily");
    }

    fn line(text: &str, x1: f64, first_word: f64) -> Line {
        Line {
            text: text.into(),
            x1,
            y: 0.0,
            size: 10.0,
            first_word,
            block: 0,
            kind: Kind::Page,
            right: 100.0,
            page: 1,
        }
    }

    #[test]
    fn line_joins() {
        let words = WordSets::of(&[line("a well-known fact and", 100.0, 5.0)]);
        let sep = |a: &str, b: &str| join(&line(a, 100.0, 5.0), &line(b, 100.0, 5.0), &words);
        assert!(matches!(sep("for exam-", "ple, this"), Sep::Dehyphen));
        assert!(matches!(sep("a well-", "known fact"), Sep::Nothing), "written with a hyphen elsewhere");
        assert!(matches!(sep("the Wi-", "Fi name"), Sep::Nothing));
        assert!(matches!(sep("ends -", "no word"), Sep::Space));
        assert!(matches!(sep("路由器的摆放位置往往比任", "何高级设置都重要"), Sep::Nothing));
        assert!(matches!(sep("设置都重要，", "“醒茶”"), Sep::Nothing));
        assert!(matches!(sep("设置都重要。", "把路由器"), Sep::Newline));
        assert!(matches!(sep("约", "75 度"), Sep::Space));
        assert!(matches!(sep("at about 85 to", "90 degrees"), Sep::Space));
        assert!(matches!(sep("95–", "100°C"), Sep::Nothing));
    }
}
