//! Plain text decoding: `skillrag_load::decode` (BOMs, UTF-16, repaired UTF-8, legacy guesses).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = skillrag_load::decode(data);
});
