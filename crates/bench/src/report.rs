//! Output shared by every bench: titled tables, notes, progress lines and the `--json`
//! document.
//!
//! [`Output`] decides where each kind of text goes:
//!
//! | what                    | human mode | `--json` mode          |
//! |-------------------------|------------|------------------------|
//! | progress lines          | stderr     | stderr                 |
//! | notes and tables        | stdout     | stderr                 |
//! | the JSON document       | -          | stdout, one object     |
//!
//! so that `tarn bench ... --json > out.json` always yields exactly one valid JSON
//! object, while a person watching the terminal still sees the tables.

use std::fmt::Write as _;
use std::io::Write as _;

use comfy_table::{CellAlignment, presets};
use serde::Serialize;

use crate::{BenchError, Result};

/// Where a bench's text goes (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Output {
    json: bool,
}

impl Output {
    pub fn new(json: bool) -> Output {
        Output { json }
    }

    pub fn is_json(&self) -> bool {
        self.json
    }

    /// A progress line, always on stderr.
    pub fn progress(&self, line: &str) {
        eprintln!("{line}");
    }

    /// Text for the reader of the results (notes, explanations): stdout, or stderr in
    /// `--json` mode.
    pub fn note(&self, text: &str) {
        if self.json {
            eprintln!("{text}");
        } else {
            println!("{text}");
        }
    }

    /// Prints a table where [`Output::note`] prints, preceded by a blank line.
    pub fn table(&self, table: &Table) {
        self.note(&format!("\n{}", table.render()));
    }

    /// In `--json` mode, prints `document` as the one JSON object on stdout; in human
    /// mode does nothing.
    pub fn json<C: Serialize, R: Serialize, S: Serialize>(
        &self,
        document: &BenchDocument<'_, C, R, S>,
    ) -> Result<()> {
        if !self.json {
            return Ok(());
        }
        let text = render_json(document)?;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{text}")
            .and_then(|()| stdout.flush())
            .map_err(|source| BenchError::Os {
                what: "writing the JSON document to stdout".into(),
                source,
            })
    }
}

/// The one JSON object a bench prints with `--json`.
#[derive(Debug, Serialize)]
pub struct BenchDocument<'a, C, R, S> {
    /// The bench's name, e.g. `"io"`.
    pub bench: &'a str,
    /// Everything that determines the measurement (sizes, durations, paths, baseline).
    pub config: &'a C,
    /// One object per measured row.
    pub rows: &'a [R],
    /// The named ratios and totals the team checks.
    pub summary: &'a S,
}

impl<'a, C, R, S> BenchDocument<'a, C, R, S> {
    pub fn new(
        bench: &'a str,
        config: &'a C,
        rows: &'a [R],
        summary: &'a S,
    ) -> BenchDocument<'a, C, R, S> {
        BenchDocument {
            bench,
            config,
            rows,
            summary,
        }
    }
}

/// Renders `document` as pretty-printed JSON text.
pub fn render_json<C: Serialize, R: Serialize, S: Serialize>(
    document: &BenchDocument<'_, C, R, S>,
) -> Result<String> {
    serde_json::to_string_pretty(document).map_err(|e| BenchError::Os {
        what: "encoding the JSON document".into(),
        source: e.into(),
    })
}

/// A titled table; numeric-looking columns are right-aligned when rendered.
pub struct Table {
    title: String,
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(title: impl Into<String>, headers: &[&str]) -> Table {
        Table {
            title: title.into(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; it must have one cell per header.
    pub fn add_row(&mut self, cells: Vec<String>) {
        assert_eq!(
            cells.len(),
            self.headers.len(),
            "table '{}': row of the wrong width",
            self.title
        );
        self.rows.push(cells);
    }

    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// The title line followed by the table.
    pub fn render(&self) -> String {
        let mut table = comfy_table::Table::new();
        table.load_style(presets::UTF8_FULL_CONDENSED);
        table.set_header(self.headers.clone());
        for row in &self.rows {
            table.add_row(row.clone());
        }
        for index in 0..self.headers.len() {
            let numeric = !self.rows.is_empty()
                && self
                    .rows
                    .iter()
                    .all(|row| looks_numeric(&row[index]) || row[index] == "-");
            if numeric && let Some(column) = table.column_mut(index) {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        let mut text = String::new();
        let _ = writeln!(text, "{}", self.title);
        let _ = write!(text, "{table}");
        text
    }
}

fn looks_numeric(cell: &str) -> bool {
    let cell = cell.trim_end_matches('x').trim_end_matches('%');
    !cell.is_empty() && cell.replace(',', "").parse::<f64>().is_ok()
}

/// `value` with `decimals` digits after the point; `-` for a missing or non-finite
/// value.
pub fn format_number(value: Option<f64>, decimals: usize) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => "-".into(),
    }
}

/// A rate or count rounded to a whole number with thousands separators: `51,234`.
pub fn format_count(value: Option<f64>) -> String {
    let Some(v) = value.filter(|v| v.is_finite()) else {
        return "-".into();
    };
    let digits = format!("{:.0}", v.abs());
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    if v < 0.0 && grouped != "0" {
        grouped.insert(0, '-');
    }
    grouped
}

/// A ratio such as `0.97x`; `-` when missing.
pub fn format_ratio(value: Option<f64>) -> String {
    match value {
        Some(v) if v.is_finite() => format!("{v:.2}x"),
        _ => "-".into(),
    }
}

/// `numerator / denominator`, or `None` when either is missing or the denominator is
/// not positive. Every ratio in a summary goes through this, so a missing input gives
/// `null` rather than infinity or NaN.
pub fn ratio(numerator: Option<f64>, denominator: Option<f64>) -> Option<f64> {
    match (numerator, denominator) {
        (Some(n), Some(d)) if d > 0.0 && n.is_finite() && d.is_finite() => Some(n / d),
        _ => None,
    }
}

/// What became of the data directory, for a bench's first note: `" (kept)"` or
/// `" (removed)"`.
pub fn data_dir_fate(kept: bool) -> &'static str {
    if kept { " (kept)" } else { " (removed)" }
}

/// The items in order of first appearance, each once: the axes a run covered, for the
/// JSON `config`.
pub(crate) fn distinct<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Row {
        name: &'static str,
        value: f64,
    }

    #[derive(Serialize)]
    struct Summary {
        best: Option<f64>,
        missing: Option<f64>,
    }

    #[test]
    fn the_json_document_has_the_four_fields_and_null_for_missing_summary_values() {
        let rows = [Row {
            name: "a",
            value: 1.5,
        }];
        let summary = Summary {
            best: ratio(Some(3.0), Some(2.0)),
            missing: ratio(Some(3.0), None),
        };
        let text = render_json(&BenchDocument {
            bench: "demo",
            config: &serde_json::json!({"seconds": 2}),
            rows: &rows,
            summary: &summary,
        })
        .unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["bench"], "demo");
        assert_eq!(value["config"]["seconds"], 2);
        assert_eq!(value["rows"][0]["name"], "a");
        assert_eq!(value["summary"]["best"], 1.5);
        assert!(value["summary"]["missing"].is_null());
        assert!(
            value["summary"]
                .as_object()
                .unwrap()
                .contains_key("missing")
        );
    }

    #[test]
    fn numbers_format_for_people() {
        assert_eq!(format_count(Some(1234567.4)), "1,234,567");
        assert_eq!(format_count(Some(999.0)), "999");
        assert_eq!(format_count(None), "-");
        assert_eq!(format_number(Some(12.345), 1), "12.3");
        assert_eq!(format_ratio(Some(0.9712)), "0.97x");
        assert_eq!(ratio(Some(1.0), Some(0.0)), None);
        let mut table = Table::new("T", &["name", "iops"]);
        table.add_row(vec!["x".into(), format_count(Some(1500.0))]);
        let text = table.render();
        assert!(text.starts_with("T\n") && text.contains("1,500"), "{text}");
    }
}
