/// The language of a question or text, as far as the pipeline needs it: which analyzer
/// path dominates and which language a refusal is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Chinese,
    Other,
}

impl Language {
    /// Chinese when CJK ideographs make up at least a fifth of the letters.
    pub fn detect(text: &str) -> Language {
        let (mut cjk, mut letters) = (0usize, 0usize);
        for c in text.chars() {
            if is_cjk(c) {
                cjk += 1;
                letters += 1;
            } else if c.is_alphabetic() {
                letters += 1;
            }
        }
        if letters > 0 && cjk * 5 >= letters {
            Language::Chinese
        } else {
            Language::Other
        }
    }
}

/// CJK unified ideographs (with extensions A–F and compatibility ideographs).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2EBEF | 0x30000..=0x3134F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_chinese_and_mixed() {
        assert_eq!(Language::detect("试用期不签劳动合同违法吗？"), Language::Chinese);
        assert_eq!(Language::detect("What is R0 of SARS-CoV-2?"), Language::Other);
        assert_eq!(Language::detect("COVID-19 的潜伏期"), Language::Chinese);
        assert_eq!(Language::detect("!!!"), Language::Other);
    }
}
