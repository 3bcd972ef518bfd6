//! Pictures as knowledge: a PNG, JPEG, WebP or TIFF under `knowledge/` is a document whose text
//! OCR reads and whose caption says what it shows. The caption comes from beside it: alt text
//! that a Markdown or HTML file in the same folder gives the picture (`![caption](notice.png)`,
//! `<img src="notice.png" alt="caption">`), else the first heading of the Markdown file with
//! the same name (`notice.md`), else the file name.

use crate::formats::Extracted;
use crate::read::{ImageSize, LoadError, OcrChoice, OcrPage, Read};
use std::path::Path;

/// Files beside a picture read for its caption: only small ones, and not too many.
const MAX_CAPTION_FILE_BYTES: u64 = 1 << 20;
const MAX_CAPTION_FILES: usize = 200;

pub(crate) fn picture(path: &Path, content_hash: &str, ocr: &OcrChoice) -> Result<(Extracted, Read), LoadError> {
    let ocr = match ocr {
        OcrChoice::Ready(ocr) => ocr,
        OcrChoice::Unavailable(why) => {
            let what = "a picture: its text can be read only by OCR".to_string();
            return Err(LoadError::NeedsOcr { what, why: why.clone() });
        }
    };
    let read = ocr.image(path, content_hash).map_err(LoadError::Ocr)?;
    let text = crate::decode::normalize(read.page.text.trim());
    let given = caption_beside(path);
    if text.is_empty() && given.is_none() {
        return Err(LoadError::NoTextInPicture);
    }
    let caption = given.unwrap_or_else(|| caption_from_name(path));
    let mut body = format!("# {caption}\n\n");
    if !text.is_empty() {
        body.push_str(&text);
        body.push('\n');
    }
    let pages =
        if text.is_empty() { Vec::new() } else { vec![OcrPage { page: None, confidence: read.page.confidence }] };
    let extracted = Extracted { text: body, markdown: true, title: Some(caption), ..Extracted::default() };
    Ok((extracted, Read { pages, image: Some(ImageSize { width: read.width, height: read.height }) }))
}

/// "office-hours_2024.png" → "office hours 2024".
fn caption_from_name(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    stem.replace(['_', '-'], " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The caption a file beside the picture gives it (see the module docs). Links are not followed:
/// a caption file is read only when it is a regular file in the picture's own folder.
fn caption_beside(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = path.file_stem()?.to_str()?;
    let folder = path.parent()?;
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(folder)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            let ext = p.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
            matches!(ext.as_deref(), Some("md" | "markdown" | "html" | "htm"))
        })
        .take(MAX_CAPTION_FILES)
        .collect();
    files.sort();
    let read = |p: &Path| -> Option<String> {
        let meta = std::fs::metadata(p).ok()?;
        if meta.len() > MAX_CAPTION_FILE_BYTES {
            return None;
        }
        Some(String::from_utf8_lossy(&std::fs::read(p).ok()?).into_owned())
    };
    let texts: Vec<(std::path::PathBuf, String)> = files.into_iter().filter_map(|p| read(&p).map(|t| (p, t))).collect();
    if let Some(alt) = texts.iter().find_map(|(_, text)| markdown_alt(text, name).or_else(|| html_alt(text, name))) {
        return Some(alt);
    }
    let same_name = texts.iter().find(|(p, _)| p.file_stem().and_then(|s| s.to_str()) == Some(stem))?;
    same_name
        .1
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.trim_start_matches('#').trim().to_string())
        .filter(|l| !l.is_empty())
}

/// The alt text of `![alt](name)` (or `./name`, or with a title after the target).
fn markdown_alt(text: &str, name: &str) -> Option<String> {
    let mut rest = text;
    while let Some(open) = rest.find("![") {
        let after = &rest[open + 2..];
        let close = after.find("](")?;
        let alt = &after[..close];
        let target = after[close + 2..].split([')', ' ']).next().unwrap_or("");
        if same_file(target, name) && !alt.contains('\n') && !alt.trim().is_empty() {
            return Some(alt.trim().to_string());
        }
        rest = &after[close..];
    }
    None
}

/// The `alt` of an `<img>` whose `src` is the picture.
fn html_alt(text: &str, name: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("<img") {
        let start = from + at;
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        let tag = &text[start..end];
        if attribute(tag, "src").is_some_and(|src| same_file(&src, name)) {
            if let Some(alt) = attribute(tag, "alt").filter(|a| !a.trim().is_empty()) {
                return Some(alt.trim().to_string());
            }
        }
        from = end;
    }
    None
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let at = lower.find(&format!("{name}="))? + name.len() + 1;
    let rest = &tag[at..];
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let value = &rest[1..];
    Some(value[..value.find(quote)?].to_string())
}

fn same_file(target: &str, name: &str) -> bool {
    let target = target.trim().trim_matches(['<', '>']);
    target.strip_prefix("./").unwrap_or(target) == name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captions_come_from_alt_text_a_same_named_file_or_the_name() {
        let tmp = tempfile::tempdir().unwrap();
        let png = tmp.path().join("office-hours_2024.png");
        std::fs::write(&png, b"").unwrap();
        assert_eq!(caption_beside(&png), None);
        assert_eq!(caption_from_name(&png), "office hours 2024");
        std::fs::write(tmp.path().join("office-hours_2024.md"), "\n# 开放时间通知\n\n正文").unwrap();
        assert_eq!(caption_beside(&png).as_deref(), Some("开放时间通知"));
        std::fs::write(
            tmp.path().join("a-page.html"),
            "<p><IMG class=x src=\"./office-hours_2024.png\" alt='Opening hours'></p>",
        )
        .unwrap();
        assert_eq!(caption_beside(&png).as_deref(), Some("Opening hours"));
        std::fs::write(
            tmp.path().join("0-index.md"),
            "See ![办公室开放时间](office-hours_2024.png \"t\") and ![x](other.png)",
        )
        .unwrap();
        assert_eq!(caption_beside(&png).as_deref(), Some("办公室开放时间"));
    }

    #[test]
    fn alt_text_parsing() {
        assert_eq!(markdown_alt("![a](b.png) ![c](d.png)", "d.png").as_deref(), Some("c"));
        assert_eq!(markdown_alt("![](d.png)", "d.png"), None);
        assert_eq!(markdown_alt("![broken", "d.png"), None);
        assert_eq!(html_alt("<img alt=\"x\" src=\"d.png\"/>", "d.png").as_deref(), Some("x"));
        assert_eq!(html_alt("<img src=d.png alt=x>", "d.png"), None);
    }

    #[test]
    fn without_ocr_a_picture_says_what_to_install() {
        let tmp = tempfile::tempdir().unwrap();
        let png = tmp.path().join("a.png");
        std::fs::write(&png, b"\x89PNG").unwrap();
        let err = picture(&png, "h", &OcrChoice::Unavailable("tesseract is not installed".into())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a picture: its text can be read only by OCR; OCR is not available: tesseract is not installed; skipped"
        );
    }
}
