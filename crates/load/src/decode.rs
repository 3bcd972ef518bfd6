//! Turning the bytes of a text file into normalized UTF-8, whatever encoding it was saved in.
//! Chinese archives are often GBK/GB18030, Big5 or UTF-16; `chardetng` guesses legacy
//! encodings, `encoding_rs` decodes them.

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8};
use unicode_normalization::UnicodeNormalization;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DecodeError {
    #[error("binary file (contains NUL bytes); not a text document")]
    Binary,
    #[error("file is all zero bytes; not a document (a preallocated or wiped file?)")]
    AllZero,
    #[error(
        "binary file: {controls} of {total} characters are control codes when read as {encoding}; not a text document"
    )]
    ControlCodes { encoding: &'static str, controls: usize, total: usize },
    #[error("cannot decode as text: {invalid} of {total} characters are invalid in the best guess ({encoding})")]
    Undecodable { encoding: &'static str, invalid: usize, total: usize },
}

/// Something a decoding had to repair; the text is still usable.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum DecodeWarning {
    #[error("{count} byte(s) are not valid UTF-8 (the first, 0x{byte:02X}, at byte offset {offset}); shown as U+FFFD")]
    InvalidUtf8 { count: usize, offset: usize, byte: u8 },
    #[error("{lines} line(s) are not UTF-8 (the first is line {first_line}); read as {encoding}")]
    MixedEncoding { lines: usize, first_line: usize, encoding: &'static str },
}

/// Decoded text and the encoding it was read as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// NFC-normalized, `\n` line endings, no BOM, no control characters other than `\n` and `\t`.
    pub text: String,
    pub encoding: &'static str,
    /// Repairs made on the way (bad UTF-8 bytes, lines in another encoding).
    pub warnings: Vec<DecodeWarning>,
}

/// Share of replacement characters above which a guessed decoding is rejected: a few broken
/// bytes in a long legacy file are tolerated, a wrong guess is not.
const MAX_INVALID_SHARE: f64 = 0.01;

/// Decodes `bytes`: BOM first, then UTF-16 without BOM, UTF-8 (repaired when only a few bytes
/// or lines are not UTF-8), and finally the legacy encoding `chardetng` considers most likely.
pub fn decode(bytes: &[u8]) -> Result<Decoded, DecodeError> {
    let (raw, encoding, warnings) = decode_raw(bytes)?;
    Ok(Decoded { text: normalize(&raw), encoding, warnings })
}

type Raw = (String, &'static str, Vec<DecodeWarning>);

fn decode_raw(bytes: &[u8]) -> Result<Raw, DecodeError> {
    if is_all_zero(bytes) {
        return Err(DecodeError::AllZero);
    }
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
        return checked(text.into_owned(), had_errors, encoding.name());
    }
    if let Some(encoding) = sniff_utf16(bytes) {
        let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
        // A binary whose NULs happen to line up decodes to garbage that `checked` rejects.
        if let Ok(decoded) = checked(text.into_owned(), had_errors, encoding.name()) {
            return Ok(decoded);
        }
    }
    if bytes.contains(&0) {
        return Err(DecodeError::Binary);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok((text.to_string(), UTF_8.name(), Vec::new()));
    }
    if let Some(repaired) = mostly_utf8(bytes) {
        return Ok(repaired);
    }
    let encoding = guess_legacy(bytes);
    let (text, _, had_errors) = encoding.decode(bytes);
    checked(text.into_owned(), had_errors, encoding.name())
}

/// True for a non-empty file of nothing but zero bytes (a preallocated or wiped file).
pub(crate) fn is_all_zero(bytes: &[u8]) -> bool {
    !bytes.is_empty() && bytes.iter().all(|&b| b == 0)
}

fn guess_legacy(bytes: &[u8]) -> &'static Encoding {
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    detector.guess(None, chardetng::Utf8Detection::Deny)
}

/// Non-ASCII bytes that form valid UTF-8 sequences, and bytes that do not.
fn utf8_evidence(bytes: &[u8]) -> (usize, usize) {
    bytes.utf8_chunks().fold((0, 0), |(valid, invalid), chunk| {
        (valid + chunk.valid().bytes().filter(|b| !b.is_ascii()).count(), invalid + chunk.invalid().len())
    })
}

/// A UTF-8 file with a few bad bytes, or with some lines in a legacy encoding (files pasted
/// together from different sources): UTF-8 lines stay, lines that are mostly UTF-8 are
/// repaired with U+FFFD, the rest are read in the legacy encoding guessed from them alone.
/// `None` when the file is not mostly UTF-8: a legacy file forms valid multi-byte UTF-8
/// sequences only by chance (under a tenth of its non-ASCII bytes for GBK).
fn mostly_utf8(bytes: &[u8]) -> Option<Raw> {
    let (valid, invalid) = utf8_evidence(bytes);
    if valid < invalid {
        return None;
    }
    // Per line: UTF-8 (possibly repaired), or legacy (decoded below).
    let mut pieces: Vec<Result<String, &[u8]>> = Vec::new();
    let (mut bad_bytes, mut first_bad) = (0, None);
    let (mut legacy_lines, mut first_legacy) = (0, None);
    let mut legacy_sample = Vec::new();
    let mut offset = 0;
    for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        match std::str::from_utf8(line) {
            Ok(text) => pieces.push(Ok(text.to_string())),
            Err(_) => {
                let (valid, invalid) = utf8_evidence(line);
                if valid >= invalid * 4 || legacy_is_hopeless(valid, invalid) {
                    let mut at = offset;
                    for chunk in line.utf8_chunks() {
                        at += chunk.valid().len();
                        if let (None, Some(&byte)) = (first_bad, chunk.invalid().first()) {
                            first_bad = Some((at, byte));
                        }
                        at += chunk.invalid().len();
                        bad_bytes += chunk.invalid().len();
                    }
                    pieces.push(Ok(String::from_utf8_lossy(line).into_owned()));
                } else {
                    legacy_lines += 1;
                    first_legacy.get_or_insert(i + 1);
                    legacy_sample.extend_from_slice(line);
                    pieces.push(Err(line));
                }
            }
        }
        offset += line.len();
    }
    let mut warnings = Vec::new();
    if let Some((offset, byte)) = first_bad {
        warnings.push(DecodeWarning::InvalidUtf8 { count: bad_bytes, offset, byte });
    }
    let legacy = (legacy_lines > 0).then(|| guess_legacy(&legacy_sample));
    if let (Some(encoding), Some(first_line)) = (legacy, first_legacy) {
        warnings.push(DecodeWarning::MixedEncoding { lines: legacy_lines, first_line, encoding: encoding.name() });
    }
    let text = pieces
        .into_iter()
        .map(|piece| match (piece, legacy) {
            (Ok(text), _) => text,
            (Err(line), Some(encoding)) => encoding.decode_without_bom_handling(line).0.into_owned(),
            (Err(line), None) => String::from_utf8_lossy(line).into_owned(),
        })
        .collect();
    Some((text, UTF_8.name(), warnings))
}

/// A line with bad bytes but no multi-byte sequence at all is ASCII with a stray byte or two,
/// not a line in another encoding, when those bytes are few.
fn legacy_is_hopeless(valid: usize, invalid: usize) -> bool {
    valid == 0 && invalid <= 2
}

fn checked(text: String, had_errors: bool, encoding: &'static str) -> Result<Raw, DecodeError> {
    if had_errors {
        let total = text.chars().count().max(1);
        let invalid = text.chars().filter(|&c| c == '\u{FFFD}').count();
        if invalid as f64 / total as f64 > MAX_INVALID_SHARE {
            return Err(DecodeError::Undecodable { encoding, invalid, total });
        }
    }
    if text.contains('\0') {
        return Err(DecodeError::Binary);
    }
    // Legacy single-byte guesses decode any bytes; many control characters mean it was binary.
    let total = text.chars().count().max(1);
    let controls = text.chars().filter(|&c| c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{c}')).count();
    if controls as f64 / total as f64 > MAX_INVALID_SHARE {
        return Err(DecodeError::ControlCodes { encoding, controls, total });
    }
    Ok((text, encoding, Vec::new()))
}

/// UTF-16 without a BOM shows as NUL bytes on one side of each pair: the high byte of every
/// ASCII character (newlines, spaces, digits even in Chinese text). NULs on the other side
/// come only from the characters U+xx00 (一 is U+4E00). A binary has them anywhere, so the
/// caller checks that the guess decodes cleanly: random code units include lone surrogates,
/// control codes and U+0000.
fn sniff_utf16(bytes: &[u8]) -> Option<&'static Encoding> {
    let sample = &bytes[..bytes.len().min(8192) & !1];
    if sample.len() < 4 {
        return None;
    }
    let even_nul = sample.iter().step_by(2).filter(|&&b| b == 0).count();
    let odd_nul = sample.iter().skip(1).step_by(2).filter(|&&b| b == 0).count();
    if odd_nul > even_nul {
        Some(UTF_16LE)
    } else if even_nul > odd_nul {
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
    fn utf8_with_a_bad_byte_is_repaired_with_a_warning() {
        let mut bytes = ZH.as_bytes().to_vec();
        bytes.insert(9, 0xFF);
        let d = decode(&bytes).unwrap();
        assert_eq!(d.encoding, "UTF-8");
        assert!(d.text.starts_with("第十条\u{FFFD} 建立劳动关系"), "{}", d.text);
        assert_eq!(d.warnings, vec![DecodeWarning::InvalidUtf8 { count: 1, offset: 9, byte: 0xFF }]);
        assert!(d.warnings[0].to_string().contains("0xFF, at byte offset 9"), "{}", d.warnings[0]);
        // ASCII with a stray byte in a mostly UTF-8 file.
        let bytes = [format!("{ZH}\n").as_bytes(), b"plain \x80 line\n"].concat();
        let d = decode(&bytes).unwrap();
        assert!(d.text.ends_with("plain \u{FFFD} line\n"), "{}", d.text);
    }

    #[test]
    fn mixed_utf8_and_gbk_lines_are_both_read() {
        let (gbk, _, _) = encoding_rs::GBK.encode(ZH);
        let bytes = [format!("# 标题\n{ZH}\n").as_bytes(), &gbk, b"\n", format!("{ZH}\n").as_bytes()].concat();
        let d = decode(&bytes).unwrap();
        assert_eq!(d.text, format!("# 标题\n{ZH}\n{ZH}\n{ZH}\n"));
        assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
        assert!(
            matches!(
                d.warnings[0],
                DecodeWarning::MixedEncoding { lines: 1, first_line: 3, encoding: "GBK" | "gb18030" }
            ),
            "{:?}",
            d.warnings
        );
    }

    #[test]
    fn utf16_chinese_without_bom() {
        let text = format!("{ZH}\n第二段：一二三。\n{ZH}\n");
        let le: Vec<u8> = text.encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
        let d = decode(&le).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), (text.as_str(), "UTF-16LE"));
        let be: Vec<u8> = text.encode_utf16().flat_map(|u| u.to_be_bytes()).collect();
        let d = decode(&be).unwrap();
        assert_eq!((d.text.as_str(), d.encoding), (text.as_str(), "UTF-16BE"));
    }

    #[test]
    fn zeros_and_control_codes_say_what_they_are() {
        assert_eq!(decode(&[0u8; 4096]), Err(DecodeError::AllZero));
        assert!(DecodeError::AllZero.to_string().contains("all zero bytes"));
        // No NUL bytes, but read as a single-byte encoding it is mostly control codes.
        let bytes: Vec<u8> = (0..4000u32).map(|i| [0x01, 0x02, 0x81, 0x1B, 0x90][i as usize % 5]).collect();
        let err = decode(&bytes).unwrap_err();
        assert!(matches!(err, DecodeError::ControlCodes { .. }), "{err:?}");
        assert!(!err.to_string().contains("NUL"), "{err}");
    }

    #[test]
    fn binary_is_rejected() {
        let png = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, b'I', b'H', b'D', b'R', 0, 0, 1, 0];
        assert_eq!(decode(&png), Err(DecodeError::Binary));
        // Bytes with NULs that line up on one side still are a binary, not UTF-16.
        let odd: Vec<u8> = (0..4096u32).map(|i| if i % 2 == 1 { 0 } else { (i % 7) as u8 }).collect();
        assert_eq!(decode(&odd), Err(DecodeError::Binary));
        let random: Vec<u8> = (0..8192u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        assert!(matches!(decode(&random), Err(DecodeError::Binary | DecodeError::ControlCodes { .. })));
    }
}
