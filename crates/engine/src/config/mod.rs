//! Project configuration: `skillrag.toml`, then `.env`, then `SKILLRAG_*` environment
//! variables, then command-line flags — each overriding the one before.
//!
//! Environment variables name a field as `SKILLRAG_<SECTION>_<KEY>` (`SKILLRAG_INDEX_CHUNK_SIZE`)
//! or, for top-level keys, `SKILLRAG_<KEY>` (`SKILLRAG_SKILLS`); a few short aliases exist for
//! the essentials a harness sets (`SKILLRAG_EMBED_MODEL`, `SKILLRAG_CHUNK_SIZE`…). Secrets such as
//! the LLM API key are read from the environment only, never from the file.

mod load;
mod sections;
mod template;

pub use load::{load, load_with, ConfigError, Loaded, Section};
pub use sections::{AskConfig, EmbedConfig, IndexConfig, LlmConfig, ReaderConfig, RerankConfig, RetrievalConfig};
pub use template::template;

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const CONFIG_FILE: &str = "skillrag.toml";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Folders holding skill folders, relative to the project.
    pub skills: Vec<String>,
    /// Where retrieval data lives: `embedded` (the default, under `index.dir`), or a PostgreSQL
    /// URL (`postgres://…`, with pgvector) shared by replicas.
    pub store: String,
    pub index: IndexConfig,
    pub embed: EmbedConfig,
    pub retrieval: RetrievalConfig,
    pub rerank: RerankConfig,
    pub ask: AskConfig,
    pub llm: LlmConfig,
    pub reader: ReaderConfig,
    /// `[serve]`, as written: the server reads it (`skillrag_server::ServeConfig`), and passes
    /// it to [`load_with`] as a [`Section`] to have it checked and overridden like the rest.
    pub serve: toml::Table,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            skills: vec!["skills".into()],
            store: "embedded".into(),
            index: IndexConfig::default(),
            embed: EmbedConfig::default(),
            retrieval: RetrievalConfig::default(),
            rerank: RerankConfig::default(),
            ask: AskConfig::default(),
            llm: LlmConfig::default(),
            reader: ReaderConfig::default(),
            serve: toml::Table::new(),
        }
    }
}

impl Config {
    /// The embedding model folder, resolved against the project; `None` for `none`/empty, and
    /// when the model is an API's (`[embed] base_url` set).
    pub fn embed_model_path(&self, project: &Path) -> Option<PathBuf> {
        let m = self.embed.model.trim();
        if m.is_empty() || m.eq_ignore_ascii_case("none") || !self.embed.base_url.trim().is_empty() {
            return None;
        }
        Some(resolve(project, m))
    }

    /// The local cross-encoder folder, resolved against the project; `None` when unset or when
    /// a rerank endpoint (`url`) is configured.
    pub fn rerank_model_path(&self, project: &Path) -> Option<PathBuf> {
        let m = self.rerank.model.trim();
        if m.is_empty() || m.eq_ignore_ascii_case("none") || !self.rerank.base_url.trim().is_empty() {
            return None;
        }
        Some(resolve(project, m))
    }

    /// The local GGUF model file, resolved against the project; `None` when unset.
    pub fn llm_gguf_path(&self, project: &Path) -> Option<PathBuf> {
        let g = self.llm.gguf.trim();
        (!g.is_empty()).then(|| resolve(project, g))
    }

    /// The reader: an API root (`http://…`), a GGUF file resolved against the project, or `None`.
    pub fn reader_model(&self, project: &Path) -> Option<ReaderModel> {
        let m = self.reader.model.trim();
        if m.is_empty() || m.eq_ignore_ascii_case("none") {
            return None;
        }
        Some(match m.starts_with("http://") || m.starts_with("https://") {
            true => ReaderModel::Api(m.to_string()),
            false => ReaderModel::Gguf(resolve(project, m)),
        })
    }

    pub fn state_dir(&self, project: &Path) -> PathBuf {
        resolve(project, &self.index.dir)
    }

    pub fn skill_roots(&self, project: &Path) -> Vec<PathBuf> {
        self.skills.iter().map(|s| resolve(project, s)).collect()
    }

    /// The folders outside `project` that knowledge symlinks may point into.
    pub fn allowed_roots(&self, project: &Path) -> Vec<PathBuf> {
        self.index.allowed_roots.iter().map(|r| resolve(project, r)).collect()
    }
}

/// Where the reader runs.
#[derive(Debug, Clone, PartialEq)]
pub enum ReaderModel {
    /// An OpenAI-compatible API root.
    Api(String),
    /// A GGUF file, run in-process.
    Gguf(PathBuf),
}

fn resolve(project: &Path, p: &str) -> PathBuf {
    let expanded = match p.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME").map(|h| Path::new(&h).join(rest)),
        None => None,
    };
    let path = expanded.unwrap_or_else(|| PathBuf::from(p));
    if path.is_absolute() {
        path
    } else {
        project.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn defaults_without_file() {
        let tmp = tempfile::tempdir().unwrap();
        let loaded = load(tmp.path(), &env(&[])).unwrap();
        assert!(!loaded.has_file);
        assert_eq!(loaded.config, Config::default());
    }

    #[test]
    fn precedence_env_over_dotenv_over_file() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join(CONFIG_FILE),
            "[index]\nchunk_size = 300\nchunk_overlap = 50\n[embed]\nmodel = \"file-model\"\n",
        )
        .unwrap();
        std::fs::write(tmp.path().join(".env"), "SKILLRAG_INDEX_CHUNK_OVERLAP=40\nSKILLRAG_EMBED_MODEL=dotenv-model\n")
            .unwrap();
        let loaded = load(tmp.path(), &env(&[("SKILLRAG_EMBED_MODEL", "none"), ("SKILLRAG_SKILLS", "a, b")])).unwrap();
        let c = loaded.config;
        assert_eq!(c.index.chunk_size, 300, "file");
        assert_eq!(c.index.chunk_overlap, 40, ".env over file");
        assert_eq!(c.embed.model, "none", "environment over .env");
        assert_eq!(c.skills, vec!["a", "b"]);
    }

    #[test]
    fn aliases_and_typed_values() {
        let tmp = tempfile::tempdir().unwrap();
        let c = load(tmp.path(), &env(&[("SKILLRAG_CHUNK_SIZE", "256"), ("SKILLRAG_RETRIEVAL_RRF_K", "30.5")]))
            .unwrap()
            .config;
        assert_eq!(c.index.chunk_size, 256);
        assert_eq!(c.retrieval.rrf_k, 30.5);
    }

    #[test]
    fn clear_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let err = load(tmp.path(), &env(&[("SKILLRAG_INDEX_CHUNK_SIZE", "big")])).unwrap_err().to_string();
        assert!(err.starts_with("SKILLRAG_INDEX_CHUNK_SIZE=big:"), "{err}");
        std::fs::write(tmp.path().join(CONFIG_FILE), "[index]\nchunk_sise = 3\n").unwrap();
        let err = load(tmp.path(), &env(&[])).unwrap_err().to_string();
        assert!(err.contains("skillrag.toml") && err.contains("chunk_sise"), "{err}");
        std::fs::remove_file(tmp.path().join(CONFIG_FILE)).unwrap();
        let loaded = load(tmp.path(), &env(&[("SKILLRAG_INDEX_CHUNKSIZE", "3"), ("SKILLRAG_CACHE", "/x")])).unwrap();
        assert_eq!(loaded.unknown_env, vec!["SKILLRAG_INDEX_CHUNKSIZE"]);
    }

    #[test]
    fn remote_embedding_and_rerank_settings_from_the_environment() {
        let tmp = tempfile::tempdir().unwrap();
        let loaded = load(
            tmp.path(),
            &env(&[
                ("SKILLRAG_EMBED_BASE_URL", "http://127.0.0.1:11434/v1"),
                ("SKILLRAG_EMBED_MODEL", "bge-m3"),
                ("SKILLRAG_EMBED_DIM", "1024"),
                ("SKILLRAG_EMBED_API_KEY", "sk-x"),
                ("SKILLRAG_RERANK_BASE_URL", "http://127.0.0.1:8083"),
                ("SKILLRAG_RERANK_CANDIDATES", "30"),
                ("SKILLRAG_RERANK_TIMEOUT_SECS", "3"),
                ("SKILLRAG_RERANK_API_KEY", "sk-y"),
            ]),
        )
        .unwrap();
        assert!(loaded.unknown_env.is_empty(), "{:?}", loaded.unknown_env);
        let c = loaded.config;
        assert_eq!(
            (c.embed.base_url.as_str(), c.embed.model.as_str(), c.embed.dim),
            ("http://127.0.0.1:11434/v1", "bge-m3", 1024)
        );
        assert_eq!(c.embed_model_path(tmp.path()), None, "an API model is no folder");
        assert_eq!(
            (c.rerank.base_url.as_str(), c.rerank.candidates, c.rerank.timeout_secs),
            ("http://127.0.0.1:8083", 30, 3)
        );
        assert_eq!(c.rerank_model_path(tmp.path()), None);
        // `url` / SKILLRAG_RERANK_URL, the old name, still reach the same setting.
        let old = load(tmp.path(), &env(&[("SKILLRAG_RERANK_URL", "http://h:1")])).unwrap();
        assert!(old.unknown_env.is_empty(), "{:?}", old.unknown_env);
        assert_eq!(old.config.rerank.base_url, "http://h:1");
        std::fs::write(tmp.path().join("skillrag.toml"), "[rerank]\nurl = \"http://h:2/v1\"\n").unwrap();
        assert_eq!(load(tmp.path(), &env(&[])).unwrap().config.rerank.base_url, "http://h:2/v1");
        std::fs::remove_file(tmp.path().join("skillrag.toml")).unwrap();
        let c = load(tmp.path(), &env(&[("SKILLRAG_RERANK_MODEL", "models/bge-reranker-base")])).unwrap().config;
        assert_eq!(c.rerank_model_path(tmp.path()), Some(tmp.path().join("models/bge-reranker-base")));
        let err = load(tmp.path(), &env(&[("SKILLRAG_RERANK_CANDIDATES", "many")])).unwrap_err().to_string();
        assert!(err.starts_with("SKILLRAG_RERANK_CANDIDATES=many"), "{err}");
    }

    #[test]
    fn template_parses_to_defaults() {
        let c: Config = toml::from_str(&template(None)).unwrap();
        // `[serve]` is the server's to check (skillrag-server tests its defaults).
        assert!(c.serve.contains_key("addr"));
        assert_eq!(Config { serve: toml::Table::new(), ..c }, Config::default());
    }
}
