//! FAQ tables: `skillrag_load::formats::extract_faq` on the input as text, in every
//! `FaqFormat` (CSV, TSV, JSON, JSONL) in turn.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillrag_load::formats::{extract_faq, FaqFormat};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for format in [FaqFormat::Csv, FaqFormat::Tsv, FaqFormat::Json, FaqFormat::Jsonl] {
        let _ = extract_faq(&text, format);
    }
});
