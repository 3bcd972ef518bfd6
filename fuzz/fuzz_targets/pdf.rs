//! PDF: `skillrag_load::formats::extract_pdf` with the default limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillrag_load::formats::{extract_pdf, ExtractLimits};

fuzz_target!(|data: &[u8]| {
    let _ = extract_pdf(data, &ExtractLimits::default());
});
