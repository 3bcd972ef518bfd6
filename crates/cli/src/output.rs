//! Plain-text tables that line up with Chinese text (display width, not bytes).

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// A table printed with columns padded to their widest cell.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table { header: header.iter().map(|s| s.to_string()).collect(), rows: Vec::new() }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn print(&self) {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.width()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.width());
            }
        }
        let line = |cells: &[String]| {
            let mut out = String::new();
            for (i, cell) in cells.iter().enumerate().take(columns) {
                out.push_str(cell);
                if i + 1 < columns {
                    out.push_str(&" ".repeat(widths[i] - cell.width() + 2));
                }
            }
            println!("{}", out.trim_end());
        };
        line(&self.header);
        for row in &self.rows {
            line(row);
        }
    }
}

/// Cuts `text` to at most `width` display columns, adding `…` when cut; newlines become spaces.
pub fn truncate(text: &str, width: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.width() <= width {
        return flat;
    }
    let mut out = String::new();
    let mut used = 0;
    for c in flat.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// Bytes as `12.3 KB` / `4.5 MB`.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b < 1024.0 {
        format!("{bytes} B")
    } else if b < 1024.0 * 1024.0 {
        format!("{:.1} KB", b / 1024.0)
    } else {
        format!("{:.1} MB", b / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_by_display_width() {
        assert_eq!(truncate("劳动合同法", 6), "劳动…");
        assert_eq!(truncate("short\ntext", 20), "short text");
        assert_eq!(human_bytes(2048), "2.0 KB");
    }
}
