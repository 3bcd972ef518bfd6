//! Writing the next generation of one skill's index.

use super::lexical::LexicalWriter;
use super::snapshot::EmbeddedSkillIndex;
use super::snapshot::{VECTORS, VISIBILITY};
use super::{current_generation, generation_name, lock, parse_generation, sync_dir, CURRENT};
use crate::checksum::{self, Checksums};
use crate::{IndexMeta, IndexWriter, Manifest, NewChunk, StoreError};
use skillrag_core::Chunk;
use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub struct EmbeddedWriter {
    skill: String,
    skill_dir: PathBuf,
    gen_dir: PathBuf,
    meta: IndexMeta,
    previous: Option<EmbeddedSkillIndex>,
    lexical: LexicalWriter,
    /// The BM25 index continues the previous generation's segments.
    lexical_continued: bool,
    rows: Rows,
    kept: HashSet<String>,
    /// Sources of the previous generation already deleted from the continued BM25 index.
    deleted: HashSet<String>,
    _lock: std::fs::File,
}

impl EmbeddedWriter {
    pub fn begin(skill: &str, skill_dir: &Path, mut meta: IndexMeta) -> Result<EmbeddedWriter, StoreError> {
        std::fs::create_dir_all(skill_dir).map_err(|e| StoreError::io(skill_dir, e))?;
        let lock = lock(skill, skill_dir)?;

        // A damaged CURRENT names nothing usable: this generation starts afresh and replaces it
        // ([`crate::Store::repair`] moves it aside first and says so).
        let current = match current_generation(skill_dir) {
            Err(StoreError::Corrupt { .. }) => None,
            other => other?,
        };
        let current_n = current.as_deref().and_then(parse_generation).unwrap_or(0);
        // Counted before leftovers go (see below).
        let highest = highest_generation(skill_dir, current.as_deref().and_then(parse_generation));
        remove_leftovers(skill_dir, current_n);

        // Continue from the current generation only if it was built with the same settings.
        let previous = match &current {
            Some(name) => match EmbeddedSkillIndex::open(skill, &skill_dir.join(name)) {
                Ok(prev) if prev.meta.rebuild_reason(&meta).is_none() && prev.meta.dim == meta.dim => Some(prev),
                Ok(prev) => {
                    meta.next_chunk_id = prev.meta.next_chunk_id;
                    None
                }
                Err(_) => None, // unreadable: rebuild from scratch
            },
            None => None,
        };
        if let Some(prev) = &previous {
            meta.next_chunk_id = prev.meta.next_chunk_id;
        }
        // Past every number used before, quarantined ones included: a reader that cached
        // generation N must never mistake a rebuilt generation for it.
        meta.generation = current_n.max(highest) + 1;
        let gen_dir = skill_dir.join(generation_name(meta.generation));
        if gen_dir.exists() {
            std::fs::remove_dir_all(&gen_dir).map_err(|e| StoreError::io(&gen_dir, e))?;
        }
        std::fs::create_dir_all(&gen_dir).map_err(|e| StoreError::io(&gen_dir, e))?;

        let tantivy_dir = gen_dir.join("tantivy");
        let continued = previous.as_ref().and_then(|_| {
            let prev_dir = skill_dir.join(current.as_deref().unwrap_or_default()).join("tantivy");
            match LexicalWriter::continue_from(&prev_dir, &tantivy_dir) {
                Ok(w) => Some(w),
                Err(_) => {
                    // No hard links here (or a damaged folder): build the BM25 index afresh.
                    let _ = std::fs::remove_dir_all(&tantivy_dir);
                    None
                }
            }
        });
        let lexical_continued = continued.is_some();
        let lexical = match continued {
            Some(w) => w,
            None => LexicalWriter::create(&tantivy_dir)?,
        };
        let rows = Rows::create(&gen_dir, meta.model_id.is_some().then_some(meta.dim))?;
        Ok(EmbeddedWriter {
            skill: skill.to_string(),
            skill_dir: skill_dir.to_path_buf(),
            gen_dir,
            meta,
            previous,
            lexical,
            lexical_continued,
            rows,
            kept: HashSet::new(),
            deleted: HashSet::new(),
            _lock: lock,
        })
    }

    /// Adds chunks; `assign_ids` continues the skill's id sequence, otherwise they keep theirs.
    fn write(&mut self, chunks: Vec<NewChunk>, assign_ids: bool) -> Result<(), StoreError> {
        for new in chunks {
            let mut chunk = new.chunk;
            if self.kept.contains(&chunk.source) {
                return Err(StoreError::Invalid(format!("`{}` was kept and cannot also be added", chunk.source)));
            }
            if self.meta.model_id.is_some() {
                // A passage the model cannot see keeps its row, as zeros: rows stay aligned
                // with chunks, and a zero row is never a real (unit-length) embedding.
                let vector = self.meta.checked_vector(new.vector)?;
                self.rows.vector(vector.as_deref(), new.visibility)?;
            }
            // A changed file's old chunks leave the continued BM25 index before its new ones arrive
            // (tantivy deletes only documents added before the delete).
            if self.lexical_continued && self.deleted.insert(chunk.source.clone()) {
                self.lexical.delete_source(&chunk.source);
            }
            self.meta.number(&mut chunk, !assign_ids);
            chunk.skill = self.skill.clone();
            self.lexical.add(chunk.id, &chunk.source, &chunk.indexed_text())?;
            self.rows.chunk(&chunk)?;
        }
        Ok(())
    }
}

/// The generation's chunks and vectors, appended to its files (unpublished until `CURRENT`
/// names the generation) as they arrive: memory holds a write buffer, not the skill.
struct Rows {
    chunks: BufWriter<std::fs::File>,
    chunks_path: PathBuf,
    /// With the vector dimension, when the skill has a model.
    vectors: Option<(BufWriter<std::fs::File>, PathBuf, usize)>,
    visibility: Vec<f32>,
    count: usize,
    vectorless: usize,
}

impl Rows {
    fn create(gen_dir: &Path, dim: Option<usize>) -> Result<Rows, StoreError> {
        let open = |path: PathBuf| -> Result<(BufWriter<std::fs::File>, PathBuf), StoreError> {
            let file = std::fs::File::create(&path).map_err(|e| StoreError::io(&path, e))?;
            Ok((BufWriter::with_capacity(1 << 20, file), path))
        };
        let (chunks, chunks_path) = open(gen_dir.join("chunks.jsonl"))?;
        let vectors = match dim {
            Some(dim) => {
                let (file, path) = open(gen_dir.join(VECTORS))?;
                Some((file, path, dim))
            }
            None => None,
        };
        Ok(Rows { chunks, chunks_path, vectors, visibility: Vec::new(), count: 0, vectorless: 0 })
    }

    fn chunk(&mut self, chunk: &Chunk) -> Result<(), StoreError> {
        serde_json::to_writer(&mut self.chunks, chunk).map_err(|e| StoreError::Invalid(e.to_string()))?;
        self.chunks.write_all(b"\n").map_err(|e| StoreError::io(&self.chunks_path, e))?;
        self.count += 1;
        Ok(())
    }

    /// A chunk's vector; `None` keeps its row as zeros (a passage stored without a vector:
    /// rows stay aligned with chunks, and a zero row is never a real, unit-length embedding).
    fn vector(&mut self, vector: Option<&[f32]>, visibility: f32) -> Result<(), StoreError> {
        let Some((file, path, dim)) = self.vectors.as_mut() else { return Ok(()) };
        let vector = vector.filter(|v| v.iter().any(|&x| x != 0.0));
        let mut bytes = Vec::with_capacity(*dim * 4);
        match vector {
            Some(v) => v.iter().for_each(|x| bytes.extend_from_slice(&x.to_le_bytes())),
            None => {
                bytes.resize(*dim * 4, 0);
                self.vectorless += 1;
            }
        }
        file.write_all(&bytes).map_err(|e| StoreError::io(path, e))?;
        self.visibility.push(visibility);
        Ok(())
    }

    /// Flushes and syncs the files; returns (chunks, chunks without a vector).
    fn finish(self, gen_dir: &Path) -> Result<(usize, usize), StoreError> {
        fn sync(file: BufWriter<std::fs::File>, path: &Path) -> Result<(), StoreError> {
            let file = file.into_inner().map_err(|e| StoreError::io(path, e.into_error()))?;
            file.sync_all().map_err(|e| StoreError::io(path, e))
        }
        sync(self.chunks, &self.chunks_path)?;
        if let Some((file, path, _)) = self.vectors {
            sync(file, &path)?;
            let bytes: Vec<u8> = self.visibility.iter().flat_map(|v| v.to_le_bytes()).collect();
            write_synced(&gen_dir.join(VISIBILITY), &bytes)?;
        }
        Ok((self.count, self.vectorless))
    }
}

/// The highest generation number that a reader may have seen: set-aside generations always,
/// and, when `CURRENT` names none, every generation folder (any may have been published).
/// Folders above a valid `CURRENT` are a crashed writer's, never published: their numbers are
/// reused.
fn highest_generation(skill_dir: &Path, current: Option<u64>) -> u64 {
    let Ok(entries) = std::fs::read_dir(skill_dir) else { return 0 };
    let seen = entries.flatten().filter_map(|e| {
        let name = e.file_name().to_str()?.to_string();
        let (generation, aside) = match name.split_once('.') {
            Some((generation, rest)) => (generation.to_string(), rest.starts_with("corrupt-")),
            None => (name, false),
        };
        parse_generation(&generation).filter(|_| aside || current.is_none())
    });
    seen.chain(current).max().unwrap_or(0)
}

/// Removes generation folders other than the current one and the one before it: the
/// unfinished work of a crashed writer, and generations no reader can still be opening.
fn remove_leftovers(skill_dir: &Path, current: u64) {
    let Ok(entries) = std::fs::read_dir(skill_dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(n) = name.to_str().and_then(parse_generation) else { continue };
        if n != current && n + 1 != current {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let _ = std::fs::remove_file(skill_dir.join(format!("{CURRENT}.tmp")));
}

impl IndexWriter for EmbeddedWriter {
    fn keep(&mut self, source: &str) -> Result<usize, StoreError> {
        let Some(prev) = &self.previous else {
            return Err(StoreError::Invalid(format!(
                "cannot keep `{source}`: there is no previous generation to keep it from"
            )));
        };
        if !self.kept.insert(source.to_string()) {
            return Ok(0);
        }
        let rows = prev.rows_of(source);
        for &row in rows {
            let chunk = &prev.chunks[row];
            if !self.lexical_continued {
                self.lexical.add(chunk.id, &chunk.source, &chunk.indexed_text())?;
            }
            let (vector, visibility) = match &prev.vectors {
                Some(v) => (Some(v.row(row)), v.visibility[row]),
                None => (None, 0.0),
            };
            self.rows.vector(vector, visibility)?;
            self.rows.chunk(chunk)?;
        }
        Ok(rows.len())
    }

    fn add(&mut self, chunks: Vec<NewChunk>) -> Result<(), StoreError> {
        self.write(chunks, true)
    }

    fn import(&mut self, chunks: Vec<NewChunk>) -> Result<(), StoreError> {
        self.write(chunks, false)
    }

    fn commit(mut self: Box<Self>, manifest: Manifest) -> Result<IndexMeta, StoreError> {
        if self.lexical_continued {
            if let Some(prev) = &self.previous {
                for source in prev.manifest.files.keys() {
                    if !self.kept.contains(source) && self.deleted.insert(source.clone()) {
                        self.lexical.delete_source(source);
                    }
                }
            }
        }
        let EmbeddedWriter { skill_dir, gen_dir, mut meta, lexical, rows, _lock, .. } = *self;
        lexical.commit()?;
        let (chunks, vectorless) = rows.finish(&gen_dir)?;
        meta.chunks = chunks;
        meta.vectorless = vectorless;
        meta.created_at =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        write_json(&gen_dir.join("manifest.json"), &manifest)?;
        write_json(&gen_dir.join("meta.json"), &meta)?;
        // Last, over everything above and tantivy's files: what opening the generation verifies.
        let sums = Checksums::of_dir(&gen_dir).map_err(|e| StoreError::io(&gen_dir, e))?;
        write_json(&gen_dir.join(checksum::FILE), &sums)?;
        sync_dir(&gen_dir)?;

        // The switch: CURRENT.tmp is written and synced, then renamed over CURRENT.
        let tmp = skill_dir.join(format!("{CURRENT}.tmp"));
        write_synced(&tmp, format!("{}\n", generation_name(meta.generation)).as_bytes())?;
        let current = skill_dir.join(CURRENT);
        std::fs::rename(&tmp, &current).map_err(|e| StoreError::io(&current, e))?;
        sync_dir(&skill_dir)?;
        remove_leftovers(&skill_dir, meta.generation);
        Ok(meta)
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let mut f = std::fs::File::create(path).map_err(|e| StoreError::io(path, e))?;
    f.write_all(bytes).map_err(|e| StoreError::io(path, e))?;
    f.sync_all().map_err(|e| StoreError::io(path, e))
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| StoreError::Invalid(e.to_string()))?;
    write_synced(path, &bytes)
}
