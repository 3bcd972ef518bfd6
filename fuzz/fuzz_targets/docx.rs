//! DOCX: `skillrag_load::formats::extract_docx` with the default limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillrag_load::formats::{extract_docx, ExtractLimits};

fuzz_target!(|data: &[u8]| {
    let _ = extract_docx(data, &ExtractLimits::default());
});
