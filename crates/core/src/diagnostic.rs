use serde::Serialize;
use std::fmt;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// A problem found in a user's file, reported as `file:line: severity: message` like a compiler.
/// Errors make the file (or skill) be skipped; warnings never do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub path: PathBuf,
    /// 1-based line, when the problem has one.
    pub line: Option<usize>,
    pub severity: Severity,
    pub message: String,
}

impl Diagnostic {
    pub fn error(path: impl Into<PathBuf>, line: Option<usize>, message: impl Into<String>) -> Self {
        Diagnostic { path: path.into(), line, severity: Severity::Error, message: message.into() }
    }

    pub fn warning(path: impl Into<PathBuf>, line: Option<usize>, message: impl Into<String>) -> Self {
        Diagnostic { path: path.into(), line, severity: Severity::Warning, message: message.into() }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        match self.line {
            Some(line) => write!(f, "{}:{}: {}: {}", self.path.display(), line, sev, self.message),
            None => write!(f, "{}: {}: {}", self.path.display(), sev, self.message),
        }
    }
}
