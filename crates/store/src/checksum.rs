//! Checksums of a generation's files, so that bit rot or a stray write is caught when the
//! generation is opened instead of silently changing scores.
//!
//! `checksums.json` is written last, just before `CURRENT` names the generation, and lists
//! every file of the generation folder (tantivy's included) with its size and BLAKE3 hash.
//! BLAKE3 is already a dependency and hashes several GB/s, so verifying a generation costs
//! milliseconds. Files not listed (tantivy's lock files) are ignored.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The file name of a generation's checksum list.
pub(crate) const FILE: &str = "checksums.json";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Checksums {
    /// Relative path (with `/`) → size and hash.
    pub files: BTreeMap<String, Sum>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Sum {
    pub size: u64,
    pub blake3: String,
}

impl Sum {
    pub fn of(bytes: &[u8]) -> Sum {
        Sum { size: bytes.len() as u64, blake3: blake3::hash(bytes).to_hex().to_string() }
    }
}

/// What verifying a generation read.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Verified {
    pub files: usize,
    pub bytes: u64,
}

/// Files that belong to tantivy's locking, not to the index: they come and go with readers.
fn ignored(name: &str) -> bool {
    name == FILE || (name.starts_with(".tantivy") && name.ends_with(".lock"))
}

impl Checksums {
    /// Hashes every file under `dir`.
    pub fn of_dir(dir: &Path) -> std::io::Result<Checksums> {
        let mut out = Checksums::default();
        collect(dir, "", &mut out.files)?;
        Ok(out)
    }

    /// The checksums of the generation in `dir`; `None` for a generation written before
    /// checksums existed.
    pub fn read(dir: &Path) -> Result<Option<Checksums>, String> {
        let path = dir.join(FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| format!("{FILE} is unreadable: {e}")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{FILE}: {e}")),
        }
    }

    /// Checks the bytes of `name`, already read by the caller.
    pub fn check_bytes(&self, name: &str, bytes: &[u8]) -> Result<(), String> {
        match self.files.get(name) {
            None => Err(format!("{name} is not in {FILE}")),
            Some(sum) if *sum != Sum::of(bytes) => {
                Err(format!("{name} does not match its checksum ({} bytes, {} expected)", bytes.len(), sum.size))
            }
            Some(_) => Ok(()),
        }
    }

    /// Reads and checks every listed file except `skip` (checked by the caller from memory).
    pub fn check_files(&self, dir: &Path, skip: &[&str]) -> Result<Verified, String> {
        let mut verified = Verified::default();
        for name in self.files.keys().filter(|n| !skip.contains(&n.as_str())) {
            let bytes = std::fs::read(dir.join(name)).map_err(|e| format!("{name}: {e}"))?;
            self.check_bytes(name, &bytes)?;
            verified.files += 1;
            verified.bytes += bytes.len() as u64;
        }
        Ok(verified)
    }
}

fn collect(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Sum>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
        let rel = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect(&entry.path(), &rel, out)?;
        } else if !ignored(&name) {
            out.insert(rel, Sum::of(&std::fs::read(entry.path())?));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_a_flipped_byte_and_a_missing_file() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.bin"), [1u8, 2, 3]).unwrap();
        std::fs::create_dir(tmp.path().join("sub")).unwrap();
        std::fs::write(tmp.path().join("sub/b"), b"bee").unwrap();
        std::fs::write(tmp.path().join("sub/.tantivy-meta.lock"), b"").unwrap();
        let sums = Checksums::of_dir(tmp.path()).unwrap();
        assert_eq!(sums.files.keys().collect::<Vec<_>>(), ["a.bin", "sub/b"]);
        assert_eq!(sums.check_files(tmp.path(), &[]).unwrap().files, 2);

        std::fs::write(tmp.path().join("sub/b"), b"bed").unwrap();
        let err = sums.check_files(tmp.path(), &[]).unwrap_err();
        assert!(err.contains("sub/b does not match its checksum"), "{err}");
        assert!(sums.check_files(tmp.path(), &["sub/b"]).is_ok());
        std::fs::remove_file(tmp.path().join("a.bin")).unwrap();
        assert!(sums.check_files(tmp.path(), &["sub/b"]).unwrap_err().starts_with("a.bin"));
    }
}
