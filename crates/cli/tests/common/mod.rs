//! Helpers shared by the integration tests: run the real binary with the real model.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// all-MiniLM-L6-v2 as installed by `scripts/setup-model` (which `scripts/test` runs first).
pub fn model() -> PathBuf {
    std::env::var_os("SKILLRAG_TEST_EMBED_MODEL")
        .map(PathBuf::from)
        .or_else(skillrag_embed::installed_minilm)
        .expect("all-MiniLM-L6-v2 is not installed: run scripts/setup-model (scripts/test does)")
}

/// `skillrag -C dir ARGS` with the test model and nothing else from the caller's environment.
pub fn skillrag(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skillrag"));
    cmd.arg("-C").arg(dir).args(args);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("SKILLRAG_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("SKILLRAG_EMBED_MODEL", model());
    cmd
}

/// Runs and asserts success.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    let out = skillrag(dir, args).output().expect("run skillrag");
    assert!(
        out.status.success(),
        "skillrag {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

/// Runs with `--json` and parses stdout.
pub fn json(dir: &Path, args: &[&str]) -> Value {
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let out = run(dir, &with_json);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: invalid JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `skillrag init` into a temp folder.
pub fn demo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), &["init"]);
    tmp
}

/// The example project, indexed.
pub fn demo_indexed() -> tempfile::TempDir {
    let tmp = demo();
    run(tmp.path(), &["index"]);
    tmp
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
