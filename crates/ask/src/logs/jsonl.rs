//! Append-only JSON-lines logs in the project's state folder (the gaps log, the feedback log):
//! one write per line, kept open for a server's hot path; unreadable lines (a crash mid-write,
//! bytes that are not UTF-8) are skipped and named by their line number when read back.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fmt;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug)]
pub(crate) struct AppendLog {
    path: PathBuf,
    /// Opened on the first record and kept open. The lock also keeps concurrent writers of this
    /// process from interleaving within a line.
    file: Mutex<Option<std::fs::File>>,
}

impl AppendLog {
    pub(crate) fn new(path: PathBuf) -> AppendLog {
        AppendLog { path, file: Mutex::new(None) }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as one line.
    pub(crate) fn append(&self, record: &impl Serialize) -> std::io::Result<()> {
        let line = serde_json::to_string(record).map_err(std::io::Error::other)?;
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if file.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            *file = Some(std::fs::OpenOptions::new().create(true).append(true).open(&self.path)?);
        }
        match file.as_mut() {
            // One write per line, so a reader never sees half a record from this process.
            Some(f) => f.write_all(format!("{line}\n").as_bytes()),
            None => Ok(()),
        }
    }

    /// Every readable record, oldest first, and the lines skipped as unreadable. A missing log
    /// is empty. Lines are split on bytes, so one that is not UTF-8 is skipped like one that is
    /// not JSON, instead of ending the read.
    pub(crate) fn read<T: DeserializeOwned>(&self) -> std::io::Result<(Vec<T>, Skipped)> {
        let file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Skipped::default())),
            Err(e) => return Err(e),
        };
        let (mut records, mut skipped) = (Vec::new(), Skipped::default());
        for (n, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
            let line = line?;
            let Ok(line) = std::str::from_utf8(&line) else {
                skipped.push(n + 1, "not valid UTF-8");
                continue;
            };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str(line) {
                Ok(r) => records.push(r),
                Err(_) => skipped.push(n + 1, "not a readable record"),
            }
        }
        Ok((records, skipped))
    }
}

/// The lines of a log that were skipped when it was read: each line's number (from 1) and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    lines: Vec<(usize, &'static str)>,
}

/// Skipped lines named one by one in a message; the rest are counted.
const NAMED_LINES: usize = 5;

impl Skipped {
    fn push(&mut self, line: usize, why: &'static str) {
        self.lines.push((line, why));
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// How many lines were skipped.
    pub fn count(&self) -> usize {
        self.lines.len()
    }

    /// The skipped lines' numbers, from 1.
    pub fn lines(&self) -> impl Iterator<Item = usize> + '_ {
        self.lines.iter().map(|(n, _)| *n)
    }
}

/// `2 unreadable line(s) skipped: line 3 (not valid UTF-8), line 7 (not a readable record)`.
impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} unreadable line(s) skipped", self.lines.len())?;
        for (i, (line, why)) in self.lines.iter().take(NAMED_LINES).enumerate() {
            write!(f, "{} line {line} ({why})", if i == 0 { ":" } else { "," })?;
        }
        if self.lines.len() > NAMED_LINES {
            write!(f, " and {} more", self.lines.len() - NAMED_LINES)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_broken_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = AppendLog::new(dir.path().join("sub/log.jsonl"));
        assert_eq!(log.read::<u32>().unwrap(), (vec![], Skipped::default()));
        log.append(&1u32).unwrap();
        std::fs::OpenOptions::new().append(true).open(log.path()).unwrap().write_all(b"{broken\n\n").unwrap();
        log.append(&2u32).unwrap();
        std::fs::OpenOptions::new().append(true).open(log.path()).unwrap().write_all(b"\"\xff\xfe\"\n").unwrap();
        log.append(&3u32).unwrap();
        let (read, skipped) = log.read::<u32>().unwrap();
        assert_eq!(read, vec![1, 2, 3], "the lines after a bad one are read too");
        assert_eq!(skipped.lines().collect::<Vec<_>>(), vec![2, 5]);
        assert_eq!(
            skipped.to_string(),
            "2 unreadable line(s) skipped: line 2 (not a readable record), line 5 (not valid UTF-8)"
        );
    }
}
