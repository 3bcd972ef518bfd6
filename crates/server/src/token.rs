//! How strong the bearer token must be. The token is the only thing between the network and the
//! knowledge base once `serve` listens beyond loopback, so a guessable one is refused at startup,
//! never trimmed or patched up silently (a trailing newline from a file would otherwise make
//! every client's header mismatch, or worse, quietly weaken the secret).

use std::collections::HashSet;

/// Fewest characters a token may have: 32 random hex digits carry 128 bits.
pub const MIN_LEN: usize = 32;
/// Fewest different characters: random hex of 32 digits uses 8 or more in practice.
const MIN_DISTINCT: usize = 6;
/// Longest run of one repeated character allowed (random hex repeats one 8 times about once in
/// ten million tokens).
const MAX_RUN: usize = 7;
/// Least estimated entropy, in bits (length × the Shannon entropy of its character counts):
/// random 32-digit hex scores 90 or more.
const MIN_BITS: f64 = 80.0;

/// What is wrong with a token, worded for the operator who set it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeakToken {
    #[error(
        "it contains whitespace at character {at} (a trailing newline from a file or `echo`?); nothing is trimmed"
    )]
    Whitespace { at: usize },
    #[error("character {at} is not printable ASCII; HTTP clients cannot all send it in a header")]
    NotPrintable { at: usize },
    #[error("it is {len} characters long; at least {MIN_LEN} are required")]
    TooShort { len: usize },
    #[error("it uses only {distinct} different character(s)")]
    FewDistinct { distinct: usize },
    #[error("it repeats one character {run} times in a row")]
    Run { run: usize },
    #[error("it is mostly a sequence of consecutive characters (like `abcd` or `4321`)")]
    Sequence,
    #[error("it is too predictable (about {bits:.0} bits of entropy; at least {MIN_BITS:.0} required)")]
    LowEntropy { bits: f64 },
}

/// Refuses tokens a person typed or a script mangled; accepts what `openssl rand -hex 32` or
/// `openssl rand -base64 32` print.
pub fn check(token: &str) -> Result<(), WeakToken> {
    for (i, c) in token.chars().enumerate() {
        if c.is_whitespace() {
            return Err(WeakToken::Whitespace { at: i + 1 });
        }
        if !c.is_ascii_graphic() {
            return Err(WeakToken::NotPrintable { at: i + 1 });
        }
    }
    // Printable ASCII from here on: one byte per character.
    let bytes = token.as_bytes();
    if bytes.len() < MIN_LEN {
        return Err(WeakToken::TooShort { len: bytes.len() });
    }
    let distinct = bytes.iter().collect::<HashSet<_>>().len();
    if distinct < MIN_DISTINCT {
        return Err(WeakToken::FewDistinct { distinct });
    }
    let run = longest_run(bytes);
    if run > MAX_RUN {
        return Err(WeakToken::Run { run });
    }
    let steps = bytes.windows(2).filter(|w| w[0].abs_diff(w[1]) == 1).count();
    if steps * 2 > bytes.len() - 1 {
        return Err(WeakToken::Sequence);
    }
    let bits = estimated_bits(bytes);
    if bits < MIN_BITS {
        return Err(WeakToken::LowEntropy { bits });
    }
    Ok(())
}

fn longest_run(bytes: &[u8]) -> usize {
    let (mut longest, mut current) = (0, 0);
    let mut previous = None;
    for &b in bytes {
        current = if previous == Some(b) { current + 1 } else { 1 };
        longest = longest.max(current);
        previous = Some(b);
    }
    longest
}

/// Length × Shannon entropy of the character frequencies: an upper bound on what the token can
/// hold, low for anything built from a few symbols.
fn estimated_bits(bytes: &[u8]) -> f64 {
    let mut counts = [0usize; 256];
    for &b in bytes {
        counts[usize::from(b)] += 1;
    }
    let n = bytes.len() as f64;
    let per_char: f64 = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum();
    per_char * n
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX64: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    #[test]
    fn random_tokens_pass() {
        check(HEX64).unwrap();
        check(&HEX64[..32]).unwrap();
        check("q7X2+vRk9/ZpL0m4eB1sT8uWc3yN6aHdGfJiK5oQ=").unwrap();
    }

    #[test]
    fn whitespace_anywhere_is_refused_not_trimmed() {
        assert_eq!(check(&" ".repeat(16)), Err(WeakToken::Whitespace { at: 1 }));
        assert_eq!(check(&format!("{HEX64}\n")), Err(WeakToken::Whitespace { at: 65 }));
        assert_eq!(check(&format!("{}\t{}", &HEX64[..10], &HEX64[10..])), Err(WeakToken::Whitespace { at: 11 }));
        assert!(matches!(check(&format!("{HEX64}é")), Err(WeakToken::NotPrintable { at: 65 })));
    }

    #[test]
    fn short_repetitive_and_sequential_tokens_are_refused() {
        assert_eq!(check("Zx81vQ0pLm3Tr7Ws9Ke2"), Err(WeakToken::TooShort { len: 20 }));
        assert_eq!(check(&"a".repeat(36)), Err(WeakToken::FewDistinct { distinct: 1 }));
        assert_eq!(check(&"abab".repeat(10)), Err(WeakToken::FewDistinct { distinct: 2 }));
        assert_eq!(check(&format!("{}{}", &HEX64[..30], "77777777")), Err(WeakToken::Run { run: 8 }));
        assert_eq!(check("abcdefghijklmnopqrstuvwxyz0123456789"), Err(WeakToken::Sequence));
        assert!(matches!(check(&"abcdef".repeat(6)), Err(WeakToken::Sequence)));
        assert!(matches!(check("abacadaeafabacadaeafabacadaeafabacad"), Err(WeakToken::LowEntropy { .. })));
    }

    #[test]
    fn messages_say_what_is_wrong() {
        assert!(WeakToken::Whitespace { at: 65 }.to_string().contains("newline"));
        assert!(WeakToken::TooShort { len: 20 }.to_string().contains("at least 32"));
    }
}
