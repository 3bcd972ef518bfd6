//! A skillrag project and what can be done with it: index its skills (load → chunk → embed →
//! store) and retrieve from them. The CLI and the servers are thin layers over [`Engine`].

#![warn(clippy::too_many_lines)]

mod backends;
mod chunking;
pub mod config;
mod doctor;
pub mod edits;
mod error;
mod fusion;
mod index;
mod migrate;
mod ocr;
mod search;
mod settings;
mod status;
pub mod watch;

pub use backends::{
    open_generator, open_reader_model, open_store, EMBED_API_KEY_VAR, LLM_API_KEY_VAR, READER_API_KEY_VAR,
    RERANK_API_KEY_VAR,
};
pub use config::Config;
pub use doctor::{CacheFileReport, DoctorReport, SetAside, SkillHealth};
pub use error::EngineError;
pub use fusion::reciprocal_rank_fusion;
pub use index::{IndexOptions, IndexReport, Progress, SilentProgress, SkillReport};
pub use migrate::MigratedSkill;
pub use search::{RerankReport, SearchOptions, SearchResult, SkillSearch, Timings};
pub use settings::{EngineSettings, IndexSettings, RetrievalSettings};
pub use status::{Freshness, KnowledgeSummary, LowConfidencePage, PictureInfo, SkillCard, SkillStatus, SourceInfo};

use skillrag_embed::{EmbedError, Embedder};
use skillrag_generate::{GenerateError, Generator};
use skillrag_rerank::{RerankError, Reranker};
use skillrag_skill::{Discovery, Skill};
use skillrag_store::{SkillIndex, Store, StoreError};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The project folder and its configuration.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
    pub config: Config,
    pub has_config_file: bool,
    /// Problems worth a warning (unknown `SKILLRAG_*` variables…).
    pub warnings: Vec<String>,
}

impl Project {
    /// Opens the project in `root`, reading `skillrag.toml`, `.env` and `env` (the process environment).
    pub fn open(root: &Path, env: &BTreeMap<String, String>) -> Result<Project, EngineError> {
        Project::open_with(root, env, &[])
    }

    /// [`Project::open`], with the configuration sections of the layers above the engine
    /// (the server's `[serve]`) checked and overridden from the environment too.
    pub fn open_with(
        root: &Path,
        env: &BTreeMap<String, String>,
        sections: &[config::Section],
    ) -> Result<Project, EngineError> {
        if !root.is_dir() {
            return Err(EngineError::NotAProject(root.display().to_string()));
        }
        let loaded = config::load_with(root, env, sections)?;
        let project = Project {
            root: root.to_path_buf(),
            warnings: loaded
                .unknown_env
                .iter()
                .map(|v| format!("environment variable {v} is not a skillrag setting; ignored"))
                .collect(),
            config: loaded.config,
            has_config_file: loaded.has_file,
        };
        if !project.has_config_file && !project.config.skill_roots(root).iter().any(|r| r.is_dir()) {
            return Err(EngineError::NotAProject(root.display().to_string()));
        }
        Ok(project)
    }

    pub fn state_dir(&self) -> PathBuf {
        self.config.state_dir(&self.root)
    }

    /// A skill's knowledge files, with the problems met finding them (links that leave the
    /// project and its allowed roots, pipes, unreadable folders). Patterns with a leading `/`
    /// name folders of the project shared by several skills (`/shared/style-guide/**`).
    pub fn knowledge_files(&self, skill: &skillrag_skill::Skill) -> skillrag_load::Listing {
        let confinement =
            skillrag_load::Confinement::for_skill_in(&skill.dir, &self.root, &self.config.allowed_roots(&self.root));
        skillrag_load::list_knowledge_files_in(
            &skill.dir,
            &skill.knowledge_patterns(),
            &skillrag_skill::DEFAULT_KNOWLEDGE,
            &confinement,
        )
    }

    /// The skills folders that exist.
    pub fn skill_roots(&self) -> Vec<PathBuf> {
        self.config.skill_roots(&self.root).into_iter().filter(|r| r.is_dir()).collect()
    }
}

/// The embedding model as configured, before its weights are loaded.
#[derive(Debug, Clone)]
pub struct ModelIdentity {
    pub id: String,
    pub dim: usize,
    /// The local model folder; empty for an embeddings API (`[embed] base_url`).
    pub path: PathBuf,
}

/// An opened generation of a skill's index: its number, and when the store last confirmed that
/// it is still the published one (`None`: ask again before serving it).
struct OpenIndex {
    generation: u64,
    index: Arc<dyn SkillIndex>,
    confirmed: Option<Instant>,
}

/// How long an unpinned engine trusts that an open generation is still the published one before
/// asking the store again: a search engine's refresh interval (Elasticsearch's is 1 s too). Every
/// question consults every skill, and with 300 skills asking the store each time was a quarter of
/// a question's time. The engine's own `index` has it ask again at once.
const REFRESH_INTERVAL: Duration = Duration::from_secs(1);

/// The reranker once loaded: `Ok(None)` when none is configured; a failure is kept (and shared).
type LoadedReranker = Result<Option<Arc<dyn Reranker>>, Arc<RerankError>>;

/// A project ready to index and search.
pub struct Engine {
    pub project: Project,
    pub discovery: Discovery,
    /// Resolved from `project.config` when the engine opened.
    settings: EngineSettings,
    store: Arc<dyn Store>,
    model: Option<ModelIdentity>,
    embedder: OnceLock<Result<Arc<dyn Embedder>, Arc<EmbedError>>>,
    /// The reranker (`[rerank]`), loaded on first use; `Ok(None)` when none is configured.
    reranker: OnceLock<LoadedReranker>,
    indexes: Mutex<HashMap<String, OpenIndex>>,
    /// Skills whose index could not be opened because it is damaged: the generation that failed
    /// (`None` when `CURRENT` itself is bad) and why. They are skipped, the others answer.
    damaged: Mutex<HashMap<String, (Option<u64>, String)>>,
    /// Presets and summaries from `[index]`, checked once when the engine opens.
    chunking: chunking::Chunking,
    /// Keep serving the generations opened first, even after newer ones are published (see
    /// [`Engine::pin_generations`]).
    pinned: bool,
    /// Tesseract and pdftoppm as found on this machine, probed when a scan is first met.
    ocr: OnceLock<Result<skillrag_load::ocr::Ocr, skillrag_load::ocr::OcrError>>,
}

impl Engine {
    /// Discovers the skills and identifies the embedding model (its weights load on first use).
    pub fn open(project: Project) -> Result<Engine, EngineError> {
        let discovery = skillrag_skill::discover(&project.config.skill_roots(&project.root));
        let store = open_store(&project.config.store, &project)?;
        backends::check_rerank(&project.config, &project.root)?;
        let (model, embedder) = match backends::identify_embedder(&project)? {
            None => (None, OnceLock::new()),
            Some(m) => (Some(m.identity), m.probed.map_or_else(OnceLock::new, |e| OnceLock::from(Ok(e)))),
        };
        let chunking = chunking::Chunking::new(&project.config.index)?;
        let settings = EngineSettings::resolve(&project.config);
        let mut engine = Engine {
            project,
            discovery,
            settings,
            store,
            model,
            embedder,
            reranker: OnceLock::new(),
            indexes: Mutex::new(HashMap::new()),
            damaged: Mutex::new(HashMap::new()),
            chunking,
            pinned: false,
            ocr: OnceLock::new(),
        };
        engine.add_faq_examples();
        Ok(engine)
    }

    /// Most FAQ questions added to one skill's routing examples: enough to teach the router the
    /// skill's vocabulary without letting one large FAQ drown the other skills' profiles.
    const MAX_FAQ_EXAMPLES: usize = 200;

    /// Adds the indexed FAQ questions of skills that opt in to their routing examples.
    fn add_faq_examples(&mut self) {
        let default = self.settings.index.faq_examples;
        for skill in &mut self.discovery.skills {
            if !skill.settings.faq_examples.unwrap_or(default) {
                continue;
            }
            // Not indexed yet (or unreadable): the SKILL.md examples alone serve until it is.
            let Ok(Some(index)) = self.store.open(&skill.id) else { continue };
            let questions = index.manifest().files.values().flat_map(|f| f.questions.iter());
            let mut added = 0;
            for q in questions {
                if added >= Self::MAX_FAQ_EXAMPLES {
                    break;
                }
                if !skill.examples.contains(q) {
                    skill.examples.push(q.clone());
                    added += 1;
                }
            }
        }
    }

    /// Uses `embedder` instead of loading the configured model (another backend, or a test double).
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Engine {
        self.model =
            Some(ModelIdentity { id: embedder.model_id().to_string(), dim: embedder.dim(), path: PathBuf::new() });
        self.embedder = OnceLock::from(Ok(embedder));
        self
    }

    /// Uses `reranker` instead of the configured one (another backend, or a test double); `None`
    /// turns reranking off.
    pub fn with_reranker(mut self, reranker: Option<Arc<dyn Reranker>>) -> Engine {
        self.reranker = OnceLock::from(Ok(reranker));
        self
    }

    /// The reranker, loaded on first use; `Ok(None)` when none is configured, `Err` when it
    /// cannot be loaded — which search reports as a notice, keeping the fused order.
    pub fn reranker(&self) -> Result<Option<Arc<dyn Reranker>>, EngineError> {
        let loaded = self
            .reranker
            .get_or_init(|| backends::open_reranker(&self.project.config, &self.project.root).map_err(Arc::new));
        loaded.clone().map_err(EngineError::Rerank)
    }

    /// Opens the configured LLM (`[llm]`); `None` when none is configured. Each call loads it
    /// anew: callers keep the one they use.
    pub fn open_generator(&self) -> Result<Option<Arc<dyn Generator>>, GenerateError> {
        open_generator(&self.project)
    }

    /// Opens the configured reader model (`[reader]`); `None` when none is configured. Each
    /// call loads it anew: callers keep the one they use.
    pub fn open_reader_model(&self) -> Result<Option<Arc<dyn Generator>>, GenerateError> {
        backends::open_reader_model(&self.project)
    }

    /// The settings the engine was opened with.
    pub fn settings(&self) -> &EngineSettings {
        &self.settings
    }

    pub fn model(&self) -> Option<&ModelIdentity> {
        self.model.as_ref()
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The embedder, loaded on first use; `None` when the project is lexical-only.
    pub fn embedder(&self) -> Result<Option<Arc<dyn Embedder>>, EngineError> {
        let Some(model) = &self.model else { return Ok(None) };
        let loaded = self.embedder.get_or_init(|| backends::open_embedder(&self.project, model).map_err(Arc::new));
        match loaded {
            Ok(e) => Ok(Some(e.clone())),
            // Not `Embed`: the model failed once and the failure is shared, kept as its message.
            Err(e) => Err(EngineError::ModelUnavailable(format!("embedding model: {e}"))),
        }
    }

    /// The project folders skills name as shared knowledge (`/shared/style-guide/**`), each with
    /// the skills that name it: what a watcher must watch besides the skills folders.
    pub fn shared_folders(&self) -> Vec<(PathBuf, Vec<String>)> {
        let mut folders: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
        for skill in self.skills() {
            for folder in skill.knowledge_patterns().iter().filter_map(|p| skillrag_load::project_folder(p)) {
                folders.entry(self.project.root.join(folder)).or_default().push(skill.id.clone());
            }
        }
        folders.into_iter().collect()
    }

    pub fn skills(&self) -> &[Skill] {
        &self.discovery.skills
    }

    /// A skill enabled or disabled: what its owner may still read, edit, enable or delete.
    pub fn skill_or_disabled(&self, id: &str) -> Result<&Skill, EngineError> {
        match self.discovery.get_disabled(id) {
            Some(skill) => Ok(skill),
            None => self.skill(id),
        }
    }

    /// An enabled skill; a disabled one is named as disabled, not as unknown.
    pub fn skill(&self, id: &str) -> Result<&Skill, EngineError> {
        if self.discovery.get_disabled(id).is_some() {
            return Err(EngineError::DisabledSkill(id.to_string()));
        }
        self.discovery.get(id).ok_or_else(|| {
            let known: Vec<&str> = self.discovery.skills.iter().map(|s| s.id.as_str()).collect();
            let hint = if known.is_empty() {
                " (the project has no skills)".to_string()
            } else {
                format!(" (skills: {})", known.join(", "))
            };
            EngineError::UnknownSkill { skill: id.to_string(), hint }
        })
    }

    /// Opens every skill's current index now and keeps answering from exactly those
    /// generations, even after a re-index publishes newer ones. A server does this so that one
    /// question never mixes two generations; it opens a new engine to switch.
    pub fn pin_generations(mut self) -> Result<Engine, EngineError> {
        for skill in self.discovery.skills.iter().map(|s| s.id.clone()).collect::<Vec<_>>() {
            self.index_of(&skill)?;
        }
        self.pinned = true;
        Ok(self)
    }

    /// The generation each skill's served index has (pinned or current), `None` when not indexed.
    pub fn served_generations(&self) -> BTreeMap<String, Option<u64>> {
        let cache = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
        self.discovery.skills.iter().map(|s| (s.id.clone(), cache.get(&s.id).map(|open| open.generation))).collect()
    }

    /// The generation each skill's store holds now (what a fresh engine would serve); a skill
    /// whose `CURRENT` is damaged has none.
    pub fn published_generations(&self) -> Result<BTreeMap<String, Option<u64>>, EngineError> {
        self.discovery
            .skills
            .iter()
            .map(|s| match self.store.generation(&s.id) {
                Ok(g) => Ok((s.id.clone(), g)),
                Err(StoreError::Corrupt { .. }) => Ok((s.id.clone(), None)),
                Err(e) => Err(e.into()),
            })
            .collect()
    }

    /// The current generation of a skill's index, reopened only when a newer one is published
    /// (unless the engine is pinned). A damaged index is `None`, like a missing one, so that
    /// every caller that walks all skills skips it; [`Engine::damage`] says what is wrong.
    pub fn index_of(&self, skill: &str) -> Result<Option<Arc<dyn SkillIndex>>, EngineError> {
        if self.pinned {
            // A skill indexed after pinning waits for the next engine, like any newer generation.
            let cache = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
            return Ok(cache.get(skill).map(|open| open.index.clone()));
        }
        {
            let cache = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
            let fresh = |open: &&OpenIndex| open.confirmed.is_some_and(|t| t.elapsed() < REFRESH_INTERVAL);
            if let Some(open) = cache.get(skill).filter(fresh) {
                return Ok(Some(open.index.clone()));
            }
        }
        let generation = match self.store.generation(skill) {
            Ok(Some(g)) => g,
            Ok(None) => {
                self.forget_damage(skill);
                return Ok(None);
            }
            Err(StoreError::Corrupt { detail, .. }) => return Ok(self.record_damage(skill, None, detail)),
            Err(e) => return Err(e.into()),
        };
        let mut cache = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(open) = cache.get_mut(skill).filter(|open| open.generation == generation) {
            open.confirmed = Some(Instant::now());
            return Ok(Some(open.index.clone()));
        }
        // Known damaged: not verified again until another generation is published.
        if self.damaged_generation(skill) == Some(Some(generation)) {
            return Ok(None);
        }
        let index = match self.store.open(skill) {
            Ok(Some(index)) => index,
            Ok(None) => return Ok(None),
            Err(StoreError::Corrupt { detail, .. }) => return Ok(self.record_damage(skill, Some(generation), detail)),
            Err(e) => return Err(e.into()),
        };
        self.forget_damage(skill);
        let open =
            OpenIndex { generation: index.meta().generation, index: index.clone(), confirmed: Some(Instant::now()) };
        cache.insert(skill.to_string(), open);
        Ok(Some(index))
    }

    /// Has [`Engine::index_of`] ask the store again before serving any open generation: this
    /// engine has just published, removed or repaired indexes.
    fn recheck_generations(&self) {
        let mut cache = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
        cache.values_mut().for_each(|open| open.confirmed = None);
    }

    /// Why a skill's index cannot be served (naming the skill and the command that repairs
    /// it), when [`Engine::index_of`] found it damaged.
    pub fn damage(&self, skill: &str) -> Option<StoreError> {
        let damaged = self.damaged.lock().unwrap_or_else(|e| e.into_inner());
        damaged.get(skill).map(|(_, detail)| StoreError::Corrupt { skill: skill.to_string(), detail: detail.clone() })
    }

    /// Opens every skill's index and returns the damaged ones with their message, so that a
    /// command can say up front which skills are skipped.
    pub fn damaged_skills(&self) -> Result<Vec<(String, String)>, EngineError> {
        let mut out = Vec::new();
        for skill in &self.discovery.skills {
            if self.index_of(&skill.id)?.is_none() {
                if let Some(e) = self.damage(&skill.id) {
                    out.push((skill.id.clone(), e.to_string()));
                }
            }
        }
        Ok(out)
    }

    fn record_damage(&self, skill: &str, generation: Option<u64>, detail: String) -> Option<Arc<dyn SkillIndex>> {
        let mut damaged = self.damaged.lock().unwrap_or_else(|e| e.into_inner());
        damaged.insert(skill.to_string(), (generation, detail));
        None
    }

    fn forget_damage(&self, skill: &str) {
        self.damaged.lock().unwrap_or_else(|e| e.into_inner()).remove(skill);
    }

    fn damaged_generation(&self, skill: &str) -> Option<Option<u64>> {
        self.damaged.lock().unwrap_or_else(|e| e.into_inner()).get(skill).map(|(g, _)| *g)
    }
}

#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod tests;
