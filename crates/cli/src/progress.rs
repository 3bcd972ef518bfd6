//! Progress bars for `skillrag index` (indicatif), with plain lines when stderr is not a terminal.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use skillrag_core::Diagnostic;
use skillrag_engine::{Progress, SkillReport};
use std::io::IsTerminal;
use std::sync::Mutex;

pub struct Bars {
    multi: MultiProgress,
    bar: Mutex<Option<ProgressBar>>,
    /// Files of the current skill: done, in all.
    files: Mutex<(usize, usize)>,
    /// Whether the bar counts chunks (from the first chunk queued) rather than files.
    chunks: std::sync::atomic::AtomicBool,
    /// Pages read by OCR, a bar of their own (OCR is slow: pages/s and an ETA from the first
    /// page); without a terminal, a line after the first page and every tenth.
    ocr: Mutex<Option<OcrPages>>,
    tty: bool,
}

struct OcrPages {
    bar: ProgressBar,
    done: u64,
    queued: u64,
    started: std::time::Instant,
}

impl Bars {
    pub fn new() -> Bars {
        let tty = std::io::stderr().is_terminal();
        let target = if tty { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        Bars {
            multi: MultiProgress::with_draw_target(target),
            bar: Mutex::new(None),
            files: Mutex::new((0, 0)),
            chunks: std::sync::atomic::AtomicBool::new(false),
            ocr: Mutex::new(None),
            tty,
        }
    }

    fn println(&self, line: &str) {
        if self.tty {
            let _ = self.multi.println(line);
        } else {
            eprintln!("{line}");
        }
    }

    fn replace_bar(&self, bar: Option<ProgressBar>) {
        let mut slot = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = slot.take() {
            old.finish_and_clear();
            self.multi.remove(&old);
        }
        *slot = bar.map(|b| self.multi.add(b));
    }

    fn inc(&self, n: usize) {
        self.with_bar(|bar| bar.inc(n as u64));
    }

    fn with_bar(&self, f: impl FnOnce(&ProgressBar)) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            f(bar);
        }
    }

    fn files_message(&self) -> String {
        let (done, all) = *self.files.lock().unwrap_or_else(|e| e.into_inner());
        format!("{done}/{all} files")
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
        *self.files.lock().unwrap_or_else(|e| e.into_inner()) = (0, files);
        self.chunks.store(false, std::sync::atomic::Ordering::Relaxed);
        self.replace_bar(Some(Self::bar(skill, files, "files")));
    }

    fn file_done(&self, _skill: &str, _source: &str) {
        self.files.lock().unwrap_or_else(|e| e.into_inner()).0 += 1;
        if self.chunks.load(std::sync::atomic::Ordering::Relaxed) {
            let message = self.files_message();
            self.with_bar(|bar| bar.set_message(message));
        } else {
            self.inc(1);
        }
    }

    fn embed_queued(&self, skill: &str, chunks: usize) {
        // From the first chunk on, the bar counts chunks (rate and ETA of the work that takes the
        // time); its length grows while files are still being loaded.
        if !self.chunks.swap(true, std::sync::atomic::Ordering::Relaxed) {
            let bar = Self::bar(skill, 0, "chunks");
            bar.set_message(self.files_message());
            self.replace_bar(Some(bar));
        }
        self.with_bar(|bar| bar.inc_length(chunks as u64));
    }

    fn embedded(&self, _skill: &str, chunks: usize) {
        self.inc(chunks);
    }

    fn ocr_queued(&self, skill: &str, pages: usize) {
        let mut ocr = self.ocr.lock().unwrap_or_else(|e| e.into_inner());
        let state = ocr.get_or_insert_with(|| OcrPages {
            bar: self.multi.add(Self::bar(skill, 0, "OCR pages")),
            done: 0,
            queued: 0,
            started: std::time::Instant::now(),
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
            eprintln!("{skill}: OCR {}/{} pages, {rate:.2} pages/s, eta {eta:.0} s", state.done, state.queued);
        }
    }

    fn skill_finished(&self, r: &SkillReport) {
        if let Some(state) = self.ocr.lock().unwrap_or_else(|e| e.into_inner()).take() {
            state.bar.finish_and_clear();
            self.multi.remove(&state.bar);
        }
        self.replace_bar(None);
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
