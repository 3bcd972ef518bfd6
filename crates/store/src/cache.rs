//! The embedding cache: passage vectors by (model id, text hash), so a text is embedded once
//! per model no matter how often its file changes around it or which generation it lands in.
//!
//! One append-only file per model: a header, then fixed-size records, each with a checksum. A
//! crash can only leave a torn record at the end, which is ignored on the next open; a record
//! damaged later (bit rot, a stray write) fails its checksum and is dropped and re-embedded.

use crate::StoreError;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Version 2 ends each record with a checksum; version 1 files (no checksums) are migrated.
const MAGIC: &[u8; 8] = b"SKRGEMB2";
const MAGIC_V1: &[u8; 8] = b"SKRGEMB1";
const HEADER: usize = MAGIC.len() + 4;
const SUM: usize = 8;
type Key = [u8; 16];

/// One record: key, visibility, `dim` floats, then the first bytes of their BLAKE3.
fn record_len(dim: usize) -> usize {
    16 + 4 + 4 * dim + SUM
}

fn record_sum(body: &[u8]) -> [u8; SUM] {
    let mut sum = [0u8; SUM];
    sum.copy_from_slice(&blake3::hash(body).as_bytes()[..SUM]);
    sum
}

fn header_dim(bytes: &[u8]) -> Option<usize> {
    if bytes.len() < HEADER || &bytes[..MAGIC.len()] != MAGIC {
        return None;
    }
    Some(u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize).filter(|&d| d > 0)
}

/// A record's key, visibility and vector, or `None` when its checksum fails or a value is not
/// finite (which no model produces; one would poison every score it takes part in).
fn parse_record(record: &[u8]) -> Option<(Key, f32, Vec<f32>)> {
    let (body, sum) = record.split_at(record.len() - SUM);
    if record_sum(body) != sum {
        return None;
    }
    let mut key = [0u8; 16];
    key.copy_from_slice(&body[..16]);
    let floats: Vec<f32> = body[16..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    if !floats.iter().all(|x| x.is_finite()) {
        return None;
    }
    Some((key, floats[0], floats[1..].to_vec()))
}

/// What a cache file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheCheck {
    pub file: String,
    pub records: usize,
    /// Records whose checksum fails or whose values are not finite.
    pub damaged: usize,
    /// Why the whole file is unusable (an unknown header), if it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// Written by an older skillrag, without checksums: not damage; the next `skillrag index`
    /// with its model migrates it (plausible records kept, with checksums).
    pub outdated: bool,
}

impl CacheCheck {
    pub fn is_ok(&self) -> bool {
        self.damaged == 0 && self.unreadable.is_none()
    }
}

pub struct EmbeddingCache {
    path: PathBuf,
    dim: usize,
    entries: HashMap<Key, (f32, Vec<f32>)>,
    pending: Vec<u8>,
    /// Records dropped at open because they were damaged (they are embedded again).
    dropped: usize,
}

impl EmbeddingCache {
    /// Opens (or creates) the cache of `model_id` in `dir`. Damaged records are dropped (see
    /// [`EmbeddingCache::dropped`]) and the file rewritten without them; an unusable file is
    /// started over: it is only a cache.
    pub fn open(dir: &Path, model_id: &str, dim: usize) -> Result<EmbeddingCache, StoreError> {
        if dir.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
            std::fs::remove_file(dir).map_err(|e| StoreError::io(dir, e))?;
        }
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        let file_name: String =
            model_id.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.@".contains(c) { c } else { '_' }).collect();
        let path = dir.join(format!("{file_name}.bin"));
        let mut cache = EmbeddingCache { path, dim, entries: HashMap::new(), pending: Vec::new(), dropped: 0 };
        if cache.path.is_dir() {
            std::fs::remove_dir_all(&cache.path).map_err(|e| StoreError::io(&cache.path, e))?;
        }
        match std::fs::read(&cache.path) {
            Ok(bytes) => cache.load(&bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io(&cache.path, e)),
        }
        Ok(cache)
    }

    /// Reads a cache file on its own (its header gives the dimension), for `skillrag doctor`.
    pub fn check_file(path: &Path) -> Result<CacheCheck, StoreError> {
        let bytes = std::fs::read(path).map_err(|e| StoreError::io(path, e))?;
        let mut check = CacheCheck { file: path.display().to_string(), ..CacheCheck::default() };
        let Some(dim) = header_dim(&bytes) else {
            if bytes.starts_with(b"SKRGEMB") {
                check.outdated = true;
            } else {
                check.unreadable = Some("not an embedding cache (unknown header)".into());
            }
            return Ok(check);
        };
        for record in bytes[HEADER..].chunks_exact(record_len(dim)) {
            check.records += 1;
            if parse_record(record).is_none() {
                check.damaged += 1;
            }
        }
        Ok(check)
    }

    /// Drops the damaged records of a cache file (or the file, when unusable), as opening it
    /// with its model would. Returns how many records were dropped.
    pub fn repair_file(path: &Path) -> Result<usize, StoreError> {
        let bytes = std::fs::read(path).map_err(|e| StoreError::io(path, e))?;
        let Some(dim) = header_dim(&bytes) else {
            std::fs::remove_file(path).map_err(|e| StoreError::io(path, e))?;
            return Ok(0);
        };
        let mut cache =
            EmbeddingCache { path: path.to_path_buf(), dim, entries: HashMap::new(), pending: Vec::new(), dropped: 0 };
        cache.load(&bytes);
        Ok(cache.dropped)
    }

    /// Records dropped at open because their checksum failed or a value was not finite.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    fn record_len(&self) -> usize {
        record_len(self.dim)
    }

    fn load(&mut self, bytes: &[u8]) {
        if bytes.starts_with(MAGIC_V1) {
            self.migrate_v1(bytes);
            return;
        }
        if header_dim(bytes) != Some(self.dim) {
            // Unreadable, of an older format or from another dimension: start over (it is only a cache).
            let _ = std::fs::remove_file(&self.path);
            return;
        }
        let records = (bytes.len() - HEADER) / self.record_len();
        let valid_len = HEADER + records * self.record_len();
        let mut good = Vec::with_capacity(valid_len);
        good.extend_from_slice(&bytes[..HEADER]);
        for record in bytes[HEADER..valid_len].chunks_exact(self.record_len()) {
            match parse_record(record) {
                Some((key, visibility, vector)) => {
                    self.entries.insert(key, (visibility, vector));
                    good.extend_from_slice(record);
                }
                None => self.dropped += 1,
            }
        }
        if self.dropped > 0 {
            // Rewritten without them, so that they are reported (and re-embedded) once.
            if self.replace_file(&good).is_err() {
                let _ = std::fs::remove_file(&self.path);
                self.entries.clear();
            }
        } else if valid_len < bytes.len() {
            // Drop a torn last record so that later appends stay aligned.
            let truncated =
                std::fs::OpenOptions::new().write(true).open(&self.path).and_then(|f| f.set_len(valid_len as u64));
            if truncated.is_err() {
                let _ = std::fs::remove_file(&self.path);
                self.entries.clear();
            }
        }
    }

    /// Reads a version-1 file (records without checksums) and rewrites it as version 2, so an
    /// upgrade re-embeds nothing. With no checksum to go by, a record is kept only when it looks
    /// like what a model writes: finite, a unit-length vector, a visibility in [0, 1].
    fn migrate_v1(&mut self, bytes: &[u8]) {
        let dim_ok = bytes.len() >= HEADER
            && u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize == self.dim;
        let v1_len = 16 + 4 + 4 * self.dim;
        let mut file = MAGIC.to_vec();
        file.extend_from_slice(&(self.dim as u32).to_le_bytes());
        if dim_ok {
            for record in bytes[HEADER..].chunks_exact(v1_len) {
                let floats: Vec<f32> =
                    record[16..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
                let norm = floats[1..].iter().map(|x| x * x).sum::<f32>().sqrt();
                let plausible = floats.iter().all(|x| x.is_finite())
                    && (0.0..=1.0).contains(&floats[0])
                    && (0.9..=1.1).contains(&norm);
                if !plausible {
                    self.dropped += 1;
                    continue;
                }
                let mut key = [0u8; 16];
                key.copy_from_slice(&record[..16]);
                file.extend_from_slice(record);
                file.extend_from_slice(&record_sum(record));
                self.entries.insert(key, (floats[0], floats[1..].to_vec()));
            }
        }
        if !dim_ok || self.replace_file(&file).is_err() {
            let _ = std::fs::remove_file(&self.path);
            self.entries.clear();
        }
    }

    fn replace_file(&self, bytes: &[u8]) -> std::io::Result<()> {
        let tmp = self.path.with_extension("bin.tmp");
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, &self.path)
    }

    fn key(text: &str) -> Key {
        let mut key = [0u8; 16];
        key.copy_from_slice(&blake3::hash(text.as_bytes()).as_bytes()[..16]);
        key
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The cached vector and visibility of a passage text.
    pub fn get(&self, text: &str) -> Option<(Vec<f32>, f32)> {
        self.entries.get(&Self::key(text)).map(|(vis, v)| (v.clone(), *vis))
    }

    pub fn put(&mut self, text: &str, vector: &[f32], visibility: f32) {
        if vector.len() != self.dim {
            return;
        }
        let key = Self::key(text);
        if self.entries.contains_key(&key) || !visibility.is_finite() || !vector.iter().all(|x| x.is_finite()) {
            return;
        }
        let start = self.pending.len();
        self.pending.extend_from_slice(&key);
        self.pending.extend_from_slice(&visibility.to_le_bytes());
        for x in vector {
            self.pending.extend_from_slice(&x.to_le_bytes());
        }
        let sum = record_sum(&self.pending[start..]);
        self.pending.extend_from_slice(&sum);
        self.entries.insert(key, (visibility, vector.to_vec()));
    }

    /// Appends the new records to the cache file.
    pub fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let exists = self.path.exists();
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| StoreError::io(&self.path, e))?;
        let mut buf = Vec::with_capacity(self.pending.len() + HEADER);
        if !exists {
            buf.extend_from_slice(MAGIC);
            buf.extend_from_slice(&(self.dim as u32).to_le_bytes());
        }
        buf.append(&mut self.pending);
        file.write_all(&buf).map_err(|e| StoreError::io(&self.path, e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn survives_reopen_and_torn_tail() {
        let tmp = tempfile::tempdir().unwrap();
        let mut cache = EmbeddingCache::open(tmp.path(), "m@1", 3).unwrap();
        cache.put("a", &[1.0, 0.0, 0.0], 1.0);
        cache.put("b", &[0.0, 1.0, 0.0], 0.5);
        cache.flush().unwrap();
        let path = tmp.path().join("m@1.bin");
        // A crash mid-append leaves a partial record.
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&[7u8; 10]).unwrap();
        let cache = EmbeddingCache::open(tmp.path(), "m@1", 3).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get("b"), Some((vec![0.0, 1.0, 0.0], 0.5)));
        assert_eq!(cache.get("c"), None);
        // Appending after the torn record stays aligned.
        let mut cache = cache;
        cache.put("c", &[0.0, 0.0, 1.0], 1.0);
        cache.flush().unwrap();
        let cache = EmbeddingCache::open(tmp.path(), "m@1", 3).unwrap();
        assert_eq!(cache.get("c"), Some((vec![0.0, 0.0, 1.0], 1.0)));
        // Another dimension starts over.
        let cache = EmbeddingCache::open(tmp.path(), "m@1", 4).unwrap();
        assert!(cache.is_empty());
    }

    #[test]
    fn damaged_records_are_dropped_counted_and_rewritten() {
        let tmp = tempfile::tempdir().unwrap();
        let mut cache = EmbeddingCache::open(tmp.path(), "m", 4).unwrap();
        for i in 0..10 {
            cache.put(&format!("text {i}"), &[i as f32, 1.0, 0.0, 0.5], 1.0);
        }
        cache.flush().unwrap();
        let path = tmp.path().join("m.bin");
        let mut bytes = std::fs::read(&path).unwrap();
        // Flip bytes inside the vectors of records 2 and 7 (as in the audit: values up to 4e28).
        for record in [2, 7] {
            let at = HEADER + record * record_len(4) + 24;
            bytes[at] ^= 0x5a;
            bytes[at + 1] ^= 0xff;
        }
        std::fs::write(&path, &bytes).unwrap();

        let check = EmbeddingCache::check_file(&path).unwrap();
        assert_eq!((check.records, check.damaged), (10, 2));
        let cache = EmbeddingCache::open(tmp.path(), "m", 4).unwrap();
        assert_eq!((cache.len(), cache.dropped()), (8, 2));
        assert_eq!(cache.get("text 2"), None, "a damaged record is recomputed, not served");
        assert_eq!(cache.get("text 3"), Some((vec![3.0, 1.0, 0.0, 0.5], 1.0)));
        // Rewritten without them: reported once, and the file checks clean.
        assert!(EmbeddingCache::check_file(&path).unwrap().is_ok());
        let mut cache = EmbeddingCache::open(tmp.path(), "m", 4).unwrap();
        assert_eq!((cache.len(), cache.dropped()), (8, 0));
        cache.put("text 2", &[2.0, 1.0, 0.0, 0.5], 1.0);
        cache.flush().unwrap();
        assert_eq!(EmbeddingCache::open(tmp.path(), "m", 4).unwrap().len(), 9);
    }

    #[test]
    fn non_finite_values_and_old_formats_are_not_served() {
        let tmp = tempfile::tempdir().unwrap();
        let mut cache = EmbeddingCache::open(tmp.path(), "m", 2).unwrap();
        cache.put("nan", &[f32::NAN, 0.0], 1.0);
        assert!(cache.is_empty(), "never stored");
        // A record with a valid checksum over a non-finite value (written by a buggy build).
        let mut record = Vec::new();
        record.extend_from_slice(&EmbeddingCache::key("inf"));
        for x in [1.0f32, f32::INFINITY, 0.0] {
            record.extend_from_slice(&x.to_le_bytes());
        }
        let sum = record_sum(&record);
        record.extend_from_slice(&sum);
        let mut file = MAGIC.to_vec();
        file.extend_from_slice(&2u32.to_le_bytes());
        file.extend_from_slice(&record);
        std::fs::write(tmp.path().join("m.bin"), &file).unwrap();
        let cache = EmbeddingCache::open(tmp.path(), "m", 2).unwrap();
        assert_eq!((cache.len(), cache.dropped()), (0, 1));
        // A version-1 file is outdated, not damaged (doctor finds no problem), and migrated:
        // plausible records are kept with checksums, the rest dropped and counted.
        let mut v1 = b"SKRGEMB1\x02\0\0\0".to_vec();
        for (text, visibility, vector) in [("ok", 1.0f32, [0.6f32, 0.8]), ("flipped", 1.0, [3.96e28, 0.0])] {
            v1.extend_from_slice(&EmbeddingCache::key(text));
            for x in [visibility, vector[0], vector[1]] {
                v1.extend_from_slice(&x.to_le_bytes());
            }
        }
        std::fs::write(tmp.path().join("m.bin"), &v1).unwrap();
        let check = EmbeddingCache::check_file(&tmp.path().join("m.bin")).unwrap();
        assert!(check.outdated && check.is_ok(), "{check:?}");
        std::fs::write(tmp.path().join("x.bin"), b"something else").unwrap();
        assert!(EmbeddingCache::check_file(&tmp.path().join("x.bin")).unwrap().unreadable.is_some());
        let migrated = EmbeddingCache::open(tmp.path(), "m", 2).unwrap();
        assert_eq!((migrated.len(), migrated.dropped()), (1, 1));
        assert_eq!(migrated.get("ok"), Some((vec![0.6, 0.8], 1.0)));
        let check = EmbeddingCache::check_file(&tmp.path().join("m.bin")).unwrap();
        assert!(!check.outdated && check.records == 1 && check.damaged == 0, "{check:?}");
    }
}
