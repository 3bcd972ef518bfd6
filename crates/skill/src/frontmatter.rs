//! Splitting `SKILL.md` into YAML frontmatter and Markdown body.

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
}
