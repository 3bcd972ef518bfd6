//! Chunk edits (docs/design.md §3, "Chunk edits"): what a knowledge owner changed in a chunk —
//! its text, whether it is retrieved, keywords and questions of its own — kept in the skill
//! folder beside its documents (`chunk-edits.json`) and applied each time the document is
//! chunked, so they survive every re-index. Each document's edits are keyed by the document's
//! content hash and the chunk's ordinal: chunking the same bytes with the same settings gives
//! the same chunks, so an edit finds its chunk again; once the document's bytes change, its
//! edits are not applied, and the document is reported as having edits of an earlier version.

use serde::{Deserialize, Serialize};
use skillrag_core::{Chunk, ChunkId, Diagnostic, DocType};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file, in the skill folder (never listed as knowledge, whatever the skill's patterns).
pub const EDITS_FILE: &str = skillrag_load::CHUNK_EDITS_FILE;

/// Keywords or questions one chunk may carry, and the longest of each.
pub const MAX_EXTRAS: usize = 32;
pub const MAX_EXTRA_CHARS: usize = 200;

/// Every chunk edit of one skill, by document source.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunkEdits {
    #[serde(default)]
    pub documents: BTreeMap<String, DocumentEdits>,
    /// The chunking preset the owner chose for a document, by source: it wins over the file
    /// rules, the skill's `doc_type` and detection, and holds whatever the document's bytes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub presets: BTreeMap<String, DocType>,
    /// The owner's metadata of a document, by source (`{"department": "hr", "year": "2024"}`):
    /// a retrieval filter, as in Dify. Not part of any chunk, so changing it re-chunks nothing.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, BTreeMap<String, String>>,
}

impl ChunkEdits {
    /// The sources whose metadata holds every `(key, value)` of `wanted` (values compared
    /// without case or surrounding spaces).
    pub fn sources_with(&self, wanted: &BTreeMap<String, String>) -> Vec<String> {
        let same = |a: &str, b: &str| a.trim().to_lowercase() == b.trim().to_lowercase();
        self.metadata
            .iter()
            .filter(|(_, fields)| wanted.iter().all(|(k, v)| fields.iter().any(|(fk, fv)| same(fk, k) && same(fv, v))))
            .map(|(source, _)| source.clone())
            .collect()
    }
}

/// The edits of one document's chunks, made to the version with `content_hash`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocumentEdits {
    pub content_hash: String,
    /// By chunk ordinal.
    pub chunks: BTreeMap<u32, ChunkEdit>,
}

/// What was changed in one chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkEdit {
    /// The text that replaces the chunk's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `false`: the chunk is left out of the index (never retrieved) until it is enabled again.
    #[serde(default = "enabled")]
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<String>,
    /// The chunk as it was chunked: a disabled chunk is in no index, and is still listed by it.
    pub original: String,
}

/// Ids of disabled chunks (in no index) lie from here up, below 2^53 so that a JSON client
/// (JavaScript) reads them exactly; an index numbers its chunks from 0 up, far below.
const DISABLED_IDS: ChunkId = 1 << 52;

/// The id a disabled chunk is listed and named by: fixed by its document and ordinal, so it
/// holds across re-indexing and never names a chunk of an index.
pub fn disabled_id(source: &str, ordinal: u32) -> ChunkId {
    let hash = skillrag_load::content_hash(format!("{source}\n{ordinal}").as_bytes());
    let low = u64::from_str_radix(&hash[..13], 16).unwrap_or(0) & (DISABLED_IDS - 1);
    DISABLED_IDS | low
}

fn enabled() -> bool {
    true
}

/// The chunk a change is made to.
#[derive(Debug, Clone, Copy)]
pub struct EditTarget<'a> {
    pub source: &'a str,
    pub ordinal: u32,
    /// Its text as the index holds it (the chunked text when it has no text edit yet).
    pub text: &'a str,
}

impl<'a> From<&'a Chunk> for EditTarget<'a> {
    fn from(c: &'a Chunk) -> EditTarget<'a> {
        EditTarget { source: &c.source, ordinal: c.ordinal, text: &c.text }
    }
}

/// One change asked of a chunk (the fields of `PATCH …/chunks/{id}`); `None` leaves a part as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkChange {
    pub text: Option<String>,
    pub enabled: Option<bool>,
    pub keywords: Option<Vec<String>>,
    pub questions: Option<Vec<String>>,
}

/// Why a change cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ChangeError {
    pub field: &'static str,
    pub message: String,
}

fn refuse(field: &'static str, message: impl Into<String>) -> ChangeError {
    ChangeError { field, message: message.into() }
}

impl ChunkChange {
    /// The change with its lists trimmed, refused when it asks nothing or more than a chunk holds.
    pub fn checked(mut self) -> Result<ChunkChange, ChangeError> {
        if self.text.is_none() && self.enabled.is_none() && self.keywords.is_none() && self.questions.is_none() {
            return Err(refuse("body", "give `text`, `enabled`, `keywords` or `questions`"));
        }
        if let Some(text) = &self.text {
            if text.trim().is_empty() {
                return Err(refuse("text", "empty: to keep a chunk out of retrieval, send `\"enabled\": false`"));
            }
        }
        for (field, list) in [("keywords", &mut self.keywords), ("questions", &mut self.questions)] {
            let Some(items) = list else { continue };
            let mut kept: Vec<String> = Vec::new();
            for item in items.iter().map(|i| i.split_whitespace().collect::<Vec<_>>().join(" ")) {
                if item.is_empty() || kept.contains(&item) {
                    continue;
                }
                if item.chars().count() > MAX_EXTRA_CHARS {
                    return Err(refuse(field, format!("`{item}` is longer than {MAX_EXTRA_CHARS} characters")));
                }
                kept.push(item);
            }
            if kept.len() > MAX_EXTRAS {
                return Err(refuse(field, format!("more than {MAX_EXTRAS}")));
            }
            *items = kept;
        }
        Ok(self)
    }
}

impl ChunkEdit {
    /// An edit that changes nothing (all parts back to the chunk as chunked) is dropped.
    fn is_noop(&self) -> bool {
        self.enabled && self.keywords.is_empty() && self.questions.is_empty() && self.text.is_none()
    }
}

impl ChunkEdits {
    /// The skill's edits; none when it has no file. A file that cannot be read or parsed is an
    /// error naming it (the skill is then indexed without edits, and the file left as it is).
    pub fn load(skill_dir: &Path) -> Result<ChunkEdits, Diagnostic> {
        let file = skill_dir.join(EDITS_FILE);
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ChunkEdits::default()),
            Err(e) => return Err(Diagnostic::error(&file, None, format!("cannot read the chunk edits: {e}"))),
        };
        serde_json::from_str(&text).map_err(|e| {
            Diagnostic::error(&file, Some(e.line()), format!("chunk edits are not valid: {e}; indexed without them"))
        })
    }

    /// Writes the edits to the skill folder through a temporary file renamed over the old one.
    pub fn save(&self, skill_dir: &Path) -> std::io::Result<PathBuf> {
        let file = skill_dir.join(EDITS_FILE);
        let mut staged = tempfile::Builder::new().prefix(".chunk-edits.").tempfile_in(skill_dir)?;
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        staged.write_all(&json)?;
        staged.as_file().sync_all()?;
        staged.persist(&file).map_err(|e| e.error)?;
        Ok(file)
    }

    /// What `source`'s chunks were indexed with (its edits and chosen preset): a document
    /// chunked again when it changes.
    pub fn fingerprint(&self, source: &str) -> Option<String> {
        let (doc, preset) = (self.documents.get(source), self.presets.get(source));
        if doc.is_none() && preset.is_none() {
            return None;
        }
        let json = serde_json::to_vec(&(doc, preset)).ok()?;
        Some(skillrag_load::content_hash(&json)[..16].to_string())
    }

    /// Chooses `preset` for `source` (`None`: back to the rules and detection). Its chunk edits
    /// are dropped, since they name chunks by ordinal and another preset cuts other chunks;
    /// returns how many were dropped.
    pub fn choose_preset(&mut self, source: &str, preset: Option<DocType>) -> usize {
        if self.presets.get(source).copied() == preset {
            return 0;
        }
        match preset {
            Some(p) => self.presets.insert(source.to_string(), p),
            None => self.presets.remove(source),
        };
        self.documents.remove(source).map_or(0, |d| d.chunks.len())
    }

    /// `change` made to the chunk `chunk` (as the index holds it, with its edits; or a disabled
    /// one) of the document version `content_hash`; returns the edit as it now stands.
    pub fn record(&mut self, chunk: EditTarget<'_>, content_hash: &str, change: &ChunkChange) -> ChunkEdit {
        let doc = self.documents.entry(chunk.source.to_string()).or_default();
        if doc.content_hash != content_hash {
            // Edits of an earlier version cannot be told apart from this one's chunks.
            *doc = DocumentEdits { content_hash: content_hash.to_string(), chunks: BTreeMap::new() };
        }
        let edit = doc.chunks.entry(chunk.ordinal).or_insert_with(|| ChunkEdit {
            text: None,
            enabled: true,
            keywords: Vec::new(),
            questions: Vec::new(),
            original: chunk.text.to_string(),
        });
        if let Some(text) = &change.text {
            // Back to the chunked text: no text edit.
            edit.text = (text.trim() != edit.original.trim()).then(|| text.trim().to_string());
        }
        if let Some(enabled) = change.enabled {
            edit.enabled = enabled;
        }
        if let Some(keywords) = &change.keywords {
            edit.keywords = keywords.clone();
        }
        if let Some(questions) = &change.questions {
            edit.questions = questions.clone();
        }
        let now = edit.clone();
        if now.is_noop() {
            doc.chunks.remove(&chunk.ordinal);
        }
        if doc.chunks.is_empty() {
            self.documents.remove(chunk.source);
        }
        now
    }

    /// The disabled chunk `id` ([`disabled_id`]): its source and ordinal.
    pub fn disabled(&self, id: ChunkId) -> Option<(&str, u32, &ChunkEdit)> {
        if id < DISABLED_IDS {
            return None;
        }
        self.documents.iter().find_map(|(source, doc)| {
            doc.chunks
                .iter()
                .find(|(&o, e)| !e.enabled && disabled_id(source, o) == id)
                .map(|(o, e)| (source.as_str(), *o, e))
        })
    }

    /// `chunks` of `source` (version `content_hash`) with its edits applied: texts replaced,
    /// keywords and questions added, disabled chunks left out. Edits of another version are not
    /// applied: the warning says so.
    pub fn apply(
        &self,
        path: &Path,
        source: &str,
        content_hash: &str,
        chunks: Vec<Chunk>,
    ) -> (Vec<Chunk>, Option<Diagnostic>) {
        let Some(doc) = self.documents.get(source) else { return (chunks, None) };
        if doc.content_hash != content_hash {
            let warning = Diagnostic::warning(
                path,
                None,
                format!(
                    "{} chunk edit(s) were made to an earlier version of this file and are not applied; \
                     edit its chunks again (the old edits stay in {EDITS_FILE})",
                    doc.chunks.len()
                ),
            );
            return (chunks, Some(warning));
        }
        let mut out = Vec::with_capacity(chunks.len());
        for mut chunk in chunks {
            match doc.chunks.get(&chunk.ordinal) {
                Some(edit) if !edit.enabled => continue,
                Some(edit) => {
                    if let Some(text) = &edit.text {
                        chunk.text = text.clone();
                    }
                    chunk.keywords = edit.keywords.clone();
                    chunk.questions = edit.questions.clone();
                    out.push(chunk);
                }
                None => out.push(chunk),
            }
        }
        (out, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(ordinal: u32, text: &str) -> Chunk {
        Chunk {
            id: 100 + u64::from(ordinal),
            skill: "s".into(),
            source: "knowledge/a.md".into(),
            title: "A".into(),
            heading: vec![],
            ordinal,
            span: (0, text.chars().count()),
            doc_type: Default::default(),
            tier: Default::default(),
            mtime: 0,
            content_hash: "h1".into(),
            text: text.into(),
            pages: None,
            summary: None,
            table_header: None,
            ocr_confidence: None,
            keywords: Vec::new(),
            questions: Vec::new(),
        }
    }

    fn change(text: Option<&str>, enabled: Option<bool>, keywords: Option<&[&str]>) -> ChunkChange {
        ChunkChange {
            text: text.map(str::to_string),
            enabled,
            keywords: keywords.map(|k| k.iter().map(|s| s.to_string()).collect()),
            questions: None,
        }
    }

    #[test]
    fn edits_apply_to_their_version_and_survive_rechunking() {
        let mut edits = ChunkEdits::default();
        edits.record((&chunk(0, "old text")).into(), "h1", &change(Some("new text"), None, Some(&["kw"])));
        edits.record((&chunk(1, "noise")).into(), "h1", &change(None, Some(false), None));
        let path = Path::new("/s/knowledge/a.md");
        let (chunks, warning) =
            edits.apply(path, "knowledge/a.md", "h1", vec![chunk(0, "old text"), chunk(1, "noise"), chunk(2, "kept")]);
        assert!(warning.is_none());
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["new text", "kept"], "edited, disabled left out, the rest as chunked");
        assert_eq!(chunks[0].keywords, ["kw"]);
        assert!(chunks[0].indexed_text().contains("kw"));
        // Another version of the document: nothing applied, and said.
        let (chunks, warning) = edits.apply(path, "knowledge/a.md", "h2", vec![chunk(0, "changed"), chunk(1, "noise")]);
        assert_eq!(chunks.len(), 2);
        assert!(warning.unwrap().message.contains("earlier version"));
        // The disabled chunk is still named, by an id no index gives out.
        let id = disabled_id("knowledge/a.md", 1);
        assert!(id > 1 << 52 && id < 1 << 53 && id != disabled_id("knowledge/a.md", 2), "{id}");
        assert_eq!(
            edits.disabled(id).map(|(s, o, e)| (s, o, e.original.as_str())),
            Some(("knowledge/a.md", 1, "noise"))
        );
        assert!(edits.disabled(101).is_none());
    }

    #[test]
    fn an_edit_back_to_the_chunk_as_chunked_is_dropped_and_the_fingerprint_follows() {
        let mut edits = ChunkEdits::default();
        assert_eq!(edits.fingerprint("knowledge/a.md"), None);
        edits.record((&chunk(0, "text")).into(), "h1", &change(None, Some(false), None));
        let disabled = edits.fingerprint("knowledge/a.md");
        assert!(disabled.is_some());
        edits.record((&chunk(0, "text")).into(), "h1", &change(None, Some(true), None));
        assert!(edits.documents.is_empty(), "{edits:?}");
        edits.record((&chunk(0, "text")).into(), "h1", &change(Some("other"), None, None));
        assert_ne!(edits.fingerprint("knowledge/a.md"), disabled);
        edits.record((&chunk(0, "text")).into(), "h1", &change(Some(" text "), None, None));
        assert!(edits.documents.is_empty(), "the text as chunked again: {edits:?}");
    }

    #[test]
    fn changes_are_checked() {
        assert_eq!(ChunkChange::default().checked().unwrap_err().field, "body");
        assert_eq!(change(Some("  "), None, None).checked().unwrap_err().field, "text");
        let long = "x".repeat(MAX_EXTRA_CHARS + 1);
        assert_eq!(change(None, None, Some(&[long.as_str()])).checked().unwrap_err().field, "keywords");
        let many: Vec<String> = (0..=MAX_EXTRAS).map(|i| format!("k{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(change(None, None, Some(&refs)).checked().is_err());
        let tidy = change(None, None, Some(&[" a  b ", "a b", ""])).checked().unwrap();
        assert_eq!(tidy.keywords.unwrap(), ["a b"]);
    }

    #[test]
    fn the_file_round_trips_and_a_broken_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(ChunkEdits::load(dir.path()).unwrap(), ChunkEdits::default());
        let mut edits = ChunkEdits::default();
        edits.record((&chunk(3, "t")).into(), "h1", &change(None, None, Some(&["k"])));
        edits.save(dir.path()).unwrap();
        assert_eq!(ChunkEdits::load(dir.path()).unwrap(), edits);
        std::fs::write(dir.path().join(EDITS_FILE), "{\n\"documents\": [").unwrap();
        let broken = ChunkEdits::load(dir.path()).unwrap_err();
        assert!(broken.is_error() && broken.line.is_some() && broken.path.ends_with(EDITS_FILE), "{broken:?}");
    }
}
