//! `LOAD DATA LOCAL INFILE`: rows from a file the client sends.
//!
//! The server connection reads the whole file before the statement runs (it asks
//! the client for it as soon as it sees the statement) and hands it over with
//! [`Session::set_local_infile`]; [`execute`] splits it into records
//! ([`Records`]) and inserts them through the INSERT path
//! ([`crate::dml::insert_rows`]), so defaults, AUTO_INCREMENT, conversion to the
//! column types and duplicate handling are INSERT's.
//!
//! `SET column = expr` runs per row, in order, after the fields are read
//! (`InsertPlan::for_load`): its expressions read the row's `@variable` fields (NULL
//! for a field the line lacks) and the row's columns converted to their types; each
//! assigned value is converted as INSERT converts, before the next assignment reads
//! it. The `@variable`s keep the last row's fields afterwards, as in MySQL.
//!
//! As in MySQL, LOCAL makes data errors and duplicate keys warnings (the server
//! cannot stop the client mid-file), unless REPLACE is given. Tarn reads no files
//! of its own: LOAD DATA without LOCAL is refused, as MySQL's `secure_file_priv`
//! refuses files outside its directory.
//!
//! Invariants: the file is at most `LOAD_DATA_LOCAL_BYTES_MAX` bytes in memory; a
//! statement that fails leaves the table as it was (statement rollback).

use std::cell::RefCell;

use tarn_common::{Error, Result};
use tarn_row::Value;

use crate::accounts::Privileges;
use crate::bind::{BindContext, Binder};
use crate::dml::{InsertPlan, SourceRow};
use crate::limits::{LOAD_DATA_LOCAL_BYTES_MAX, WARNINGS_MAX};
use crate::parse::{LoadData, LoadDuplicates, LoadTarget};
use crate::session::{QueryResult, Session};

/// The file a client sent for a LOAD DATA LOCAL statement.
pub struct LocalInfile {
    /// The name the statement gave (and the server asked the client for).
    pub file: String,
    pub data: Vec<u8>,
    /// False if the client sent more than `LOAD_DATA_LOCAL_BYTES_MAX` bytes.
    pub complete: bool,
}

/// Error 3948, as MySQL answers when either side has LOCAL off.
fn local_disabled() -> Error {
    Error::sql(
        3948,
        "42000",
        "Loading local data is disabled; this must be enabled on both the client and server sides",
    )
}

/// Runs a LOAD DATA statement.
pub fn execute(session: &mut Session, load: &LoadData) -> Result<QueryResult> {
    if !load.local {
        return Err(Error::sql(
            1290,
            "HY000",
            "The Tarn server reads no files of its own (as MySQL with --secure-file-priv): \
             use LOAD DATA LOCAL INFILE",
        ));
    }
    let infile = match session.take_local_infile() {
        Some(infile) if infile.file == load.file => infile,
        _ => return Err(local_disabled()),
    };
    if !infile.complete {
        return Err(Error::sql(
            1153,
            "08S01",
            format!(
                "The file '{}' is larger than LOAD DATA LOCAL takes ({LOAD_DATA_LOCAL_BYTES_MAX} bytes)",
                load.file
            ),
        ));
    }
    if load.fields_terminated_by.is_empty() || load.lines_terminated_by.is_empty() {
        return Err(Error::sql(
            1235,
            "42000",
            "This version of Tarn doesn't yet support 'LOAD DATA with empty field or line terminators (fixed-width rows)'",
        ));
    }
    let latin1 = match load
        .charset
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("utf8mb4" | "utf8" | "utf8mb3" | "binary" | "default") => false,
        Some("latin1") => true,
        Some(other) => {
            return Err(Error::sql(
                1115,
                "42000",
                format!("Unknown character set: '{other}'"),
            ));
        }
    };
    let (db, name) = Binder::new(session).table_ref(&load.table)?;
    let mut needed = Privileges::INSERT;
    if load.duplicates == LoadDuplicates::Replace {
        needed = needed.union(Privileges::DELETE);
    }
    session.check_table(needed, &db, &name)?;
    let table = BindContext::table(session, &db, &name)?;
    // Where each field goes: a column's place in the plan's column list, or a
    // variable.
    let def = table.def();
    let targets: Vec<LoadTarget> = if load.targets.is_empty() {
        def.columns
            .iter()
            .map(|c| LoadTarget::Column(c.name.clone()))
            .collect()
    } else {
        load.targets.clone()
    };
    let mut columns = Vec::new();
    // The distinct `@variable` targets, lower-cased (user variable names are
    // case-insensitive).
    let mut variables: Vec<String> = Vec::new();
    let mut slots = Vec::with_capacity(targets.len());
    for target in &targets {
        match target {
            LoadTarget::Column(n) => {
                let c = def.column_index(n).map_err(|_| {
                    Error::sql(
                        1054,
                        "42S22",
                        format!("Unknown column '{n}' in 'field list'"),
                    )
                })?;
                if columns.contains(&c) {
                    return Err(Error::sql(
                        1110,
                        "42000",
                        format!("Column '{n}' specified twice"),
                    ));
                }
                slots.push(Slot::Column(columns.len()));
                columns.push(c);
            }
            LoadTarget::Variable(v) => {
                let v = v.to_ascii_lowercase();
                let at = match variables.iter().position(|known| *known == v) {
                    Some(at) => at,
                    None => {
                        variables.push(v);
                        variables.len() - 1
                    }
                };
                slots.push(Slot::Variable(at));
            }
        }
    }
    let plan = InsertPlan::for_load(
        session,
        table.clone(),
        columns.clone(),
        &variables,
        &load.assignments,
        load.duplicates == LoadDuplicates::Ignore,
        load.duplicates == LoadDuplicates::Replace,
    )?;
    let format = Format {
        fields_terminated_by: &load.fields_terminated_by,
        enclosed_by: load.enclosed_by,
        escaped_by: load.escaped_by,
        lines_starting_by: &load.lines_starting_by,
        lines_terminated_by: &load.lines_terminated_by,
    };
    // Warnings about field counts, and the last values of `@variable` targets, are
    // kept aside while the rows stream into the insert and added afterwards.
    let notes: RefCell<Vec<(u16, String)>> = RefCell::new(Vec::new());
    let last_variables: RefCell<Vec<Value>> = RefCell::new(Vec::new());
    let records = Records::new(&infile.data, format)
        .skip(usize::try_from(load.ignore_lines).unwrap_or(usize::MAX))
        .enumerate()
        .map(|(i, fields)| {
            let row_number = i as u64 + 1;
            // The columns' values, then the variables' (NULL unless the line has
            // their field, as in MySQL), which the SET clause reads.
            let mut row: SourceRow = vec![None; columns.len() + variables.len()];
            let field_count = fields.len();
            // An empty line is one empty field, as in MySQL.
            let mut fields = fields.into_iter();
            for slot in &slots {
                let value = match fields.next() {
                    Some(Some(bytes)) => Value::Bytes(if latin1 {
                        latin1_to_utf8(&bytes)
                    } else {
                        bytes
                    }),
                    Some(None) => Value::Null,
                    None => {
                        let mut notes = notes.borrow_mut();
                        if notes.len() < WARNINGS_MAX {
                            notes.push((
                                1261,
                                format!("Row {row_number} doesn't contain data for all columns"),
                            ));
                        }
                        break;
                    }
                };
                match slot {
                    Slot::Column(i) => row[*i] = Some(value),
                    Slot::Variable(i) => row[columns.len() + *i] = Some(value),
                }
            }
            if field_count > slots.len() {
                let mut notes = notes.borrow_mut();
                if notes.len() < WARNINGS_MAX {
                    notes.push((
                        1262,
                        format!(
                            "Row {row_number} was truncated; it contained more data than there were input columns"
                        ),
                    ));
                }
            }
            if !variables.is_empty() {
                *last_variables.borrow_mut() = row[columns.len()..]
                    .iter()
                    .map(|v| v.clone().unwrap_or(Value::Null))
                    .collect();
            }
            Ok(row)
        });
    let inserted = session.transact(false, |session, tx| {
        crate::dml::insert_rows(session, &plan, tx, &[], records)
    })?;
    for (code, message) in notes.into_inner() {
        session.add_warning("Warning", code, message);
    }
    for (name, value) in variables.iter().zip(last_variables.into_inner()) {
        session.set_user_variable(name, value)?;
    }
    let (deleted, skipped) = match load.duplicates {
        LoadDuplicates::Replace => (inserted.duplicates, 0),
        _ => (0, inserted.duplicates),
    };
    Ok(QueryResult::Ok {
        affected_rows: inserted.affected_rows,
        last_insert_id: inserted.first_generated.unwrap_or(0),
        info: format!(
            "Records: {}  Deleted: {deleted}  Skipped: {skipped}  Warnings: {}",
            inserted.rows,
            session.warnings().len()
        ),
    })
}

/// Where a field goes.
enum Slot {
    /// The n-th of the insert plan's columns.
    Column(usize),
    /// The n-th of the statement's distinct `@variable` targets.
    Variable(usize),
}

/// Latin-1 bytes as UTF-8 (each byte is the code point of the same number).
fn latin1_to_utf8(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .map(|&b| b as char)
        .collect::<String>()
        .into_bytes()
}

/// How a file's records and fields are written.
#[derive(Clone, Copy)]
pub struct Format<'a> {
    pub fields_terminated_by: &'a [u8],
    pub enclosed_by: Option<u8>,
    pub escaped_by: Option<u8>,
    pub lines_starting_by: &'a [u8],
    pub lines_terminated_by: &'a [u8],
}

/// The records of a file, each a list of fields, `None` for NULL (`\N` unquoted,
/// or the bare word NULL when fields may be enclosed). MySQL's reading rules:
/// - an escape character makes the next byte literal, except `0 b n r t Z`, which
///   stand for NUL, backspace, newline, return, tab and Ctrl-Z;
/// - a field that starts with the enclosing character runs to the next one that is
///   followed by a field or line terminator (or the end); a doubled enclosing
///   character inside is one;
/// - with LINES STARTING BY, a record starts after the prefix and text before it
///   is skipped (a line without it is skipped whole).
pub struct Records<'a> {
    data: &'a [u8],
    at: usize,
    format: Format<'a>,
}

/// What ended a field.
#[derive(PartialEq, Eq)]
enum End {
    Field,
    Line,
    Data,
}

impl<'a> Records<'a> {
    pub fn new(data: &'a [u8], format: Format<'a>) -> Records<'a> {
        Records {
            data,
            at: 0,
            format,
        }
    }

    fn starts_with_at(&self, at: usize, what: &[u8]) -> bool {
        !what.is_empty() && self.data[at..].starts_with(what)
    }

    /// One field from `self.at`, and what ended it.
    fn field(&mut self) -> (Option<Vec<u8>>, End) {
        let f = self.format;
        let mut out = Vec::new();
        if let Some(quote) = f.enclosed_by
            && self.data.get(self.at) == Some(&quote)
        {
            self.at += 1;
            while self.at < self.data.len() {
                let c = self.data[self.at];
                if Some(c) == f.escaped_by && self.at + 1 < self.data.len() {
                    out.push(unescape(self.data[self.at + 1]));
                    self.at += 2;
                    continue;
                }
                if c == quote {
                    let after = self.at + 1;
                    if self.data.get(after) == Some(&quote) {
                        out.push(quote);
                        self.at += 2;
                        continue;
                    }
                    if after == self.data.len() {
                        self.at = after;
                        return (Some(out), End::Data);
                    }
                    if self.starts_with_at(after, f.fields_terminated_by) {
                        self.at = after + f.fields_terminated_by.len();
                        return (Some(out), End::Field);
                    }
                    if self.starts_with_at(after, f.lines_terminated_by) {
                        self.at = after + f.lines_terminated_by.len();
                        return (Some(out), End::Line);
                    }
                }
                out.push(c);
                self.at += 1;
            }
            return (Some(out), End::Data);
        }
        let start = self.at;
        let mut end = End::Data;
        let mut raw_end = self.data.len();
        while self.at < self.data.len() {
            let c = self.data[self.at];
            if Some(c) == f.escaped_by && self.at + 1 < self.data.len() {
                out.push(unescape(self.data[self.at + 1]));
                self.at += 2;
                continue;
            }
            if self.starts_with_at(self.at, f.fields_terminated_by) {
                raw_end = self.at;
                self.at += f.fields_terminated_by.len();
                end = End::Field;
                break;
            }
            if self.starts_with_at(self.at, f.lines_terminated_by) {
                raw_end = self.at;
                self.at += f.lines_terminated_by.len();
                end = End::Line;
                break;
            }
            out.push(c);
            self.at += 1;
        }
        let raw = &self.data[start..raw_end];
        let null = matches!(raw, [e, b'N'] if Some(*e) == f.escaped_by)
            || (f.enclosed_by.is_some() && raw == b"NULL");
        (if null { None } else { Some(out) }, end)
    }
}

impl Iterator for Records<'_> {
    type Item = Vec<Option<Vec<u8>>>;

    fn next(&mut self) -> Option<Self::Item> {
        let prefix = self.format.lines_starting_by;
        if !prefix.is_empty() {
            let found = self.data[self.at..]
                .windows(prefix.len())
                .position(|w| w == prefix)?;
            self.at += found + prefix.len();
        }
        if self.at >= self.data.len() {
            return None;
        }
        let mut fields = Vec::new();
        loop {
            let (field, end) = self.field();
            fields.push(field);
            if end != End::Field {
                return Some(fields);
            }
        }
    }
}

fn unescape(c: u8) -> u8 {
    match c {
        b'0' => 0,
        b'b' => 0x08,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'Z' => 0x1a,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(data: &[u8], format: Format) -> Vec<Vec<Option<String>>> {
        Records::new(data, format)
            .map(|r| {
                r.into_iter()
                    .map(|f| f.map(|b| String::from_utf8(b).unwrap()))
                    .collect()
            })
            .collect()
    }

    const TSV: Format<'static> = Format {
        fields_terminated_by: b"\t",
        enclosed_by: None,
        escaped_by: Some(b'\\'),
        lines_starting_by: b"",
        lines_terminated_by: b"\n",
    };

    const CSV: Format<'static> = Format {
        fields_terminated_by: b",",
        enclosed_by: Some(b'"'),
        escaped_by: Some(b'\\'),
        lines_starting_by: b"",
        lines_terminated_by: b"\r\n",
    };

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    #[test]
    fn the_default_format_reads_tabs_escapes_and_nulls() {
        let rows = read(b"1\ta\\tb\t\\N\n2\t\\\\N\t\n3", TSV);
        assert_eq!(
            rows,
            vec![
                vec![s("1"), s("a\tb"), None],
                vec![s("2"), s("\\N"), s("")],
                vec![s("3")],
            ]
        );
        // A last line without its terminator is a record; an empty line is one
        // empty field.
        assert_eq!(
            read(b"a\n\nb\n", TSV),
            vec![vec![s("a")], vec![s("")], vec![s("b")]]
        );
        assert!(read(b"", TSV).is_empty());
    }

    #[test]
    fn enclosed_fields_hold_terminators_and_doubled_quotes() {
        let rows = read(
            b"1,\"a,b\",\"say \"\"hi\"\"\",NULL,\"NULL\"\r\n2,\"line\r\nbreak\",x\"y,\\N,\r\n",
            CSV,
        );
        assert_eq!(
            rows,
            vec![
                vec![s("1"), s("a,b"), s("say \"hi\""), None, s("NULL")],
                vec![s("2"), s("line\r\nbreak"), s("x\"y"), None, s("")],
            ]
        );
        // A quote not followed by a terminator is part of the field; an unclosed
        // one runs to the end.
        assert_eq!(read(b"\"a\"b\",c", CSV), vec![vec![s("a\"b"), s("c")]]);
        assert_eq!(read(b"\"open,end", CSV), vec![vec![s("open,end")]]);
    }

    #[test]
    fn a_line_prefix_skips_what_comes_before_it() {
        let format = Format {
            lines_starting_by: b"xxx",
            ..TSV
        };
        let rows = read(b"xxx1\ta\nskipped line\nsomething xxx2\tb\n", format);
        assert_eq!(rows, vec![vec![s("1"), s("a")], vec![s("2"), s("b")]]);
    }

    #[test]
    fn without_an_escape_character_backslashes_are_data() {
        let format = Format {
            escaped_by: None,
            ..TSV
        };
        assert_eq!(
            read(b"a\\tb\t\\N\n", format),
            vec![vec![s("a\\tb"), s("\\N")]]
        );
    }
}
