//! `LOAD DATA [LOCAL] INFILE`, which sqlparser does not know in MySQL's form.
//!
//! ```text
//! LOAD DATA [LOW_PRIORITY | CONCURRENT] [LOCAL] INFILE 'file'
//!     [REPLACE | IGNORE] INTO TABLE t
//!     [CHARACTER SET cs]
//!     [{FIELDS | COLUMNS} [TERMINATED BY 's'] [[OPTIONALLY] ENCLOSED BY 'c'] [ESCAPED BY 'c']]
//!     [LINES [STARTING BY 's'] [TERMINATED BY 's']]
//!     [IGNORE n {LINES | ROWS}]
//!     [(column_or_@variable, ...)]
//!     [SET column = expr, ...]
//! ```
//!
//! The FIELDS and LINES options may come in any order within their clause, as in
//! MySQL. What the options mean is `crate::load`'s business.

use sqlparser::ast;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::Statement;
use super::special::{at_end, eat_word, expect_word, expect_words, unexpected};

/// What a duplicate key does to a loaded row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadDuplicates {
    /// The default without LOCAL: the statement fails.
    Error,
    /// `IGNORE` (and LOCAL without REPLACE): the row is skipped with a warning.
    Ignore,
    /// `REPLACE`: the old row goes.
    Replace,
}

/// Where one field of a line goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadTarget {
    Column(String),
    /// `@name`: the field goes to a user variable (often `@dummy`, to skip it).
    Variable(String),
}

/// A parsed `LOAD DATA` statement.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadData {
    pub local: bool,
    pub file: String,
    pub duplicates: LoadDuplicates,
    pub table: ast::ObjectName,
    pub charset: Option<String>,
    pub fields_terminated_by: Vec<u8>,
    pub enclosed_by: Option<u8>,
    /// `OPTIONALLY ENCLOSED BY`: only matters when writing files; read the same way.
    pub optionally_enclosed: bool,
    pub escaped_by: Option<u8>,
    pub lines_starting_by: Vec<u8>,
    pub lines_terminated_by: Vec<u8>,
    pub ignore_lines: u64,
    /// The targets of the fields in order; empty: every column of the table.
    pub targets: Vec<LoadTarget>,
    /// `SET column = expr`.
    pub assignments: Vec<(String, ast::Expr)>,
}

/// Parses `LOAD DATA ...` to its end.
pub(super) fn load_data(p: &mut Parser) -> Result<Statement, ParserError> {
    expect_words(p, &["LOAD", "DATA"])?;
    if !eat_word(p, "LOW_PRIORITY") {
        eat_word(p, "CONCURRENT");
    }
    let local = eat_word(p, "LOCAL");
    expect_word(p, "INFILE")?;
    let file = p.parse_literal_string()?;
    let duplicates = if eat_word(p, "REPLACE") {
        LoadDuplicates::Replace
    } else if eat_word(p, "IGNORE") {
        LoadDuplicates::Ignore
    } else if local {
        // The server cannot stop a client mid-file: MySQL treats LOCAL as IGNORE.
        LoadDuplicates::Ignore
    } else {
        LoadDuplicates::Error
    };
    expect_words(p, &["INTO", "TABLE"])?;
    let table = p.parse_object_name(false)?;
    if eat_word(p, "PARTITION") {
        return Err(unexpected(
            p,
            "no PARTITION (Tarn has no partitioned tables)",
        ));
    }
    let mut load = LoadData {
        local,
        file,
        duplicates,
        table,
        charset: None,
        fields_terminated_by: b"\t".to_vec(),
        enclosed_by: None,
        optionally_enclosed: false,
        escaped_by: Some(b'\\'),
        lines_starting_by: Vec::new(),
        lines_terminated_by: b"\n".to_vec(),
        ignore_lines: 0,
        targets: Vec::new(),
        assignments: Vec::new(),
    };
    if eat_word(p, "CHARACTER") {
        expect_word(p, "SET")?;
        load.charset = Some(name_or_string(p)?);
    } else if eat_word(p, "CHARSET") {
        load.charset = Some(name_or_string(p)?);
    }
    if eat_word(p, "FIELDS") || eat_word(p, "COLUMNS") {
        let mut any = false;
        loop {
            if eat_word(p, "TERMINATED") {
                expect_word(p, "BY")?;
                load.fields_terminated_by = string(p)?;
            } else if eat_word(p, "OPTIONALLY") {
                expect_words(p, &["ENCLOSED", "BY"])?;
                load.enclosed_by = one_byte(p, "ENCLOSED BY")?;
                load.optionally_enclosed = true;
            } else if eat_word(p, "ENCLOSED") {
                expect_word(p, "BY")?;
                load.enclosed_by = one_byte(p, "ENCLOSED BY")?;
            } else if eat_word(p, "ESCAPED") {
                expect_word(p, "BY")?;
                load.escaped_by = one_byte(p, "ESCAPED BY")?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(unexpected(p, "TERMINATED, ENCLOSED or ESCAPED"));
        }
    }
    if eat_word(p, "LINES") {
        let mut any = false;
        loop {
            if eat_word(p, "STARTING") {
                expect_word(p, "BY")?;
                load.lines_starting_by = string(p)?;
            } else if eat_word(p, "TERMINATED") {
                expect_word(p, "BY")?;
                load.lines_terminated_by = string(p)?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(unexpected(p, "STARTING or TERMINATED"));
        }
    }
    if eat_word(p, "IGNORE") {
        load.ignore_lines = p.parse_literal_uint()?;
        if !eat_word(p, "LINES") {
            expect_word(p, "ROWS")?;
        }
    }
    if p.consume_token(&Token::LParen) && !p.consume_token(&Token::RParen) {
        load.targets = p.parse_comma_separated(target)?;
        p.expect_token(&Token::RParen)?;
    }
    if eat_word(p, "SET") {
        load.assignments = p.parse_comma_separated(|p| {
            let column = p.parse_identifier()?.value;
            p.expect_token(&Token::Eq)?;
            Ok((column, p.parse_expr()?))
        })?;
    }
    if !at_end(p) {
        return Err(unexpected(p, "end of statement"));
    }
    Ok(Statement::LoadData(Box::new(load)))
}

fn target(p: &mut Parser) -> Result<LoadTarget, ParserError> {
    let name = p.parse_identifier()?;
    Ok(match name.value.strip_prefix('@') {
        Some(variable) if name.quote_style.is_none() => LoadTarget::Variable(variable.to_string()),
        _ => LoadTarget::Column(name.value),
    })
}

fn name_or_string(p: &mut Parser) -> Result<String, ParserError> {
    match p.peek_token().token {
        Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) => p.parse_literal_string(),
        _ => Ok(p.parse_identifier()?.value),
    }
}

/// A string option's bytes (escapes already resolved by the tokenizer), or a hex
/// literal's (`X'09'`, `0x09`).
fn string(p: &mut Parser) -> Result<Vec<u8>, ParserError> {
    match p.peek_token().token {
        Token::HexStringLiteral(hex) => {
            p.next_token();
            decode_hex(&hex).ok_or_else(|| unexpected(p, "a hexadecimal string"))
        }
        Token::Number(n, _) if n.starts_with("0x") || n.starts_with("0X") => {
            p.next_token();
            decode_hex(&n[2..]).ok_or_else(|| unexpected(p, "a hexadecimal string"))
        }
        _ => Ok(p.parse_literal_string()?.into_bytes()),
    }
}

pub(super) fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// ENCLOSED BY / ESCAPED BY: one byte, or none for `''`.
fn one_byte(p: &mut Parser, what: &str) -> Result<Option<u8>, ParserError> {
    let bytes = string(p)?;
    match bytes.as_slice() {
        [] => Ok(None),
        [b] => Ok(Some(*b)),
        _ => Err(ParserError::ParserError(format!(
            "{what} takes a single character"
        ))),
    }
}
