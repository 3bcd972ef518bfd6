//! Append-only JSON-lines logs in the project's state folder (the gaps log, the feedback log):
//! one write per line, kept open for a server's hot path; unreadable lines (a crash mid-write)
//! are skipped and counted when read back.

use serde::de::DeserializeOwned;
use serde::Serialize;
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

    /// Every readable record, oldest first, and the number of unreadable lines. A missing log
    /// is empty.
    pub(crate) fn read<T: DeserializeOwned>(&self) -> std::io::Result<(Vec<T>, usize)> {
        let file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
            Err(e) => return Err(e),
        };
        let (mut records, mut unreadable) = (Vec::new(), 0);
        for line in std::io::BufReader::new(file).lines() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str(&line) {
                Ok(r) => records.push(r),
                Err(_) => unreadable += 1,
            }
        }
        Ok((records, unreadable))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_broken_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = AppendLog::new(dir.path().join("sub/log.jsonl"));
        assert_eq!(log.read::<u32>().unwrap(), (vec![], 0));
        log.append(&1u32).unwrap();
        std::fs::OpenOptions::new().append(true).open(log.path()).unwrap().write_all(b"{broken\n\n").unwrap();
        log.append(&2u32).unwrap();
        assert_eq!(log.read::<u32>().unwrap(), (vec![1, 2], 1));
    }
}
