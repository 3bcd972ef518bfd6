//! The serving core shared by the HTTP API, the OpenAI-compatible endpoint and MCP: the live
//! assistant (swapped atomically after a re-index), the answer cache, the work queue, index
//! jobs and metrics. Every blocking call into the engine runs on tokio's blocking pool.

use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::queue::{Refused, WorkQueue};
use arc_swap::ArcSwap;
use serde::Serialize;
use skillrag_ask::{
    Answer, AskOptions, Assistant, ContextOptions, ConversationStore, FeedbackLog, FeedbackRecord, Gap, HistoryError,
    Judgement, LikedAnswer, Rating, Route, TaskContext,
};
use skillrag_core::Mode;
use skillrag_engine::{
    Engine, IndexOptions, IndexReport, Project, SearchOptions, SearchResult, SilentProgress, SkillCard, SkillStatus,
    SourceInfo,
};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the answer path is bounded.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Questions and searches worked on at the same time (the rest wait in the queue).
    pub workers: usize,
    /// Requests that may wait for a worker; beyond this the server answers 503 with `Retry-After`.
    pub queue: usize,
    /// Answers kept for repeated questions (0 = no cache).
    pub cache_entries: usize,
}

impl Default for Limits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Limits { workers: cores, queue: 256, cache_entries: 1024 }
    }
}

/// Which conversation a question belongs to.
pub enum Thread {
    /// The caller's earlier questions, oldest first (the OpenAI-compatible endpoint, MCP).
    Stateless(Vec<String>),
    /// A conversation the server keeps (`conversation_id`): its questions are the history, and
    /// the turn is saved in it.
    Saved(String),
}

impl From<Vec<String>> for Thread {
    fn from(history: Vec<String>) -> Thread {
        Thread::Stateless(history)
    }
}

/// Answers recently given, by `answer_id`, so feedback can be stored with what it judges.
const RECENT_ANSWERS: usize = 4096;

/// Receives an answer's checked text as the LLM writes it, on the worker thread.
pub type TextSink = Box<dyn FnMut(&str) + Send>;

/// Index generation per skill (`None`: not indexed).
type Generations = std::collections::BTreeMap<String, Option<u64>>;

/// Answers by (forced skill or "", question).
type AnswerCache = Mutex<lru::LruCache<(String, String), Arc<Answer>>>;

/// One generation of what is served: the assistant over pinned index generations, and the
/// answers computed from it (so a re-index invalidates the cache by replacing both).
pub struct Live {
    pub assistant: Assistant,
    cache: Option<AnswerCache>,
}

/// A re-index started through the API.
#[derive(Debug, Clone, Serialize)]
pub struct IndexJob {
    pub id: u64,
    /// `running`, `done` or `failed`.
    pub state: &'static str,
    pub skills: Vec<String>,
    pub started: u64,
    pub finished: Option<u64>,
    pub message: String,
    pub report: Option<IndexReport>,
}

/// What to search for in retrieval testing.
pub struct SearchQuery {
    pub query: String,
    pub skills: Vec<String>,
    pub k: Option<usize>,
    pub mode: Mode,
    pub filter: skillrag_core::Filter,
    pub weights: Option<(f32, f32)>,
}

/// The score a retrieval-testing threshold applies to: the cross-encoder's when the hit was
/// reranked, else its cosine similarity when the dense list found it, else its BM25 score. (The
/// fused RRF score only reflects ranks, so a threshold on it would mean nothing.)
pub fn relevance(hit: &skillrag_core::Hit) -> f32 {
    hit.scores.rerank.or(hit.scores.dense).or(hit.scores.bm25).unwrap_or(0.0)
}

/// A chunk of one document, as `GET /v1/skills/{skill}/sources/{source}` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct SourceChunk {
    pub chunk_id: u64,
    pub ordinal: u32,
    pub heading: String,
    pub text: String,
    pub pages: Option<(u32, u32)>,
    /// `false`: disabled by a chunk edit, in no index (its text is the chunk as chunked).
    pub enabled: bool,
    /// Its text is the owner's, not the document's (a chunk edit).
    pub edited: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<String>,
}

/// A picture of a skill's knowledge, as `GET /v1/skills/{skill}/pictures/{source}` serves it.
#[derive(Debug, Clone)]
pub struct PictureFile {
    /// `image/png`, `image/jpeg`, `image/webp` or `image/tiff`, from the file's extension.
    pub content_type: &'static str,
    /// The file name, for `Content-Disposition`.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The media type of a picture source, by its extension (the formats indexing reads as pictures).
pub(crate) fn picture_type(source: &str) -> Option<&'static str> {
    let (_, extension) = source.rsplit_once('.')?;
    match extension.to_ascii_lowercase().as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "webp" => Some("image/webp"),
        "tif" | "tiff" => Some("image/tiff"),
        _ => None,
    }
}

/// When a finished job reopens the served assistant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reopen {
    /// When it published new index generations.
    IfPublished,
    /// In any case: the skills themselves changed.
    Always,
}

pub struct Service {
    project: Project,
    live: ArcSwap<Live>,
    limits: Limits,
    queue: WorkQueue,
    reloading: AtomicBool,
    /// Published generations that failed to open, so they are not retried every tick; the
    /// last good generation keeps serving until a newer one is published.
    failed: Mutex<Option<Generations>>,
    job: Mutex<Option<IndexJob>>,
    /// Held by each document write and `POST /v1/index` from its check to the re-index it
    /// starts, so racing writes cannot interleave (see `documents.rs`).
    pub(crate) writes: tokio::sync::Mutex<()>,
    pub metrics: Metrics,
    pub conversations: ConversationStore,
    feedback: FeedbackLog,
    recent: Mutex<lru::LruCache<String, Arc<Answer>>>,
}

/// Runs blocking engine work off the async executor.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| ApiError::internal(format!("worker failed: {e}")))?
}

impl Service {
    /// Opens the project's assistant over pinned index generations (loading the model once).
    pub fn open(project: Project, limits: Limits) -> Result<Service, ApiError> {
        let live = Self::open_live(&project, None, &limits)?;
        let state = project.state_dir();
        Ok(Service {
            conversations: ConversationStore::new(&state),
            feedback: FeedbackLog::new(&state),
            recent: Mutex::new(lru::LruCache::new(NonZeroUsize::new(RECENT_ANSWERS).unwrap_or(NonZeroUsize::MIN))),
            project,
            live: ArcSwap::from_pointee(live),
            queue: WorkQueue::new(limits.workers, limits.queue),
            limits,
            reloading: AtomicBool::new(false),
            failed: Mutex::new(None),
            job: Mutex::new(None),
            writes: tokio::sync::Mutex::new(()),
            metrics: Metrics::new(),
        })
    }

    fn open_live(project: &Project, previous: Option<&Live>, limits: &Limits) -> Result<Live, ApiError> {
        let mut engine = Engine::open(project.clone())?;
        // Reuse the loaded model across generations instead of loading its weights again.
        if let Some(embedder) = previous.map(|p| p.assistant.engine.embedder()).transpose()?.flatten() {
            engine = engine.with_embedder(embedder);
        }
        // And the loaded reranker (a failed load is retried with the new engine).
        if let Some(Ok(Some(reranker))) = previous.map(|p| p.assistant.engine.reranker()) {
            engine = engine.with_reranker(Some(reranker));
        }
        let engine = engine.pin_generations()?;
        // The LLM too (a local one is hundreds of MB).
        let assistant = match previous {
            Some(p) => Assistant::open_with(engine, p.assistant.generator().cloned())?
                .with_reader(p.assistant.reader().map(|r| r.model().clone())),
            None => Assistant::open(engine)?,
        };
        let cache = NonZeroUsize::new(limits.cache_entries).map(|n| Mutex::new(lru::LruCache::new(n)));
        Ok(Live { assistant, cache })
    }

    /// What is served now. Holders keep their generation until they drop it.
    pub fn live(&self) -> Arc<Live> {
        self.live.load_full()
    }

    /// Reopens the assistant when another process (or a job) published new index generations.
    /// Questions in flight finish on the old generation; new ones see the new one.
    pub async fn reload_if_changed(self: &Arc<Self>) -> Result<bool, ApiError> {
        self.reload(Reopen::IfPublished).await
    }

    /// Reopens the assistant (`Reopen::Always`: also when no generation changed — a skill's
    /// `SKILL.md` was written, or a skill was added or removed, which only a new engine sees).
    pub(crate) async fn reload(self: &Arc<Self>, reopen: Reopen) -> Result<bool, ApiError> {
        // One reopen at a time. A caller waits for the one under way rather than skipping: that
        // one may have read the generations before this caller's were published (a re-index
        // that ends while the watcher reopens would otherwise stay unserved until its next tick).
        while self.reloading.swap(true, Ordering::AcqRel) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Released however this ends, a dropped future included.
        struct Held<'a>(&'a AtomicBool);
        impl Drop for Held<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _held = Held(&self.reloading);
        self.reload_now(reopen).await
    }

    /// [`Service::reload`]'s work, with the reopen flag held.
    async fn reload_now(self: &Arc<Self>, reopen: Reopen) -> Result<bool, ApiError> {
        let live = self.live();
        // Asking the store may be a database round trip: off the async executor.
        let published = blocking(move || Ok(live.assistant.engine.published_generations()?)).await?;
        let live = self.live();
        let changed = published != live.assistant.engine.served_generations();
        if reopen == Reopen::IfPublished && (!changed || lock(&self.failed).as_ref() == Some(&published)) {
            return Ok(false);
        }
        let this = self.clone();
        let result = blocking(move || {
            let next = Self::open_live(&this.project, Some(&this.live()), &this.limits)?;
            this.live.store(Arc::new(next));
            Ok(())
        })
        .await;
        *lock(&self.failed) = result.is_err().then_some(published);
        result.map(|()| {
            self.metrics.reloads.inc();
            true
        })
    }

    /// Answers a question (from the cache when it was answered before on this generation).
    /// `history` holds the conversation's earlier user questions, oldest first.
    /// Waits for a free answer slot; refuses with 503 when too many questions wait already.
    pub async fn ask(
        self: &Arc<Self>,
        query: String,
        options: AskOptions,
        thread: impl Into<Thread>,
    ) -> Result<(Arc<Answer>, bool), ApiError> {
        self.ask_streaming(query, options, thread.into(), None).await
    }

    /// [`Service::ask`], handing the LLM's checked sentences to `on_text` as they are written
    /// (from the worker thread), after an empty text once the question has a worker. Nothing
    /// else is handed over for a cached, extractive or refused answer: the caller sends those
    /// whole.
    pub async fn ask_streaming(
        self: &Arc<Self>,
        query: String,
        options: AskOptions,
        thread: Thread,
        on_text: Option<TextSink>,
    ) -> Result<(Arc<Answer>, bool), ApiError> {
        if query.trim().is_empty() {
            return Err(ApiError::bad_request("the question is empty"));
        }
        let (history, saved) = match thread {
            Thread::Stateless(history) => (history, None),
            Thread::Saved(id) => {
                let this = self.clone();
                let conversation = blocking(move || this.conversations.get(&id).map_err(history_error)).await?;
                (conversation.questions(), Some(conversation.id))
            }
        };
        let (answer, cached) = self.answer(query.clone(), options, history, on_text).await?;
        self.remember(&answer);
        if let Some(id) = saved {
            let this = self.clone();
            let turn = answer.clone();
            blocking(move || this.conversations.append(&id, &query, &turn).map(|_| ()).map_err(history_error)).await?;
        }
        Ok((answer, cached))
    }

    /// The answer of a question with its history (from the cache for a standalone question).
    async fn answer(
        self: &Arc<Self>,
        query: String,
        options: AskOptions,
        history: Vec<String>,
        on_text: Option<TextSink>,
    ) -> Result<(Arc<Answer>, bool), ApiError> {
        let live = self.live();
        let key = (options.skill.clone().unwrap_or_default(), query.trim().to_string());
        // A follow-up depends on the conversation; only standalone questions are cached.
        let cacheable = history.is_empty();
        if cacheable {
            if let Some(hit) = live.cache.as_ref().and_then(|c| lock(c).get(&key).cloned()) {
                self.metrics.cache(true);
                if let Some(log) = live.assistant.gap_log() {
                    log.record(&hit, None);
                }
                return Ok((with_id(hit, options.id), true));
            }
        }
        let answer = {
            let live = live.clone();
            self.work(move || {
                let assistant = &live.assistant;
                let mut conversation = assistant.replay(&history[history.len().saturating_sub(HISTORY_TURNS)..]);
                let mut on_text = on_text;
                // An empty text first: the question has a worker now, so a stream can begin.
                if let Some(f) = on_text.as_mut() {
                    f("");
                }
                let on_text = on_text.as_mut().map(|f| f.as_mut() as &mut dyn FnMut(&str));
                Ok(assistant.ask(&query, &options, Some(&mut conversation), on_text)?)
            })
            .await?
        };
        self.metrics.answered(&answer);
        let answer = Arc::new(answer);
        if cacheable {
            self.metrics.cache(false);
            if let Some(cache) = &live.cache {
                lock(cache).put(key, with_id(answer.clone(), None));
            }
        }
        Ok((answer, false))
    }

    /// Runs CPU-heavy work (embedding a query, searching, answering) in one of the worker slots,
    /// waiting in the bounded queue for one; 503 when the queue is full. Bounding this keeps
    /// throughput at what the cores give while memory and tail latency stay flat under load.
    async fn work<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let slot = self.queue.enter().await;
        self.metrics.queue_waiting.set(self.queue.waiting() as i64);
        let slot = slot.map_err(|refused| match refused {
            Refused::Full => {
                self.metrics.queue_full.inc();
                ApiError::unavailable("the server is busy (the work queue is full); retry shortly", 1)
            }
            Refused::Closed => ApiError::unavailable("the server is shutting down", 5),
        })?;
        // The slot moves into the task: a client that disconnects does not free it early.
        blocking(move || {
            let _slot = slot;
            f()
        })
        .await
    }

    pub async fn route(self: &Arc<Self>, query: String) -> Result<Route, ApiError> {
        if query.trim().is_empty() {
            return Err(ApiError::bad_request("the question is empty"));
        }
        let live = self.live();
        self.work(move || Ok(live.assistant.route(&query)?)).await
    }

    /// Searches (retrieval testing); with `min_score`, hits below it are dropped and counted.
    pub async fn search(
        self: &Arc<Self>,
        q: SearchQuery,
        min_score: Option<f32>,
    ) -> Result<(SearchResult, usize), ApiError> {
        if q.query.trim().is_empty() {
            return Err(ApiError::bad_request("the query is empty"));
        }
        let live = self.live();
        self.work(move || {
            let engine = &live.assistant.engine;
            for s in &q.skills {
                engine.skill(s)?;
            }
            let options = SearchOptions {
                skills: q.skills,
                k: q.k.map(|k| k.clamp(1, 100)),
                mode: q.mode,
                filter: q.filter,
                weights: q.weights,
                ..Default::default()
            };
            let mut result = engine.search(&q.query, &options)?;
            let before = result.hits.len();
            if let Some(min) = min_score {
                result.hits.retain(|h| relevance(h) >= min);
            }
            let filtered = before - result.hits.len();
            Ok((result, filtered))
        })
        .await
    }

    /// The compiled context of a task (the ask pipeline stopped before generation).
    pub async fn context(self: &Arc<Self>, task: String, options: ContextOptions) -> Result<TaskContext, ApiError> {
        if task.trim().is_empty() {
            return Err(ApiError::bad_request("the task is empty"));
        }
        let live = self.live();
        self.work(move || Ok(live.assistant.compile_context(&task, &options)?)).await
    }

    /// Every skill (id, description) with its indexed documents (none without an index): read
    /// from the discovered skills and the index manifests, without the freshness check of
    /// [`Service::skills`], which looks at every knowledge file.
    pub async fn catalog(self: &Arc<Self>) -> Result<Vec<(String, String, Vec<SourceInfo>)>, ApiError> {
        let live = self.live();
        blocking(move || {
            let engine = &live.assistant.engine;
            let catalog = engine
                .skills()
                .iter()
                .map(|s| (s.id.clone(), s.description.clone(), engine.sources(&s.id).unwrap_or_default()))
                .collect();
            Ok(catalog)
        })
        .await
    }

    /// A skill's `SKILL.md` as written, read with the refusals of loading it.
    pub async fn skill_file(self: &Arc<Self>, skill: String) -> Result<String, ApiError> {
        let live = self.live();
        blocking(move || {
            let skill = live.assistant.engine.skill_or_disabled(&skill)?;
            skillrag_skill::read_skill_file(&skill.dir, &skill.id).map_err(|d| ApiError::not_found(d.to_string()))
        })
        .await
    }

    /// One knowledge document's text, looked up in the skill's knowledge listing.
    pub async fn document_text(self: &Arc<Self>, skill: String, source: String) -> Result<String, ApiError> {
        let live = self.live();
        blocking(move || Ok(live.assistant.engine.document_text(&skill, &source)?)).await
    }

    pub async fn skill_card(self: &Arc<Self>, skill: String) -> Result<SkillCard, ApiError> {
        let live = self.live();
        blocking(move || Ok(live.assistant.engine.skill_card(&skill)?)).await
    }

    pub async fn skills(self: &Arc<Self>) -> Result<Vec<SkillStatus>, ApiError> {
        let live = self.live();
        blocking(move || Ok(live.assistant.engine.status()?)).await
    }

    pub async fn sources(self: &Arc<Self>, skill: String) -> Result<Vec<SourceInfo>, ApiError> {
        let live = self.live();
        blocking(move || Ok(live.assistant.engine.sources(&skill)?)).await
    }

    /// The indexed chunks of one document. `source` is looked up in the index's manifest, never
    /// on disk, so a request cannot reach files outside the project.
    pub async fn source_chunks(self: &Arc<Self>, skill: String, source: String) -> Result<Vec<SourceChunk>, ApiError> {
        let live = self.live();
        blocking(move || {
            let engine = &live.assistant.engine;
            engine.skill(&skill)?;
            // A damaged index is named as damaged, with its repair, not as missing.
            let index = engine.require_index(&skill)?;
            let Some(file) = index.manifest().files.get(&source) else {
                return Err(ApiError::not_found(format!("skill `{skill}` has no source `{source}`")));
            };
            // The edits this version was indexed with (a broken edits file shows none: indexing
            // names it).
            let edits = skillrag_engine::edits::ChunkEdits::load(&engine.skill(&skill)?.dir).unwrap_or_default();
            let edits = edits.documents.get(&source).filter(|d| d.content_hash == file.content_hash);
            let edited = |ordinal: u32| edits.and_then(|d| d.chunks.get(&ordinal)).is_some_and(|e| e.text.is_some());
            let mut chunks: Vec<SourceChunk> = index
                .chunks_of(&source)
                .into_iter()
                .map(|c| SourceChunk {
                    chunk_id: c.id,
                    ordinal: c.ordinal,
                    heading: c.heading_line(),
                    edited: edited(c.ordinal),
                    text: c.text,
                    pages: c.pages,
                    enabled: true,
                    keywords: c.keywords,
                    questions: c.questions,
                })
                .collect();
            for (&ordinal, edit) in edits.iter().flat_map(|d| &d.chunks).filter(|(_, e)| !e.enabled) {
                chunks.push(SourceChunk {
                    chunk_id: skillrag_engine::edits::disabled_id(&source, ordinal),
                    ordinal,
                    heading: String::new(),
                    text: edit.original.clone(),
                    pages: None,
                    enabled: false,
                    edited: edit.text.is_some(),
                    keywords: edit.keywords.clone(),
                    questions: edit.questions.clone(),
                });
            }
            chunks.sort_by_key(|c| c.ordinal);
            Ok(chunks)
        })
        .await
    }

    /// The bytes of a picture the skill's index read (`Engine::picture`), taken from the skill's
    /// knowledge listing as indexing takes it: `source` is matched against the listing, never
    /// joined onto a path, and only a regular file within the index's size limit is read.
    pub async fn picture(self: &Arc<Self>, skill: String, source: String) -> Result<PictureFile, ApiError> {
        let live = self.live();
        blocking(move || {
            let engine = &live.assistant.engine;
            let found = engine.skill(&skill)?;
            let not_picture = || ApiError::not_found(format!("skill `{skill}` has no indexed picture `{source}`"));
            let content_type = picture_type(&source).ok_or_else(not_picture)?;
            engine.picture(&skill, &source).ok_or_else(not_picture)?;
            let listing = engine.project.knowledge_files(found);
            let file = listing.files.iter().find(|f| f.source == source).ok_or_else(not_picture)?;
            let limit = engine.settings().index.load.max_file_bytes;
            let unreadable = |e: std::io::Error| match e.kind() {
                std::io::ErrorKind::NotFound => not_picture(),
                _ => ApiError::internal(format!("cannot read `{source}`: {e}")),
            };
            // Checked before opening: opening a FIFO blocks until someone writes to it.
            let meta = std::fs::metadata(&file.path).map_err(unreadable)?;
            if !meta.is_file() {
                return Err(not_picture());
            }
            let read = || -> std::io::Result<Vec<u8>> {
                use std::io::Read;
                let mut bytes = Vec::new();
                std::fs::File::open(&file.path)?.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
                Ok(bytes)
            };
            let bytes = read().map_err(unreadable)?;
            if bytes.len() as u64 > limit {
                return Err(ApiError::not_found(format!(
                    "`{source}` is now over the {} MB file limit; re-index it",
                    limit / (1024 * 1024)
                )));
            }
            let name = source.rsplit('/').next().unwrap_or(&source).to_string();
            Ok(PictureFile { content_type, name, bytes })
        })
        .await
    }

    pub async fn gaps(self: &Arc<Self>, skill: Option<String>, limit: usize) -> Result<Vec<Gap>, ApiError> {
        let live = self.live();
        if let Some(s) = &skill {
            live.assistant.engine.skill(s)?;
        }
        let this = self.clone();
        blocking(move || {
            let Some(log) = live.assistant.gap_log() else { return Ok(Vec::new()) };
            let feedback = this.feedback_records()?;
            let (mut gaps, skipped) =
                log.list_with_feedback(skill.as_deref(), &feedback).map_err(|e| ApiError::internal(e.to_string()))?;
            if !skipped.is_empty() {
                eprintln!("warning: {}: {skipped}", log.path().display());
            }
            gaps.truncate(limit);
            Ok(gaps)
        })
        .await
    }

    /// Every stored judgement. A damaged line is skipped with a warning naming it, as the CLI
    /// does: the rest is served.
    fn feedback_records(&self) -> Result<Vec<FeedbackRecord>, ApiError> {
        let (feedback, skipped) = self.feedback.list().map_err(|e| ApiError::internal(e.to_string()))?;
        if !skipped.is_empty() {
            eprintln!("warning: {}: {skipped}", self.feedback.path().display());
        }
        Ok(feedback)
    }

    /// The answers users rated 👍 that an entry could keep (`liked` of `GET /v1/gaps`).
    pub async fn liked(self: &Arc<Self>, skill: Option<String>, limit: usize) -> Result<Vec<LikedAnswer>, ApiError> {
        let live = self.live();
        if let Some(s) = &skill {
            live.assistant.engine.skill(s)?;
        }
        let this = self.clone();
        blocking(move || {
            let Some(log) = live.assistant.gap_log() else { return Ok(Vec::new()) };
            let mut liked = log.liked(skill.as_deref(), &this.feedback_records()?);
            // Only skills that still answer: a 👍 of a deleted or disabled skill has nowhere to go.
            liked.retain(|l| live.assistant.engine.skill(&l.skill).is_ok());
            liked.truncate(limit);
            Ok(liked)
        })
        .await
    }

    /// Keeps an answer findable by its `answer_id` for a while.
    fn remember(&self, answer: &Arc<Answer>) {
        lock(&self.recent).put(answer.answer_id.clone(), answer.clone());
    }

    /// Stores a user's judgement of an answer, with the answer itself when it is known (given
    /// recently, or a turn of `conversation`).
    pub async fn feedback(
        self: &Arc<Self>,
        judgement: Judgement,
        rating: Rating,
        conversation: Option<String>,
    ) -> Result<FeedbackRecord, ApiError> {
        let live = self.live();
        if let Some(s) = &judgement.skill {
            live.assistant.engine.skill(s)?;
        }
        let known = judgement.answer_id.as_ref().and_then(|id| lock(&self.recent).get(id).cloned());
        let this = self.clone();
        blocking(move || {
            let answer = match (known, &judgement.answer_id, &conversation) {
                (Some(a), _, _) => Some((*a).clone()),
                (None, Some(answer_id), Some(c)) => this.conversations.find_answer(c, answer_id),
                _ => None,
            };
            let record = FeedbackRecord::new(judgement, rating, answer.as_ref());
            if record.query.is_empty() {
                return Err(ApiError::bad_request("`query` is empty and `answer_id` names no answer this server gave"));
            }
            this.feedback.record(&record).map_err(|e| ApiError::internal(format!("cannot store the feedback: {e}")))?;
            Ok(record)
        })
        .await
    }

    /// Starts a re-index in the background; the new generations are served once it is done.
    /// Until it is done, the skills it covers are written down as pending, so that a server
    /// that stops before (a crash, `kill -9`) resumes it when it starts again
    /// ([`Service::resume_pending_index`]).
    pub fn start_index(self: &Arc<Self>, skills: Vec<String>, rebuild: bool) -> Result<IndexJob, ApiError> {
        let live = self.live();
        for s in &skills {
            live.assistant.engine.skill(s)?;
        }
        self.start_job(skills, rebuild, Reopen::IfPublished)
    }

    /// [`Service::start_index`] without checking the skills against the served ones (a skill
    /// just created is not among them yet); the assistant is reopened as `reopen` says.
    pub(crate) fn start_job(
        self: &Arc<Self>,
        skills: Vec<String>,
        rebuild: bool,
        reopen: Reopen,
    ) -> Result<IndexJob, ApiError> {
        let live = self.live();
        live.assistant.engine.store().writable().map_err(skillrag_engine::EngineError::from)?;
        let job = {
            let mut slot = lock(&self.job);
            if slot.as_ref().is_some_and(|j| j.state == "running") {
                return Err(ApiError::conflict("a re-index is already running; see GET /v1/index"));
            }
            let job = IndexJob {
                id: slot.as_ref().map_or(1, |j| j.id + 1),
                state: "running",
                skills: skills.clone(),
                started: crate::now_secs(),
                finished: None,
                message: "indexing".into(),
                report: None,
            };
            // Under the job's lock: the journal is read and written by one job at a time.
            self.note_pending(&skills);
            *slot = Some(job.clone());
            job
        };
        let this = self.clone();
        tokio::spawn(async move {
            let worker = this.clone();
            let result = blocking(move || {
                // A separate engine writes; the served one keeps its pinned generations.
                let live = worker.live();
                let mut engine = Engine::open(worker.project.clone())?;
                if let Some(embedder) = live.assistant.engine.embedder()? {
                    engine = engine.with_embedder(embedder);
                }
                Ok(engine.index(&IndexOptions { skills, rebuild }, &SilentProgress)?)
            })
            .await;
            let reloaded = match &result {
                Ok(_) => this.reload(reopen).await.map(|_| ()),
                Err(_) => Ok(()),
            };
            this.finish_job(result, reloaded);
        });
        Ok(job)
    }

    /// Records how the running job ended. A skill that could not be indexed (a full disk, a
    /// damaged store) fails the job, and its message says why: the report alone would say
    /// `done` with "0 file(s) skipped".
    fn finish_job(&self, result: Result<IndexReport, ApiError>, reloaded: Result<(), ApiError>) {
        // Problems named by their path in the project, not the server's filesystem.
        let result = result.map(|mut report| {
            for d in &mut report.diagnostics {
                if let Ok(inside) = d.path.strip_prefix(&self.project.root) {
                    d.path = inside.to_path_buf();
                }
            }
            report
        });
        let mut slot = lock(&self.job);
        let Some(job) = slot.as_mut() else { return };
        job.finished = Some(crate::now_secs());
        if let Ok(report) = &result {
            let indexed: Vec<String> =
                report.skills.iter().filter(|s| s.error.is_none()).map(|s| s.skill.clone()).collect();
            let everything = job.skills.is_empty() && indexed.len() == report.skills.len();
            self.clear_pending(&indexed, everything);
        }
        match (result, reloaded) {
            (Ok(report), Ok(())) => {
                let errors: Vec<&str> = report.skills.iter().filter_map(|s| s.error.as_deref()).collect();
                if errors.is_empty() {
                    job.state = "done";
                    job.message = index_summary(&report);
                } else {
                    job.state = "failed";
                    job.message = format!(
                        "{} of {} skill(s) not indexed: {}",
                        errors.len(),
                        report.skills.len(),
                        errors.join("; ")
                    );
                }
                job.report = Some(report);
            }
            (Ok(report), Err(e)) => {
                job.state = "failed";
                job.message = format!("indexed, but reopening the new index failed: {}", e.message);
                job.report = Some(report);
            }
            (Err(e), _) => {
                job.state = "failed";
                job.message = e.message;
            }
        }
    }

    /// The journal of re-indexes started and not finished: `{"skills": [...]}`, empty for all.
    fn pending_path(&self) -> std::path::PathBuf {
        self.project.state_dir().join(PENDING_INDEX)
    }

    /// The skills a re-index was started for and did not finish (empty: all of them); `None`
    /// when nothing is pending. A journal that cannot be read means all skills: a re-index of
    /// unchanged files costs little, a lost one leaves accepted documents unindexed.
    fn read_pending(&self) -> Option<Vec<String>> {
        let text = match std::fs::read(self.pending_path()) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(_) => return Some(Vec::new()),
        };
        Some(serde_json::from_slice::<PendingIndex>(&text).map_or_else(|_| Vec::new(), |p| p.skills))
    }

    fn write_pending(&self, skills: Vec<String>) -> std::io::Result<()> {
        let path = self.pending_path();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = serde_json::to_vec(&PendingIndex { skills }).map_err(std::io::Error::other)?;
        std::fs::write(path, text)
    }

    /// Writes down that `skills` (empty: all) need a re-index, with what was pending already.
    /// Uploads and deletes call it before their files change (and [`Service::start_index`] again),
    /// so a crash in between still leaves the re-index for the next start. Failing to write it (a full disk) is a warning: the re-index still runs.
    pub(crate) fn note_pending(&self, skills: &[String]) {
        if let Err(e) = self.write_pending(pending_with(self.read_pending(), skills)) {
            eprintln!(
                "warning: cannot write down the pending re-index ({}: {e}); if the server stops before it ends, \
                 run `skillrag index`",
                self.pending_path().display()
            );
        }
    }

    /// Takes `indexed` off the pending re-index (`everything`: all skills were indexed).
    fn clear_pending(&self, indexed: &[String], everything: bool) {
        let Some(pending) = self.read_pending() else { return };
        let result = match pending_after(&pending, indexed, everything) {
            None => std::fs::remove_file(self.pending_path()).or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            }),
            Some(left) if left != pending => self.write_pending(left),
            Some(_) => Ok(()),
        };
        if let Err(e) = result {
            eprintln!("warning: cannot update the pending re-index ({}: {e})", self.pending_path().display());
        }
    }

    /// Resumes the re-index that a previous run of the server started and did not finish (it
    /// was killed while indexing accepted uploads or deletes): without it, those documents would
    /// stay `pending` until someone ran `skillrag index`. Skills removed since are left out.
    pub fn resume_pending_index(self: &Arc<Self>) -> Option<IndexJob> {
        let pending = self.read_pending()?;
        let live = self.live();
        let known: Vec<String> = pending.iter().filter(|s| live.assistant.engine.skill(s).is_ok()).cloned().collect();
        if !pending.is_empty() && known.is_empty() {
            self.clear_pending(&pending, true);
            return None;
        }
        let which = if known.is_empty() { "every skill".to_string() } else { format!("`{}`", known.join("`, `")) };
        match self.start_index(known, false) {
            Ok(job) => {
                eprintln!("resuming the re-index of {which} that the previous run did not finish (see GET /v1/index)");
                Some(job)
            }
            Err(e) => {
                eprintln!("warning: cannot resume the unfinished re-index of {which}: {}", e.message);
                None
            }
        }
    }

    /// The running or last re-index (its diagnostics' paths relative to the project root).
    pub fn index_job(&self) -> Option<IndexJob> {
        lock(&self.job).clone()
    }

    /// Checks for indexes published by other processes every `every`, forever. A generation that
    /// cannot be opened is reported once; the previous one keeps serving.
    pub async fn watch_generations(self: Arc<Self>, every: Duration) {
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            if let Err(e) = self.reload_if_changed().await {
                eprintln!("warning: could not switch to the new index: {}", e.message);
            }
        }
    }
}

/// The journal of an unfinished re-index, in the state folder.
const PENDING_INDEX: &str = "index-pending.json";

/// What the journal holds: the skills to re-index, none for all.
#[derive(Serialize, serde::Deserialize)]
struct PendingIndex {
    skills: Vec<String>,
}

/// What is pending once a re-index of `skills` (empty: all) starts, given what was (`None`:
/// nothing; empty: all).
fn pending_with(pending: Option<Vec<String>>, skills: &[String]) -> Vec<String> {
    match pending {
        Some(all) if all.is_empty() => all,
        _ if skills.is_empty() => Vec::new(),
        Some(mut pending) => {
            pending.extend(skills.iter().cloned());
            pending.sort();
            pending.dedup();
            pending
        }
        None => skills.to_vec(),
    }
}

/// What is still pending once `indexed` were indexed (`everything`: every skill was); `None`
/// when nothing is.
fn pending_after(pending: &[String], indexed: &[String], everything: bool) -> Option<Vec<String>> {
    let left: Vec<String> = pending.iter().filter(|s| !indexed.contains(s)).cloned().collect();
    (!everything && (pending.is_empty() || !left.is_empty())).then_some(left)
}

/// Earlier questions of a conversation taken into account (routing each costs a query embedding).
const HISTORY_TURNS: usize = 4;

/// The answer with the caller's `id` (cached answers are shared between callers).
fn with_id(answer: Arc<Answer>, id: Option<String>) -> Arc<Answer> {
    if answer.id == id {
        return answer;
    }
    let mut own = (*answer).clone();
    own.id = id;
    Arc::new(own)
}

fn index_summary(report: &IndexReport) -> String {
    let published = report.skills.iter().filter(|s| s.generation.is_some()).count();
    let failed: usize = report.skills.iter().map(|s| s.files_failed).sum();
    format!(
        "{} skill(s) indexed in {:.1} s; {published} new generation(s); {failed} file(s) skipped",
        report.skills.len(),
        report.seconds
    )
}

/// A conversation store error as the API reports it.
pub(crate) fn history_error(e: HistoryError) -> ApiError {
    match e {
        HistoryError::NotFound(_) => ApiError::not_found(e.to_string()),
        HistoryError::Full(_) => ApiError::conflict(e.to_string()),
        HistoryError::Damaged { .. } | HistoryError::Io(..) => ApiError::internal(e.to_string()),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_pending_reindex_is_merged_and_cleared_by_skill() {
        // Nothing pending, then one skill, then another: both; all skills swallow the rest.
        assert_eq!(pending_with(None, &names(&["a"])), names(&["a"]));
        assert_eq!(pending_with(Some(names(&["b"])), &names(&["a", "b"])), names(&["a", "b"]));
        assert_eq!(pending_with(Some(names(&["a"])), &[]), Vec::<String>::new());
        assert_eq!(pending_with(Some(Vec::new()), &names(&["a"])), Vec::<String>::new());
        // A job that indexed some skills leaves the others; all of them, nothing.
        assert_eq!(pending_after(&names(&["a", "b"]), &names(&["a"]), false), Some(names(&["b"])));
        assert_eq!(pending_after(&names(&["a", "b"]), &names(&["a", "b"]), false), None);
        // "All skills" stays pending until a job over all of them succeeds.
        assert_eq!(pending_after(&[], &names(&["a"]), false), Some(Vec::new()));
        assert_eq!(pending_after(&[], &names(&["a", "b"]), true), None);
        // A skill that failed stays.
        assert_eq!(pending_after(&names(&["a"]), &[], false), Some(names(&["a"])));
    }
}
