//! Where the pictures of `word/document.xml` are: `<a:blip r:embed>` (DrawingML) and
//! `<v:imagedata r:id>` (VML) name one of the part's relationships
//! (`word/_rels/document.xml.rels`), whose target is the archive member holding the picture
//! (`word/media/image1.png`). Targets outside the package (linked pictures) are never read.

use std::collections::HashMap;

use quick_xml::events::Event;
use quick_xml::Reader;

use super::attr;
use crate::formats::embedded::{file_name, label, percent_decode, picture_extension, Pictures};

/// Where a relationship points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Target {
    /// A member of the archive, by its path from the package root.
    Member(String),
    /// Outside the package: a linked picture, a web address.
    External(String),
}

/// The relationships part of `part`: `word/document.xml` → `word/_rels/document.xml.rels`.
pub(super) fn rels_name(part: &str) -> String {
    match part.rsplit_once('/') {
        Some((folder, file)) => format!("{folder}/_rels/{file}.rels"),
        None => format!("_rels/{part}.rels"),
    }
}

/// The relationships of `part`, by id; of a malformed relationships part, those read before the
/// damage.
pub(super) fn relationships(xml: &str, part: &str) -> HashMap<String, Target> {
    let mut out = HashMap::new();
    let mut reader = Reader::from_str(xml);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == b"Relationship" => {
                let (Some(id), Some(target)) = (attr(&e, b"Id"), attr(&e, b"Target")) else { continue };
                let external = attr(&e, b"TargetMode").is_some_and(|m| m.eq_ignore_ascii_case("External"));
                let target = if external {
                    Target::External(target)
                } else {
                    match resolve(part, &target) {
                        Some(member) => Target::Member(member),
                        None => Target::External(target),
                    }
                };
                out.insert(id, target);
            }
            Ok(Event::Eof) | Err(_) => return out,
            _ => {}
        }
    }
}

/// `target`, relative to the folder of `part` (or to the package root when it starts with `/`),
/// as an archive path; `None` when it leaves the package.
fn resolve(part: &str, target: &str) -> Option<String> {
    let target = percent_decode(target.split(['?', '#']).next().unwrap_or_default());
    let mut parts: Vec<&str> = match (target.starts_with('/'), part.rsplit_once('/')) {
        (false, Some((folder, _))) => folder.split('/').collect(),
        _ => Vec::new(),
    };
    for piece in target.split('/') {
        match piece {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(piece),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Records the picture of relationship `id` met in the document (the first reading).
pub(super) fn note(pictures: &mut Pictures<'_>, rels: &HashMap<String, Target>, id: &str, alt: Option<&str>) {
    match rels.get(id) {
        Some(Target::Member(member)) => {
            // Vector pictures (EMF, WMF, SVG) hold no pixels to read.
            if let Some(extension) = picture_extension(member) {
                pictures.found(member, member, &label(alt, file_name(member)), &extension);
            }
        }
        Some(Target::External(target)) => {
            pictures.not_read(target, "it is linked from outside the document, not embedded in it")
        }
        None => pictures.not_read(id, "the document names no such picture (a damaged file?)"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::super::{extract_docx, extract_docx_with_pictures};
    use super::*;
    use crate::formats::{ExtractLimits, PictureReader};
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn relationship_targets() {
        assert_eq!(rels_name("word/document.xml"), "word/_rels/document.xml.rels");
        assert_eq!(rels_name("document.xml"), "_rels/document.xml.rels");
        assert_eq!(resolve("word/document.xml", "media/image1.png").as_deref(), Some("word/media/image1.png"));
        assert_eq!(resolve("word/document.xml", "/word/media/a%20b.png").as_deref(), Some("word/media/a b.png"));
        assert_eq!(resolve("word/document.xml", "../media/x.png").as_deref(), Some("media/x.png"));
        assert_eq!(resolve("word/document.xml", "../../x.png"), None);
        let rels = relationships(
            &rels_xml(&[("rId1", "media/a.png"), ("rId2", "../../escape.png")]).replace(
                "</Relationships>",
                r#"<Relationship Id="rId3" Target="https://x/y.png" TargetMode="External"/></Relationships>"#,
            ),
            "word/document.xml",
        );
        assert_eq!(rels["rId1"], Target::Member("word/media/a.png".into()));
        assert_eq!(rels["rId2"], Target::External("../../escape.png".into()));
        assert_eq!(rels["rId3"], Target::External("https://x/y.png".into()));
        // Damaged: what came before the damage.
        assert_eq!(
            relationships(&rels_xml(&[("rId1", "media/a.png")]).replace("</Relationships>", "<Rel"), "w/d.xml").len(),
            1
        );
    }

    /// "Reads" a picture as its bytes (test pictures are text); counts its calls.
    struct Echo(AtomicUsize);
    impl PictureReader for Echo {
        fn read(&self, bytes: &[u8], extension: &str) -> Result<String, String> {
            self.0.fetch_add(1, Ordering::SeqCst);
            match std::str::from_utf8(bytes) {
                Ok(text) if text.starts_with("broken") => Err(format!("damaged {extension}")),
                Ok(text) => Ok(text.to_string()),
                Err(e) => Err(e.to_string()),
            }
        }
        fn parallelism(&self) -> usize {
            4
        }
    }

    fn with_pictures(bytes: &[u8], reader: &dyn PictureReader) -> (String, Vec<String>) {
        let mut pictures = Pictures::new(reader);
        let out = extract_docx_with_pictures(bytes, &ExtractLimits::default(), &mut pictures).unwrap();
        (out.text, pictures.warnings())
    }

    #[test]
    fn picture_text_goes_at_the_pictures_place() {
        let body = [
            plain("Before the picture."),
            format!("<w:p>{}</w:p>", drawing("rId1", "Warranty card")),
            plain("Between."),
            // Text and a picture in one paragraph: the picture's text follows the paragraph.
            format!(r#"<w:p><w:r><w:t xml:space="preserve">Inline </w:t></w:r>{}<w:r><w:t>picture.</w:t></w:r></w:p>"#, drawing("rId2", "")),
            // VML (old Word), with its title as the alt text; the same picture again adds nothing.
            format!("<w:p>{}{}</w:p>", vml("rId3", "Old notice"), drawing("rId1", "again")),
            // The fallback copy of alternate content is not read twice; a hidden picture not at all.
            format!(
                r#"<w:p><w:r><mc:AlternateContent xmlns:mc="m"><mc:Choice>{}</mc:Choice><mc:Fallback>{}</mc:Fallback></mc:AlternateContent></w:r></w:p>"#,
                drawing_xml("rId4", ""),
                vml_xml("rId4", "")
            ),
            format!(r#"<w:p><w:r><w:rPr><w:vanish/></w:rPr>{}</w:r></w:p>"#, drawing_xml("rId5", "")),
            plain("After the picture."),
        ]
        .concat();
        let bytes = docx_with_media(
            &body,
            &[
                ("rId1", "media/image1.png"),
                ("rId2", "media/image2.jpeg"),
                ("rId3", "media/image3.gif"),
                ("rId4", "media/image4.png"),
                ("rId5", "media/image5.png"),
            ],
            &[
                ("word/media/image1.png", b"The warranty covers repairs\n\nfor two years."),
                ("word/media/image2.jpeg", "第二张".as_bytes()),
                ("word/media/image3.gif", b"Old text"),
                ("word/media/image4.png", b"Chosen"),
                ("word/media/image5.png", b"Hidden"),
            ],
        );
        let reader = Echo(AtomicUsize::new(0));
        let (text, warnings) = with_pictures(&bytes, &reader);
        assert_eq!(
            text,
            "Before the picture.\n\n[image: Warranty card] The warranty covers repairs\nfor two years.\n\nBetween.\n\n\
             Inline picture.\n\n[image: image2.jpeg] 第二张\n\n[image: Old notice] Old text\n\n[image: image4.png] Chosen\n\n\
             After the picture."
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(reader.0.load(Ordering::SeqCst), 4);
        // Without a reader, pictures are left out as before.
        assert_eq!(
            extract_docx(&bytes, &ExtractLimits::default()).unwrap().text,
            "Before the picture.\n\nBetween.\n\nInline picture.\n\nAfter the picture."
        );
    }

    #[test]
    fn pictures_that_cannot_be_read_are_warnings() {
        let body = [
            plain("Text."),
            format!("<w:p>{}</w:p>", drawing("rId1", "")),
            format!("<w:p>{}</w:p>", drawing("rId2", "")),
            format!("<w:p>{}</w:p>", drawing("rId3", "")),
            format!("<w:p>{}</w:p>", drawing("rId4", "")),
            format!("<w:p>{}</w:p>", drawing("rId9", "")),
            format!("<w:p>{}</w:p>", drawing("rId6", "")),
            format!("<w:p>{}</w:p>", drawing("rId7", "")),
            plain("More text."),
        ]
        .concat();
        let bytes = docx_with_media(
            &body,
            &[
                ("rId1", "media/broken.png"),
                ("rId2", "media/missing.png"),
                ("rId3", "media/chart.emf"),
                ("rId4", "media/empty.png"),
                ("rId6", "media/bomb.png"),
                ("rId7", "media/ok.png"),
            ],
            &[
                ("word/media/broken.png", b"broken bytes"),
                ("word/media/chart.emf", b"vector"),
                ("word/media/empty.png", b" \n"),
                ("word/media/bomb.png", &vec![0u8; 3 * 1024 * 1024]),
                ("word/media/ok.png", b"Fine."),
            ],
        );
        let reader = Echo(AtomicUsize::new(0));
        let (text, warnings) = with_pictures(&bytes, &reader);
        assert_eq!(text, "Text.\n\n[image: ok.png] Fine.\n\nMore text.");
        assert_eq!(
            warnings[..3],
            [
                "picture `rId9` not read: the document names no such picture (a damaged file?)",
                "picture `word/media/broken.png` not read: damaged png",
                "picture `word/media/missing.png` not read: it is not in the archive",
            ]
        );
        assert!(
            warnings[3].starts_with("picture `word/media/bomb.png` not read: ")
                && warnings[3].ends_with("looks like a zip bomb"),
            "{}",
            warnings[3]
        );
        assert_eq!(warnings.len(), 4, "{warnings:?}");
        // A picture too large for the limit says so.
        let bytes = docx_with_media(
            &format!("<w:p>{}</w:p>", drawing("rId1", "")),
            &[("rId1", "media/big.png")],
            &[("word/media/big.png", &[7u8; 4096])],
        );
        let mut pictures = Pictures::new(&reader).max_bytes(1024);
        extract_docx_with_pictures(&bytes, &ExtractLimits::default(), &mut pictures).unwrap();
        assert_eq!(pictures.warnings(), ["picture `word/media/big.png` not read: it is larger than the limit of 1 MB for a picture (`[index] max_file_mb` raises it)"]);
    }

    #[test]
    fn too_many_pictures_and_no_reader() {
        let body: String = (1..=4).map(|i| format!("<w:p>{}</w:p>", drawing(&format!("rId{i}"), ""))).collect();
        let rels: Vec<(String, String)> = (1..=4).map(|i| (format!("rId{i}"), format!("media/{i}.png"))).collect();
        let rels: Vec<(&str, &str)> = rels.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let media: Vec<(String, Vec<u8>)> =
            (1..=4).map(|i| (format!("word/media/{i}.png"), format!("Picture {i}").into_bytes())).collect();
        let media: Vec<(&str, &[u8])> = media.iter().map(|(a, b)| (a.as_str(), b.as_slice())).collect();
        let bytes = docx_with_media(&format!("{}{body}", plain("Text.")), &rels, &media);
        let reader = Echo(AtomicUsize::new(0));
        let mut pictures = Pictures::new(&reader).max_pictures(3);
        let out = extract_docx_with_pictures(&bytes, &ExtractLimits::default(), &mut pictures).unwrap();
        assert_eq!(
            out.text,
            "Text.\n\n[image: 1.png] Picture 1\n\n[image: 2.png] Picture 2\n\n[image: 3.png] Picture 3"
        );
        assert_eq!(
            pictures.warnings(),
            ["1 more picture(s) not read: only the first 3 pictures of a document are read"]
        );

        struct NoOcr;
        impl PictureReader for NoOcr {
            fn unavailable(&self) -> Option<String> {
                Some("OCR is not available: tesseract is not installed".into())
            }
            fn read(&self, _: &[u8], _: &str) -> Result<String, String> {
                unreachable!()
            }
        }
        let (text, warnings) = with_pictures(&bytes, &NoOcr);
        assert_eq!(text, "Text.");
        assert_eq!(warnings, ["4 picture(s) not read: OCR is not available: tesseract is not installed"]);
    }
}
