//! `skillrag doctor`: verifies every skill's current generation against its checksums and
//! every embedding cache record against its own, says what is wrong, and repairs it — damaged
//! generations are moved aside and rebuilt from the knowledge files, damaged cache records
//! dropped (they are embedded again when next needed).

use crate::{Engine, EngineError, IndexOptions, Progress};
use serde::Serialize;
use skillrag_generate::Message;
use skillrag_store::{CacheCheck, EmbeddingCache, StoreError};
use std::time::Instant;

/// The health of one skill's index.
#[derive(Debug, Clone, Serialize)]
pub struct SkillHealth {
    pub skill: String,
    /// `ok`, `damaged`, `unverified` (written before checksums), `not_indexed` or `unreadable`
    /// (the store could not be read: permissions, a database error).
    pub state: &'static str,
    pub generation: Option<u64>,
    pub chunks: usize,
    /// Files and bytes compared with their checksums.
    pub files: usize,
    pub bytes: u64,
    pub ms: f64,
    /// What is wrong, when something is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// What `doctor --repair` does about it (or the command that does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repair: Option<String>,
    /// What earlier repairs moved aside (never served, never deleted by skillrag) and its size:
    /// the user's to inspect and delete.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<SetAside>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SetAside {
    pub path: String,
    pub bytes: u64,
}

impl SkillHealth {
    /// Repaired by rebuilding the skill from its knowledge files.
    fn needs_rebuild(&self) -> bool {
        matches!(self.state, "damaged" | "unverified")
    }
}

/// The reader as `doctor` found it.
#[derive(Debug, Clone, Serialize)]
pub struct ReaderHealth {
    /// `not_configured`, `ok` or `failed` (a problem: `ask` cannot open it either).
    pub state: &'static str,
    /// What it is and what it did, or why it failed, in words.
    pub detail: String,
}

/// One embedding cache file as checked.
pub type CacheFileReport = CacheCheck;

#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    pub skills: Vec<SkillHealth>,
    pub cache: Vec<CacheFileReport>,
    /// Skills and cache files that are damaged or unreadable (the exit status of `doctor`).
    pub problems: usize,
    /// What `--repair` did, one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repaired: Vec<String>,
    /// What reads scans and pictures (Tesseract, pdftoppm), or why nothing does.
    pub ocr: String,
    /// The reader (`[reader]`): not configured, or the model and a test judgement it made.
    pub reader: ReaderHealth,
    pub seconds: f64,
}

impl Engine {
    /// Verifies every skill's current generation and the embedding cache; changes nothing.
    pub fn doctor(&self) -> Result<DoctorReport, EngineError> {
        let started = Instant::now();
        let mut skills = Vec::new();
        for skill in self.skills() {
            let t = Instant::now();
            let mut health = SkillHealth {
                skill: skill.id.clone(),
                state: "ok",
                generation: None,
                chunks: 0,
                files: 0,
                bytes: 0,
                ms: 0.0,
                problem: None,
                repair: None,
                set_aside: self
                    .store()
                    .set_aside(&skill.id)
                    .into_iter()
                    .map(|(path, bytes)| SetAside { path: path.display().to_string(), bytes })
                    .collect(),
            };
            let rebuild =
                format!("rebuild it from its knowledge files (`skillrag index --skill {} --rebuild`)", skill.id);
            match self.store().check(&skill.id) {
                Ok(None) => {
                    health.state = "not_indexed";
                    health.repair = Some(format!("`skillrag index --skill {}`", skill.id));
                }
                Ok(Some(check)) => {
                    (health.generation, health.chunks, health.files, health.bytes) =
                        (check.generation, check.chunks, check.files, check.bytes);
                    if !check.checksummed {
                        health.state = "unverified";
                        health.problem = Some("written before checksums: only tantivy's own were verified".into());
                        health.repair = Some(rebuild);
                    }
                }
                Err(StoreError::Corrupt { detail, .. }) => {
                    health.state = "damaged";
                    health.problem = Some(detail);
                    health.repair = Some(format!("move the damaged files aside and {rebuild}"));
                }
                Err(e) => {
                    health.state = "unreadable";
                    health.problem = Some(e.to_string());
                }
            }
            health.ms = t.elapsed().as_secs_f64() * 1000.0;
            skills.push(health);
        }
        let cache = self.check_cache();
        let reader = self.check_reader();
        let problems = skills.iter().filter(|s| matches!(s.state, "damaged" | "unreadable")).count()
            + cache.iter().filter(|c| !c.is_ok()).count()
            + usize::from(reader.state == "failed");
        Ok(DoctorReport {
            skills,
            cache,
            problems,
            repaired: Vec::new(),
            ocr: self.ocr_status(),
            reader,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Loads the configured reader and has it judge one passage that answers its question: a
    /// model that loads but cannot report token probabilities is caught here, not on a question.
    fn check_reader(&self) -> ReaderHealth {
        let failed = |detail: String| ReaderHealth { state: "failed", detail };
        let model = match self.open_reader_model() {
            Ok(None) => {
                return ReaderHealth {
                    state: "not_configured",
                    detail: "none ([reader] model or SKILLRAG_READER; scripts/setup-reader installs one)".into(),
                }
            }
            Ok(Some(model)) => model,
            Err(e) => return failed(format!("cannot be opened: {e}")),
        };
        let messages = [
            Message::system("You check answers. Reply with one word: yes or no."),
            Message::user("Passage:\nThe library opens at 9 am.\n\nQuestion: When does the library open?\n\nDoes the passage state the answer to the question?"),
        ];
        match model.choose(&messages, &["yes", "no"]) {
            Ok(choice) => ReaderHealth {
                state: "ok",
                detail: format!(
                    "{}: judged a test passage in {:.0} ms (P(yes) = {:.2})",
                    model.describe(),
                    choice.elapsed.as_secs_f64() * 1000.0,
                    choice.probabilities[0]
                ),
            },
            Err(e) => failed(format!("{}: {e}", model.describe())),
        }
    }

    /// Repairs what [`Engine::doctor`] found: damaged cache records are dropped, damaged (and
    /// unverified) skills moved aside and rebuilt. Returns the report of a fresh check.
    pub fn doctor_repair(&self, found: &DoctorReport, progress: &dyn Progress) -> Result<DoctorReport, EngineError> {
        let mut repaired = Vec::new();
        for c in found.cache.iter().filter(|c| !c.is_ok()) {
            let path = std::path::Path::new(&c.file);
            if path.is_file() {
                let dropped = EmbeddingCache::repair_file(path)?;
                repaired.push(match &c.unreadable {
                    Some(_) => format!("{}: removed (it is rebuilt as texts are embedded)", c.file),
                    None => format!("{}: dropped {dropped} damaged record(s)", c.file),
                });
            } else if path.is_dir() {
                std::fs::remove_dir_all(path).map_err(EngineError::io(&c.file))?;
                repaired.push(format!("{}: removed (a folder in a cache file's place)", c.file));
            }
        }
        let rebuild: Vec<String> = found.skills.iter().filter(|s| s.needs_rebuild()).map(|s| s.skill.clone()).collect();
        if !rebuild.is_empty() {
            let report = self.index(&IndexOptions { skills: rebuild, rebuild: true }, progress)?;
            repaired.extend(report.repaired);
            for s in report.skills {
                repaired.extend(s.repaired);
                if let Some(g) = s.generation {
                    repaired.push(format!("skill `{}`: rebuilt as generation {g} ({} chunks)", s.skill, s.chunks));
                }
            }
        }
        let mut after = self.doctor()?;
        after.repaired = repaired;
        Ok(after)
    }

    /// Checks every file of `.skillrag/cache/embeddings`.
    fn check_cache(&self) -> Vec<CacheFileReport> {
        let dir = self.project.state_dir().join("cache/embeddings");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return match dir.symlink_metadata() {
                Ok(_) => vec![CacheCheck {
                    file: dir.display().to_string(),
                    unreadable: Some("not a folder".into()),
                    ..CacheCheck::default()
                }],
                Err(_) => Vec::new(),
            };
        };
        let mut files: Vec<_> =
            entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "bin")).collect();
        files.sort();
        files
            .into_iter()
            .map(|path| {
                EmbeddingCache::check_file(&path).unwrap_or_else(|e| CacheCheck {
                    file: path.display().to_string(),
                    unreadable: Some(e.to_string()),
                    ..CacheCheck::default()
                })
            })
            .collect()
    }
}
