//! Watching the skills folders for changes (`skillrag index --watch`): file-system events are
//! debounced into batches, and each batch names the skills it touched, so that only those are
//! re-indexed — through the same incremental, atomic index path as a manual run.

use crate::{EngineError, Project};
use notify_debouncer_mini::notify::RecursiveMode;
use notify_debouncer_mini::{new_debouncer, DebounceEventResult, Debouncer};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// Changes seen in one quiet period.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ChangeBatch {
    /// Skill folder names with a changed file.
    pub skills: BTreeSet<String>,
    /// A `SKILL.md` changed, a skill was disabled or enabled, or a skill folder appeared or
    /// vanished: skills must be rediscovered.
    pub rediscover: bool,
    pub paths: Vec<PathBuf>,
}

pub struct Watcher {
    roots: Vec<PathBuf>,
    /// Project folders that skills name as shared knowledge (`/shared/style-guide/**`), with
    /// the skills that name each: a change there re-indexes every one of them.
    shared: Vec<(PathBuf, Vec<String>)>,
    state_dir: PathBuf,
    events: Receiver<DebounceEventResult>,
    _debouncer: Debouncer<notify_debouncer_mini::notify::RecommendedWatcher>,
}

impl Watcher {
    /// Watches every skills folder of `project` and the shared folders its skills name (see
    /// [`crate::Engine::shared_folders`]); events within `debounce` of each other form one batch.
    pub fn new(
        project: &Project,
        shared: Vec<(PathBuf, Vec<String>)>,
        debounce: Duration,
    ) -> Result<Watcher, EngineError> {
        let (tx, events) = channel();
        let mut debouncer = new_debouncer(debounce, tx)
            .map_err(|e| EngineError::Watch { what: "files".into(), message: e.to_string() })?;
        let roots = project.skill_roots();
        for root in &roots {
            debouncer
                .watcher()
                .watch(root, RecursiveMode::Recursive)
                .map_err(|e| EngineError::Watch { what: root.display().to_string(), message: e.to_string() })?;
        }
        let roots: Vec<PathBuf> = roots.iter().map(|r| r.canonicalize().unwrap_or_else(|_| r.clone())).collect();
        let mut watched = Vec::new();
        for (folder, skills) in shared {
            // Inside a skills folder it is watched already; a missing one is reported by `index`.
            let folder = folder.canonicalize().unwrap_or(folder);
            if !roots.iter().any(|r| folder.starts_with(r)) && folder.is_dir() {
                debouncer
                    .watcher()
                    .watch(&folder, RecursiveMode::Recursive)
                    .map_err(|e| EngineError::Watch { what: folder.display().to_string(), message: e.to_string() })?;
            }
            watched.push((folder, skills));
        }
        let state_dir = project.state_dir();
        let state_dir = state_dir.canonicalize().unwrap_or(state_dir);
        Ok(Watcher { roots, shared: watched, state_dir, events, _debouncer: debouncer })
    }

    /// Blocks until the next batch of relevant changes; `None` when the watcher stopped.
    /// Watcher errors (e.g. too many watched files) are passed to `on_error` and waiting goes on.
    pub fn next(&self, on_error: &mut dyn FnMut(String)) -> Option<ChangeBatch> {
        loop {
            let result = self.events.recv().ok()?;
            let mut batch = ChangeBatch::default();
            match result {
                Ok(events) => {
                    for event in events {
                        self.classify(&event.path, &mut batch);
                    }
                }
                Err(e) => on_error(e.to_string()),
            }
            // Drain whatever else is already queued into the same batch.
            while let Ok(more) = self.events.try_recv() {
                if let Ok(events) = more {
                    for event in events {
                        self.classify(&event.path, &mut batch);
                    }
                }
            }
            if !batch.paths.is_empty() {
                return Some(batch);
            }
        }
    }

    fn classify(&self, path: &Path, batch: &mut ChangeBatch) {
        // Our own index writes must not trigger another round (the state folder may sit inside a skills folder).
        if path.starts_with(&self.state_dir) {
            return;
        }
        let mut shared = false;
        for (_, skills) in self.shared.iter().filter(|(folder, _)| path.starts_with(folder)) {
            batch.skills.extend(skills.iter().cloned());
            shared = true;
        }
        if shared {
            batch.paths.push(path.to_path_buf());
        }
        let Some(relative) = self.roots.iter().find_map(|root| path.strip_prefix(root).ok()) else { return };
        let mut parts = relative.components();
        let Some(skill) = parts.next().map(|c| c.as_os_str().to_string_lossy().into_owned()) else { return };
        if skill.starts_with('.') {
            return;
        }
        let rest: PathBuf = parts.collect();
        let declares = [skillrag_skill::SKILL_FILE, skillrag_skill::DISABLED_MARKER].map(Path::new);
        if rest.as_os_str().is_empty() || declares.contains(&rest.as_path()) {
            batch.rediscover = true;
        }
        batch.skills.insert(skill);
        if !shared {
            batch.paths.push(path.to_path_buf());
        }
    }
}
