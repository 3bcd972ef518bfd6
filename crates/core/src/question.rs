//! The shape of a question: the marks, words and labels by which a text asks something.
//!
//! Three callers ask "is this a question", each of a different text, so each reads a different
//! part of the shape (the reason is at each caller):
//!
//! - the gate reads a short request as the user typed it: [`is_question`], a question mark at the
//!   end or a question word anywhere;
//! - the answer's sentence units read a sentence of a knowledge file: [`has_question_mark`], a
//!   mark anywhere outside brackets and URLs;
//! - the chunker's FAQ preset reads a line of a FAQ file: [`has_question_label`], the `Q:` or
//!   `问：` that opens it.

use crate::lang::simplified;

/// The question marks, ASCII and full-width.
pub const QUESTION_MARKS: [char; 2] = ['?', '？'];

/// Chinese question words that ask for content (吗 asks only yes or no).
const INTERROGATIVES_ZH: &[&str] = &["什么", "怎么", "为什么", "如何", "多少", "多久", "哪", "是否", "谁"];
/// Measure words after 几 that ask for a number: 几天, 几年, 几个 (but not 几乎).
const COUNTED_BY_JI: [char; 12] = ['天', '年', '月', '个', '岁', '次', '条', '种', '点', '号', '级', '倍'];
/// English question words that open a question, in lower case.
const WH_WORDS_EN: [&str; 7] = ["what", "why", "how", "where", "when", "which", "who"];
/// Labels that open a question in a FAQ, in Simplified characters (問題： reads as 问题：).
const QUESTION_LABELS: [&str; 8] = ["Q:", "Q：", "Q.", "Question:", "问：", "问:", "问题：", "问题:"];

/// A question by its punctuation or its question words: a question mark at the end (spaces
/// aside), 吗, a Chinese question word, 几 before a measure word, or an English question word
/// first. English words are matched in lower case: callers pass folded text.
pub fn is_question(text: &str) -> bool {
    let t = text.trim();
    t.ends_with(QUESTION_MARKS) || has_question_words(t)
}

/// Whether `text` asks by its words: 吗, a Chinese question word, 几 before a measure word, or an
/// English question word (in lower case) as its first word.
pub fn has_question_words(text: &str) -> bool {
    text.contains('吗')
        || has_interrogative_zh(text)
        || text.split('几').skip(1).any(|rest| rest.starts_with(COUNTED_BY_JI))
        || text.split_whitespace().next().is_some_and(|w| WH_WORDS_EN.contains(&w))
}

/// Whether `text` holds a Chinese question word that asks for content (什么, 怎么, 哪, 谁 …).
pub fn has_interrogative_zh(text: &str) -> bool {
    INTERROGATIVES_ZH.iter().any(|w| text.contains(w))
}

/// Whether `text` holds a question mark that asks: a `？`, or a `?` that does not open a URL's
/// query (`?id=3`, `?q=x`), outside parentheses (毕升（？-约1051） asks nothing).
pub fn has_question_mark(text: &str) -> bool {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '（' | '(' => depth += 1,
            '）' | ')' => depth = depth.saturating_sub(1),
            '？' if depth == 0 => return true,
            '?' if depth == 0 => {
                let next = text[i + 1..].chars().next();
                if next.is_none_or(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '=')) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Whether `line` opens with a question label (`Q:`, `Question:`, `问：`, `问题：`, or Traditional
/// `問：`, `問題：`) followed by something. Decoration before the label is the caller's to strip.
pub fn has_question_label(line: &str) -> bool {
    // Read in Simplified characters, which keep their byte lengths: 問： is 问：.
    let head = simplified(&line.chars().take(9).collect::<String>());
    QUESTION_LABELS.iter().any(|p| line.len() > p.len() && head.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_by_mark_or_words() {
        for q in ["试用期多久", "年休假有几天", "违法吗", "what is r0", "Is it legal ?", "可以延长吗？", "哪里"]
        {
            assert!(is_question(q), "{q}");
        }
        for s in ["几乎所有人都同意。", "What is R0", "it is what it is", "谢谢"] {
            assert!(!is_question(s), "{s}");
        }
        assert!(has_interrogative_zh("李白写的诗有哪些") && !has_interrogative_zh("讲个笑话"));
    }

    #[test]
    fn question_marks_outside_brackets_and_urls() {
        assert!(has_question_mark("怎么玩?QQ炫舞是一款游戏"));
        assert!(has_question_mark("Is it legal? Yes."));
        assert!(!has_question_mark("毕升（？-约1051）发明了活字印刷。"));
        assert!(!has_question_mark("See https://example.com/page?id=3 for details."));
    }

    #[test]
    fn question_labels() {
        for line in ["Q: a?", "Question: why", "问：试用期多久？", "問題：加班費怎麼算？", "Q. x"] {
            assert!(has_question_label(line), "{line}");
        }
        for line in ["Q:", "问：", "A: b", "Quality matters", "问题是"] {
            assert!(!has_question_label(line), "{line}");
        }
    }
}
