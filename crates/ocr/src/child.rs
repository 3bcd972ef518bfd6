//! Running an OCR tool as a child process, bounded in time and memory.
//!
//! Tesseract and pdftoppm read untrusted images; run as programs, a decoder that crashes or
//! allocates without end takes down one child, reported as that page's error, never the
//! indexer. `std::process` has no timeout, so the child is polled (`try_wait`); the wait is
//! short next to a page's OCR (about a second).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a finished child left behind.
pub(crate) struct Finished {
    pub(crate) success: bool,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: String,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ChildError {
    #[error("cannot run `{program}`: {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("`{program}` took longer than {seconds} s and was stopped")]
    Timeout { program: String, seconds: u64 },
}

/// A command for `program` whose address space is capped at `memory_mb`, so that a
/// decompression bomb fails to allocate instead of swapping the machine. The cap is set by the
/// shell (`ulimit -v`, then `exec`), not by a `pre_exec` hook: a hook makes std fork the whole
/// process, and a forked child holds copies of every open descriptor — the index lock among them —
/// until it execs, which on a large process under load is long enough for the next `index` to
/// find the lock taken. Without a hook std uses `posix_spawn`, which does not copy the process.
pub(crate) fn command(program: &std::path::Path, memory_mb: u64) -> Command {
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", memory_mb.saturating_mul(1024))).arg(program);
    command
}

/// Runs `command` (made by [`command`]) to the end, or kills it after `timeout`; OpenMP is held
/// to one thread, since pages already run in parallel.
pub(crate) fn run(mut command: Command, timeout: Duration) -> Result<Finished, ChildError> {
    let program = command.get_args().nth(2).unwrap_or_else(|| command.get_program()).to_string_lossy().into_owned();
    command.env("OMP_THREAD_LIMIT", "1").stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|source| ChildError::Spawn { program: program.clone(), source })?;
    // Read both pipes on threads so that a chatty child never blocks on a full pipe.
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let stdout = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(out) = out.as_mut() {
            let _ = out.read_to_end(&mut buf);
        }
        buf
    });
    let stderr = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(err) = err.as_mut() {
            let _ = err.read_to_end(&mut buf);
        }
        buf
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break child.wait().ok(),
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&stderr.join().unwrap_or_default()).into_owned();
    match status {
        None => Err(ChildError::Timeout { program, seconds: timeout.as_secs() }),
        // The shell's "not found" (127) or "cannot execute" (126): the program is not there.
        Some(status) if matches!(status.code(), Some(126 | 127)) => {
            Err(ChildError::Spawn { program, source: std::io::Error::other(stderr.trim().to_string()) })
        }
        Some(status) => Ok(Finished { success: status.success(), stdout, stderr }),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn output_timeout_memory_cap_and_missing_programs() {
        let mut echo = command(std::path::Path::new("sh"), 512);
        echo.args(["-c", "echo out; echo err >&2; exit 3"]);
        let done = run(echo, Duration::from_secs(10)).unwrap();
        assert!(!done.success);
        assert_eq!(done.stdout, b"out\n");
        assert_eq!(done.stderr, "err\n");

        let mut limit = command(std::path::Path::new("sh"), 512);
        limit.args(["-c", "ulimit -v"]);
        assert_eq!(String::from_utf8(run(limit, Duration::from_secs(10)).unwrap().stdout).unwrap().trim(), "524288");

        let mut sleep = command(std::path::Path::new("sleep"), 512);
        sleep.arg("5");
        let started = Instant::now();
        assert!(matches!(run(sleep, Duration::from_millis(200)), Err(ChildError::Timeout { .. })));
        assert!(started.elapsed() < Duration::from_secs(3));

        let missing = command(std::path::Path::new("skillrag-no-such-program"), 512);
        match run(missing, Duration::from_secs(5)) {
            Err(ChildError::Spawn { program, .. }) => assert_eq!(program, "skillrag-no-such-program"),
            other => panic!("expected Spawn, got {:?}", other.map(|f| f.stderr)),
        }
    }
}
