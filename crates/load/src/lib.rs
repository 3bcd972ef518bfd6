//! The first stage of the index path: find a skill's knowledge files and load each into a
//! [`Document`] — decoded to UTF-8 whatever its encoding, NFC-normalized, with its
//! modification time and content hash kept for incremental indexing.

mod decode;
mod document;
pub mod formats;
mod walk;

pub use decode::{decode, DecodeError, Decoded};
pub use document::{load_document, Document, Format, LoadError, LoadOptions};
pub use walk::{list_knowledge_files, KnowledgeFile, Listing};

/// A content hash as lowercase hex (blake3).
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A file's modification time in whole seconds since the Unix epoch (0 when unknown).
pub fn mtime_secs(meta: &std::fs::Metadata) -> i64 {
    meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs() as i64)
}
