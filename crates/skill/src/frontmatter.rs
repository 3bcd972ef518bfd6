//! Splitting `SKILL.md` into YAML frontmatter and Markdown body, and the limits checked
//! before the YAML is parsed.

/// The frontmatter block of a `SKILL.md`, with where it sits in the file.
pub struct Frontmatter<'a> {
    pub yaml: &'a str,
    /// 1-based line of the first YAML line (the line after the opening `---`).
    pub first_line: usize,
    pub body: &'a str,
}

pub enum Split<'a> {
    Frontmatter(Frontmatter<'a>),
    /// The file opens a `---` block that is never closed.
    Unterminated,
    NoFrontmatter,
}

/// Finds a frontmatter block that opens on the first non-blank line with `---` and closes
/// with a line of `---` (or YAML's `...`).
pub fn split(text: &str) -> Split<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut offset = 0;
    let mut line_no = 1;
    // Skip leading blank lines.
    for line in text.split_inclusive('\n') {
        if line.trim().is_empty() {
            offset += line.len();
            line_no += 1;
        } else {
            break;
        }
    }
    let rest = &text[offset..];
    let first = rest.split_inclusive('\n').next().unwrap_or("");
    if first.trim_end() != "---" {
        return Split::NoFrontmatter;
    }
    let yaml_start = offset + first.len();
    let mut pos = yaml_start;
    for line in text[yaml_start..].split_inclusive('\n') {
        let t = line.trim_end();
        if t == "---" || t == "..." {
            return Split::Frontmatter(Frontmatter {
                yaml: &text[yaml_start..pos],
                first_line: line_no + 1,
                body: &text[pos + line.len()..],
            });
        }
        pos += line.len();
    }
    Split::Unterminated
}

/// The 1-based file line where a top-level `key:` is written, if it can be found.
pub fn key_line(fm: &Frontmatter<'_>, key: &str) -> Option<usize> {
    fm.yaml.lines().enumerate().find_map(|(i, line)| {
        let rest = line.strip_prefix(key)?;
        rest.trim_start().starts_with(':').then_some(fm.first_line + i)
    })
}

/// Largest frontmatter accepted. Real ones are a few hundred bytes; long text belongs in the
/// body or the knowledge files.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Deepest YAML nesting accepted (block levels plus open brackets); real frontmatter uses 2–3.
pub const MAX_YAML_DEPTH: usize = 32;

/// Why a frontmatter block is refused before parsing, with the file line to point at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error("frontmatter is {kb} KB, above the {} KB limit; move long text into the body or the knowledge files", MAX_FRONTMATTER_BYTES / 1024)]
    TooLarge { kb: usize, line: usize },
    #[error("frontmatter YAML nests deeper than {MAX_YAML_DEPTH} levels; refusing to parse it")]
    TooDeep { line: usize },
}

impl LimitError {
    pub fn line(&self) -> usize {
        match self {
            LimitError::TooLarge { line, .. } | LimitError::TooDeep { line } => *line,
        }
    }
}

/// Checks size and nesting before the YAML parser sees the block: libyaml (under
/// serde_yaml_ng) spends time quadratic in the nesting before its own recursion limit
/// fires, so 200 KB of `[[[[` made every command take half a minute.
pub fn check_limits(fm: &Frontmatter<'_>) -> Result<(), LimitError> {
    if fm.yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(LimitError::TooLarge { kb: fm.yaml.len().div_ceil(1024), line: fm.first_line });
    }
    match too_deep_at(fm.yaml, MAX_YAML_DEPTH) {
        Some(i) => Err(LimitError::TooDeep { line: fm.first_line + i }),
        None => Ok(()),
    }
}

/// The 0-based line where `yaml` first nests deeper than `limit`. Hand-written because a
/// parser is what must not run yet: block levels are counted by indentation (and `- `
/// markers, which nest on one line), flow levels by brackets outside quotes and comments,
/// block scalars (`|`, `>`) skipped. It may over-count odd YAML slightly, never real nesting
/// by much, and it is linear.
fn too_deep_at(yaml: &str, limit: usize) -> Option<usize> {
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    let mut block_scalar: Option<usize> = None;
    for (i, line) in yaml.lines().enumerate() {
        let content = line.trim_start_matches(' ');
        let indent = line.len() - content.len();
        if content.trim().is_empty() || content.starts_with('#') {
            continue;
        }
        if let Some(owner) = block_scalar {
            if indent > owner {
                continue;
            }
            block_scalar = None;
        }
        if flow == 0 {
            let (mut col, mut rest) = (indent, content);
            loop {
                while indents.last().is_some_and(|&top| top >= col) {
                    indents.pop();
                }
                indents.push(col);
                let Some(after) = rest.strip_prefix("- ").or_else(|| (rest == "-").then_some("")) else { break };
                let trimmed = after.trim_start_matches(' ');
                col += rest.len() - trimmed.len();
                rest = trimmed;
                if rest.is_empty() {
                    break;
                }
            }
            let end = rest.trim_end();
            if [": |", ": >", ": |-", ": >-", ": |+", ": >+"].iter().any(|m| end.ends_with(m))
                || matches!(end, "|" | ">")
            {
                block_scalar = Some(indent);
            }
        }
        let mut quote: Option<char> = None;
        let mut escaped = false;
        let mut prev = ' ';
        for c in content.chars() {
            match quote {
                Some('"') if escaped => escaped = false,
                Some('"') if c == '\\' => escaped = true,
                Some(q) if c == q => quote = None,
                Some(_) => {}
                // A quote opens a scalar only where one can start (not the `'` in `it's`).
                None if matches!(c, '"' | '\'') && (prev.is_whitespace() || matches!(prev, '[' | '{' | ',' | ':')) => {
                    quote = Some(c)
                }
                None if matches!(c, '[' | '{') => flow += 1,
                None if matches!(c, ']' | '}') => flow = flow.saturating_sub(1),
                None if c == '#' && prev.is_whitespace() => break,
                None => {}
            }
            if indents.len() + flow > limit {
                return Some(i);
            }
            prev = c;
        }
        if indents.len() + flow > limit {
            return Some(i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_frontmatter_and_body() {
        let text = "\n---\nname: a\ndescription: b\n---\n# Title\n";
        let Split::Frontmatter(fm) = split(text) else { panic!("no frontmatter") };
        assert_eq!(fm.yaml, "name: a\ndescription: b\n");
        assert_eq!(fm.first_line, 3);
        assert_eq!(fm.body, "# Title\n");
        assert_eq!(key_line(&fm, "description"), Some(4));
    }

    #[test]
    fn detects_missing_and_unterminated() {
        assert!(matches!(split("# Title\n---\n"), Split::NoFrontmatter));
        assert!(matches!(split("---\nname: a\n"), Split::Unterminated));
        assert!(matches!(split("\u{feff}---\r\nname: a\r\n---\r\n"), Split::Frontmatter(_)));
    }

    fn fm(yaml: &str) -> Frontmatter<'_> {
        Frontmatter { yaml, first_line: 2, body: "" }
    }

    #[test]
    fn real_frontmatter_is_within_the_limits() {
        let yaml = "name: a\ndescription: It's [a] skill: \"quoted [ \\\" text\" # [[[[ comment\nmetadata:\n  triggers: a, b\n  \
                    knowledge:\n    - docs\n    - - x\n      - y\ninstructions: |\n  [[[[ unbalanced prose\n      deeper\n    text\n";
        assert_eq!(check_limits(&fm(yaml)), Ok(()));
        assert_eq!(too_deep_at(yaml, 5), None); // knowledge → - → - → x
        assert_eq!(too_deep_at("a:\n  b:\n    c: [[x]]\n", 4), Some(2));
    }

    #[test]
    fn deep_and_huge_frontmatter_is_refused_quickly() {
        let flow = format!("name: a\nx: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let start = std::time::Instant::now();
        let err = check_limits(&fm(&flow[..MAX_FRONTMATTER_BYTES])).unwrap_err();
        assert_eq!(err, LimitError::TooDeep { line: 3 });
        assert!(start.elapsed() < std::time::Duration::from_secs(1), "{:?}", start.elapsed());
        let err = check_limits(&fm(&flow)).unwrap_err();
        assert_eq!(err.line(), 2);
        assert!(err.to_string().contains("above the 64 KB limit"), "{err}");
        let block: String = (0..40).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect();
        assert_eq!(check_limits(&fm(&block)), Err(LimitError::TooDeep { line: 2 + MAX_YAML_DEPTH }));
        let dashes = format!("x:\n{}y\n", "- ".repeat(40));
        assert_eq!(check_limits(&fm(&dashes)), Err(LimitError::TooDeep { line: 3 }));
    }
}
