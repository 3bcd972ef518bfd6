//! SKILL.md frontmatter and sections: `skillrag_skill::parse_skill_text`.
//!
//! Input: `<skill id> NUL <SKILL.md text>`, so that the folder-name check (which must match
//! `name:`) is fuzzed too and seeds can pass it; without a NUL the id is `fuzz-skill`. Invalid
//! UTF-8 is replaced, as `parse_skill` would refuse it before parsing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let (id, text) = match data.iter().position(|&b| b == 0) {
        Some(i) => (String::from_utf8_lossy(&data[..i]), String::from_utf8_lossy(&data[i + 1..])),
        None => ("fuzz-skill".into(), String::from_utf8_lossy(data)),
    };
    let dir = Path::new("/nonexistent/skills").join(&*id);
    let _ = skillrag_skill::parse_skill_text(&dir, &id, &text);
});
