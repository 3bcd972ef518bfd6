//! Which Tesseract language models read a skill's scans: `chi_sim+eng`, from the skill's own
//! text or from `[index] ocr_languages`.

use skillrag_core::{is_han_ideograph, is_traditional, Language};
use std::fmt;

/// Chinese characters that make a mostly English skill text count as naming Chinese sources
/// (one stray character, a name or a symbol, does not).
const MIN_HAN_FOR_CHINESE: usize = 4;

/// A Tesseract language list such as `chi_sim+eng` (the first model leads).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Languages(Vec<String>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an OCR language: write Tesseract's names joined by `+` (chi_sim+eng, chi_tra, eng) or zh-Hans, zh-Hant, en")]
pub struct BadLanguages(pub String);

impl Languages {
    /// Reads `chi_sim+eng`, `zh-Hans, en` or a mix; BCP 47 names of the languages the project
    /// ships packs for are mapped to Tesseract's (zh, zh-Hans, zh-CN → chi_sim; zh-Hant, zh-TW,
    /// zh-HK → chi_tra; en → eng). Whether a model is installed is checked by the engine.
    pub fn parse(spec: &str) -> Result<Languages, BadLanguages> {
        let mut names = Vec::new();
        for part in spec.split(['+', ',', ' ']).map(str::trim).filter(|p| !p.is_empty()) {
            let name = match part.to_ascii_lowercase().replace('_', "-").as_str() {
                "zh" | "zh-hans" | "zh-cn" | "zh-sg" => "chi_sim".to_string(),
                "zh-hant" | "zh-tw" | "zh-hk" | "zh-mo" => "chi_tra".to_string(),
                "en" | "en-us" | "en-gb" => "eng".to_string(),
                _ if part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && part.len() <= 32 => {
                    part.to_string()
                }
                _ => return Err(BadLanguages(spec.to_string())),
            };
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if names.is_empty() {
            return Err(BadLanguages(spec.to_string()));
        }
        Ok(Languages(names))
    }

    /// The languages of a skill written in `text` (its SKILL.md): Chinese in the script it
    /// uses, with English for the Latin words Chinese documents carry; English then Chinese for
    /// a skill described mostly in English that still names Chinese sources (a mixed skill's
    /// Chinese scans read with `eng` alone were indexed as garbage, and either model reads the
    /// other's text well enough); otherwise English.
    pub fn for_text(text: &str) -> Languages {
        let chinese = if is_traditional(text) { "chi_tra" } else { "chi_sim" };
        let names: Vec<&str> = if Language::detect(text) == Language::Chinese {
            vec![chinese, "eng"]
        } else if text.chars().filter(|&c| is_han_ideograph(c)).count() >= MIN_HAN_FOR_CHINESE {
            vec!["eng", chinese]
        } else {
            vec!["eng"]
        };
        Languages(names.iter().map(|s| s.to_string()).collect())
    }

    /// Simplified Chinese and English, which read either language.
    pub fn chinese_and_english() -> Languages {
        Languages(vec!["chi_sim".into(), "eng".into()])
    }

    /// Whether any of the models reads Chinese.
    pub fn reads_chinese(&self) -> bool {
        self.0.iter().any(|l| l.starts_with("chi_"))
    }

    pub fn names(&self) -> &[String] {
        &self.0
    }

    /// The names as Tesseract's `-l` takes them.
    pub fn spec(&self) -> String {
        self.0.join("+")
    }
}

impl fmt::Display for Languages {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tesseract_and_bcp47_names() {
        assert_eq!(Languages::parse("chi_sim+eng").unwrap().spec(), "chi_sim+eng");
        assert_eq!(Languages::parse("zh-Hant, en").unwrap().spec(), "chi_tra+eng");
        assert_eq!(Languages::parse("zh+chi_sim").unwrap().spec(), "chi_sim");
        assert!(Languages::parse("").is_err());
        assert!(Languages::parse("eng; rm -rf /").is_err());
        assert!(Languages::parse("../../etc").is_err());
    }

    #[test]
    fn a_skill_text_chooses_its_script() {
        assert_eq!(Languages::for_text("回答劳动合同法的问题，这个技能只用法条").spec(), "chi_sim+eng");
        assert_eq!(Languages::for_text("回答臺灣百科的問題，這個技能只用條目").spec(), "chi_tra+eng");
        assert_eq!(Languages::for_text("Answers questions about the router").spec(), "eng");
        let mixed = "Answers questions about employment contracts, from scanned labour law articles (劳动合同法)";
        assert_eq!(Languages::for_text(mixed).spec(), "eng+chi_sim");
        assert_eq!(Languages::for_text("Answers questions about the 中文 router").spec(), "eng");
        assert_eq!(Languages::for_text("").spec(), "eng");
    }
}
