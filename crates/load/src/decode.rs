//! Turning the bytes of a text file into normalized UTF-8, whatever encoding it was saved in.
//! Chinese archives are often GBK/GB18030, Big5 or UTF-16; `chardetng` guesses legacy
//! encodings, `encoding_rs` decodes them.

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8};
use unicode_normalization::UnicodeNormalization;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DecodeError {
    #[error("binary file (contains NUL bytes); not a text document")]
    Binary,
    #[error("cannot decode as text: {invalid} of {total} characters are invalid in the best guess ({encoding})")]
    Undecodable { encoding: &'static str, invalid: usize, total: usize },
}

/// Decoded text and the encoding it was read as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// NFC-normalized, `\n` line endings, no BOM, no control characters other than `\n` and `\t`.
    pub text: String,
    pub encoding: &'static str,
}

/// Share of replacement characters above which a guessed decoding is rejected: a few broken
/// bytes in a long legacy file are tolerated, a wrong guess is not.
const MAX_INVALID_SHARE: f64 = 0.01;

/// Decodes `bytes`: BOM first, then UTF-16 without BOM, strict UTF-8, and finally the legacy
/// encoding `chardetng` considers most likely.
pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    let (raw, encoding) = decode_raw(bytes)?;
    Ok(Decoded { text: normalize(&raw), encoding })
}

fn decode_raw(bytes: &[u8]) -> Result<(String, &'static str), DecodeError> {
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
        return checked(text.into_owned(), had_errors, encoding.name());
    }
    if let Some(encoding) = sniff_utf16(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
        return checked(text.into_owned(), had_errors, encoding.name());
    }
    if bytes.contains(&0) {
        return Err(DecodeError::Binary);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok((text.to_string(), UTF_8.name()));
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let encoding = detector.guess(None, chardetng::Utf8Detection::Deny);
    let (text, _, had_errors) = encoding.decode(bytes);
    checked(text.into_owned(), had_errors, encoding.name())
}

fn checked(text: String, had_errors: bool, encoding: &'static str) -> Result<(String, &'static str), DecodeError> {
    if had_errors {
        let total = text.chars().count().max(1);
        let invalid = text.chars().filter(|&c| c == '\u{FFFD}').count();
        if invalid as f64 / total as f64 > MAX_INVALID_SHARE {
            return Err(DecodeError::Undecodable { encoding, invalid, total });
        }
    }
    // Legacy single-byte guesses decode any bytes; many control characters mean it was binary.
    let total = text.chars().count().max(1);
    let controls = text.chars().filter(|&c| c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{c}')).count();
    if text.contains('\0') || controls as f64 / total as f64 > MAX_INVALID_SHARE {
        return Err(DecodeError::Binary);
    }
    Ok((text, encoding))
}

/// UTF-16 without a BOM shows as NUL bytes in every other position for mostly-ASCII text.
fn sniff_utf16(bytes: &[u8]) -> Option<&'static Encoding> {
    let sample = &bytes[..bytes.len().min(4096) & !1];
    if sample.len() < 4 {
        return None;
    }
    let pairs = sample.len() / 2;
    let even_nul = sample.iter().step_by(2).filter(|&&b| b == 0).count();
    let odd_nul = sample.iter().skip(1).step_by(2).filter(|&&b| b == 0).count();
    if odd_nul * 10 >= pairs * 4 && even_nul * 20 < pairs {
        Some(UTF_16LE)
    } else if even_nul * 10 >= pairs * 4 && odd_nul * 20 < pairs {
        Some(UTF_16BE)
    } else {
        None
    }
}

/// NFC, `\n` line endings, and no stray control characters.
pub(crate) fn normalize(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().nfc().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZH: &str = "第十条 建立劳动关系，应当订立书面劳动合同。已建立劳动关系，未同时订立书面劳动合同的，应当自用工之日起一个月内订立书面劳动合同。";

    #[test]
    fn utf8_with_and_without_bom() {
        assert_eq!(decode("héllo\r\nworld".as_bytes()).unwrap().text, "héllo\nworld");
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend_from_slice(ZH.as_bytes());
        let d = decode(&bom).unwrap();
        assert_eq!(d.text, ZH);
        assert_eq!(d.encoding, "UTF-8");
    }

    #[test]
    fn gbk_gb18030_and_big5() {
        let (gbk, _, _) = encoding_rs::GBK.encode(ZH);
        let d = decode(&gbk).unwrap();
        assert_eq!(d.text, ZH);
        assert!(d.encoding == "GBK" || d.encoding == "gb18030", "{}", d.encoding);

        let traditional = "第十條 建立勞動關係，應當訂立書面勞動合同。已建立勞動關係，未同時訂立書面勞動合同的，應當自用工之日起一個月內訂立書面勞動合同。";
        let (big5, _, _) = encoding_rs::BIG5.encode(traditional);
        let d = decode(&big5).unwrap();
        assert_eq!(d.text, traditional);
        assert_eq!(d.encoding, "Big5");
    }

    #[test]
    fn utf16_with_and_without_bom() {
        let le: Vec<u8> = "Hello, world.\n你好".encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
        assert_eq!(decode(&le).unwrap().text, "Hello, world.\n你好");
        let mut be = vec![0xFE, 0xFF];
        be.extend("Plain text here".encode_utf16().flat_map(|u| u.to_be_bytes()));
        assert_eq!(decode(&be).unwrap().text, "Plain text here");
    }

    #[test]
    fn nfc_normalizes() {
        // "e" + combining acute accent → "é"
        assert_eq!(decode("cafe\u{301}".as_bytes()).unwrap().text, "café");
    }

    #[test]
    fn binary_is_rejected() {
        let png = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, b'I', b'H', b'D', b'R', 0, 0, 1, 0];
        assert_eq!(decode(&png), Err(DecodeError::Binary));
    }
}
