//! Chunking speed on long paragraphs (issue 46 item 16), for bench/chunking.sh:
//! `chunk_speed MB...` prints one line per shape and size: seconds and chunks.
//! Shapes: one line of short English sentences, one line of Chinese sentences, one paragraph
//! of short lines (no blank line), and one line without any boundary.

use skillrag_chunk::{chunk_document, ChunkConfig, Preset};
use std::time::Instant;

const SHAPES: &[(&str, &str)] = &[
    ("sentences", "The cat sat on the mat. "),
    ("chinese", "劳动者可以解除劳动合同。"),
    ("lines", "a short line of text\n"),
    ("unbroken", "abcdefghij"),
];

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    for (shape, unit) in SHAPES {
        for &mb in &sizes {
            let text = unit.repeat(mb * 1024 * 1024 / unit.len());
            let started = Instant::now();
            let pieces = chunk_document(&text, true, Preset::General, &ChunkConfig::default());
            println!("{shape} {mb} {:.3} {}", started.elapsed().as_secs_f64(), pieces.len());
        }
    }
}
