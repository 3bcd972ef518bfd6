//! A TIFF's pages, walked before Tesseract reads them.
//!
//! Tesseract reads every page (IFD) of a TIFF, following each page's link to the next. A
//! 220-byte TIFF whose first page links back to itself kept it reading "page 1, 2, 3, …" until
//! the 300 s timeout, and only the first page's size was checked against the pixel limit. So
//! the chain is walked here first with the `tiff` crate, which stops at a loop, and every
//! page's size is checked; only tags are read, never pixels.

use crate::OcrError;
use std::path::Path;

/// Most pages one TIFF may have: each is a Tesseract run's worth of work.
pub(crate) const MAX_TIFF_PAGES: usize = 500;

/// Whether `path` starts like a TIFF (classic or BigTIFF, either byte order).
pub(crate) fn is_tiff(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    let read = std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic));
    read.is_ok() && matches!(&magic, b"II*\0" | b"MM\0*" | b"II+\0" | b"MM\0+")
}

/// Walks every page of the TIFF at `path`, calling `check(page, width, height)` (pages from 1);
/// returns the page count. A loop, a damaged page or too many pages is an error.
pub(crate) fn walk_tiff(
    path: &Path,
    check: impl Fn(usize, usize, usize) -> Result<(), OcrError>,
) -> Result<usize, OcrError> {
    let malformed = |page: usize, e: tiff::TiffError| OcrError::MalformedTiff { page, reason: e.to_string() };
    let file = std::fs::File::open(path).map_err(|e| OcrError::Io(e.to_string()))?;
    let mut decoder = tiff::decoder::Decoder::new(std::io::BufReader::new(file)).map_err(|e| malformed(1, e))?;
    let mut page = 1;
    loop {
        let (width, height) = decoder.dimensions().map_err(|e| malformed(page, e))?;
        check(page, width as usize, height as usize)?;
        if !decoder.more_images() {
            return Ok(page);
        }
        if page == MAX_TIFF_PAGES {
            return Err(OcrError::TooManyPages { limit: MAX_TIFF_PAGES });
        }
        page += 1;
        decoder.next_image().map_err(|e| malformed(page, e))?;
    }
}
