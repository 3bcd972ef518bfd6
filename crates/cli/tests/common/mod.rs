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

/// The peak resident memory of a live process, in MiB, from `/proc/PID/status` (`VmHWM`): the
/// hostile tests bound memory with it, since a bomb that is refused late still costs its peak.
pub fn peak_rss_mib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// Runs `cmd` to its end and fails the test if it runs past `time` or its resident memory ever
/// passes `memory_mib` (sampled every 20 ms, so a short spike can be missed, never invented).
/// Returns the output and the peak seen.
pub fn run_bounded(mut cmd: Command, time: std::time::Duration, memory_mib: u64) -> (Output, u64) {
    use std::process::Stdio;
    let started = std::time::Instant::now();
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    // Drain the pipes while waiting, so a chatty child cannot block on a full pipe.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut buf);
        buf
    });
    let mut peak = 0;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        peak = peak.max(peak_rss_mib(child.id()).unwrap_or(0));
        if peak > memory_mib || started.elapsed() > time {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} passed its bound: {:?} (limit {time:?}), peak {peak} MiB (limit {memory_mib} MiB)",
                started.elapsed()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let output =
        Output { status, stdout: out_reader.join().expect("stdout"), stderr: err_reader.join().expect("stderr") };
    (output, peak)
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

/// `SKILLRAG_TEST_LLM_BASE_URL` and model (started by `scripts/setup-llm`); `None` with a notice
/// when it is not set, unless `SKILLRAG_TEST_REQUIRE_LLM=1` makes that a failure.
pub fn llm_server() -> Option<(String, String)> {
    match std::env::var("SKILLRAG_TEST_LLM_BASE_URL") {
        Ok(url) if !url.is_empty() => {
            Some((url, std::env::var("SKILLRAG_TEST_LLM_MODEL").unwrap_or_else(|_| "qwen".into())))
        }
        _ => {
            assert!(
                std::env::var("SKILLRAG_TEST_REQUIRE_LLM").as_deref() != Ok("1"),
                "SKILLRAG_TEST_LLM_BASE_URL is not set: run `eval \"$(scripts/setup-llm)\"`"
            );
            eprintln!(
                "skipped: no LLM server (SKILLRAG_TEST_LLM_BASE_URL); `eval \"$(scripts/setup-llm)\"` starts one"
            );
            None
        }
    }
}

/// The reader's API root, `SKILLRAG_TEST_READER` (Qwen2.5-Coder-1.5B-Instruct served by
/// `scripts/setup-reader`); `None` with a notice when it is not set, unless
/// `SKILLRAG_TEST_REQUIRE_LLM=1` makes that a failure.
pub fn reader_server() -> Option<String> {
    match std::env::var("SKILLRAG_TEST_READER") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("SKILLRAG_TEST_REQUIRE_LLM").as_deref() != Ok("1"),
                "SKILLRAG_TEST_READER is not set: scripts/test sets it from scripts/setup-reader"
            );
            eprintln!("skipped: no reader (SKILLRAG_TEST_READER); scripts/setup-reader starts one");
            None
        }
    }
}

/// What keeps a CPU-only LLM test quick: short answers, and a context of 600 tokens instead of
/// 1200. On 2 cores the test server reads a prompt at about 45 tokens/s, so the prompt, not the
/// answer, took most of each call (bench/results/ci-time.md).
pub const LLM_TEST_SETTINGS: [(&str, &str); 2] =
    [("SKILLRAG_LLM_MAX_TOKENS", "120"), ("SKILLRAG_LLM_CONTEXT_TOKENS", "600")];

/// The LLM settings for `cmd`: the server, the model and [`LLM_TEST_SETTINGS`].
pub fn with_llm(mut cmd: Command, url: &str, model: &str) -> Command {
    cmd.env("SKILLRAG_LLM_BASE_URL", url).env("SKILLRAG_LLM_MODEL", model).envs(LLM_TEST_SETTINGS);
    cmd
}

/// What [`FaultProxy`] does to every request for the LLM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Forwards to the real server and cuts both connections after this many SSE events of its
    /// answer: a stream that breaks off midway.
    CutAfterEvents(usize),
    /// Forwards the real server's answer but cuts the connections before the event that
    /// finishes it: all its text arrived, the completion never did.
    CutBeforeFinish,
    /// Answers this HTTP status itself (429 with `Retry-After: 0`).
    Status(u16),
    /// Answers 200 with a JSON body that does not parse.
    MalformedJson,
    /// Answers an SSE stream whose event is not JSON.
    MalformedEvent,
    /// Reads the request and never answers.
    Stall,
}

/// A fault-injecting proxy on loopback in front of an OpenAI-compatible server, for the faults
/// a real server won't produce on demand. Its threads live as long as the test process.
pub struct FaultProxy {
    /// `http://127.0.0.1:PORT/v1`, for `SKILLRAG_LLM_BASE_URL`.
    pub base_url: String,
    requests: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl FaultProxy {
    /// `upstream` is the real server's base URL (`http://host:port/v1`); only
    /// [`Fault::CutAfterEvents`] talks to it.
    pub fn start(fault: Fault, upstream: &str) -> FaultProxy {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let upstream = upstream.trim_start_matches("http://").split('/').next().unwrap_or_default().to_string();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = std::sync::Arc::new(AtomicUsize::new(0));
        let counter = requests.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                counter.fetch_add(1, Ordering::SeqCst);
                let upstream = upstream.clone();
                std::thread::spawn(move || {
                    // A failed exchange is the client's business (it sees a broken connection).
                    let _ = proxy_one(client, fault, &upstream);
                });
            }
        });
        FaultProxy { base_url, requests }
    }

    /// Requests (connections) received so far.
    pub fn requests(&self) -> usize {
        self.requests.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Reads one HTTP request: its head (without the blank line) and its body.
fn read_request(stream: &mut std::net::TcpStream) -> std::io::Result<(String, Vec<u8>)> {
    use std::io::Read;
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Ok((head, body))
}

fn proxy_one(mut client: std::net::TcpStream, fault: Fault, upstream: &str) -> std::io::Result<()> {
    use std::io::{Read, Write};
    let (head, body) = read_request(&mut client)?;
    let respond = |client: &mut std::net::TcpStream, status: &str, headers: &str, body: &str| {
        write!(
            client,
            "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    match fault {
        Fault::Status(429) => respond(
            &mut client,
            "429 Too Many Requests",
            "Content-Type: application/json\r\nRetry-After: 0\r\n",
            r#"{"error":{"message":"slow down"}}"#,
        ),
        Fault::Status(code) => respond(
            &mut client,
            &format!("{code} Injected Fault"),
            "Content-Type: application/json\r\n",
            r#"{"error":{"message":"injected fault"}}"#,
        ),
        Fault::MalformedJson => {
            respond(&mut client, "200 OK", "Content-Type: application/json\r\n", r#"{"choices": [{"message": "#)
        }
        Fault::MalformedEvent => {
            respond(&mut client, "200 OK", "Content-Type: text/event-stream\r\n", "data: {\"choices\": [oops\n\n")
        }
        Fault::Stall => {
            std::thread::sleep(std::time::Duration::from_secs(120));
            Ok(())
        }
        Fault::CutAfterEvents(_) | Fault::CutBeforeFinish => {
            let mut server = std::net::TcpStream::connect(upstream)?;
            // One exchange per connection, so the server's end of it is the end of the answer.
            let mut request: String = head
                .lines()
                .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
                .map(|l| format!("{l}\r\n"))
                .collect();
            request.push_str("Connection: close\r\n\r\n");
            server.write_all(request.as_bytes())?;
            server.write_all(&body)?;
            let (mut seen, mut sent) = (Vec::new(), 0);
            let mut buf = [0u8; 4096];
            loop {
                let n = server.read(&mut buf)?;
                if n == 0 {
                    client.write_all(&seen[sent..])?;
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
                let starts: Vec<usize> =
                    seen.windows(5).enumerate().filter(|(_, w)| *w == b"data:").map(|(i, _)| i).collect();
                // Complete events are the ones another has followed; the last may still be arriving.
                let cut = starts.windows(2).enumerate().find_map(|(i, w)| {
                    let finishes = seen[w[0]..w[1]].windows(17).any(|x| x == b"\"finish_reason\":\"");
                    let cut = match fault {
                        Fault::CutAfterEvents(events) => i == events,
                        _ => finishes,
                    };
                    cut.then_some(w[0])
                });
                if let Some(cut) = cut.filter(|c| *c >= sent) {
                    client.write_all(&seen[sent..cut])?;
                    break;
                }
                let ready = starts.last().copied().unwrap_or(0).max(sent);
                client.write_all(&seen[sent..ready])?;
                sent = ready;
            }
            client.flush()?;
            let _ = client.shutdown(std::net::Shutdown::Both);
            let _ = server.shutdown(std::net::Shutdown::Both);
            Ok(())
        }
    }
}

/// `skillrag` without an embedding model: for tests about documents, not vectors.
pub fn lexical(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = skillrag(dir, args);
    cmd.env("SKILLRAG_EMBED_MODEL", "none");
    cmd
}

/// [`lexical`] with `--json`, which must succeed.
pub fn lexical_json(dir: &Path, args: &[&str]) -> Value {
    let out = lexical(dir, &[args, &["--json"]].concat()).output().expect("run skillrag");
    assert!(out.status.success(), "skillrag {args:?} failed: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: invalid JSON ({e})"))
}

/// The message of the diagnostic an `index --json` report gives for the file ending in `file`.
pub fn diagnostic_for(report: &Value, file: &str) -> String {
    let diagnostics = report["diagnostics"].as_array().cloned().unwrap_or_default();
    diagnostics
        .iter()
        .find(|d| d["path"].as_str().is_some_and(|f| f.ends_with(file)))
        .and_then(|d| d["message"].as_str())
        .unwrap_or_else(|| panic!("no diagnostic for {file}: {diagnostics:?}"))
        .to_string()
}

/// Whether this machine reads scans: Tesseract with Simplified Chinese and poppler's pdftoppm
/// (`scripts/setup-ocr`). Without them an OCR test is skipped with a note, unless
/// `SKILLRAG_TEST_OCR` is set (as `scripts/test` does): then it fails.
pub fn ocr_available() -> bool {
    let languages = Command::new("tesseract").arg("--list-langs").output();
    let tesseract = languages.as_ref().is_ok_and(|o| {
        let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        o.status.success() && text.lines().any(|l| l.trim() == "chi_sim")
    });
    let found = tesseract && Command::new("pdftoppm").arg("-v").output().is_ok();
    if !found {
        let why = "Tesseract with chi_sim, or pdftoppm, is not installed (scripts/setup-ocr)";
        assert!(std::env::var_os("SKILLRAG_TEST_OCR").is_none(), "SKILLRAG_TEST_OCR is set but {why}");
        eprintln!("skipped: {why}");
    }
    found
}
pub mod server;

/// An answer without what differs between two runs of the same question: its timings and its
/// own `answer_id`.
pub fn comparable(mut answer: Value) -> Value {
    if let Some(fields) = answer.as_object_mut() {
        fields.remove("timings_ms");
        fields.remove("answer_id");
    }
    answer
}

/// The right answer of every question `scripts/quickstart` searches or asks (a text the output
/// must show). Its `with_reader` lines are right only with the reader.
pub const QUICKSTART_RIGHT: &[(&str, &str)] = &[
    ("劳动合同期限两年，试用期最长可以约定多久？", "试用期不得超过二个月"),
    ("How long do I hold the reset button?", "10 seconds"),
    ("How do I factory reset the router?", "10 seconds"),
    ("红茶用多少度的水冲泡？", "90–95°C"),
    ("绿茶用多少度的水泡？", "80–85°C"),
    ("Who won the football world cup in 1998?", "outside the scope"),
    ("How long is the warranty?", "2 years"),
    ("How do I change the Wi-Fi password?", "SSID"),
    ("Does a factory reset void the warranty?", "never void the warranty"),
];

/// The `search` and `ask` lines of `scripts/quickstart` that start with `prefix` (`"run "`,
/// `"with_reader "`): each line, its arguments, and its right answer from [`QUICKSTART_RIGHT`]
/// (a line without one panics: add it there).
pub fn quickstart_questions(prefix: &str) -> Vec<(String, Vec<String>, &'static str)> {
    let script = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/quickstart"))
        .expect("scripts/quickstart");
    let mut out = Vec::new();
    for line in script.lines().map(str::trim) {
        let Some(args) = line.strip_prefix(prefix).map(double_quoted_words) else { continue };
        if !matches!(args.first().map(String::as_str), Some("search" | "ask")) {
            continue;
        }
        let right = QUICKSTART_RIGHT.iter().find(|(q, _)| *q == args[1]).map(|(_, a)| *a);
        let right = right.unwrap_or_else(|| panic!("{line}: add the right answer to QUICKSTART_RIGHT"));
        out.push((line.to_string(), args, right));
    }
    out
}

/// The words of a shell line whose only quoting is double quotes (the quick start's `run` lines).
fn double_quoted_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}
