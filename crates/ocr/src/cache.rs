//! OCR results kept on disk, one small file per page, keyed by what determines the result:
//! the file's content hash, the page, the languages, the resolution and the engine's version.
//! A page is written the moment it is read, atomically, so an index killed halfway through a
//! 100-page scan keeps the pages it finished, and a file that did not change is never read
//! again.

use crate::PageText;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct OcrCache {
    dir: PathBuf,
}

impl OcrCache {
    /// A cache in `dir` (created on the first write).
    pub fn new(dir: impl Into<PathBuf>) -> OcrCache {
        OcrCache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn get(&self, key: &str) -> Option<PageText> {
        let bytes = std::fs::read(self.path(key)).ok()?;
        // A damaged entry is a miss: the page is read again and the entry rewritten.
        serde_json::from_slice(&bytes).ok()
    }

    /// Writes an entry; a cache that cannot be written only costs the next run its time, so
    /// failures are ignored.
    pub(crate) fn put(&self, key: &str, page: &PageText) {
        if let Ok(bytes) = serde_json::to_vec(page) {
            self.write(&self.path(key), &bytes);
        }
    }

    /// Why the tools failed on this page in an earlier run, if they did: a file that made
    /// Tesseract run to its timeout would otherwise cost every re-index the same 300 s.
    pub(crate) fn failure(&self, key: &str) -> Option<String> {
        let bytes = std::fs::read(self.failure_path(key)).ok()?;
        serde_json::from_slice::<Failure>(&bytes).ok().map(|f| f.failed)
    }

    pub(crate) fn put_failure(&self, key: &str, message: &str) {
        if let Ok(bytes) = serde_json::to_vec(&Failure { failed: message.to_string() }) {
            self.write(&self.failure_path(key), &bytes);
        }
    }

    fn write(&self, path: &Path, bytes: &[u8]) {
        let Some(folder) = path.parent() else { return };
        if std::fs::create_dir_all(folder).is_err() {
            return;
        }
        if let Ok(mut file) = tempfile::NamedTempFile::new_in(folder) {
            use std::io::Write;
            if file.write_all(bytes).is_ok() {
                let _ = file.persist(path);
            }
        }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    fn failure_path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.failed.json"))
    }
}

/// A failure kept in the cache: the message the tool's failure gave.
#[derive(serde::Serialize, serde::Deserialize)]
struct Failure {
    failed: String,
}

/// The cache key of one page (0 for an image) of the file whose bytes hash to `content_hash`.
pub(crate) fn key(content_hash: &str, page: u32, languages: &str, dpi: u32, engine: &str) -> String {
    blake3::hash(format!("{content_hash}\0{page}\0{languages}\0{dpi}\0{engine}").as_bytes()).to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_miss_and_damage() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = OcrCache::new(tmp.path().join("ocr"));
        let k = key("abc", 2, "chi_sim+eng", 300, "tesseract 5.3.0");
        assert_ne!(k, key("abc", 3, "chi_sim+eng", 300, "tesseract 5.3.0"));
        assert_ne!(k, key("abc", 2, "eng", 300, "tesseract 5.3.0"));
        assert!(cache.get(&k).is_none());
        let page = PageText { text: "第十九条".into(), confidence: 0.93, words: 1 };
        cache.put(&k, &page);
        assert_eq!(cache.get(&k), Some(page));
        std::fs::write(cache.path(&k), b"{not json").unwrap();
        assert!(cache.get(&k).is_none());
    }
}
