//! The ask path's settings, resolved once from the project's `Config` when the assistant opens
//! (as ripgrep resolves its flags into `HiArgs`): the stages read these fields, never the config.

use skillrag_engine::config::{Config, RetrievalConfig};
use std::path::{Path, PathBuf};

/// Which LLM-assisted steps are on (`[llm]`); each applies only when an LLM is configured.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmSteps {
    /// Follow-ups become standalone questions; weak retrieval gets the model's search query.
    pub rewrite: bool,
    /// Other wordings of the question searched too (0 = off).
    pub multi_query: usize,
    pub hyde: bool,
    /// The model settles ambiguous routes.
    pub route: bool,
    /// The model words the clarifying question of an `ambiguous` refusal.
    pub clarify: bool,
    /// The model replies to gated requests (small talk, rewriting).
    pub chitchat: bool,
    /// LLM tokens one conversation may spend (0 = no limit).
    pub conversation_tokens: usize,
    /// Context budget in the local model's own tokens.
    pub context_tokens: usize,
}

/// Everything the ask path reads from the configuration.
#[derive(Debug, Clone)]
pub struct AskSettings {
    /// Hits each skill's search returns (routing probes and retrieval alike).
    pub hits: usize,
    /// Pieces of context at most (a skill's `top_k` overrides it).
    pub context_k: usize,
    /// Context budget in characters, without an LLM tokenizer.
    pub context_chars: usize,
    /// Context pieces at most from one document.
    pub per_source: usize,
    /// Retrieval attempts per skill, reformulations included.
    pub max_attempts: usize,
    /// Where every answered question is traced (JSON lines); `None` = not traced.
    pub trace: Option<PathBuf>,
    /// Log `not_found` and `out_of_scope` questions for the knowledge owners.
    pub gaps: bool,
    /// What a wrong answer costs against a refusal, when fitting the router's thresholds.
    pub refusal_cost: f32,
    /// Retrieval settings: `rrf_k` for fusing extra queries; all of it is part of the router's
    /// fingerprint (a change refits the router).
    pub retrieval: RetrievalConfig,
    pub llm: LlmSteps,
    pub generate: GenerateSettings,
}

impl AskSettings {
    pub fn resolve(config: &Config, root: &Path) -> AskSettings {
        let ask = &config.ask;
        let llm = &config.llm;
        AskSettings {
            hits: ask.hits,
            context_k: ask.context_k,
            context_chars: ask.context_chars,
            per_source: ask.per_source,
            max_attempts: ask.max_attempts,
            trace: (!ask.trace.is_empty()).then(|| root.join(&ask.trace)),
            gaps: ask.gaps,
            refusal_cost: ask.refusal_cost,
            retrieval: config.retrieval.clone(),
            llm: LlmSteps {
                rewrite: llm.rewrite,
                multi_query: llm.multi_query,
                hyde: llm.hyde,
                route: llm.route,
                clarify: llm.clarify,
                chitchat: llm.chitchat,
                conversation_tokens: llm.conversation_tokens,
                context_tokens: llm.context_tokens,
            },
            generate: GenerateSettings {
                max_tokens: llm.max_tokens,
                temperature: llm.temperature,
                judge: llm.judge,
                min_support: llm.min_support,
                self_check: llm.self_check,
            },
        }
    }

    /// Retrieval attempts without the LLM's own query, which (with a rewriting LLM) is the
    /// last retry.
    pub fn lexical_attempts(&self, rewriter: bool) -> usize {
        match rewriter {
            true => self.max_attempts.saturating_sub(1).max(1),
            false => self.max_attempts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_paths_and_attempts() {
        let mut config = Config::default();
        config.ask.trace = "logs/trace.jsonl".into();
        config.ask.max_attempts = 3;
        let s = AskSettings::resolve(&config, Path::new("/p"));
        assert_eq!(s.trace.as_deref(), Some(Path::new("/p/logs/trace.jsonl")));
        assert_eq!(s.lexical_attempts(false), 3);
        assert_eq!(s.lexical_attempts(true), 2, "the LLM's query is the last attempt");
        config.ask.trace.clear();
        config.ask.max_attempts = 1;
        let s = AskSettings::resolve(&config, Path::new("/p"));
        assert_eq!(s.trace, None);
        assert_eq!(s.lexical_attempts(true), 1, "at least one attempt");
    }
}

/// Settings of the answer stage's LLM (from `[llm]`).
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateSettings {
    pub max_tokens: usize,
    pub temperature: f32,
    pub judge: bool,
    pub min_support: f32,
    /// Ask the model to confirm each sentence that passed the lexical check (the answer is then
    /// handed to the stream whole, after that check).
    pub self_check: bool,
}
