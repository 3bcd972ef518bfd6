//! Reading the configuration: the file, then `.env`, then the process environment.

use super::{Config, CONFIG_FILE};
use std::collections::BTreeMap;
use std::path::Path;

/// Short environment names for the essentials (docs/design.md §6).
const ALIASES: [(&str, &str); 5] = [
    ("SKILLRAG_CHUNK_SIZE", "SKILLRAG_INDEX_CHUNK_SIZE"),
    ("SKILLRAG_CHUNK_OVERLAP", "SKILLRAG_INDEX_CHUNK_OVERLAP"),
    ("SKILLRAG_TOP_K", "SKILLRAG_RETRIEVAL_TOP_K"),
    // `[rerank] url` became `base_url`, the name `[llm]` and `[embed]` use.
    ("SKILLRAG_RERANK_URL", "SKILLRAG_RERANK_BASE_URL"),
    // What scripts/setup-reader prints.
    ("SKILLRAG_READER", "SKILLRAG_READER_MODEL"),
];

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{name}={value}: {message}")]
    Env { name: String, value: String, message: String },
}

/// A section of `skillrag.toml` that a layer above the engine owns (the server's `[serve]`):
/// read, overridden by `SKILLRAG_<SECTION>_<KEY>` and checked like the engine's own sections,
/// and kept in [`Config`] as written for that layer to read.
#[derive(Debug, Clone)]
pub struct Section {
    /// The section's name; it must be one [`Config`] keeps as written (`serve`).
    pub name: &'static str,
    /// Every key with its default: which variables name a setting, and of which type.
    pub defaults: toml::Table,
    /// Checks the whole configuration as written (the section may be absent), with the
    /// messages its own type gives.
    pub check: fn(&toml::Table) -> Result<(), toml::de::Error>,
}

/// The loaded configuration and where its values came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// Whether `skillrag.toml` exists.
    pub has_file: bool,
    /// `SKILLRAG_*` variables that name no setting (typos), to warn about.
    pub unknown_env: Vec<String>,
}

/// Loads `dir/skillrag.toml`, `dir/.env` and the process environment, in that order of priority
/// (lowest first). `env` is the process environment (passed in so tests do not touch globals).
pub fn load(dir: &Path, env: &BTreeMap<String, String>) -> Result<Loaded, ConfigError> {
    load_with(dir, env, &[])
}

/// [`load`], with the sections of the layers above the engine checked and overridden too.
pub fn load_with(dir: &Path, env: &BTreeMap<String, String>, sections: &[Section]) -> Result<Loaded, ConfigError> {
    let path = dir.join(CONFIG_FILE);
    let (mut value, has_file) = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let v: toml::Table = toml::from_str(&text)
                .map_err(|e| ConfigError::File { path: path.display().to_string(), message: e.to_string() })?;
            (v, true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (toml::Table::new(), false),
        Err(e) => return Err(ConfigError::File { path: path.display().to_string(), message: e.to_string() }),
    };
    // Check the file alone first, so its errors name the file.
    checked(&value, sections)
        .map_err(|e| ConfigError::File { path: path.display().to_string(), message: e.to_string() })?;

    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    let dotenv = dir.join(".env");
    if dotenv.is_file() {
        let iter = dotenvy::from_path_iter(&dotenv)
            .map_err(|e| ConfigError::File { path: dotenv.display().to_string(), message: e.to_string() })?;
        for item in iter {
            let (k, v) =
                item.map_err(|e| ConfigError::File { path: dotenv.display().to_string(), message: e.to_string() })?;
            vars.insert(k, v);
        }
    }
    vars.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));

    let known = known_keys(sections);
    let mut unknown_env = Vec::new();
    for (name, raw) in &vars {
        let Some(rest) = name.strip_prefix("SKILLRAG_") else { continue };
        let canonical = ALIASES.iter().find(|(alias, _)| alias == name).map_or(name.as_str(), |(_, c)| *c);
        let rest = canonical.strip_prefix("SKILLRAG_").unwrap_or(rest).to_ascii_lowercase();
        let Some((section, key)) = locate(&known, &rest) else {
            // SKILLRAG_TEST_* belong to the test suite.
            if !NOT_SETTINGS.contains(&name.as_str()) && !name.starts_with("SKILLRAG_TEST_") {
                unknown_env.push(name.clone());
            }
            continue;
        };
        let parsed = parse_env_value(&known, section.as_deref(), &key, raw);
        let table = match &section {
            Some(s) => value.entry(s.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new())),
            None => {
                value.insert(key.clone(), parsed);
                continue;
            }
        };
        if let toml::Value::Table(t) = table {
            t.insert(key.clone(), parsed);
        }
        // Check each variable on its own so the error names it.
        checked(&value, sections).map_err(|e| ConfigError::Env {
            name: name.clone(),
            value: raw.clone(),
            message: e.message().to_string(),
        })?;
    }
    let config = checked(&value, sections)
        .map_err(|e| ConfigError::File { path: path.display().to_string(), message: e.to_string() })?;
    Ok(Loaded { config, has_file, unknown_env })
}

/// The configuration `value` holds, once the engine's sections and each of `sections` accept it.
fn checked(value: &toml::Table, sections: &[Section]) -> Result<Config, toml::de::Error> {
    let config = toml::Value::Table(value.clone()).try_into::<Config>()?;
    for section in sections {
        (section.check)(value)?;
    }
    Ok(config)
}

/// `SKILLRAG_*` variables that are not settings of this file (used by scripts and other subsystems).
const NOT_SETTINGS: [&str; 15] = [
    "SKILLRAG_CACHE",
    "SKILLRAG_PG_BIN",
    "SKILLRAG_PG_DIR",
    "SKILLRAG_PG_PORT",
    "SKILLRAG_API_TOKEN",
    "SKILLRAG_LLM_API_KEY",
    "SKILLRAG_LLM_DIR",
    "SKILLRAG_LLM_PORT",
    "SKILLRAG_READER_API_KEY",
    "SKILLRAG_READER_GGUF",
    "SKILLRAG_READER_PORT",
    "SKILLRAG_EMBED_API_KEY",
    "SKILLRAG_EMBED_PORT",
    "SKILLRAG_E5_PORT",
    "SKILLRAG_RERANK_API_KEY",
];

/// (section, key) → default value, from the defaults themselves.
fn known_keys(sections: &[Section]) -> BTreeMap<(Option<String>, String), toml::Value> {
    let mut out = BTreeMap::new();
    let Ok(toml::Value::Table(t)) = toml::Value::try_from(Config::default()) else { return out };
    for (k, v) in t {
        match v {
            toml::Value::Table(section) => {
                for (kk, vv) in section {
                    out.insert((Some(k.clone()), kk), vv);
                }
            }
            other => {
                out.insert((None, k), other);
            }
        }
    }
    for section in sections {
        for (key, value) in &section.defaults {
            out.insert((Some(section.name.to_string()), key.clone()), value.clone());
        }
    }
    // Optional keys have no default to serialize.
    for key in ["query_prefix", "passage_prefix", "query_input_type", "passage_input_type"] {
        out.insert((Some("embed".into()), key.into()), toml::Value::String(String::new()));
    }
    out
}

fn locate(known: &BTreeMap<(Option<String>, String), toml::Value>, rest: &str) -> Option<(Option<String>, String)> {
    if known.contains_key(&(None, rest.to_string())) {
        return Some((None, rest.to_string()));
    }
    let (section, key) = rest.split_once('_')?;
    known
        .contains_key(&(Some(section.to_string()), key.to_string()))
        .then(|| (Some(section.to_string()), key.to_string()))
}

/// Parses an environment string as the type of the setting's default.
fn parse_env_value(
    known: &BTreeMap<(Option<String>, String), toml::Value>,
    section: Option<&str>,
    key: &str,
    raw: &str,
) -> toml::Value {
    let default = known.get(&(section.map(str::to_string), key.to_string()));
    let string = || toml::Value::String(raw.to_string());
    match default {
        Some(toml::Value::Integer(_)) => raw.trim().parse().map(toml::Value::Integer).unwrap_or_else(|_| string()),
        Some(toml::Value::Float(_)) => raw.trim().parse().map(toml::Value::Float).unwrap_or_else(|_| string()),
        Some(toml::Value::Boolean(_)) => raw.trim().parse().map(toml::Value::Boolean).unwrap_or_else(|_| string()),
        Some(toml::Value::Array(_)) => toml::Value::Array(
            raw.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| toml::Value::String(s.into())).collect(),
        ),
        _ => string(),
    }
}
