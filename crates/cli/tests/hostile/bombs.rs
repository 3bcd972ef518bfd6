//! Files built to cost far more to read than their size: each is refused within a bounded
//! time, with a message naming the file and the limit, and the rest of the skill is indexed.

use crate::common::server::Server;
use crate::common::{demo, lexical, ocr_available, peak_rss_mib, run_bounded, skillrag, stderr};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// A one-page PDF whose page content is `content`, stored FlateDecode-compressed, with a
/// correct cross-reference table.
fn pdf_with_content(content: &[u8]) -> Vec<u8> {
    pdf_of(
        &deflate(content),
        "/Font << /F1 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    )
}

fn deflate(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// A one-page PDF: its compressed page content `stream`, the page's `resources` and object 5.
fn pdf_of(stream: &[u8], resources: &str, object5: Vec<u8>) -> Vec<u8> {
    let mut pdf = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    let objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << {resources} >> >>")
            .into_bytes(),
        [format!("<< /Length {} /Filter /FlateDecode >>\nstream\n", stream.len()).as_bytes(), stream, b"\nendstream"]
            .concat(),
        object5,
    ];
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        pdf.extend_from_slice(body);
        pdf.extend_from_slice(b"\nendobj\n");
    }
    let xref = pdf.len();
    pdf.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    pdf
}

/// A one-page PDF that draws one 1-bit `side` × `side` FlateDecode image, all white: for
/// 120 000 it is 1.7 MB on disk and 1.8 GB decoded (the audit's image bomb).
fn pdf_with_image(side: usize) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let rows = vec![0u8; side.div_ceil(8) * 1000];
    for _ in 0..side / 1000 {
        encoder.write_all(&rows).unwrap();
    }
    let image = encoder.finish().unwrap();
    let object5 = [
        format!(
            "<< /Type /XObject /Subtype /Image /Width {side} /Height {side} /BitsPerComponent 1 \
             /ColorSpace /DeviceGray /Filter /FlateDecode /Length {} >>\nstream\n",
            image.len()
        )
        .as_bytes(),
        &image,
        b"\nendstream",
    ]
    .concat();
    pdf_of(&deflate(b"q 595 0 0 842 0 0 cm /Im1 Do Q"), "/XObject << /Im1 5 0 R >>", object5)
}

/// Runs `index` in `dir` and fails the test if it takes more than `limit`.
fn index_within(dir: &Path, limit: Duration) -> (serde_json::Value, Duration) {
    let started = Instant::now();
    let mut child = skillrag(dir, &["index", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("index ran past {limit:?} on a hostile file");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    let took = started.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    (serde_json::from_slice(&out.stdout).expect("index --json"), took)
}

/// The diagnostic of `index --json` for the file whose path ends with `file`.
fn refusal_of<'a>(report: &'a serde_json::Value, file: &str) -> &'a serde_json::Value {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"].as_str().is_some_and(|p| p.ends_with(file)))
        .unwrap_or_else(|| panic!("the refusal names the file: {}", report["diagnostics"]))
}

#[test]
fn a_pdf_content_bomb_is_refused_quickly_and_the_rest_is_indexed() {
    let project = demo();
    let knowledge = project.path().join("skills/router-faq/knowledge");
    // About 50 MB of drawing commands, as in the audit, in a file of a few hundred KB.
    let bomb = pdf_with_content(&b"BT /F1 12 Tf 72 720 Td (bomb) Tj ET\n".repeat(50 * 1024 * 1024 / 36));
    assert!(bomb.len() < 400 * 1024, "{}", bomb.len());
    std::fs::write(knowledge.join("bomb.pdf"), &bomb).unwrap();
    let (report, took) = index_within(project.path(), Duration::from_secs(300));
    let refusal = refusal_of(&report, "knowledge/bomb.pdf");
    let message = refusal["message"].as_str().unwrap();
    assert!(message.contains("page 1") && message.contains("max_page_content_mb"), "and the limit: {message}");
    let router = report["skills"].as_array().unwrap().iter().find(|s| s["skill"] == "router-faq").unwrap();
    assert!(router["chunks"].as_u64().unwrap() > 0, "the other files are indexed: {router}");
    eprintln!("a 50 MB content bomb ({} KB) refused; index took {took:?}", bomb.len() / 1024);
}

#[test]
fn a_huge_file_a_single_5_mb_line_and_20000_tiny_files_are_refused_or_indexed() {
    let project = demo();
    // A 50 MB text file: over `index.max_file_mb`, refused by name before it is read.
    let paragraph = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\n\n";
    let huge = paragraph.repeat(50 * 1024 * 1024 / paragraph.len() + 1);
    std::fs::write(project.path().join("skills/router-faq/knowledge/huge.txt"), huge).unwrap();
    // A skill of one 5 MB line (no paragraph or sentence break to split at) and 20 000 tiny files.
    let skill = project.path().join("skills/sizes");
    std::fs::create_dir_all(skill.join("knowledge/tiny")).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\nname: sizes\ndescription: Files of hostile sizes.\n---\n# sizes\n")
        .unwrap();
    let words: String = (0..5 * 1024 * 1024 / 8).map(|i| format!("w{:05} ", i % 99_991)).collect();
    std::fs::write(skill.join("knowledge/one-line.txt"), format!("{words}zebracorn")).unwrap();
    for i in 0..20_000 {
        std::fs::write(skill.join(format!("knowledge/tiny/note-{i:05}.md")), format!("# Note {i}\n\nquokka{i}\n"))
            .unwrap();
    }
    // BM25 only: what is measured here is loading, chunking and writing (bench/index.sh times
    // the model on such files).
    let started = Instant::now();
    let out = skillrag(project.path(), &["index", "--json"]).env("SKILLRAG_EMBED_MODEL", "none").output().unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(took < Duration::from_secs(180), "took {took:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let refusal = refusal_of(&report, "knowledge/huge.txt");
    assert!(refusal["message"].as_str().unwrap().contains("max_file_mb"), "{refusal}");
    let sizes = report["skills"].as_array().unwrap().iter().find(|s| s["skill"] == "sizes").unwrap();
    assert_eq!(sizes["files"], 20_001, "{sizes}");
    assert!(sizes["chunks"].as_u64().unwrap() > 20_000 + 1_000, "the line is split too: {sizes}");
    for (query, file) in [("zebracorn", "one-line.txt"), ("quokka12345", "note-12345.md")] {
        let out = skillrag(project.path(), &["search", query, "--skill", "sizes", "--json"])
            .env("SKILLRAG_EMBED_MODEL", "none")
            .output()
            .unwrap();
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(result["hits"][0]["source"].as_str().unwrap_or("").ends_with(file), "{query}: {result}");
    }
    eprintln!("50 MB file refused; 5 MB line + 20 000 files indexed in {took:?}");
}

/// Issue 46, item 12: pdf-extract inflated an image XObject whole (and parsed it as page
/// content): `extract` went to 5.3 GB with OCR off. Images are now measured from their
/// dictionaries and never decoded in-process; OCR refuses the page, naming the image's size.
#[test]
fn a_pdf_image_bomb_is_not_decoded_and_ocr_refuses_it_with_the_reason() {
    let bomb = pdf_with_image(120_000);
    assert!(bomb.len() < 2 * 1024 * 1024, "{}", bomb.len());
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join("bomb.pdf");
    std::fs::write(&file, &bomb).unwrap();
    let extract = || {
        let mut cmd = lexical(project.path(), &["extract"]);
        cmd.arg(&file);
        cmd
    };
    std::fs::write(project.path().join("skillrag.toml"), "skills = [\"skills\"]\n[index]\nocr = false\n").unwrap();
    let (out, peak) = run_bounded(extract(), Duration::from_secs(60), 400);
    let message = stderr(&out);
    assert!(!out.status.success() && message.contains("no text layer"), "{message}");
    eprintln!("OCR off: refused at a peak of {peak} MiB: {message}");
    if !ocr_available() {
        return;
    }
    std::fs::write(project.path().join("skillrag.toml"), "skills = [\"skills\"]\n").unwrap();
    let (out, peak) = run_bounded(extract(), Duration::from_secs(60), 400);
    let message = stderr(&out);
    assert!(!out.status.success(), "{message}");
    assert!(
        message.contains("page 1 draws an image of 120000 × 120000 pixels") && message.contains("max_ocr_megapixels"),
        "the refusal says why: {message}"
    );
    eprintln!("OCR on: refused at a peak of {peak} MiB: {message}");
}

/// Issue 46, item 12, over HTTP: the same image bomb uploaded took the server to 6.7 GB. The
/// re-index job refuses it and the server stays small (killed at 600 MiB while it runs).
#[test]
fn an_uploaded_pdf_image_bomb_leaves_the_server_small() {
    let project = demo();
    let out = lexical(project.path(), &["index"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut server = Server::start(project.path(), &["--allow-writes"], &[("SKILLRAG_EMBED_MODEL", "none")]);
    let (status, body) = server.upload("/v1/skills/router-faq/documents", &[("bomb.pdf", &pdf_with_image(120_000))]);
    assert_eq!(status, 202, "{body}");
    let id = body["job"]["id"].clone();
    let started = Instant::now();
    let (job, peak) = loop {
        let peak = peak_rss_mib(server.child.id()).unwrap_or(0);
        if peak > 600 || started.elapsed() > Duration::from_secs(120) {
            let _ = server.child.kill();
            panic!("the server passed its bound: peak {peak} MiB after {:?}", started.elapsed());
        }
        let (_, index) = server.get_json("/v1/index");
        if index["job"]["id"] == id && index["job"]["state"] != "running" {
            break (index["job"].clone(), peak);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let why = if ocr_available() { "page 1 draws an image of 120000 × 120000 pixels" } else { "no text layer" };
    assert!(job.to_string().contains(why), "the job names the refusal: {job}");
    eprintln!("upload refused in {:?}, server peak {peak} MiB", started.elapsed());
}

/// Issue 46, item 24: a malformed page content stream showed pdf-extract's panic, "called
/// `Result::unwrap()` on an `Err` value". Each file is now refused with the operation at fault,
/// and the rest of the skill is indexed.
#[test]
fn malformed_pdf_streams_are_named_not_unwrapped() {
    let project = demo();
    let knowledge = project.path().join("skills/router-faq/knowledge");
    let cases: [(&str, &[u8], &str); 5] = [
        ("font-number.pdf", b"BT 12 12 Tf 72 720 Td (hello) Tj ET", "operation 2 `Tf` needs a font name and a size"),
        ("td-short.pdf", b"BT /F1 12 Tf 72 Td (hello) Tj ET", "`Td` needs 2 numbers, found 1 operand(s): number"),
        ("no-font.pdf", b"BT 72 720 Td (hello) Tj ET", "`Tj` shows text before any font is set"),
        ("tm-short.pdf", b"BT /F1 12 Tf 1 0 Tm (x) Tj ET", "`Tm` needs 6 numbers"),
        ("missing-xobject.pdf", b"/Nope Do", "a /XObject resource the content uses is missing or malformed"),
    ];
    for (name, content, _) in &cases {
        std::fs::write(knowledge.join(name), pdf_with_content(content)).unwrap();
    }
    let (out, peak) = run_bounded(lexical(project.path(), &["index", "--json"]), Duration::from_secs(120), 600);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for (name, _, reason) in &cases {
        let message = refusal_of(&report, name)["message"].as_str().unwrap().to_string();
        assert!(message.contains("page 1") && message.contains(reason), "{name}: {message}");
        for internal in ["unwrap", "assertion", "index out of bounds", "panicked"] {
            assert!(!message.contains(internal), "{name}: {message}");
        }
    }
    let router = report["skills"].as_array().unwrap().iter().find(|s| s["skill"] == "router-faq").unwrap();
    assert!(router["chunks"].as_u64().unwrap() > 0, "the other files are indexed: {router}");
    eprintln!("{} malformed PDFs named; peak {peak} MiB", cases.len());
}

/// A little-endian TIFF of 8-bit grey pages of the given sizes, one strip each, every page
/// linking to the next and the last to `last_next` (0: none; 8: back to the first page).
fn tiff(sizes: &[(u16, u16)], last_next: u32) -> Vec<u8> {
    let ifd_len = 2 + 8 * 12 + 4;
    let pixels_at = 8 + ifd_len * sizes.len() as u32;
    let mut bytes = b"II*\0".to_vec();
    bytes.extend(8u32.to_le_bytes());
    for (i, &(width, height)) in sizes.iter().enumerate() {
        bytes.extend(8u16.to_le_bytes());
        let entry = |tag: u16, kind: u16, value: u32| {
            let value = if kind == 3 { (value as u16 as u32).to_le_bytes() } else { value.to_le_bytes() };
            [&tag.to_le_bytes()[..], &kind.to_le_bytes(), &1u32.to_le_bytes(), &value].concat()
        };
        let tags = [(256, 3, width.into()), (257, 3, height.into()), (258, 3, 8), (259, 3, 1), (262, 3, 1)];
        for (tag, kind, value) in tags.into_iter().chain([(273, 4, pixels_at), (278, 3, height.into()), (279, 4, 64)]) {
            bytes.extend(entry(tag, kind, value));
        }
        let next = if i + 1 < sizes.len() { 8 + ifd_len * (i as u32 + 1) } else { last_next };
        bytes.extend(next.to_le_bytes());
    }
    bytes.extend([255u8; 64]);
    bytes
}

/// Issue 46, item 15: a tiny TIFF whose page links back to itself kept Tesseract reading "page
/// 1, 2, 3, …" until its 300 s timeout, on every re-index. Its pages are walked first now.
#[test]
fn a_self_linked_tiff_is_refused_at_once_not_after_the_ocr_timeout() {
    if !ocr_available() {
        return;
    }
    let project = demo();
    let looped = tiff(&[(8, 8)], 8);
    assert!(looped.len() <= 220, "{}", looped.len());
    std::fs::write(project.path().join("skills/router-faq/knowledge/loop.tif"), looped).unwrap();
    for run in ["index", "re-index"] {
        let started = Instant::now();
        let (out, peak) = run_bounded(lexical(project.path(), &["index", "--json"]), Duration::from_secs(60), 600);
        assert!(out.status.success(), "{}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let message = refusal_of(&report, "knowledge/loop.tif")["message"].as_str().unwrap().to_string();
        assert!(message.contains("malformed TIFF") && message.contains("cycle"), "{message}");
        eprintln!("{run}: refused in {:?}, peak {peak} MiB: {message}", started.elapsed());
    }
}

/// Issue 46, item 22: `max_ocr_megapixels` was checked on a TIFF's first page only; a second
/// page of 60000 × 60000 went to Tesseract.
#[test]
fn every_page_of_a_tiff_is_held_to_the_pixel_limit() {
    if !ocr_available() {
        return;
    }
    let project = demo();
    std::fs::write(project.path().join("skills/router-faq/knowledge/tall.tif"), tiff(&[(8, 8), (60_000, 60_000)], 0))
        .unwrap();
    let (out, peak) = run_bounded(lexical(project.path(), &["index", "--json"]), Duration::from_secs(120), 600);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let message = refusal_of(&report, "knowledge/tall.tif")["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("page 2 of the TIFF is 60000 × 60000 pixels") && message.contains("max_ocr_megapixels"),
        "{message}"
    );
    eprintln!("refused at a peak of {peak} MiB: {message}");
}
