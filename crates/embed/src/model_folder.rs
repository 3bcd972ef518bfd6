//! The one check of a local Hugging Face model folder, shared by the embedding model and the
//! cross-encoder reranker (which depends on this crate for it), so both explain a bad folder
//! the same way: which folder, what is missing, and which setting to fix.

use std::path::{Path, PathBuf};

/// What a model folder must hold, and how its errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FolderSpec {
    /// How errors name the folder: `embedding model folder`.
    pub what: &'static str,
    /// The setting to fix, as errors say it: `set SKILLRAG_EMBED_MODEL to a model folder…`.
    pub fix: &'static str,
    /// The weight files accepted, preferred first.
    pub weights: &'static [&'static str],
}

/// The files of a folder that passed [`FolderSpec::check`].
#[derive(Debug, Clone)]
pub struct ModelFiles {
    pub config_json: String,
    pub tokenizer_json: PathBuf,
    pub weights: PathBuf,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{what} {path}: {problem} ({fix})")]
pub struct ModelFolderError {
    pub what: &'static str,
    pub path: String,
    pub problem: String,
    pub fix: &'static str,
}

impl FolderSpec {
    /// Checks that `path` is a folder with config.json (read here), tokenizer.json and one of
    /// the weight files.
    pub fn check(&self, path: &Path) -> Result<ModelFiles, ModelFolderError> {
        if !path.is_dir() {
            return Err(self.error(path, "not a folder".into()));
        }
        self.check_config(path)?;
        let config_json = std::fs::read_to_string(path.join("config.json"))
            .map_err(|e| self.error(path, format!("cannot read config.json: {e}")))?;
        let tokenizer_json = path.join("tokenizer.json");
        if !tokenizer_json.is_file() {
            return Err(self.error(path, "tokenizer.json is missing".into()));
        }
        let weights = self.weights.iter().map(|f| path.join(f)).find(|p| p.is_file()).ok_or_else(|| {
            let problem = match self.weights {
                [one] => format!("{one} is missing"),
                several => format!("no {}", several.join(" or ")),
            };
            self.error(path, problem)
        })?;
        Ok(ModelFiles { config_json, tokenizer_json, weights })
    }

    /// Only that config.json is there: cheap enough to run when a project opens, leaving the
    /// rest to when the model loads.
    pub fn check_config(&self, path: &Path) -> Result<(), ModelFolderError> {
        if path.join("config.json").is_file() {
            Ok(())
        } else {
            Err(self.error(path, "no config.json".into()))
        }
    }

    fn error(&self, path: &Path, problem: String) -> ModelFolderError {
        ModelFolderError { what: self.what, path: path.display().to_string(), problem, fix: self.fix }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: FolderSpec = FolderSpec { what: "test model folder", fix: "set X", weights: &["a.bin", "b.bin"] };

    #[test]
    fn names_the_folder_the_missing_file_and_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("model");
        let err = |p: &Path| SPEC.check(p).err().map(|e| e.to_string()).unwrap_or_default();
        let expected = |problem: &str| format!("test model folder {}: {problem} (set X)", tmp.display());
        assert_eq!(err(&tmp), expected("not a folder"));
        assert_eq!(SPEC.check_config(&tmp).unwrap_err().to_string(), expected("no config.json"));
        std::fs::create_dir_all(&tmp).unwrap();
        assert_eq!(err(&tmp), expected("no config.json"));
        std::fs::write(tmp.join("config.json"), "{}").unwrap();
        assert!(SPEC.check_config(&tmp).is_ok());
        assert_eq!(err(&tmp), expected("tokenizer.json is missing"));
        std::fs::write(tmp.join("tokenizer.json"), "{}").unwrap();
        assert_eq!(err(&tmp), expected("no a.bin or b.bin"));
        let one = FolderSpec { weights: &["a.bin"], ..SPEC };
        assert!(one.check(&tmp).unwrap_err().to_string().contains("a.bin is missing"));
        std::fs::write(tmp.join("b.bin"), "").unwrap();
        let files = SPEC.check(&tmp).unwrap();
        assert_eq!((files.config_json.as_str(), files.weights), ("{}", tmp.join("b.bin")));
    }
}
