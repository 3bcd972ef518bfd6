//! What reading a file can yield besides its text (OCR pages, a picture's size) and how it
//! fails: shared by the document loader and the picture reader, so neither imports the other.

use crate::decode::DecodeError;
use crate::formats::ExtractError;
use skillrag_ocr::{Ocr, OcrError};

/// A page whose text came from OCR.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OcrPage {
    /// The page, from 1; `None` for a picture.
    pub page: Option<u32>,
    /// The OCR engine's confidence, 0 to 1.
    pub confidence: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageSize {
    pub width: usize,
    pub height: usize,
}

/// Whether text that exists only as pixels (a scan, a picture) can be read, and by what.
#[derive(Debug, Clone)]
pub enum OcrChoice {
    Ready(Ocr),
    /// Why not: the message a scan is reported with.
    Unavailable(String),
}

impl OcrChoice {
    pub fn unavailable(error: &OcrError) -> OcrChoice {
        OcrChoice::Unavailable(error.to_string())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    // Not `#[from]`/`#[source]` (here and below): the message already carries the cause, which
    // error chains (`{:#}`) would otherwise print twice.
    #[error("cannot read: {0}")]
    Io(std::io::Error),
    #[error("{0}; skipped")]
    Decode(DecodeError),
    #[error("file is {size_mb:.1} MB, above the {limit_mb} MB limit; skipped (raise `index.max_file_mb` to index it)")]
    TooLarge { size_mb: f64, limit_mb: u64 },
    #[error("{kind}, not a regular file; skipped")]
    NotRegular { kind: &'static str },
    #[error("unsupported file type `.{0}`; skipped")]
    Unsupported(String),
    #[error("{0}; skipped")]
    Extract(ExtractError),
    #[error("{what}; OCR is not available: {why}; skipped")]
    NeedsOcr { what: String, why: String },
    #[error("OCR failed: {0}; skipped")]
    Ocr(OcrError),
    #[error("no text found in the picture and no caption beside it (a `.md` file with the same name, or alt text in one); skipped")]
    NoTextInPicture,
}

impl From<std::io::Error> for LoadError {
    fn from(e: std::io::Error) -> Self {
        LoadError::Io(e)
    }
}

impl From<DecodeError> for LoadError {
    fn from(e: DecodeError) -> Self {
        LoadError::Decode(e)
    }
}

impl From<ExtractError> for LoadError {
    fn from(e: ExtractError) -> Self {
        LoadError::Extract(e)
    }
}

impl LoadError {
    /// The line of the file the problem is on, when it has one (a ragged CSV row).
    pub fn line(&self) -> Option<usize> {
        match self {
            LoadError::Extract(
                ExtractError::RaggedRow { line, .. }
                | ExtractError::Malformed { line, .. }
                | ExtractError::TooDeep { line, .. },
            ) => Some(*line).filter(|&l| l > 0),
            _ => None,
        }
    }
}

/// What OCR contributed to a document.
#[derive(Debug, Default)]
pub(crate) struct Read {
    pub(crate) pages: Vec<OcrPage>,
    pub(crate) image: Option<ImageSize>,
}
