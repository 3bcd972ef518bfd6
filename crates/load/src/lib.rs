//! The first stage of the index path: find a skill's knowledge files and load each into a
//! [`Document`] — decoded to UTF-8 whatever its encoding, NFC-normalized, with its
//! modification time and content hash kept for incremental indexing.

mod confine;
mod decode;
mod document;
pub mod formats;
mod pictures;
mod read;
mod walk;

pub use confine::{Confinement, Escape};
pub use decode::{decode, DecodeError, DecodeWarning, Decoded};
pub use document::{load_document, load_document_with_warnings, Document, Format, LoadOptions};
pub use read::{ImageSize, LoadError, OcrChoice, OcrPage};
pub use skillrag_ocr as ocr;
pub use walk::{
    list_knowledge_files, list_knowledge_files_in, project_folder, KnowledgeFile, Listing, CHUNK_EDITS_FILE,
};

/// A content hash as lowercase hex (blake3).
pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A file's modification time in whole seconds since the Unix epoch (0 when unknown).
pub fn mtime_secs(meta: &std::fs::Metadata) -> i64 {
    meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs() as i64)
}

/// What a file that is not a regular file or folder is, for messages that say why it was skipped.
pub fn file_kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "named pipe (FIFO)";
        }
        if file_type.is_socket() {
            return "socket";
        }
        if file_type.is_block_device() {
            return "block device";
        }
        if file_type.is_char_device() {
            return "character device";
        }
    }
    if file_type.is_dir() {
        "folder"
    } else if file_type.is_symlink() {
        "symlink"
    } else if file_type.is_file() {
        "regular file"
    } else {
        "special file"
    }
}
