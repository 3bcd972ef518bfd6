//! Progress bars for `skillrag index` (indicatif), with plain lines when stderr is not a terminal.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use skillrag_core::Diagnostic;
use skillrag_engine::{Progress, SkillReport};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct Bars {
    multi: MultiProgress,
    /// The skill being indexed.
    current: Mutex<Option<SkillBar>>,
    /// Pages read by OCR, a bar of their own (OCR is slow: pages/s and an ETA from the first
    /// page); without a terminal, a line after the first page and every tenth.
    ocr: Mutex<Option<OcrPages>>,
    tty: bool,
    /// Without a terminal (a pipe, a log): a progress line at most this often.
    every: Duration,
    /// Where lines go without a terminal (stderr; a buffer in tests).
    sink: Box<dyn Fn(&str) + Send + Sync>,
}

/// One skill's progress, counted in files: their number is known before the first one is read,
/// while the chunks are known only once each file is chunked (a bar over chunks would grow
/// under its own ETA). Chunks are shown as a rate.
struct SkillBar {
    skill: String,
    bar: ProgressBar,
    files: usize,
    files_done: usize,
    chunks: usize,
    started: Instant,
    /// When the last plain progress line was printed.
    printed: Instant,
}

impl SkillBar {
    fn chunks_message(&self) -> String {
        let seconds = self.started.elapsed().as_secs_f64().max(1e-3);
        format!("{} chunks, {}", self.chunks, rate(self.chunks as f64 / seconds))
    }

    fn line(&self) -> String {
        format!("{:>20} {}/{} files, {}", self.skill, self.files_done, self.files, self.chunks_message())
    }
}

struct OcrPages {
    bar: ProgressBar,
    done: u64,
    queued: u64,
    started: Instant,
}

impl Bars {
    pub fn new() -> Bars {
        let tty = std::io::stderr().is_terminal();
        Self::with(tty, Duration::from_secs(5), Box::new(|line| eprintln!("{line}")))
    }

    fn with(tty: bool, every: Duration, sink: Box<dyn Fn(&str) + Send + Sync>) -> Bars {
        let target = if tty { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        Bars {
            multi: MultiProgress::with_draw_target(target),
            current: Mutex::new(None),
            ocr: Mutex::new(None),
            tty,
            every,
            sink,
        }
    }

    fn println(&self, line: &str) {
        if self.tty {
            let _ = self.multi.println(line);
        } else {
            (self.sink)(line);
        }
    }

    fn current(&self) -> std::sync::MutexGuard<'_, Option<SkillBar>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Updates the current skill's counts and, without a terminal, prints a line when the last
    /// one is `every` old.
    fn update(&self, f: impl FnOnce(&mut SkillBar)) {
        let mut current = self.current();
        let Some(state) = current.as_mut() else { return };
        f(state);
        state.bar.set_message(state.chunks_message());
        if !self.tty && state.printed.elapsed() >= self.every {
            state.printed = Instant::now();
            self.println(&state.line());
        }
    }

    fn bar(skill: &str, len: usize, what: &str) -> ProgressBar {
        let style = ProgressStyle::with_template(&format!(
            "{{prefix:>20.bold}} {what:<9} [{{bar:32.cyan/blue}}] {{pos}}/{{len}} {{rate}} eta {{eta}} {{msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        // indicatif's own `{per_sec}` prints `7.1245/s`.
        .with_key("rate", |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(&rate(state.per_sec()));
        })
        .progress_chars("=> ");
        ProgressBar::new(len as u64).with_style(style).with_prefix(skill.to_string())
    }
}

impl Progress for Bars {
    fn skill_started(&self, skill: &str, files: usize) {
        let bar = self.multi.add(Self::bar(skill, files, "files"));
        let now = Instant::now();
        let state =
            SkillBar { skill: skill.to_string(), bar, files, files_done: 0, chunks: 0, started: now, printed: now };
        if !self.tty {
            // The first progress line, its total known before any file is read (`index` and
            // `migrate` alike).
            self.println(&format!("{skill:>20} 0/{files} files"));
        }
        if let Some(old) = self.current().replace(state) {
            old.bar.finish_and_clear();
            self.multi.remove(&old.bar);
        }
    }

    fn file_done(&self, _skill: &str, _source: &str) {
        self.update(|state| {
            state.files_done += 1;
            state.bar.inc(1);
        });
    }

    fn embedded(&self, _skill: &str, chunks: usize) {
        self.update(|state| state.chunks += chunks);
    }

    fn ocr_queued(&self, skill: &str, pages: usize) {
        let mut ocr = self.ocr.lock().unwrap_or_else(|e| e.into_inner());
        let state = ocr.get_or_insert_with(|| OcrPages {
            bar: self.multi.add(Self::bar(skill, 0, "OCR pages")),
            done: 0,
            queued: 0,
            started: Instant::now(),
        });
        state.queued += pages as u64;
        state.bar.inc_length(pages as u64);
    }

    fn ocr_done(&self, skill: &str) {
        let mut ocr = self.ocr.lock().unwrap_or_else(|e| e.into_inner());
        let Some(state) = ocr.as_mut() else { return };
        state.done += 1;
        state.bar.inc(1);
        if !self.tty && (state.done == 1 || state.done % 10 == 0 || state.done == state.queued) {
            let seconds = state.started.elapsed().as_secs_f64().max(1e-3);
            let rate = state.done as f64 / seconds;
            let eta = (state.queued - state.done) as f64 / rate;
            self.println(&format!(
                "{skill}: OCR {}/{} pages, {rate:.2} pages/s, eta {eta:.0} s",
                state.done, state.queued
            ));
        }
    }

    fn skill_finished(&self, r: &SkillReport) {
        if let Some(state) = self.ocr.lock().unwrap_or_else(|e| e.into_inner()).take() {
            state.bar.finish_and_clear();
            self.multi.remove(&state.bar);
        }
        if let Some(state) = self.current().take() {
            state.bar.finish_and_clear();
            self.multi.remove(&state.bar);
        }
        for line in summary(r) {
            self.println(&line);
        }
    }

    fn diagnostic(&self, d: &Diagnostic) {
        self.println(&d.to_string());
    }

    fn note(&self, message: &str) {
        self.println(&format!("note: {message}"));
    }
}

/// A rate with as many decimals as it needs: `7.1/s`, `0.25/s`, `3700/s`.
fn rate(per_sec: f64) -> String {
    match per_sec {
        r if !r.is_finite() => "-/s".into(),
        r if r >= 100.0 => format!("{r:.0}/s"),
        r if r >= 10.0 => format!("{r:.1}/s"),
        r => format!("{r:.2}/s"),
    }
}

/// A skill's result in lines that fit 120 columns: the counts, then what changed.
fn summary(r: &SkillReport) -> Vec<String> {
    let mut lines = vec![format!("{:>20} {} files, {} chunks, {:.1} s", r.skill, r.files, r.chunks, r.seconds)];
    let indent = "    ";
    match r.generation {
        // The reason was printed as a diagnostic just before.
        None if r.error.is_some() => lines[0].push_str(" — not indexed; the previous index is still serving"),
        None => lines[0].push_str(" — up to date"),
        Some(g) => {
            lines[0].push_str(&format!(" — generation {g}"));
            lines.push(format!(
                "{indent}files: {} changed, {} unchanged, {} deleted; {} new chunks ({} embedded, {} cached)",
                r.files_changed, r.files_unchanged, r.files_deleted, r.chunks_new, r.embedded, r.cache_hits
            ));
        }
    }
    if r.vectorless > 0 {
        lines.push(format!(
            "{indent}{} chunks without a vector (the embedding model cannot see them: BM25 only)",
            r.vectorless
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bars without a terminal whose lines are kept; a progress line at every event.
    fn piped() -> (Bars, std::sync::Arc<Mutex<Vec<String>>>) {
        let lines = std::sync::Arc::new(Mutex::new(Vec::new()));
        let kept = lines.clone();
        let sink = Box::new(move |line: &str| kept.lock().unwrap().push(line.to_string()));
        (Bars::with(false, Duration::ZERO, sink), lines)
    }

    fn report(skill: &str) -> SkillReport {
        SkillReport {
            skill: skill.into(),
            files: 2,
            files_changed: 2,
            files_unchanged: 0,
            files_deleted: 0,
            files_failed: 0,
            chunks: 30,
            chunks_new: 30,
            embedded: 30,
            cache_hits: 0,
            vectorless: 0,
            rebuilt: None,
            repaired: vec![],
            generation: Some(1),
            error: None,
            seconds: 1.0,
        }
    }

    /// Into a pipe: a line when a skill starts, with its total, progress lines, and the summary.
    #[test]
    fn piped_output_has_a_line_per_skill_with_its_total() {
        let (bars, lines) = piped();
        for skill in ["labor-law", "router-faq"] {
            bars.skill_started(skill, 2);
            bars.embed_queued(skill, 20);
            bars.embedded(skill, 20);
            bars.file_done(skill, "a.md");
            bars.embed_queued(skill, 10);
            bars.embedded(skill, 10);
            bars.file_done(skill, "b.md");
            bars.skill_finished(&report(skill));
        }
        let lines = lines.lock().unwrap();
        let starts: Vec<&String> = lines.iter().filter(|l| l.ends_with(" 0/2 files")).collect();
        assert_eq!(starts.len(), 2, "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("1/2 files, 20 chunks")), "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("2/2 files, 30 chunks")), "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("router-faq 2 files, 30 chunks")), "{lines:#?}");
    }

    /// The bar counts files, whose number is known up front: chunks queued as files are read
    /// do not move its end.
    #[test]
    fn the_bar_total_is_known_up_front() {
        let bars = Bars::with(true, Duration::ZERO, Box::new(|_| {}));
        bars.multi.set_draw_target(ProgressDrawTarget::hidden());
        bars.skill_started("labor-law", 82);
        let length = || bars.current().as_ref().and_then(|s| s.bar.length());
        assert_eq!(length(), Some(82));
        for _ in 0..35 {
            bars.embed_queued("labor-law", 100);
            bars.embedded("labor-law", 50);
            bars.file_done("labor-law", "a.md");
        }
        assert_eq!(length(), Some(82));
        assert_eq!(bars.current().as_ref().map(|s| s.bar.position()), Some(35));
        bars.skill_finished(&report("labor-law"));
        assert!(bars.current().is_none(), "no bar is left behind");
    }

    #[test]
    fn rates_are_rounded() {
        assert_eq!(rate(7.1245), "7.12/s");
        assert_eq!(rate(12.3456), "12.3/s");
        assert_eq!(rate(3712.9), "3713/s");
        assert_eq!(rate(f64::NAN), "-/s");
    }

    #[test]
    fn summaries_fit_120_columns() {
        let r = SkillReport {
            skill: "a-rather-long-skill-name-here".into(),
            files: 123_456,
            files_changed: 123_456,
            files_unchanged: 123_456,
            files_deleted: 123_456,
            files_failed: 0,
            chunks: 12_345_678,
            chunks_new: 12_345_678,
            embedded: 12_345_678,
            cache_hits: 12_345_678,
            vectorless: 12_345_678,
            rebuilt: None,
            repaired: vec![],
            generation: Some(123_456),
            error: None,
            seconds: 12345.6,
        };
        let lines = summary(&r);
        assert_eq!(lines.len(), 3);
        for line in lines {
            assert!(line.chars().count() <= 120, "{} columns: {line}", line.chars().count());
        }
    }
}
