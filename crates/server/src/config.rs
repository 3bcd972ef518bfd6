//! `[serve]` of `skillrag.toml`: the server's own settings. The engine's loader reads the
//! section with the rest of the file (and `SKILLRAG_SERVE_*` over it) and keeps it as written;
//! [`ServeConfig::section`] tells it the keys, their types and how to check them.

use serde::{Deserialize, Serialize};
use skillrag_engine::config::{Config, Section};

/// `skillrag serve` (flags override).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    /// Address to listen on; anything but loopback requires `SKILLRAG_API_TOKEN`.
    pub addr: String,
    /// Largest request body, in KiB.
    pub max_body_kb: usize,
    /// Requests per minute per client address; 0 = unlimited.
    pub rate_limit: u32,
    /// Browser origins allowed to call the API (CORS); empty = off.
    pub cors_origins: Vec<String>,
    /// Host names clients may address besides localhost, 127.0.0.1, [::1] and the bound
    /// address (others get 403, against DNS rebinding); bound to 0.0.0.0 with a token and none
    /// listed, any.
    pub allowed_hosts: Vec<String>,
    /// Seconds a client has to send a request's headers.
    pub header_timeout_secs: u64,
    /// Seconds a client has to send a whole request body.
    pub body_timeout_secs: u64,
    /// Connections one client address may hold open at once; 0 = no cap.
    pub connections_per_client: usize,
    /// Questions and searches worked on at once; 0 = one per CPU core.
    pub workers: usize,
    /// Requests that may wait for a worker before the server answers 503.
    pub queue: usize,
    /// Answers kept for repeated questions (dropped on re-index); 0 = no cache.
    pub cache_entries: usize,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            addr: "127.0.0.1:8080".into(),
            max_body_kb: 256,
            rate_limit: 0,
            cors_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            header_timeout_secs: 10,
            body_timeout_secs: 30,
            connections_per_client: 128,
            workers: 0,
            queue: 256,
            cache_entries: 1024,
        }
    }
}

/// `[serve]` inside the whole file, so that its errors name the key as they do for the
/// engine's sections (`serve.max_body_kb`).
#[derive(Deserialize)]
struct InFile {
    #[serde(default)]
    serve: ServeConfig,
}

impl ServeConfig {
    /// `[serve]` as the engine's configuration loader takes it
    /// ([`skillrag_engine::Project::open_with`]).
    pub fn section() -> Section {
        let defaults = match toml::Value::try_from(ServeConfig::default()) {
            Ok(toml::Value::Table(t)) => t,
            _ => toml::Table::new(),
        };
        Section { name: "serve", defaults, check: |file| in_file(file).map(drop) }
    }

    /// The server's settings in a loaded configuration (checked when it was loaded with
    /// [`ServeConfig::section`]).
    pub fn from_config(config: &Config) -> Result<ServeConfig, toml::de::Error> {
        let mut file = toml::Table::new();
        file.insert("serve".into(), toml::Value::Table(config.serve.clone()));
        in_file(&file)
    }
}

/// `[serve]` of a whole file (the other sections are the engine's to check).
fn in_file(file: &toml::Table) -> Result<ServeConfig, toml::de::Error> {
    let mut only_serve = toml::Table::new();
    if let Some(serve) = file.get("serve") {
        only_serve.insert("serve".into(), serve.clone());
    }
    Ok(toml::Value::Table(only_serve).try_into::<InFile>()?.serve)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_holds_the_defaults() {
        let file: toml::Table = toml::from_str(&skillrag_engine::config::template(None)).unwrap();
        assert_eq!(in_file(&file).unwrap(), ServeConfig::default());
    }

    #[test]
    fn the_environment_sets_serve_keys_with_their_types() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("skillrag.toml"), "[serve]\nrate_limit = 5\n").unwrap();
        let env = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let sections = [ServeConfig::section()];
        let loaded = skillrag_engine::config::load_with(
            tmp.path(),
            &env(&[("SKILLRAG_SERVE_MAX_BODY_KB", "512"), ("SKILLRAG_SERVE_CORS_ORIGINS", "https://a, https://b")]),
            &sections,
        )
        .unwrap();
        assert!(loaded.unknown_env.is_empty(), "{:?}", loaded.unknown_env);
        let c = ServeConfig::from_config(&loaded.config).unwrap();
        assert_eq!((c.rate_limit, c.max_body_kb), (5, 512));
        assert_eq!(c.cors_origins, ["https://a", "https://b"]);
        let err = skillrag_engine::config::load_with(tmp.path(), &env(&[("SKILLRAG_SERVE_QUEUE", "many")]), &sections)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("SKILLRAG_SERVE_QUEUE=many:"), "{err}");
        std::fs::write(tmp.path().join("skillrag.toml"), "[serve]\nadr = \"x\"\n").unwrap();
        let err = skillrag_engine::config::load_with(tmp.path(), &env(&[]), &sections).unwrap_err().to_string();
        assert!(err.contains("skillrag.toml") && err.contains("adr"), "{err}");
        // Without the section, the engine alone neither knows nor checks it.
        let loaded =
            skillrag_engine::config::load_with(tmp.path(), &env(&[("SKILLRAG_SERVE_QUEUE", "1")]), &[]).unwrap();
        assert_eq!(loaded.unknown_env, ["SKILLRAG_SERVE_QUEUE"]);
    }
}
