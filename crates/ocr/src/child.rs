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

/// Runs `command` to the end, or kills it after `timeout`. The child's address space is capped
/// at `memory_mb` (RLIMIT_AS), so a decompression bomb fails to allocate instead of swapping the
/// machine; and OpenMP is held to one thread, since pages already run in parallel.
pub(crate) fn run(mut command: Command, timeout: Duration, memory_mb: u64) -> Result<Finished, ChildError> {
    let program = command.get_program().to_string_lossy().into_owned();
    command.env("OMP_THREAD_LIMIT", "1").stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let bytes = memory_mb.saturating_mul(1 << 20) as libc::rlim_t;
        // SAFETY: only setrlimit, which is async-signal-safe, runs between fork and exec.
        unsafe {
            command.pre_exec(move || {
                let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
                if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
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
        Some(status) => Ok(Finished { success: status.success(), stdout, stderr }),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn output_timeout_and_missing_programs() {
        let mut echo = Command::new("sh");
        echo.args(["-c", "echo out; echo err >&2; exit 3"]);
        let done = run(echo, Duration::from_secs(10), 512).unwrap();
        assert!(!done.success);
        assert_eq!(done.stdout, b"out\n");
        assert_eq!(done.stderr, "err\n");

        let mut sleep = Command::new("sleep");
        sleep.arg("5");
        let started = Instant::now();
        assert!(matches!(run(sleep, Duration::from_millis(200), 512), Err(ChildError::Timeout { .. })));
        assert!(started.elapsed() < Duration::from_secs(3));

        let missing = Command::new("skillrag-no-such-program");
        assert!(matches!(run(missing, Duration::from_secs(1), 512), Err(ChildError::Spawn { .. })));
    }
}
