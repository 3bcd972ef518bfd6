use crate::script::is_han_ideograph;

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
            if is_han_ideograph(c) {
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

/// `text` with Traditional Chinese characters written in their Simplified form: the analyzer's
/// folding of the two scripts (`skillrag_text`), as OpenCC-based analyzers do for Lucene and
/// Elasticsearch. The conversion is by character (with `fast2s`'s table), so each character keeps
/// its byte length and a token's offsets are the same in `text`; were any character to change
/// length, `text` is returned as it is.
pub fn simplified(text: &str) -> String {
    let converted = fast2s::convert(text);
    if converted.len() == text.len() {
        converted
    } else {
        text.to_string()
    }
}

/// Whether `text` is written in Traditional Chinese: some of its CJK characters, and at least
/// one in twenty, have another Simplified form. One such character marks a short question;
/// a longer text that quotes one Traditional name stays Simplified.
pub fn is_traditional(text: &str) -> bool {
    let converted = simplified(text);
    let (mut cjk, mut changed) = (0usize, 0usize);
    for (written, simple) in text.chars().zip(converted.chars()) {
        if is_han_ideograph(written) {
            cjk += 1;
            changed += (written != simple) as usize;
        }
    }
    changed > 0 && changed * 20 >= cjk
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

    #[test]
    fn traditional_characters_fold_to_simplified_in_place() {
        assert_eq!(simplified("勞動者辭職，需要賠償違約金嗎？"), "劳动者辞职，需要赔偿违约金吗？");
        // Simplified text, words written alike in both (乾隆, 著作) and other scripts are kept.
        for kept in ["乾隆皇帝的著作", "劳动合同法", "Ｗｉｄｅ 1889 über", ""] {
            assert_eq!(simplified(kept), kept);
        }
    }

    #[test]
    fn tells_the_scripts_apart() {
        assert!(is_traditional("徐陵在哪一年被封為尚書左僕射？"));
        assert!(is_traditional("回答臺灣百科的問題，這個技能只用條目"));
        assert!(!is_traditional("徐陵在哪一年被封为尚书左仆射？"));
        assert!(!is_traditional("中文百科"), "written alike in both scripts");
        let quoting = "收录约两百五十篇中文维基百科条目，回答这些条目中的事实性问题，引用《說文》。";
        assert!(!is_traditional(quoting), "one Traditional name in a Simplified text");
        assert!(!is_traditional("What is SARS?"));
    }
}
