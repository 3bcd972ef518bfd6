//! HTML: `skillrag_load::formats::extract_html` on the input as text (invalid UTF-8 replaced;
//! the loader hands it text from `decode`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = skillrag_load::formats::extract_html(&String::from_utf8_lossy(data));
});
