//! The 22 TPC-H queries as MySQL text, their expected answers, and how a result is
//! compared with an answer.
//!
//! # The queries
//! `queries/qNN.sql` holds query NN of the TPC-H specification (revision 3) with the
//! specification's validation parameters (section 2.4, "Query Validation"), written as a
//! MySQL user writes them: `date '1998-12-01' - interval 90 day`, `extract(year from
//! ...)`, `substring(c_phone from 1 for 2)`, `limit N` for the row counts the
//! specification asks for, derived tables with their column names given by aliases in
//! the select list. Q15 is the specification's view form: `create view revenue0`, the
//! query, `drop view revenue0`, three statements. The same files are what
//! `scripts/tpch-answers` runs in DuckDB to make the answers.
//!
//! Q11's threshold fraction depends on the scale factor: the specification's
//! `FRACTION` is 0.0001 / SF. [`query_text`] substitutes it for `{FRACTION}`.
//!
//! # The answers
//! [`expected_answer`] gives the answer for SF 1, 0.1 and 0.01:
//! - SF 1: the reference answers tpchgen ships (`tpchgen::q_and_a::answers_sf1`), made
//!   by the TPC's own `dbgen` and `qgen` and printed with money rounded to cents,
//!   except two that are misprinted there (`SF1_CORRECTIONS`: `answers/sf1/`).
//! - SF 0.1 and 0.01: `answers/sfX/qNN.tbl`, made by `scripts/tpch-answers`, which
//!   writes Tarn's own generated rows ([`super::tbl`]) as text, loads them into DuckDB
//!   (from PyPI), and runs the `queries/qNN.sql` texts there. The same script checks
//!   the chain at SF 1: DuckDB's answers over Tarn's rows match tpchgen's reference
//!   answers for the 20 queries whose reference is printed correctly.
//!
//! An answer file is `|`-separated text: a header line with the column names, then one
//! line per row, `NULL` for null.
//!
//! # Comparing
//! [`compare`] checks the column and row counts, then each row in order (every query
//! orders its result on keys that make the order total at these scale factors). Two
//! cells match when their texts are equal after trimming, or when both are numbers
//! that differ by no more than either side's printed rounding (half a unit in its last
//! printed digit: the reference answers print money to cents, MySQL prints averages to
//! 6 digits) plus a relative 1e-9 for values computed in floating point.

use crate::{BenchError, Result};

/// The number of TPC-H queries.
pub const QUERY_COUNT: usize = 22;

/// The query texts, `TEXTS[n - 1]` for query n, before [`query_text`]'s substitution.
const TEXTS: [&str; QUERY_COUNT] = [
    include_str!("queries/q01.sql"),
    include_str!("queries/q02.sql"),
    include_str!("queries/q03.sql"),
    include_str!("queries/q04.sql"),
    include_str!("queries/q05.sql"),
    include_str!("queries/q06.sql"),
    include_str!("queries/q07.sql"),
    include_str!("queries/q08.sql"),
    include_str!("queries/q09.sql"),
    include_str!("queries/q10.sql"),
    include_str!("queries/q11.sql"),
    include_str!("queries/q12.sql"),
    include_str!("queries/q13.sql"),
    include_str!("queries/q14.sql"),
    include_str!("queries/q15.sql"),
    include_str!("queries/q16.sql"),
    include_str!("queries/q17.sql"),
    include_str!("queries/q18.sql"),
    include_str!("queries/q19.sql"),
    include_str!("queries/q20.sql"),
    include_str!("queries/q21.sql"),
    include_str!("queries/q22.sql"),
];

/// `include_str!` of the 22 answer files under `answers/<dir>/`.
macro_rules! answer_files {
    ($dir:literal) => {
        [
            include_str!(concat!("answers/", $dir, "/q01.tbl")),
            include_str!(concat!("answers/", $dir, "/q02.tbl")),
            include_str!(concat!("answers/", $dir, "/q03.tbl")),
            include_str!(concat!("answers/", $dir, "/q04.tbl")),
            include_str!(concat!("answers/", $dir, "/q05.tbl")),
            include_str!(concat!("answers/", $dir, "/q06.tbl")),
            include_str!(concat!("answers/", $dir, "/q07.tbl")),
            include_str!(concat!("answers/", $dir, "/q08.tbl")),
            include_str!(concat!("answers/", $dir, "/q09.tbl")),
            include_str!(concat!("answers/", $dir, "/q10.tbl")),
            include_str!(concat!("answers/", $dir, "/q11.tbl")),
            include_str!(concat!("answers/", $dir, "/q12.tbl")),
            include_str!(concat!("answers/", $dir, "/q13.tbl")),
            include_str!(concat!("answers/", $dir, "/q14.tbl")),
            include_str!(concat!("answers/", $dir, "/q15.tbl")),
            include_str!(concat!("answers/", $dir, "/q16.tbl")),
            include_str!(concat!("answers/", $dir, "/q17.tbl")),
            include_str!(concat!("answers/", $dir, "/q18.tbl")),
            include_str!(concat!("answers/", $dir, "/q19.tbl")),
            include_str!(concat!("answers/", $dir, "/q20.tbl")),
            include_str!(concat!("answers/", $dir, "/q21.tbl")),
            include_str!(concat!("answers/", $dir, "/q22.tbl")),
        ]
    };
}

/// The stored answers by scale factor: `(scale factor, [query 1 ..= 22])`.
const STORED_ANSWERS: [(f64, [&str; QUERY_COUNT]); 2] = [
    (0.01, answer_files!("sf0.01")),
    (0.1, answer_files!("sf0.1")),
];

/// SF 1 answers that replace two of tpchgen's reference answers, which are wrong as
/// printed (checked by `scripts/tpch-answers --check-sf1`): the reference Q11 prints
/// `ps_partkey` cut to its first 4 characters (`1297` for 129760; all 1,048 values and
/// the key prefixes match), and the reference Q17 says 348406.02 where the exact sum of
/// the qualifying `l_extendedprice` divided by 7.0 is 348406.0542857 (DuckDB; the
/// specification's own sample output says 348406.05).
const SF1_CORRECTIONS: [(usize, &str); 2] = [
    (11, include_str!("answers/sf1/q11.tbl")),
    (17, include_str!("answers/sf1/q17.tbl")),
];

/// Queries known not to return their answer yet, with the reason. The test
/// (`tests/tpch_queries.rs`) checks every other query and fails if one of them
/// regresses; it prints the listed queries that pass, so this list can shrink. The
/// README's TPC-H status table is this list.
pub const KNOWN_FAILING: &[KnownFailure] = &[];

/// A query listed as not returning its answer yet.
#[derive(Clone, Copy, Debug)]
pub struct KnownFailure {
    pub query: usize,
    /// What goes wrong, and the diagnosis.
    pub reason: &'static str,
    /// The smallest scale factor at which it fails; below it the query is expected
    /// to return its answer.
    pub fails_from_sf: f64,
    /// Running it (at `fails_from_sf` or above) exhausts the machine or hangs in a way
    /// the bench cannot stop: the test and the bench's default run skip it
    /// (`--queries` naming it runs it).
    pub runs_away: bool,
}

/// The entry of query `number` in [`KNOWN_FAILING`] if it is listed as failing at
/// `scale_factor`.
pub fn known_failure(number: usize, scale_factor: f64) -> Option<&'static KnownFailure> {
    KNOWN_FAILING
        .iter()
        .find(|f| f.query == number && scale_factor >= f.fails_from_sf - 1e-9)
}

/// Checks a query number (1 ..= 22).
pub fn check_query_number(number: usize) -> Result<()> {
    if (1..=QUERY_COUNT).contains(&number) {
        Ok(())
    } else {
        Err(BenchError::Options(format!(
            "TPC-H query {number} does not exist: queries are numbered 1 to {QUERY_COUNT}"
        )))
    }
}

/// The text of query `number` (1 ..= 22) for `scale_factor`, ready to run (Q15 is three
/// statements).
pub fn query_text(number: usize, scale_factor: f64) -> Result<String> {
    check_query_number(number)?;
    Ok(TEXTS[number - 1].replace("{FRACTION}", &q11_fraction(scale_factor)))
}

/// Q11's `FRACTION` at `scale_factor`: 0.0001 / SF, as a decimal literal.
pub fn q11_fraction(scale_factor: f64) -> String {
    let text = format!("{:.10}", 0.0001 / scale_factor);
    let text = text.trim_end_matches('0');
    text.strip_suffix('.').unwrap_or(text).to_string()
}

/// Where an answer came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerSource {
    /// tpchgen's reference answers for SF 1 (from the TPC's dbgen and qgen).
    TpchgenReference,
    /// DuckDB over Tarn's generated rows (`scripts/tpch-answers`).
    Duckdb,
}

impl AnswerSource {
    pub fn name(self) -> &'static str {
        match self {
            AnswerSource::TpchgenReference => "tpchgen reference answers (SF 1, from dbgen/qgen)",
            AnswerSource::Duckdb => "DuckDB over the same generated rows (scripts/tpch-answers)",
        }
    }
}

/// An expected (or actual) result as text: column names and rows of cells, `None`
/// for null.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Option<String>>>,
}

impl Answer {
    /// Parses the `|`-separated text of an answer file (or of tpchgen's answers, whose
    /// cells are padded with spaces): blank lines are skipped, the first line is the
    /// header, `NULL` is null.
    pub fn parse(text: &str) -> Answer {
        let mut lines = text.lines().filter(|line| !line.trim().is_empty());
        let split = |line: &str| -> Vec<String> {
            line.split('|')
                .map(|cell| cell.trim().to_string())
                .collect()
        };
        let columns = lines.next().map(split).unwrap_or_default();
        let rows = lines
            .map(|line| {
                split(line)
                    .into_iter()
                    .map(|cell| (cell != "NULL").then_some(cell))
                    .collect()
            })
            .collect();
        Answer { columns, rows }
    }

    /// The answer file text: header, then rows, `|`-separated, `NULL` for null.
    pub fn to_text(&self) -> String {
        let mut text = self.columns.join("|");
        text.push('\n');
        for row in &self.rows {
            let cells: Vec<&str> = row.iter().map(|c| c.as_deref().unwrap_or("NULL")).collect();
            text.push_str(&cells.join("|"));
            text.push('\n');
        }
        text
    }
}

/// The expected answer of query `number` at `scale_factor`, and where it came from;
/// `None` when no answer exists for that scale factor.
pub fn expected_answer(number: usize, scale_factor: f64) -> Option<(Answer, AnswerSource)> {
    check_query_number(number).ok()?;
    if (scale_factor - 1.0).abs() < 1e-9 {
        if let Some((_, text)) = SF1_CORRECTIONS.iter().find(|(n, _)| *n == number) {
            return Some((Answer::parse(text), AnswerSource::Duckdb));
        }
        let text = tpchgen::q_and_a::answers_sf1::answer(number as i32)?;
        return Some((Answer::parse(text), AnswerSource::TpchgenReference));
    }
    STORED_ANSWERS
        .iter()
        .find(|(sf, _)| (sf - scale_factor).abs() < 1e-9)
        .map(|(_, files)| (Answer::parse(files[number - 1]), AnswerSource::Duckdb))
}

/// Whether answers exist for `scale_factor`.
pub fn answers_exist(scale_factor: f64) -> bool {
    expected_answer(1, scale_factor).is_some()
}

/// The relative slack for values computed in floating point.
const RELATIVE_TOLERANCE: f64 = 1e-9;

/// Compares `actual` with `expected` (see the module docs); `Err` says where they
/// first differ.
pub fn compare(expected: &Answer, actual: &Answer) -> std::result::Result<(), String> {
    if expected.columns.len() != actual.columns.len() {
        return Err(format!(
            "{} columns, expected {} ({})",
            actual.columns.len(),
            expected.columns.len(),
            expected.columns.join(", ")
        ));
    }
    if expected.rows.len() != actual.rows.len() {
        return Err(format!(
            "{} rows, expected {}{}",
            actual.rows.len(),
            expected.rows.len(),
            first_row_note(expected, actual)
        ));
    }
    for (index, (want, got)) in expected.rows.iter().zip(&actual.rows).enumerate() {
        if !rows_match(want, got) {
            let unordered = same_rows_in_some_order(expected, actual);
            return Err(format!(
                "row {}: got [{}], expected [{}]{}",
                index + 1,
                show_row(got),
                show_row(want),
                if unordered {
                    " (the same rows come back in another order)"
                } else {
                    ""
                }
            ));
        }
    }
    Ok(())
}

fn first_row_note(expected: &Answer, actual: &Answer) -> String {
    match (expected.rows.first(), actual.rows.first()) {
        (Some(want), Some(got)) if !rows_match(want, got) => format!(
            "; first row: got [{}], expected [{}]",
            show_row(got),
            show_row(want)
        ),
        _ => String::new(),
    }
}

fn show_row(row: &[Option<String>]) -> String {
    let cells: Vec<&str> = row.iter().map(|c| c.as_deref().unwrap_or("NULL")).collect();
    let text = cells.join(" | ");
    if text.chars().count() > 300 {
        format!("{}...", text.chars().take(300).collect::<String>())
    } else {
        text
    }
}

fn rows_match(want: &[Option<String>], got: &[Option<String>]) -> bool {
    want.len() == got.len() && want.iter().zip(got).all(|(w, g)| cells_match(w, g))
}

fn same_rows_in_some_order(expected: &Answer, actual: &Answer) -> bool {
    let mut unused: Vec<&Vec<Option<String>>> = actual.rows.iter().collect();
    expected.rows.iter().all(
        |want| match unused.iter().position(|got| rows_match(want, got)) {
            Some(position) => {
                unused.swap_remove(position);
                true
            }
            None => false,
        },
    )
}

/// Whether two cells match: equal text, or numbers within each side's rounding.
pub fn cells_match(want: &Option<String>, got: &Option<String>) -> bool {
    let (want, got) = match (want, got) {
        (None, None) => return true,
        (Some(want), Some(got)) => (want.trim(), got.trim()),
        _ => return false,
    };
    if want == got {
        return true;
    }
    let (Some(a), Some(b)) = (parse_number(want), parse_number(got)) else {
        return false;
    };
    let slack =
        half_last_digit(want).max(half_last_digit(got)) + RELATIVE_TOLERANCE * a.abs().max(b.abs());
    (a - b).abs() <= slack * (1.0 + 1e-12)
}

fn parse_number(text: &str) -> Option<f64> {
    let looks_numeric = text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
    if !looks_numeric {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Half a unit in the last printed digit of a number's text: its rounding.
fn half_last_digit(text: &str) -> f64 {
    if text.contains(['e', 'E']) {
        return 0.0;
    }
    let decimals = text
        .split_once('.')
        .map_or(0, |(_, fraction)| fraction.len());
    0.5 * 10f64.powi(-(decimals as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(text: &str) -> Option<String> {
        Some(text.to_string())
    }

    #[test]
    fn every_query_has_text_and_answers_for_the_stored_scale_factors() {
        for number in 1..=QUERY_COUNT {
            let text = query_text(number, 0.1).unwrap();
            assert!(text.contains("select"), "Q{number}");
            assert!(
                !text.contains('{'),
                "Q{number} has an unsubstituted parameter"
            );
            for sf in [0.01, 0.1, 1.0] {
                let (answer, _) = expected_answer(number, sf).unwrap();
                assert!(!answer.columns.is_empty(), "Q{number} SF {sf}");
                for row in &answer.rows {
                    assert_eq!(row.len(), answer.columns.len(), "Q{number} SF {sf}");
                }
            }
        }
        assert!(expected_answer(1, 0.5).is_none());
        assert!(query_text(0, 1.0).is_err() && query_text(23, 1.0).is_err());
    }

    #[test]
    fn q11_fraction_is_scaled() {
        assert_eq!(q11_fraction(1.0), "0.0001");
        assert_eq!(q11_fraction(0.1), "0.001");
        assert_eq!(q11_fraction(0.01), "0.01");
        assert!(query_text(11, 0.1).unwrap().contains("* 0.001\n"));
    }

    #[test]
    fn numbers_match_within_either_sides_rounding() {
        assert!(cells_match(&cell("25.52"), &cell("25.522081")));
        assert!(!cells_match(&cell("25.52"), &cell("25.53")));
        assert!(cells_match(&cell("0.049985"), &cell("0.04998529583825443")));
        assert!(!cells_match(&cell("0.0499"), &cell("0.0501")));
        assert!(cells_match(&cell("1478493"), &cell("1478493")));
        assert!(!cells_match(&cell("1478493"), &cell("1478494")));
        assert!(cells_match(&cell("BRAZIL"), &cell("BRAZIL ")));
        assert!(!cells_match(&cell("1995-01-01"), &cell("1995-01-02")));
        assert!(!cells_match(&cell("1"), &None));
        assert!(cells_match(&None, &None));
    }

    #[test]
    fn compare_reports_counts_values_and_order() {
        let expected = Answer::parse("a|b\n1|x\n2|y\n");
        assert_eq!(
            compare(&expected, &Answer::parse("a|b\n1.0|x\n2|y\n")),
            Ok(())
        );
        let wrong_count = compare(&expected, &Answer::parse("a|b\n1|x\n")).unwrap_err();
        assert!(
            wrong_count.starts_with("1 rows, expected 2"),
            "{wrong_count}"
        );
        let reordered = compare(&expected, &Answer::parse("a|b\n2|y\n1|x\n")).unwrap_err();
        assert!(reordered.contains("another order"), "{reordered}");
        let wrong = compare(&expected, &Answer::parse("a|b\n1|x\n3|y\n")).unwrap_err();
        assert!(wrong.starts_with("row 2"), "{wrong}");
        let parsed = Answer::parse("\nc  |d\n 1 |NULL\n");
        assert_eq!(parsed.rows, vec![vec![cell("1"), None]]);
        assert_eq!(Answer::parse(&parsed.to_text()), parsed);
    }
}
