//! The embedding cache: passage vectors by (model id, text hash), so a text is embedded once
//! per model no matter how often its file changes around it or which generation it lands in.
//!
//! One append-only file per model: a header, then fixed-size records. A crash can only leave a
//! torn record at the end, which is ignored on the next open.

use crate::StoreError;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"SKRGEMB1";
type Key = [u8; 16];

pub struct EmbeddingCache {
    path: PathBuf,
    dim: usize,
    entries: HashMap<Key, (f32, Vec<f32>)>,
    pending: Vec<u8>,
}

impl EmbeddingCache {
    /// Opens (or creates) the cache of `model_id` in `dir`.
    pub fn open(dir: &Path, model_id: &str, dim: usize) -> Result<EmbeddingCache, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        let file_name: String =
            model_id.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.@".contains(c) { c } else { '_' }).collect();
        let path = dir.join(format!("{file_name}.bin"));
        let mut cache = EmbeddingCache { path, dim, entries: HashMap::new(), pending: Vec::new() };
        match std::fs::read(&cache.path) {
            Ok(bytes) => cache.load(&bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io(&cache.path, e)),
        }
        Ok(cache)
    }

    fn record_len(&self) -> usize {
        16 + 4 + 4 * self.dim
    }

    fn load(&mut self, bytes: &[u8]) {
        let header = MAGIC.len() + 4;
        let valid_header = bytes.len() >= header
            && &bytes[..8] == MAGIC
            && u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize == self.dim;
        if !valid_header {
            // Unreadable or from another dimension: start over (it is only a cache).
            let _ = std::fs::remove_file(&self.path);
            return;
        }
        let records = (bytes.len() - header) / self.record_len();
        let valid_len = header + records * self.record_len();
        if valid_len < bytes.len() {
            // Drop a torn last record so that later appends stay aligned.
            let truncated =
                std::fs::OpenOptions::new().write(true).open(&self.path).and_then(|f| f.set_len(valid_len as u64));
            if truncated.is_err() {
                let _ = std::fs::remove_file(&self.path);
                return;
            }
        }
        for record in bytes[header..valid_len].chunks_exact(self.record_len()) {
            let mut key = [0u8; 16];
            key.copy_from_slice(&record[..16]);
            let floats: Vec<f32> =
                record[16..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            self.entries.insert(key, (floats[0], floats[1..].to_vec()));
        }
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
        if self.entries.contains_key(&key) {
            return;
        }
        self.pending.extend_from_slice(&key);
        self.pending.extend_from_slice(&visibility.to_le_bytes());
        for x in vector {
            self.pending.extend_from_slice(&x.to_le_bytes());
        }
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
        let mut buf = Vec::with_capacity(self.pending.len() + 12);
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
}
