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

/// Runs `cmd` with `input` on stdin (`batch`, `chat --json`) and parses each stdout line as JSON.
pub fn json_lines(mut cmd: Command, input: &str) -> (Vec<Value>, Output) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (lines, out)
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The store a test project keeps its indexes in. Tests of the index and ask paths run on
/// both (see [`on_both_stores`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Embedded,
    /// `SKILLRAG_TEST_POSTGRES` (started by `scripts/setup-postgres`), a schema per project.
    Postgres,
}

impl Backend {
    /// The PostgreSQL server to test against; without one, PostgreSQL variants are skipped,
    /// unless `SKILLRAG_TEST_REQUIRE_POSTGRES` is set (`scripts/test` sets it).
    pub fn postgres_server() -> Option<String> {
        match std::env::var("SKILLRAG_TEST_POSTGRES") {
            Ok(url) if !url.is_empty() => Some(url),
            _ if std::env::var_os("SKILLRAG_TEST_REQUIRE_POSTGRES").is_some() => {
                panic!("SKILLRAG_TEST_POSTGRES is not set: run scripts/test (it starts PostgreSQL)")
            }
            _ => {
                eprintln!("skipped: SKILLRAG_TEST_POSTGRES is not set (scripts/setup-postgres starts a server)");
                None
            }
        }
    }
}

/// Generates `mod embedded` and `mod postgres`, each with one `#[test]` per named function
/// `fn name(backend: Backend)`.
#[macro_export]
macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {
        mod embedded {
            $( #[test] fn $name() { super::$name($crate::common::Backend::Embedded) } )*
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    if $crate::common::Backend::postgres_server().is_some() {
                        super::$name($crate::common::Backend::Postgres)
                    }
                }
            )*
        }
    };
}

/// A test project folder; on PostgreSQL it also owns a schema, dropped with the project.
pub struct TestProject {
    tmp: tempfile::TempDir,
    schema: Option<(String, String)>,
}

impl TestProject {
    /// An empty folder whose indexes go to `backend`.
    pub fn new(backend: Backend) -> TestProject {
        let tmp = tempfile::tempdir().unwrap();
        let schema = match backend {
            Backend::Embedded => None,
            Backend::Postgres => {
                let base = Backend::postgres_server().expect("PostgreSQL test server");
                static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
                let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let schema = format!("cli_{}_{n}", std::process::id());
                let sep = if base.contains('?') { '&' } else { '?' };
                let url = format!("{base}{sep}options=-c%20search_path%3D{schema}%2Cpublic");
                // `.env` is read by every command run in the project.
                std::fs::write(tmp.path().join(".env"), format!("SKILLRAG_STORE={url}\n")).unwrap();
                Some((base, schema))
            }
        };
        TestProject { tmp, schema }
    }

    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// Deletes a skill's index behind skillrag's back (as if it was never indexed).
    pub fn remove_index(&self, skill: &str) {
        match self.store_url() {
            None => std::fs::remove_dir_all(self.path().join(".skillrag/index").join(skill)).unwrap(),
            Some(url) => {
                let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                c.execute("DELETE FROM skillrag_skills WHERE skill = $1", &[&skill]).unwrap();
            }
        }
    }

    /// The `store` setting of this project, for `migrate --to` and the like.
    pub fn store_url(&self) -> Option<String> {
        let env = std::fs::read_to_string(self.path().join(".env")).ok()?;
        env.lines().find_map(|l| l.strip_prefix("SKILLRAG_STORE=")).map(str::to_string)
    }
}

impl Drop for TestProject {
    fn drop(&mut self) {
        if let Some((base, schema)) = &self.schema {
            if let Ok(mut c) = postgres::Client::connect(base, postgres::NoTls) {
                let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"));
            }
        }
    }
}

/// `skillrag init` into a temp folder.
pub fn demo() -> TestProject {
    demo_on(Backend::Embedded)
}

/// `skillrag init` into a temp folder whose indexes go to `backend`.
pub fn demo_on(backend: Backend) -> TestProject {
    let project = TestProject::new(backend);
    run(project.path(), &["init"]);
    project
}

/// The example project, indexed.
pub fn demo_indexed() -> TestProject {
    demo_indexed_on(Backend::Embedded)
}

/// The example project, indexed into `backend`.
pub fn demo_indexed_on(backend: Backend) -> TestProject {
    let project = demo_on(backend);
    run(project.path(), &["index"]);
    project
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
