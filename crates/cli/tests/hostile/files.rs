//! Hostile inputs: files (issue 24, items 5, 12, 13, 16). Symlinks out of the project, pipes
//! and sockets, deeply nested HTML and YAML, and text files whose decoding used to be called
//! "binary". Each case is indexed, linted and listed by the real binary under a time bound.

use crate::common;
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Generous: the demo indexes in a few seconds; a hang is what is being tested for.
const BOUND: Duration = Duration::from_secs(60);

/// Runs `skillrag -C dir ARGS`, killing it after [`BOUND`] (a blocked command fails the test
/// instead of hanging it). Output goes to files so that a full pipe cannot block the child.
fn bounded(dir: &Path, args: &[&str]) -> (Output, Duration) {
    let logs = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (logs.path().join("stdout"), logs.path().join("stderr"));
    let mut cmd: Command = common::skillrag(dir, args);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("spawn skillrag");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "skillrag {args:?} still running after {BOUND:?}; killed\n{}",
                fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = Output { status, stdout: fs::read(&out_path).unwrap(), stderr: fs::read(&err_path).unwrap() };
    (output, start.elapsed())
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The line of `text` that names `file` and says `reason`.
fn assert_reported(text: &str, file: &str, reason: &str) {
    assert!(
        text.lines().any(|l| l.contains(file) && l.contains(reason)),
        "no line names {file:?} with {reason:?}:\n{text}"
    );
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

fn write_skill(project: &Path, id: &str, text: &str) {
    let dir = project.join("skills").join(id);
    fs::create_dir_all(dir.join("knowledge")).unwrap();
    fs::write(dir.join("SKILL.md"), text).unwrap();
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_project_are_skipped_with_a_warning() {
    use std::os::unix::fs::symlink;
    let project = common::demo();
    let root = project.path();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("passwd"), "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin\n").unwrap();
    fs::create_dir_all(outside.path().join("ssh/docs")).unwrap();
    fs::write(outside.path().join("ssh/ssh_config"), "Host zzqx-outside-host\n  ForwardAgent yes\n").unwrap();
    fs::write(outside.path().join("ssh/docs/readme.md"), "# Outside manual\n\nzzqx outside manual text.\n").unwrap();
    fs::create_dir_all(root.join(".skillrag")).unwrap();

    let k = root.join("skills/router-faq/knowledge");
    symlink(outside.path().join("passwd"), k.join("passwd.md")).unwrap();
    symlink(outside.path().join("ssh"), k.join("ssh")).unwrap();
    symlink(root.join("skillrag.toml"), k.join("config.txt")).unwrap();
    symlink(root.join(".skillrag"), k.join("state")).unwrap();
    // Inside: followed.
    symlink(k.join("setup.md"), k.join("setup-alias.md")).unwrap();
    // A whole folder linked out (`references -> /usr/share/doc`).
    symlink(outside.path().join("ssh"), root.join("skills/labor-law/references")).unwrap();
    // A skill whose SKILL.md is someone else's file.
    fs::create_dir_all(root.join("skills/passwd")).unwrap();
    symlink(outside.path().join("passwd"), root.join("skills/passwd/SKILL.md")).unwrap();

    let (index, _) = bounded(root, &["index"]);
    assert!(index.status.success(), "{}", common::stderr(&index));
    let err = common::stderr(&index);
    assert_reported(&err, "knowledge/passwd.md", "symlink points outside the project");
    assert_reported(&err, &outside.path().canonicalize().unwrap().join("passwd").display().to_string(), "outside");
    assert_reported(&err, "knowledge/ssh", "outside the project");
    assert_reported(&err, "labor-law/references", "outside the project");
    assert_reported(&err, "knowledge/config.txt", "configuration file");
    assert_reported(&err, "knowledge/state", "hidden");
    assert_reported(&err, "passwd/SKILL.md", "outside the project");

    for query in ["root:x:0", "zzqx-outside-host", "zzqx outside manual"] {
        let (search, _) = bounded(root, &["search", query]);
        let text = stdout(&search);
        assert!(!text.contains("root:x:0") && !text.contains("zzqx"), "{query}: served from outside:\n{text}");
    }
    // The rest still indexes, the link inside the project included.
    let (search, _) = bounded(root, &["search", "factory reset"]);
    assert!(stdout(&search).contains("router-faq/"), "{}", stdout(&search));
    let (lint, _) = bounded(root, &["lint"]);
    assert_reported(&(stdout(&lint) + &common::stderr(&lint)), "knowledge/passwd.md", "outside the project");
    let (skills, _) = bounded(root, &["skills"]);
    let listed = stdout(&skills);
    assert!(listed.contains("router-faq") && !listed.contains("root:x"), "{listed}");

    // A folder outside that the project allows (`[index] allowed_roots`) is followed; the rest
    // stays refused.
    let config = root.join("skillrag.toml");
    let allowed = format!("[index]\nallowed_roots = [{:?}]\n", outside.path().join("ssh").display().to_string());
    fs::write(&config, fs::read_to_string(&config).unwrap().replacen("[index]\n", &allowed, 1)).unwrap();
    let (index, _) = bounded(root, &["index"]);
    let err = common::stderr(&index);
    assert_reported(&err, "knowledge/passwd.md", "symlink points outside the project");
    assert!(!err.lines().any(|l| l.contains("knowledge/ssh") && l.contains("outside")), "{err}");
    let (search, _) = bounded(root, &["search", "zzqx outside manual", "--skill", "router-faq"]);
    assert!(stdout(&search).contains("zzqx outside manual"), "{}", stdout(&search));
}

#[cfg(unix)]
#[test]
fn pipes_and_sockets_do_not_block_any_command() {
    let project = common::demo();
    let root = project.path();
    let k = root.join("skills/router-faq/knowledge");
    mkfifo(&k.join("pipe.md"));
    let _socket = std::os::unix::net::UnixListener::bind(k.join("socket.md")).unwrap();
    fs::create_dir_all(root.join("skills/piped")).unwrap();
    mkfifo(&root.join("skills/piped/SKILL.md"));

    for args in [&["index"][..], &["lint"], &["skills"]] {
        let (out, took) = bounded(root, args);
        let all = stdout(&out) + &common::stderr(&out);
        assert_reported(&all, "piped/SKILL.md", "named pipe (FIFO), not a regular file");
        if args[0] != "skills" {
            assert_reported(&all, "knowledge/pipe.md", "named pipe (FIFO), not a regular file");
            assert_reported(&all, "knowledge/socket.md", "socket, not a regular file");
        }
        eprintln!("skillrag {args:?} with pipes: {took:?}");
    }
    let (search, _) = bounded(root, &["search", "factory reset"]);
    assert!(stdout(&search).contains("router-faq/"), "{}", stdout(&search));
}

#[test]
fn deep_html_and_yaml_are_refused_quickly() {
    let project = common::demo();
    let root = project.path();
    let k = root.join("skills/router-faq/knowledge");
    fs::write(k.join("deep.html"), format!("<p>x</p>\n{}deep{}", "<div>".repeat(100_000), "</div>".repeat(100_000)))
        .unwrap();
    let yaml =
        format!("---\nname: deep-yaml\ndescription: d\nx: {}{}\n---\n", "[".repeat(100_000), "]".repeat(100_000));
    write_skill(root, "deep-yaml", &yaml);
    let block: String = (0..200).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect();
    write_skill(root, "deep-block", &format!("---\nname: deep-block\ndescription: d\n{block}---\n"));

    let (index, took) = bounded(root, &["index"]);
    eprintln!("index with 100 000 nested <div> and deep YAML: {took:?}");
    let err = common::stderr(&index);
    assert_reported(&err, "knowledge/deep.html:2", "HTML nests deeper than 1000 levels");
    assert_reported(&err, "deep-yaml/SKILL.md", "above the 64 KB limit");
    assert_reported(&err, "deep-block/SKILL.md:36", "nests deeper than 32 levels");
    for args in [&["skills"][..], &["lint"]] {
        let (out, took) = bounded(root, args);
        eprintln!("skillrag {args:?} with deep YAML: {took:?}");
        assert!(took < Duration::from_secs(20), "{args:?} took {took:?}");
        assert_reported(&(stdout(&out) + &common::stderr(&out)), "deep-block/SKILL.md:36", "nests deeper");
    }
    let (search, _) = bounded(root, &["search", "factory reset"]);
    assert!(stdout(&search).contains("router-faq/"), "{}", stdout(&search));
}

#[test]
fn damaged_text_is_decoded_and_only_real_binaries_are_called_binary() {
    let project = common::demo();
    let root = project.path();
    let k = root.join("skills/router-faq/knowledge");
    let zh = "固件升级说明：升级过程中请勿断电，完成后路由器会自动重启，指示灯变为蓝色。";
    let heading = "# 坏字节 zzqxbadbyte\n\n";
    let mut bad = format!("{heading}{zh}\n").into_bytes();
    // After the first Chinese character: the marker word stays whole, so BM25 can find it (the
    // file's Chinese text has no vector: MiniLM cannot see it).
    bad.insert(heading.len() + 3, 0xFF);
    fs::write(k.join("bad-byte.md"), &bad).unwrap();
    // `zh` in GBK, as a Chinese archive pasted into a UTF-8 file would hold it.
    let gbk: &[u8] = b"\xb9\xcc\xbc\xfe\xc9\xfd\xbc\xb6\xcb\xb5\xc3\xf7\xa3\xba\xc9\xfd\xbc\xb6\xb9\xfd\xb3\xcc\xd6\xd0\xc7\xeb\xce\xf0\xb6\xcf\xb5\xe7\xa3\xac\xcd\xea\xb3\xc9\xba\xf3\xc2\xb7\xd3\xc9\xc6\xf7\xbb\xe1\xd7\xd4\xb6\xaf\xd6\xd8\xc6\xf4\xa3\xac\xd6\xb8\xca\xbe\xb5\xc6\xb1\xe4\xce\xaa\xc0\xb6\xc9\xab\xa1\xa3";
    let mixed = [format!("# 混合 zzqxmixed\n\n{zh}\n").as_bytes(), gbk, b"\n"].concat();
    fs::write(k.join("mixed.md"), mixed).unwrap();
    let utf16: Vec<u8> = format!("zzqxutf16 说明\n{zh}\n").encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
    fs::write(k.join("utf16.txt"), utf16).unwrap();
    fs::write(k.join("zeros.pdf"), vec![0u8; 16 * 1024]).unwrap();
    fs::write(k.join("zeros.md"), vec![0u8; 1024]).unwrap();
    let png = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, b'I', b'H', b'D', b'R', 0, 0, 1, 0];
    fs::write(k.join("image.txt"), png.repeat(50)).unwrap();

    let (index, _) = bounded(root, &["index"]);
    assert!(index.status.success(), "{}", common::stderr(&index));
    let err = common::stderr(&index);
    assert_reported(&err, "knowledge/zeros.pdf", "file is all zero bytes");
    assert_reported(&err, "knowledge/zeros.md", "file is all zero bytes");
    assert_reported(&err, "knowledge/image.txt", "binary file (contains NUL bytes)");
    for file in ["bad-byte.md", "mixed.md", "utf16.txt"] {
        assert!(!err.lines().any(|l| l.contains(file) && l.contains("binary")), "{file} called binary:\n{err}");
    }
    assert!(!err.contains("a scan?"), "{err}");
    for (query, file) in [("zzqxbadbyte", "bad-byte.md"), ("zzqxmixed", "mixed.md"), ("zzqxutf16", "utf16.txt")] {
        let (search, _) = bounded(root, &["search", query]);
        assert!(stdout(&search).contains(file), "{query}: {file} not indexed:\n{}", stdout(&search));
    }
}
