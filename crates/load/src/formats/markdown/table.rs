//! Tables of DOCX and HTML sources: cells laid out on the grid (spans and merges resolved) and
//! rendered one line per row, see [`TableBuilder`].

use super::{clean_inline, Block};

/// A table cell as read from the source.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::formats) struct Cell {
    pub blocks: Vec<Block>,
    /// Grid columns the cell spans (HTML `colspan`, DOCX `w:gridSpan`).
    pub colspan: u32,
    /// Rows the cell spans (HTML `rowspan`); DOCX uses `continues_above` instead.
    pub rowspan: u32,
    /// DOCX `w:vMerge` continuation: the cell shows the text of the cell above.
    pub continues_above: bool,
    /// Old DOCX `w:hMerge` continuation: the cell is part of the cell on its left.
    pub continues_left: bool,
    /// HTML `<th>`.
    pub header: bool,
}

impl Default for Cell {
    fn default() -> Self {
        Cell {
            blocks: Vec::new(),
            colspan: 1,
            rowspan: 1,
            continues_above: false,
            continues_left: false,
            header: false,
        }
    }
}

#[derive(Debug, Default)]
struct Row {
    cells: Vec<Cell>,
    /// Marked as a header row by the source (DOCX `w:tblHeader`, HTML `<thead>`).
    header: bool,
}

/// Collects a table's rows and renders them for retrieval.
///
/// A data table becomes one line per row. When the table has a header row, each following row is
/// written as `header: value; header: value`: a chunk holding only some rows of a long table then
/// still says what each value means (the chunker may cut a table anywhere, and "price: 30" is
/// findable by "price" where a bare "30" is not). Without a recognizable header, cells are joined
/// with ` | `. A table used for layout (it holds headings or other tables) or with a single column
/// is not a data table: its cells' blocks are written out in order as ordinary blocks.
#[derive(Debug)]
pub(in crate::formats) struct TableBuilder {
    id: u32,
    rows: Vec<Row>,
    /// Drawn with `role="presentation"` or similar: never a data table.
    pub layout: bool,
}

const MAX_COLSPAN: u32 = 64;
const MAX_ROWSPAN: u32 = 1000;
const MAX_HEADER_CELL_CHARS: usize = 40;

impl TableBuilder {
    pub(in crate::formats) fn new(id: u32) -> Self {
        TableBuilder { id, rows: Vec::new(), layout: false }
    }

    pub(in crate::formats) fn start_row(&mut self) {
        self.rows.push(Row::default());
    }

    pub(in crate::formats) fn mark_row_header(&mut self, header: bool) {
        if let Some(row) = self.rows.last_mut() {
            row.header = header;
        }
    }

    pub(in crate::formats) fn add_cell(&mut self, cell: Cell) {
        if self.rows.is_empty() {
            self.start_row();
        }
        if let Some(row) = self.rows.last_mut() {
            row.cells.push(cell);
        }
    }

    pub(in crate::formats) fn last_cell(&mut self) -> Option<&mut Cell> {
        self.rows.last_mut().and_then(|r| r.cells.last_mut())
    }

    pub(in crate::formats) fn set_last_cell_blocks(&mut self, blocks: Vec<Block>) {
        if let Some(cell) = self.last_cell() {
            cell.blocks = blocks;
        }
    }

    /// The table as blocks.
    pub(in crate::formats) fn finish(self) -> Vec<Block> {
        let mut rows = self.rows;
        rows.retain(|r| !r.cells.is_empty());
        let columns = rows.iter().map(|r| r.cells.iter().filter(|c| !c.continues_left).count()).max().unwrap_or(0);
        let nested = rows
            .iter()
            .flat_map(|r| &r.cells)
            .flat_map(|c| &c.blocks)
            .any(|b| matches!(b, Block::Heading(..) | Block::Row(..) | Block::Code(..)));
        if self.layout || nested || columns <= 1 {
            return rows.into_iter().flat_map(|r| r.cells).flat_map(|c| c.blocks).collect();
        }

        // Lay the cells out on the grid: `None` where a cell spans from the left.
        let mut grid: Vec<Vec<Option<String>>> = Vec::with_capacity(rows.len());
        let mut pending: Vec<(u32, String)> = Vec::new(); // per column: rows left, text (rowspan)
        for row in &rows {
            let mut line: Vec<Option<String>> = Vec::new();
            let take_pending = |line: &mut Vec<Option<String>>, pending: &mut Vec<(u32, String)>| {
                while let Some((left, text)) = pending.get_mut(line.len()).filter(|(left, _)| *left > 0) {
                    *left -= 1;
                    line.push(Some(text.clone()));
                }
            };
            for cell in &row.cells {
                take_pending(&mut line, &mut pending);
                if cell.continues_left {
                    line.push(None);
                    continue;
                }
                let col = line.len();
                let text = if cell.continues_above {
                    grid.last().and_then(|above| above.get(col).cloned().flatten()).unwrap_or_default()
                } else {
                    cell_text(&cell.blocks)
                };
                let rowspan = cell.rowspan.clamp(1, MAX_ROWSPAN);
                if rowspan > 1 {
                    if pending.len() <= col {
                        pending.resize(col + 1, (0, String::new()));
                    }
                    pending[col] = (rowspan - 1, text.clone());
                }
                line.push(Some(text));
                for _ in 1..cell.colspan.clamp(1, MAX_COLSPAN) {
                    line.push(None);
                }
            }
            take_pending(&mut line, &mut pending);
            grid.push(line);
        }

        // Header rows: those the source marks, else a first row that looks like one.
        let marked =
            rows.iter().take_while(|r| r.header || (!r.cells.is_empty() && r.cells.iter().all(|c| c.header))).count();
        let header_rows = if marked > 0 && marked < grid.len() {
            marked
        } else if marked == 0 && looks_like_header(&grid) {
            1
        } else {
            0
        };

        let mut out = Vec::new();
        if header_rows == 0 {
            for line in &grid {
                let mut cells: Vec<&str> = line.iter().flatten().map(String::as_str).collect();
                while cells.last() == Some(&"") {
                    cells.pop();
                }
                if !cells.is_empty() {
                    out.push(Block::Row(self.id, cells.join(" | ")));
                }
            }
            return out;
        }
        let width = grid.iter().map(Vec::len).max().unwrap_or(0);
        let mut names = vec![String::new(); width];
        for line in &grid[..header_rows] {
            let mut last = String::new();
            for (col, cell) in line.iter().enumerate() {
                if let Some(text) = cell {
                    last = text.clone();
                }
                if !last.is_empty() && !names[col].split(" / ").any(|n| n == last) {
                    if !names[col].is_empty() {
                        names[col].push_str(" / ");
                    }
                    names[col].push_str(&last);
                }
            }
        }
        for line in &grid[header_rows..] {
            // Repeated header rows (page breaks in the source) say nothing new.
            if line.iter().zip(&names).all(|(c, n)| c.as_deref().is_none_or(|c| c == n)) {
                continue;
            }
            let parts: Vec<String> = line
                .iter()
                .enumerate()
                .filter_map(|(col, cell)| {
                    let value = cell.as_deref().filter(|v| !v.is_empty())?;
                    let name = names.get(col).map(String::as_str).unwrap_or_default();
                    Some(if name.is_empty() || name == value { value.to_string() } else { format!("{name}: {value}") })
                })
                .collect();
            if !parts.is_empty() {
                out.push(Block::Row(self.id, parts.join("; ")));
            }
        }
        out
    }
}

/// An unmarked first row counts as a header when the table has at least three columns (two-column
/// tables are often key/value lists, whose first row is data) and the row's cells are all short
/// labels, none a number.
fn looks_like_header(grid: &[Vec<Option<String>>]) -> bool {
    let Some(first) = grid.first() else { return false };
    let cells: Vec<&String> = first.iter().flatten().collect();
    grid.len() >= 2
        && cells.len() >= 3
        && cells.len() == first.len()
        && cells.iter().all(|c| {
            !c.is_empty()
                && c.chars().count() <= MAX_HEADER_CELL_CHARS
                && c.trim_end_matches('%').replace([',', ' '], "").parse::<f64>().is_err()
        })
}

/// A cell's blocks as one line.
fn cell_text(blocks: &[Block]) -> String {
    blocks.iter().map(|b| clean_inline(b.text())).filter(|t| !t.is_empty()).collect::<Vec<_>>().join(" ")
}
