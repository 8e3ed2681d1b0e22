//! JSON documents as MySQL 8 has them: the value ([`Json`]), its parser, its printed
//! (normalized) form, the order JSON values compare in, and paths ([`path`]).
//!
//! Between expressions and in a JSON column a document travels as text: a
//! `Value::Bytes` holding the document exactly as MySQL 8 prints it. The printed form
//! is normalized, so equal documents written differently are stored alike:
//!
//! - one space after `:` and `,`, none elsewhere (`{"a": 1, "b": [1, 2]}`);
//! - object keys sorted by length, then bytewise (MySQL's key order), each key once:
//!   of duplicate keys the last wins (as MySQL 8; 5.7 kept the first);
//! - integers stay integers (`-5`, `18446744073709551615`); other numbers are
//!   DOUBLEs printed in their shortest round-trip digits, with `.0` added when that
//!   shows neither a point nor an exponent (`1.0`, `1e300`, `0.1`);
//! - strings escape `"`, `\` and the control characters below 0x1f (`\n`, `\u0001`;
//!   MySQL leaves 0x1f itself as it is), nothing else.
//!
//! Invariants: every text a JSON-typed expression yields parses ([`parse`]) and prints
//! back to itself; no document is deeper than [`JSON_DEPTH_MAX`] (parsing and printing
//! both refuse one with error 3157), which also bounds every recursion over a value.
//!
//! What the text form loses: a DECIMAL put into a document (`JSON_OBJECT('a', 1.50)`)
//! prints as MySQL prints it (`1.50`), but once printed it reads back as the DOUBLE
//! 1.5, and a DATE or DATETIME is a string (MySQL keeps both types in its binary
//! form, so `JSON_TYPE` says DECIMAL or DATE there).
//!
//! Errors follow MySQL: text that is no JSON is 3140 (a column's value) or 3141 (a
//! function's argument) with rapidjson's message and the byte offset it stopped at.

pub mod path;

use std::cmp::Ordering;
use std::collections::BTreeMap;

use tarn_common::{Error, Result};
use tarn_row::decimal::Decimal;
use tarn_row::value::Value;

use crate::limits::JSON_DEPTH_MAX;
use crate::scalar::cast::{self, JsonCast};

/// An object key. Keys order as MySQL stores them: shorter first, then bytewise.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key(pub String);

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.as_bytes().cmp(other.0.as_bytes()))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// INTEGER: what the parser makes of integers that fit an `i64`, except
    /// non-negative ones past `u32::MAX` (rapidjson hands MySQL those as unsigned).
    Int(i64),
    /// UNSIGNED INTEGER.
    UInt(u64),
    Double(f64),
    /// DECIMAL: only from an SQL DECIMAL (see the module documentation).
    Decimal(Decimal),
    String(String),
    Array(Vec<Json>),
    Object(BTreeMap<Key, Json>),
}

/// Why a text is not a JSON document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// rapidjson's message and the byte offset of the problem.
    Syntax {
        message: &'static str,
        position: usize,
    },
    /// Nesting past [`JSON_DEPTH_MAX`].
    TooDeep,
}

impl ParseError {
    /// The error for a bad argument `position` (1-based) of `function`
    /// (ER_INVALID_JSON_TEXT_IN_PARAM, 3141).
    pub fn for_argument(&self, position: usize, function: &str) -> Error {
        match self {
            ParseError::Syntax {
                message,
                position: at,
            } => Error::sql(
                3141,
                "22032",
                format!(
                    "Invalid JSON text in argument {position} to function {function}: \"{message}\" at position {at}."
                ),
            ),
            ParseError::TooDeep => too_deep(),
        }
    }

    /// The error for a bad value of a JSON column (ER_INVALID_JSON_TEXT, 3140).
    pub fn for_column(&self, column: &str) -> Error {
        match self {
            ParseError::Syntax { message, position } => {
                invalid_text_for_column(message, *position, column)
            }
            ParseError::TooDeep => too_deep(),
        }
    }
}

fn invalid_text_for_column(message: &str, position: usize, column: &str) -> Error {
    Error::sql(
        3140,
        "22032",
        format!(
            "Invalid JSON text: \"{message}\" at position {position} in value for column '{column}'."
        ),
    )
}

/// ER_JSON_DOCUMENT_TOO_DEEP (3157).
pub fn too_deep() -> Error {
    Error::sql(
        3157,
        "22032",
        "The JSON document exceeds the maximum depth.",
    )
}

/// ER_INVALID_TYPE_FOR_JSON (3146): a document argument that is neither JSON nor a
/// string.
pub fn invalid_type(position: usize, function: &str) -> Error {
    Error::sql(
        3146,
        "22032",
        format!(
            "Invalid data type for JSON data in argument {position} to function {function}; a JSON string or JSON type is required."
        ),
    )
}

// --- Parsing ----------------------------------------------------------------------------

/// Parses JSON text (RFC 8259, as rapidjson reads it for MySQL).
pub fn parse(text: &[u8]) -> std::result::Result<Json, ParseError> {
    let mut p = Parser {
        text,
        pos: 0,
        depth: 0,
    };
    p.skip_whitespace();
    if p.pos == text.len() {
        return Err(p.error("The document is empty."));
    }
    let value = p.value()?;
    p.skip_whitespace();
    if p.pos < text.len() {
        return Err(p.error("The document root must not be followed by other values."));
    }
    Ok(value)
}

/// The document a function's argument holds: JSON text (a JSON value or a string) is
/// parsed, NULL is None, and anything else is error 3146.
pub fn argument(v: &Value, position: usize, function: &str) -> Result<Option<Json>> {
    match v {
        Value::Null => Ok(None),
        Value::Bytes(b) => parse(b)
            .map(Some)
            .map_err(|e| e.for_argument(position, function)),
        _ => Err(invalid_type(position, function)),
    }
}

/// A value made JSON (the conversions of [`JsonCast`]); NULL stays NULL.
pub fn convert(v: &Value, how: JsonCast) -> Result<Value> {
    let doc = match (how, v) {
        (_, Value::Null) => return Ok(Value::Null),
        (JsonCast::Parse { .. } | JsonCast::CompareKey, Value::Bytes(b)) => {
            parse(b).map_err(|e| e.for_argument(1, "cast_as_json"))?
        }
        (JsonCast::Parse { boolean } | JsonCast::Scalar { boolean }, v) => {
            Json::from_sql(v, boolean)
        }
        (JsonCast::CompareKey, v) => Json::from_sql(v, false),
    };
    if how == JsonCast::CompareKey {
        let mut key = Vec::new();
        doc.compare_key(&mut key);
        return Ok(Value::Bytes(key));
    }
    doc.to_value()
}

/// A value for a JSON column, in the normalized form: text is parsed and printed
/// again; a number or a date is error 3140, as MySQL wants a CAST for them.
pub fn column_value(v: Value, column: &str) -> Result<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Bytes(b) => {
            let doc = parse(&b).map_err(|e| e.for_column(column))?;
            Ok(Value::Bytes(doc.to_text()?.into_bytes()))
        }
        _ => Err(invalid_text_for_column(
            "not a JSON text, may need CAST",
            0,
            column,
        )),
    }
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: &'static str) -> ParseError {
        self.error_at(message, self.pos)
    }

    fn error_at(&self, message: &'static str, position: usize) -> ParseError {
        ParseError::Syntax { message, position }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn consume(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> std::result::Result<Json, ParseError> {
        match self.peek() {
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            _ => self.number(),
        }
    }

    fn literal(&mut self, word: &[u8], value: Json) -> std::result::Result<Json, ParseError> {
        for &b in word {
            if !self.consume(b) {
                return Err(self.error("Invalid value."));
            }
        }
        Ok(value)
    }

    fn enter(&mut self) -> std::result::Result<(), ParseError> {
        self.depth += 1;
        if self.depth > JSON_DEPTH_MAX {
            return Err(ParseError::TooDeep);
        }
        Ok(())
    }

    fn object(&mut self) -> std::result::Result<Json, ParseError> {
        self.pos += 1;
        self.enter()?;
        let mut members = BTreeMap::new();
        self.skip_whitespace();
        if self.consume(b'}') {
            self.depth -= 1;
            return Ok(Json::Object(members));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.error("Missing a name for object member."));
            }
            let key = self.string()?;
            self.skip_whitespace();
            if !self.consume(b':') {
                return Err(self.error("Missing a colon after a name of object member."));
            }
            self.skip_whitespace();
            let value = self.value()?;
            // Of duplicate keys the last wins (MySQL 8).
            members.insert(Key(key), value);
            self.skip_whitespace();
            if self.consume(b',') {
                self.skip_whitespace();
            } else if self.consume(b'}') {
                self.depth -= 1;
                return Ok(Json::Object(members));
            } else {
                return Err(self.error("Missing a comma or '}' after an object member."));
            }
        }
    }

    fn array(&mut self) -> std::result::Result<Json, ParseError> {
        self.pos += 1;
        self.enter()?;
        let mut elements = Vec::new();
        self.skip_whitespace();
        if self.consume(b']') {
            self.depth -= 1;
            return Ok(Json::Array(elements));
        }
        loop {
            elements.push(self.value()?);
            self.skip_whitespace();
            if self.consume(b',') {
                self.skip_whitespace();
            } else if self.consume(b']') {
                self.depth -= 1;
                return Ok(Json::Array(elements));
            } else {
                return Err(self.error("Missing a comma or ']' after an array element."));
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> std::result::Result<Json, ParseError> {
        let start = self.pos;
        let minus = self.consume(b'-');
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("Invalid value.")),
        }
        let mut integral = true;
        if self.consume(b'.') {
            integral = false;
            if self.digits() == 0 {
                return Err(self.error("Miss fraction part in number."));
            }
        }
        if self.consume(b'e') || self.consume(b'E') {
            integral = false;
            if !self.consume(b'+') {
                self.consume(b'-');
            }
            if self.digits() == 0 {
                return Err(self.error("Miss exponent in number."));
            }
        }
        // The number is ASCII by construction.
        let text = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("0");
        if integral {
            if minus {
                if let Ok(i) = text.parse::<i64>() {
                    return Ok(Json::Int(i));
                }
            } else if let Ok(u) = text.parse::<u64>() {
                return Ok(if u <= u64::from(u32::MAX) {
                    Json::Int(u as i64)
                } else {
                    Json::UInt(u)
                });
            }
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Json::Double(f)),
            _ => Err(self.error_at("Number too big to be stored in double.", start)),
        }
    }

    fn hex4(&mut self, escape_at: usize) -> std::result::Result<u32, ParseError> {
        let mut code = 0u32;
        for _ in 0..4 {
            let digit = self.peek().and_then(|b| (b as char).to_digit(16));
            let Some(digit) = digit else {
                return Err(
                    self.error_at("Incorrect hex digit after \\u escape in string.", escape_at)
                );
            };
            code = code * 16 + digit;
            self.pos += 1;
        }
        Ok(code)
    }

    fn string(&mut self) -> std::result::Result<String, ParseError> {
        self.pos += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("Missing a closing quotation mark in string."));
            };
            match c {
                b'"' => {
                    self.pos += 1;
                    // Checked character by character below.
                    return Ok(String::from_utf8(out).unwrap_or_default());
                }
                b'\\' => {
                    let escape_at = self.pos;
                    self.pos += 1;
                    let simple = match self.peek() {
                        Some(b'"') => Some(b'"'),
                        Some(b'\\') => Some(b'\\'),
                        Some(b'/') => Some(b'/'),
                        Some(b'b') => Some(0x08),
                        Some(b'f') => Some(0x0c),
                        Some(b'n') => Some(b'\n'),
                        Some(b'r') => Some(b'\r'),
                        Some(b't') => Some(b'\t'),
                        _ => None,
                    };
                    if let Some(b) = simple {
                        self.pos += 1;
                        out.push(b);
                        continue;
                    }
                    if !self.consume(b'u') {
                        return Err(self.error_at("Invalid escape character in string.", escape_at));
                    }
                    let mut code = self.hex4(escape_at)?;
                    let surrogate = "The surrogate pair in string is invalid.";
                    if (0xD800..=0xDBFF).contains(&code) {
                        if !(self.consume(b'\\') && self.consume(b'u')) {
                            return Err(self.error_at(surrogate, escape_at));
                        }
                        let low = self.hex4(escape_at)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(self.error_at(surrogate, escape_at));
                        }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                    } else if (0xDC00..=0xDFFF).contains(&code) {
                        return Err(self.error_at(surrogate, escape_at));
                    }
                    let ch = char::from_u32(code).unwrap_or('\u{FFFD}');
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                0 => return Err(self.error("Missing a closing quotation mark in string.")),
                c if c < 0x20 => return Err(self.error("Invalid encoding in string.")),
                c if c < 0x80 => {
                    out.push(c);
                    self.pos += 1;
                }
                _ => {
                    let len = cast::utf8_char_len(self.text, self.pos);
                    let ch = &self.text[self.pos..self.pos + len];
                    if std::str::from_utf8(ch).is_err() {
                        return Err(self.error("Invalid encoding in string."));
                    }
                    out.extend_from_slice(ch);
                    self.pos += len;
                }
            }
        }
    }
}

// --- Printing ---------------------------------------------------------------------------

/// `s` as a JSON string: quoted, with MySQL's escapes.
pub fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // MySQL escapes the control characters below 0x1f (not 0x1f itself).
            c if (c as u32) < 0x1f => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A DOUBLE as MySQL prints one in JSON: its shortest digits, `.0` when they would
/// read as an integer.
fn format_json_double(f: f64) -> String {
    let mut text = cast::format_double(f);
    if !text.contains(['.', 'e']) {
        text.push_str(".0");
    }
    text
}

impl Json {
    /// The normalized text (see the module documentation); 3157 past the depth bound.
    pub fn to_text(&self) -> Result<String> {
        let mut out = String::new();
        self.write(&mut out, 0)?;
        Ok(out)
    }

    /// The text as a `Value`.
    pub fn to_value(&self) -> Result<Value> {
        Ok(Value::Bytes(self.to_text()?.into_bytes()))
    }

    fn write(&self, out: &mut String, depth: usize) -> Result<()> {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => out.push_str(&i.to_string()),
            Json::UInt(u) => out.push_str(&u.to_string()),
            Json::Double(f) => out.push_str(&format_json_double(*f)),
            Json::Decimal(d) => out.push_str(&d.to_string()),
            Json::String(s) => quote(s, out),
            Json::Array(elements) => {
                if depth >= JSON_DEPTH_MAX {
                    return Err(too_deep());
                }
                out.push('[');
                for (i, e) in elements.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    e.write(out, depth + 1)?;
                }
                out.push(']');
            }
            Json::Object(members) => {
                if depth >= JSON_DEPTH_MAX {
                    return Err(too_deep());
                }
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    quote(&k.0, out);
                    out.push_str(": ");
                    v.write(out, depth + 1)?;
                }
                out.push('}');
            }
        }
        Ok(())
    }

    /// What JSON_TYPE() says.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "NULL",
            Json::Bool(_) => "BOOLEAN",
            Json::Int(_) => "INTEGER",
            Json::UInt(_) => "UNSIGNED INTEGER",
            Json::Double(_) => "DOUBLE",
            Json::Decimal(_) => "DECIMAL",
            Json::String(_) => "STRING",
            Json::Array(_) => "ARRAY",
            Json::Object(_) => "OBJECT",
        }
    }

    /// JSON_LENGTH: elements of an array, members of an object, 1 for a scalar.
    pub fn length(&self) -> usize {
        match self {
            Json::Array(a) => a.len(),
            Json::Object(o) => o.len(),
            _ => 1,
        }
    }

    /// JSON_DEPTH: 1 for a scalar or an empty container, else 1 + its deepest child.
    pub fn depth(&self) -> usize {
        let children = match self {
            Json::Array(a) => a.iter().map(Json::depth).max(),
            Json::Object(o) => o.values().map(Json::depth).max(),
            _ => None,
        };
        1 + children.unwrap_or(0)
    }

    pub fn is_container(&self) -> bool {
        matches!(self, Json::Array(_) | Json::Object(_))
    }

    /// The value an SQL value becomes inside a document (JSON_OBJECT's values,
    /// JSON_ARRAY's elements, JSON_SET's new values, a comparison with JSON): NULL
    /// is null, a number keeps its type, a string is a JSON string, a date or time its
    /// text (a DATETIME or TIME with six fraction digits, as MySQL prints one). `boolean`: the
    /// value is a predicate's (comparisons, `TRUE`), so 1 and 0 are true and false.
    pub fn from_sql(v: &Value, boolean: bool) -> Json {
        match v {
            Value::Null => Json::Null,
            Value::Int(i) if boolean => Json::Bool(*i != 0),
            Value::Int(i) => Json::Int(*i),
            Value::UInt(u) => Json::UInt(*u),
            Value::Decimal(d) => Json::Decimal(*d),
            Value::Float(f) => Json::Double(f64::from(*f)),
            Value::Double(f) => Json::Double(*f),
            Value::Date(d) => Json::String(d.to_string()),
            Value::DateTime(dt) => Json::String(dt.display_fsp(6)),
            Value::Time(t) => Json::String(t.display_fsp(6)),
            Value::Bytes(b) => Json::String(String::from_utf8_lossy(b).into_owned()),
        }
    }

    /// JSON_UNQUOTE's text of a value: a string's own characters, else the printed
    /// form.
    pub fn unquoted(&self) -> Result<String> {
        match self {
            Json::String(s) => Ok(s.clone()),
            other => other.to_text(),
        }
    }

    /// Bytes that compare (bytewise) as MySQL compares JSON values
    /// (`Json_wrapper::compare`): by type first (null < numbers < strings < objects <
    /// arrays < booleans), numbers by value whatever their type (1 = 1.0), strings
    /// bytewise, arrays element by element (a prefix first), objects by member count
    /// and then member by member in key order. Equal values give equal bytes.
    pub fn compare_key(&self, out: &mut Vec<u8>) {
        match self {
            Json::Null => out.push(1),
            Json::Int(_) | Json::UInt(_) | Json::Double(_) | Json::Decimal(_) => {
                out.push(2);
                number_key(self, out);
            }
            Json::String(s) => {
                out.push(3);
                string_key(s, out);
            }
            Json::Object(members) => {
                out.push(4);
                out.extend_from_slice(&(members.len() as u64).to_be_bytes());
                for (k, v) in members {
                    string_key(&k.0, out);
                    v.compare_key(out);
                }
            }
            Json::Array(elements) => {
                out.push(5);
                for e in elements {
                    e.compare_key(out);
                }
                // Below every element's first byte: a prefix sorts first.
                out.push(0);
            }
            Json::Bool(b) => {
                out.push(6);
                out.push(u8::from(*b));
            }
        }
    }

    /// Whether two values are equal as MySQL compares JSON.
    pub fn equals(&self, other: &Json) -> bool {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        self.compare_key(&mut a);
        other.compare_key(&mut b);
        a == b
    }
}

/// A string's bytes with each 0x00 written 0x00 0xff, then 0x00 0x00: bytewise order,
/// a prefix first, and self-delimiting.
fn string_key(s: &str, out: &mut Vec<u8>) {
    for &b in s.as_bytes() {
        out.push(b);
        if b == 0 {
            out.push(0xff);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// A number as sign, decimal exponent and significant digits, ordered bytewise by
/// value: 0x80 for zero; 0x81, the exponent (biased, big-endian) and the digits, then
/// 0x00, for a positive number; 0x7f and all of that inverted for a negative one. A
/// DOUBLE's digits are its shortest round-trip digits, as MySQL turns a DOUBLE into a
/// DECIMAL to compare it with one.
fn number_key(n: &Json, out: &mut Vec<u8>) {
    let text = match n {
        Json::Int(i) => i.to_string(),
        Json::UInt(u) => u.to_string(),
        Json::Decimal(d) => d.to_string(),
        Json::Double(f) => format!("{f:e}"),
        _ => String::new(),
    };
    let (negative, digits, exponent) = decimal_digits(&text);
    if digits.is_empty() {
        out.push(0x80);
        return;
    }
    let biased = (exponent as i64 + (1 << 31)) as u32;
    let mut body = Vec::with_capacity(digits.len() + 5);
    body.extend_from_slice(&biased.to_be_bytes());
    body.extend_from_slice(digits.as_bytes());
    body.push(0);
    if negative {
        out.push(0x7f);
        out.extend(body.iter().map(|b| !b));
    } else {
        out.push(0x81);
        out.extend_from_slice(&body);
    }
}

/// The sign, significant digits (no leading or trailing zeros; empty for zero) and
/// exponent `e` of a number written `[-]int[.frac][e±x]`, its value being
/// `0.digits × 10^e`.
fn decimal_digits(text: &str) -> (bool, String, i32) {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exp) = match rest.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (rest, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut exponent = int_part.len() as i32 + exp;
    let all: String = int_part.chars().chain(frac_part.chars()).collect();
    let trimmed_start = all.trim_start_matches('0');
    exponent -= (all.len() - trimmed_start.len()) as i32;
    let digits = trimmed_start.trim_end_matches('0').to_string();
    (negative && !digits.is_empty(), digits, exponent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(text: &str) -> String {
        parse(text.as_bytes()).unwrap().to_text().unwrap()
    }

    fn err(text: &str) -> (String, usize) {
        match parse(text.as_bytes()) {
            Err(ParseError::Syntax { message, position }) => (message.to_string(), position),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn prints_in_mysql_normal_form() {
        assert_eq!(norm(r#"{"b":[1,2],"a":1}"#), r#"{"a": 1, "b": [1, 2]}"#);
        assert_eq!(
            norm(r#"{"bb":1,"a":2,"c":3}"#),
            r#"{"a": 2, "c": 3, "bb": 1}"#
        );
        assert_eq!(norm(r#"{"a":1,"a":2}"#), r#"{"a": 2}"#);
        assert_eq!(norm(" [ ] "), "[]");
        assert_eq!(norm("{}"), "{}");
        assert_eq!(norm("1.0"), "1.0");
        assert_eq!(norm("1e2"), "100.0");
        assert_eq!(norm("1.5"), "1.5");
        assert_eq!(norm("-0"), "0");
        assert_eq!(norm("1e300"), "1e300");
        assert_eq!(norm("0.1"), "0.1");
        assert_eq!(norm("18446744073709551615"), "18446744073709551615");
        assert_eq!(norm("18446744073709551616"), "1.8446744073709552e19");
        // MySQL escapes the control characters below 0x1f, not 0x1f itself.
        assert_eq!(
            norm(r#""a\u0001\u001f\n\/\"""#),
            "\"a\\u0001\u{1f}\\n/\\\"\""
        );
        assert_eq!(norm(r#""\ud83d\ude00""#), "\"😀\"");
        assert_eq!(norm("true"), "true");
    }

    #[test]
    fn reports_errors_as_rapidjson() {
        assert_eq!(err(""), ("The document is empty.".into(), 0));
        assert_eq!(err("{"), ("Missing a name for object member.".into(), 1));
        assert_eq!(err("abc"), ("Invalid value.".into(), 0));
        assert_eq!(err("tru"), ("Invalid value.".into(), 3));
        assert_eq!(err("[1,]"), ("Invalid value.".into(), 3));
        assert_eq!(
            err(r#"{"a" 1}"#),
            ("Missing a colon after a name of object member.".into(), 5)
        );
        assert_eq!(
            err("[1 2]"),
            ("Missing a comma or ']' after an array element.".into(), 3)
        );
        assert_eq!(
            err("1 2"),
            (
                "The document root must not be followed by other values.".into(),
                2
            )
        );
        assert_eq!(err("1."), ("Miss fraction part in number.".into(), 2));
        assert_eq!(err("1e"), ("Miss exponent in number.".into(), 2));
        assert_eq!(
            err(r#""\x""#),
            ("Invalid escape character in string.".into(), 1)
        );
        assert_eq!(
            err("\"ab"),
            ("Missing a closing quotation mark in string.".into(), 3)
        );
        assert_eq!(err("\"a\nb\""), ("Invalid encoding in string.".into(), 2));
        assert_eq!(
            err("1e400"),
            ("Number too big to be stored in double.".into(), 0)
        );
    }

    #[test]
    fn depth_is_bounded() {
        let ok = "[".repeat(JSON_DEPTH_MAX) + &"]".repeat(JSON_DEPTH_MAX);
        assert!(parse(ok.as_bytes()).is_ok());
        let deep = "[".repeat(JSON_DEPTH_MAX + 1) + &"]".repeat(JSON_DEPTH_MAX + 1);
        assert_eq!(parse(deep.as_bytes()), Err(ParseError::TooDeep));
        let mut v = parse(ok.as_bytes()).unwrap();
        assert!(v.to_text().is_ok());
        v = Json::Array(vec![v]);
        assert_eq!(v.to_text().unwrap_err().mysql_code(), 3157);
    }

    #[test]
    fn compare_keys_order_as_mysql() {
        let key = |text: &str| {
            let mut out = Vec::new();
            parse(text.as_bytes()).unwrap().compare_key(&mut out);
            out
        };
        let ascending = [
            "null",
            "-1e300",
            "-10",
            "-9.5",
            "-1",
            "0",
            "0.1",
            "1",
            "1.5",
            "2",
            "10",
            "9007199254740993",
            "18446744073709551615",
            "1e300",
            r#""""#,
            r#""a""#,
            r#""a\u0000""#,
            r#""ab""#,
            r#""b""#,
            "{}",
            r#"{"a": 2}"#,
            r#"{"b": 1}"#,
            r#"{"a": 1, "b": 1}"#,
            "[]",
            "[1]",
            "[1, 2]",
            "[2]",
            "false",
            "true",
        ];
        for pair in ascending.windows(2) {
            assert!(key(pair[0]) < key(pair[1]), "{} < {}", pair[0], pair[1]);
        }
        assert_eq!(key("1"), key("1.0"));
        assert_eq!(key("0"), key("-0.0"));
        assert_eq!(key("100"), key("1e2"));
        assert_eq!(key("[1, {\"a\": 1.0}]"), key("[1.0, {\"a\": 1}]"));
        assert_ne!(key("9007199254740993"), key("9007199254740992.0"));
        let mut d = Vec::new();
        Json::Decimal(Decimal::parse("1.50").unwrap()).compare_key(&mut d);
        assert_eq!(d, key("1.5"));
    }
}
