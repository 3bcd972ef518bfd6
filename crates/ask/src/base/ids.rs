//! Ids and times the contract and the logs share.

/// A fresh id such as `a-3f9c0e12b7d54a61`: 64 bits behind a one-letter kind, safe in a URL and
/// a file name. The bits hash the time and a counter with std's randomly keyed hasher, so ids
/// differ across processes too (no entropy source crate needed for ids that only must be unique).
pub(crate) fn new_id(kind: char) -> String {
    use std::hash::BuildHasher;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let seed = (nanos, COUNTER.fetch_add(1, Ordering::Relaxed), std::process::id());
    format!("{kind}-{:016x}", std::collections::hash_map::RandomState::new().hash_one(seed))
}

/// Whether `id` is one [`new_id`] could have made (so it can name a file).
pub(crate) fn is_id(id: &str, kind: char) -> bool {
    let mut chars = id.chars();
    chars.next() == Some(kind)
        && chars.next() == Some('-')
        && id.len() == 18
        && id[2..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_recognised_and_nothing_else() {
        let id = new_id('c');
        assert!(is_id(&id, 'c'), "{id}");
        assert!(!is_id(&id, 'a'));
        for bad in ["c-", "c-../../etc/passwd", "c-0123456789ABCDEF", "c-0123456789abcde", "c_0123456789abcdef"] {
            assert!(!is_id(bad, 'c'), "{bad}");
        }
    }
}
