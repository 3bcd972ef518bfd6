//! Members of the DOCX (zip) archive, read without trusting it: the sizes a member's headers
//! declare are checked before inflating (a zip bomb declares an absurd ratio) and never relied on
//! while inflating (a lying header must not make us read without bound).

use std::io::Read;

use super::corrupt;
use crate::formats::{ExtractError, ExtractLimits};

/// Members larger than this (declared) are checked against `max_ratio` before inflating; small
/// members may compress very well (repetitive XML) without being dangerous.
const RATIO_CHECK_MIN_BYTES: u64 = 1024 * 1024;

/// Inflates one archive member without trusting the sizes its header declares.
/// `Ok(None)` when the member does not exist.
pub(super) fn read_member<R: Read + std::io::Seek>(
    archive: &mut zip::ZipArchive<R>,
    name: &str,
    limits: &ExtractLimits,
) -> Result<Option<Vec<u8>>, ExtractError> {
    let member = match archive.by_name(name) {
        Ok(member) => member,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(corrupt(format!("cannot open {name} in the archive ({e})"))),
    };
    let limit = limits.max_inflated_bytes;
    let limit_mb = limit.div_ceil(1024 * 1024);
    let compressed = member.compressed_size().max(1);
    let declared = member.size();
    if declared > limit || (declared > RATIO_CHECK_MIN_BYTES && declared / compressed > limits.max_ratio) {
        return Err(ExtractError::ZipBomb { member: name.to_string(), limit_mb, ratio: declared / compressed });
    }
    let mut out = Vec::with_capacity(declared.min(RATIO_CHECK_MIN_BYTES) as usize);
    member
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| corrupt(format!("cannot inflate {name} ({e})")))?;
    if out.len() as u64 > limit {
        return Err(ExtractError::ZipBomb { member: name.to_string(), limit_mb, ratio: out.len() as u64 / compressed });
    }
    Ok(Some(out))
}

/// The text of an XML part: UTF-8 (BOM allowed) or UTF-16 with a BOM.
pub(super) fn xml_text(name: &str, bytes: &[u8]) -> Result<String, ExtractError> {
    if let Some((encoding, _)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, _, malformed) = encoding.decode(bytes);
        if !malformed {
            return Ok(text.into_owned());
        }
    } else if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(text.to_string());
    }
    Err(corrupt(format!("{name} is not UTF-8 or UTF-16 text")))
}

#[cfg(test)]
mod tests {
    use super::super::extract_docx;
    use super::super::fixtures::*;
    use super::*;

    #[test]
    fn zip_bombs_are_refused() {
        // 100 MB of zeros deflates to ~100 KB: refused on its declared ratio before inflating.
        let zeros = vec![0u8; 100 * 1024 * 1024];
        let bomb = zip_of(&[("word/document.xml", &zeros)]);
        assert!(bomb.len() < 1024 * 1024);
        match extract_docx(&bomb, &ExtractLimits::default()).unwrap_err() {
            ExtractError::ZipBomb { member, limit_mb, ratio } => {
                assert_eq!(member, "word/document.xml");
                assert_eq!(limit_mb, 64);
                assert!(ratio > 200, "{ratio}");
            }
            other => panic!("{other:?}"),
        }
        // With the ratio check out of the way, the inflate limit stops it.
        let limits = ExtractLimits { max_inflated_bytes: 1024 * 1024, max_ratio: u64::MAX, ..ExtractLimits::default() };
        let small = zip_of(&[("word/document.xml", &zeros[..3 * 1024 * 1024])]);
        let err = extract_docx(&small, &limits).unwrap_err();
        assert!(matches!(err, ExtractError::ZipBomb { limit_mb: 1, .. }), "{err:?}");
        assert!(err.to_string().contains("looks like a zip bomb"));
    }

    #[test]
    fn lying_zip_header_is_not_trusted() {
        // A deflated member whose headers claim it inflates to 1000 bytes while it inflates to 3 MB:
        // the declared sizes pass every check. The zip crate itself stops at the declared size
        // (→ Corrupt); were it not to, the inflate limit would (→ ZipBomb). Never read unbounded.
        let zeros = vec![0u8; 3 * 1024 * 1024];
        let mut bytes = zip_of(&[("word/document.xml", &zeros)]);
        let real = (zeros.len() as u32).to_le_bytes();
        let mut patched = 0;
        for (signature, offset) in [(b"PK\x03\x04", 22), (b"PK\x01\x02", 24)] {
            let at = bytes.windows(4).position(|w| w == signature).unwrap() + offset;
            assert_eq!(bytes[at..at + 4], real);
            bytes[at..at + 4].copy_from_slice(&1000u32.to_le_bytes());
            patched += 1;
        }
        assert_eq!(patched, 2);
        let limits = ExtractLimits { max_inflated_bytes: 1024 * 1024, max_ratio: 200, ..ExtractLimits::default() };
        let err = extract_docx(&bytes, &limits).unwrap_err();
        assert!(matches!(err, ExtractError::ZipBomb { limit_mb: 1, .. } | ExtractError::Corrupt { .. }), "{err:?}");
    }

    #[test]
    fn zip_bomb_from_testdata() {
        let err = extract_docx(&testdata("zip-bomb.docx"), &ExtractLimits::default()).unwrap_err();
        assert!(matches!(&err, ExtractError::ZipBomb { member, .. } if member == "word/document.xml"), "{err:?}");
    }
}
