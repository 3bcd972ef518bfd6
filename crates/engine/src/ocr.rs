//! Which OCR a skill's scans and pictures are read with: Tesseract as found on this machine
//! (probed once), in the languages `[index] ocr_languages` names or the skill's SKILL.md is
//! written in, with the project's OCR cache.

use crate::Engine;
use skillrag_core::Diagnostic;
use skillrag_load::ocr::{Languages, Ocr, OcrCache, OcrError};
use skillrag_load::OcrChoice;
use skillrag_skill::Skill;

impl Engine {
    /// The OCR engine of this machine, probed on first use; the cache lives in the state folder.
    fn ocr_engine(&self) -> Result<&Ocr, &OcrError> {
        self.ocr
            .get_or_init(|| {
                let cache = OcrCache::new(self.project.state_dir().join("cache/ocr"));
                Ocr::find(self.settings.index.ocr_settings).map(|ocr| ocr.with_cache(cache))
            })
            .as_ref()
    }

    /// What reads scans and pictures on this machine, or why nothing does.
    pub fn ocr_status(&self) -> String {
        if !self.settings.index.ocr {
            return "off (`[index] ocr = false`)".into();
        }
        match self.ocr_engine() {
            Ok(ocr) => ocr.describe(),
            Err(e) => e.to_string(),
        }
    }

    /// How `skill`'s scans are read, in `languages` when given (`skillrag extract
    /// --ocr-languages`), else as configured. A language setting that cannot be used is
    /// returned as a diagnostic, once: the skill's scans and pictures are then reported and
    /// skipped, and everything else indexes.
    pub fn ocr_choice(&self, skill: Option<&Skill>, languages: Option<&str>) -> (OcrChoice, Option<Diagnostic>) {
        let settings = &self.settings.index;
        if !settings.ocr {
            return (OcrChoice::Unavailable("OCR is turned off (`[index] ocr = false`)".into()), None);
        }
        let ocr = match self.ocr_engine() {
            Ok(ocr) => ocr,
            Err(e) => return (OcrChoice::unavailable(e), None),
        };
        let configured = languages.map(str::to_string).or_else(|| settings.ocr_languages.clone());
        let (languages, origin) = match &configured {
            Some(spec) => match Languages::parse(spec) {
                Ok(l) => (l, self.project.root.join("skillrag.toml")),
                Err(e) => return self.language_problem(e.to_string(), self.project.root.join("skillrag.toml")),
            },
            None => {
                let text = skill
                    .map(|s| format!("{} {} {}", s.name, s.description, s.instructions.as_deref().unwrap_or("")))
                    .unwrap_or_default();
                (Languages::for_text(&text), skill.map_or_else(|| self.project.root.clone(), |s| s.skill_file()))
            }
        };
        // English guessed from the skill's text may be wrong for one page (a Chinese scan in a
        // skill described in English): a page it reads poorly is read again in Chinese and
        // English, when installed.
        let fallback = configured.is_none() && !languages.reads_chinese();
        match ocr.with_languages(languages) {
            Ok(ocr) if fallback => (OcrChoice::Ready(ocr.with_fallback(Languages::chinese_and_english())), None),
            Ok(ocr) => (OcrChoice::Ready(ocr), None),
            Err(e) => self.language_problem(e.to_string(), origin),
        }
    }

    fn language_problem(&self, message: String, at: std::path::PathBuf) -> (OcrChoice, Option<Diagnostic>) {
        let diagnostic = Diagnostic::error(&at, None, format!("{message}; scans and pictures are skipped"));
        (OcrChoice::Unavailable(message), Some(diagnostic))
    }
}
