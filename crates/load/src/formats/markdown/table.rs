//! Tables of DOCX and HTML sources: cells laid out on the grid (spans and merges resolved) and
//! rendered as GFM pipe tables, see [`TableBuilder`].

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

/// Collects a table's rows and renders them as Markdown.
///
/// A data table becomes a GFM pipe table, as a `.md` table is written: a header row, the
/// delimiter row, one line per row, each cell on one line (its paragraphs joined by spaces, as
/// the answer and the chunker read a table row by line). A chunk that holds only later rows of a
/// long table is given the header again by the chunker (`skillrag_chunk`, `Piece::table_header`).
/// A table used for layout (it holds headings or other tables) or with a single column is not a
/// data table: its cells' blocks are written out in order as ordinary blocks.
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

        let width = grid.iter().map(Vec::len).max().unwrap_or(0);
        // A column's name: the header rows' texts above it, a spanning header cell naming every
        // column it spans (`Q1 / Jan`, `Q1 / Feb`).
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
        // GFM has no table without a header row. Without a recognizable header the header row is
        // left blank rather than made of the first row: that row is data (a key/value table's
        // first pair), and as a header it would no longer be a row an answer can quote, and
        // would be repeated over the later rows as if it named the columns.
        let mut out =
            vec![Block::Row(self.id, pipe_row(names.iter().map(String::as_str))), Block::Row(self.id, rule(width))];
        for line in &grid[header_rows..] {
            // Repeated header rows (page breaks in the source) say nothing new.
            if header_rows > 0 && line.iter().zip(&names).all(|(c, n)| c.as_deref().is_none_or(|c| c == n)) {
                continue;
            }
            if line.iter().flatten().all(String::is_empty) {
                continue;
            }
            // A cell spanning columns is written once, in its first column, the others left
            // empty: its value repeated would count as many times as it spans.
            let cells = (0..width).map(|col| line.get(col).and_then(Option::as_deref).unwrap_or_default());
            out.push(Block::Row(self.id, pipe_row(cells)));
        }
        out
    }
}

/// One GFM table row: `| a | b |`, pipes in cells escaped.
fn pipe_row<'a>(cells: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::from("|");
    for cell in cells {
        out.push(' ');
        out.push_str(&cell.replace('|', "\\|"));
        out.push_str(" |");
    }
    out
}

/// The delimiter row under the header: `|---|---|`.
fn rule(width: usize) -> String {
    format!("|{}", "---|".repeat(width))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::markdown::render_blocks;

    fn cell(text: &str) -> Cell {
        let blocks = if text.is_empty() { Vec::new() } else { vec![Block::Para(text.into())] };
        Cell { blocks, ..Cell::default() }
    }

    fn table(rows: Vec<Vec<Cell>>, header_rows: usize) -> String {
        let mut t = TableBuilder::new(1);
        for (i, row) in rows.into_iter().enumerate() {
            t.start_row();
            t.mark_row_header(i < header_rows);
            for c in row {
                t.add_cell(c);
            }
        }
        render_blocks(&t.finish())
    }

    #[test]
    fn marked_header_pipes_and_empty_cells() {
        let rows = vec![
            vec![cell("Plan"), cell("Price")],
            vec![cell("Basic | Lite"), cell("")],
            vec![cell(""), cell("")],
            vec![cell("Pro"), cell("30 元")],
        ];
        assert_eq!(
            table(rows, 1),
            "| Plan | Price |\n|---|---|\n| Basic \\| Lite |  |\n| Pro | 30 元 |",
            "an all-empty row is dropped; a pipe in a cell is escaped"
        );
    }

    #[test]
    fn a_cells_paragraphs_share_its_line() {
        let two = Cell { blocks: vec![Block::Para("First\nline.".into()), Block::Para("Second.".into())], ..cell("") };
        assert_eq!(
            table(vec![vec![cell("A"), cell("B")], vec![cell("x"), two]], 1),
            "| A | B |\n|---|---|\n| x | First line. Second. |"
        );
    }

    #[test]
    fn spans_and_merges_on_the_grid() {
        // Two header rows, the first spanning two columns; a rowspan and a vertical merge repeat
        // their text below; a colspan in the data leaves the columns it covers empty.
        let rows = vec![
            vec![cell("Region"), Cell { colspan: 2, ..cell("Sales") }],
            vec![cell(""), cell("Jan"), cell("Feb")],
            vec![Cell { rowspan: 2, ..cell("North") }, cell("5"), cell("7")],
            vec![cell("6"), cell("8")],
            vec![cell("South"), Cell { colspan: 2, ..cell("closed") }],
            vec![cell("West"), cell("1"), cell("2")],
            vec![Cell { continues_above: true, ..cell("") }, Cell { continues_left: false, ..cell("3") }, cell("4")],
        ];
        assert_eq!(
            table(rows, 2),
            "| Region | Sales / Jan | Sales / Feb |\n|---|---|---|\n| North | 5 | 7 |\n| North | 6 | 8 |\n\
             | South | closed |  |\n| West | 1 | 2 |\n| West | 3 | 4 |"
        );
    }

    #[test]
    fn repeated_header_rows_are_dropped() {
        let header = || vec![cell("Name"), cell("Role"), cell("Team")];
        let rows = vec![
            header(),
            vec![cell("Ada"), cell("Lead"), cell("Core")],
            header(),
            vec![cell("Bo"), cell("Dev"), cell("Web")],
        ];
        assert_eq!(table(rows, 1), "| Name | Role | Team |\n|---|---|---|\n| Ada | Lead | Core |\n| Bo | Dev | Web |");
    }

    #[test]
    fn without_a_header_the_header_row_is_blank() {
        // Two columns: a key/value table, whose first row is data.
        let rows = vec![vec![cell("Name"), cell("Ada")], vec![cell("Age"), cell("36")]];
        assert_eq!(table(rows, 0), "|  |  |\n|---|---|\n| Name | Ada |\n| Age | 36 |");
        // Three short labels over data: a header though the source does not mark it.
        let rows = vec![vec![cell("City"), cell("Zip"), cell("Code")], vec![cell("Oslo"), cell("0150"), cell("NO")]];
        assert_eq!(table(rows, 0), "| City | Zip | Code |\n|---|---|---|\n| Oslo | 0150 | NO |");
        // A number in the first row: data.
        let rows = vec![vec![cell("Oslo"), cell("150"), cell("NO")], vec![cell("Rome"), cell("100"), cell("IT")]];
        assert!(table(rows, 0).starts_with("|  |  |  |\n|---|---|---|\n| Oslo | 150 | NO |"));
    }

    #[test]
    fn tables_that_are_not_data_keep_their_blocks() {
        assert_eq!(table(vec![vec![cell("One")], vec![cell("Two")]], 0), "One\n\nTwo", "a single column");
        let nested = Cell { blocks: vec![Block::Heading(2, "Inside".into()), Block::Para("Text.".into())], ..cell("") };
        assert_eq!(table(vec![vec![nested, cell("Side")]], 0), "## Inside\n\nText.\n\nSide", "a heading inside");
        let mut layout = TableBuilder::new(1);
        layout.layout = true;
        layout.add_cell(cell("a"));
        layout.add_cell(cell("b"));
        assert_eq!(render_blocks(&layout.finish()), "a\n\nb");
    }

    #[test]
    fn the_output_is_a_table_to_a_markdown_parser() {
        use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
        let rows = vec![vec![cell("Plan"), cell("Price")], vec![cell("a | b"), cell("")], vec![cell("c"), cell("d")]];
        let text = table(rows, 1);
        let mut cells: Vec<String> = Vec::new();
        let mut in_cell = false;
        for event in Parser::new_ext(&text, Options::ENABLE_TABLES) {
            match event {
                Event::Start(Tag::TableCell) => {
                    in_cell = true;
                    cells.push(String::new());
                }
                Event::End(TagEnd::TableCell) => in_cell = false,
                Event::Text(t) if in_cell => {
                    if let Some(c) = cells.last_mut() {
                        c.push_str(&t);
                    }
                }
                _ => {}
            }
        }
        assert_eq!(cells, ["Plan", "Price", "a | b", "", "c", "d"]);
    }
}
