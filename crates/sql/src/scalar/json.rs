//! The JSON functions (`JSON_EXTRACT`, `->`, `->>`, `JSON_OBJECT`, `JSON_SET`, ...),
//! by uppercase name, over the documents of [`crate::json`].
//!
//! How arguments arrive (the binder arranges it, `crate::bind` with
//! [`is_value_argument`]):
//!
//! - a *document* argument (JSON_EXTRACT's first, JSON_CONTAINS's first two, ...) is
//!   the value as it is: JSON text, whether the expression is JSON or a string, is
//!   parsed here, so a bad text is error 3141 naming this function and the argument;
//!   NULL is NULL; any other value is error 3146;
//! - a *value* argument (JSON_OBJECT's values, JSON_ARRAY's elements, JSON_SET's new
//!   values) is JSON text, or a number or a date that becomes the JSON scalar it is:
//!   the binder converts strings and predicates with
//!   [`crate::scalar::cast::JsonCast::Scalar`] (a string becomes a JSON string, not
//!   a document); NULL is the JSON null;
//! - paths, keys and the other arguments are plain values (a path is error 3143 when
//!   it does not read).
//!
//! NULL: a NULL document or path makes the result NULL, as a path that selects
//! nothing does for JSON_EXTRACT, JSON_LENGTH, JSON_KEYS and JSON_CONTAINS; the
//! document is read before the paths (a bad document is reported first). Results that
//! are documents are JSON text ([`Json::to_text`]).
//!
//! Not here: `JSON_ARRAYAGG` and `JSON_OBJECTAGG` (aggregates, [`super::agg`]), and
//! `JSON_TABLE`, `JSON_SCHEMA_*`, `JSON_PRETTY`, `JSON_STORAGE_*` (not supported
//! yet). `value MEMBER OF (array)` is the call [`MEMBER_OF`]. JSON_VALUE is here ([`json_value`]) but is
//! its own expression (`Expr::JsonValue`), as it carries a type and responses.

use tarn_common::{Error, Result};
use tarn_row::types::Collation;
use tarn_row::value::Value;

use super::cast::{CastTarget, to_text};
use super::like::like;
use crate::json::path::{Index, Leg, Path};
use crate::json::{self, Json, Key};
use crate::types::SqlType;

/// The JSON functions: uppercase name, MySQL's (lowercase) name for messages, the
/// fewest and most arguments.
const FUNCTIONS: &[(&str, &str, usize, usize)] = &[
    ("JSON_EXTRACT", "json_extract", 2, usize::MAX),
    ("JSON_UNQUOTE", "json_unquote", 1, 1),
    ("JSON_QUOTE", "json_quote", 1, 1),
    ("JSON_OBJECT", "json_object", 0, usize::MAX),
    ("JSON_ARRAY", "json_array", 0, usize::MAX),
    ("JSON_VALID", "json_valid", 1, 1),
    ("JSON_TYPE", "json_type", 1, 1),
    ("JSON_LENGTH", "json_length", 1, 2),
    ("JSON_DEPTH", "json_depth", 1, 1),
    ("JSON_KEYS", "json_keys", 1, 2),
    ("JSON_CONTAINS", "json_contains", 2, 3),
    ("JSON_CONTAINS_PATH", "json_contains_path", 3, usize::MAX),
    ("JSON_SET", "json_set", 3, usize::MAX),
    ("JSON_INSERT", "json_insert", 3, usize::MAX),
    ("JSON_REPLACE", "json_replace", 3, usize::MAX),
    ("JSON_REMOVE", "json_remove", 2, usize::MAX),
    ("JSON_ARRAY_APPEND", "json_array_append", 3, usize::MAX),
    ("JSON_MERGE_PATCH", "json_merge_patch", 2, usize::MAX),
    ("JSON_MERGE_PRESERVE", "json_merge_preserve", 2, usize::MAX),
    ("JSON_MERGE", "json_merge", 2, usize::MAX),
    ("JSON_SEARCH", "json_search", 3, usize::MAX),
    ("JSON_OVERLAPS", "json_overlaps", 2, 2),
    // `value MEMBER OF (array)`, which the binder makes this call of.
    (MEMBER_OF, "member of", 2, 2),
];

/// The name `value MEMBER OF (array)` is bound as (a call of two arguments: the value,
/// a value argument, and the array, a document).
pub const MEMBER_OF: &str = "MEMBER OF";

fn entry(upper: &str) -> Option<&'static (&'static str, &'static str, usize, usize)> {
    FUNCTIONS.iter().find(|f| f.0 == upper)
}

/// Whether `upper` names a JSON scalar function.
pub fn is_function(upper: &str) -> bool {
    entry(upper).is_some()
}

/// MySQL's name of a JSON function (for messages): `json_extract`.
pub fn mysql_name(upper: &str) -> &'static str {
    entry(upper).map_or("json", |f| f.1)
}

/// Checks the number of arguments: 1582 when it is wrong, as MySQL; JSON_OBJECT
/// takes pairs and JSON_SET, JSON_INSERT, JSON_REPLACE and JSON_ARRAY_APPEND a
/// document and pairs.
pub fn check_arity(upper: &str, count: usize) -> Result<()> {
    let Some(&(_, name, min, max)) = entry(upper) else {
        return Err(Error::sql(
            1305,
            "42000",
            format!("FUNCTION {upper} does not exist"),
        ));
    };
    let pairs_ok = match upper {
        "JSON_OBJECT" => count % 2 == 0,
        "JSON_SET" | "JSON_INSERT" | "JSON_REPLACE" | "JSON_ARRAY_APPEND" => count % 2 == 1,
        _ => true,
    };
    if count < min || count > max || !pairs_ok {
        return Err(Error::sql(
            1582,
            "42000",
            format!("Incorrect parameter count in the call to native function '{name}'"),
        ));
    }
    Ok(())
}

/// Whether argument `i` (0-based) of `upper` is a value put into a document (the
/// binder converts a non-JSON SQL value there to JSON, see the module documentation).
pub fn is_value_argument(upper: &str, i: usize) -> bool {
    match upper {
        "JSON_ARRAY" => true,
        MEMBER_OF => i == 0,
        "JSON_OBJECT" => i % 2 == 1,
        "JSON_SET" | "JSON_INSERT" | "JSON_REPLACE" | "JSON_ARRAY_APPEND" => i >= 2 && i % 2 == 0,
        _ => false,
    }
}

/// The text type of JSON_UNQUOTE, JSON_TYPE and JSON_QUOTE: utf8mb4_bin, so
/// comparisons with it are case-sensitive as in MySQL.
pub const TEXT: SqlType = SqlType::Text {
    len_chars: None,
    collation: Collation::Binary,
    fixed: false,
};

/// The result type of `upper`.
pub fn return_type(upper: &str) -> SqlType {
    match upper {
        "JSON_UNQUOTE" | "JSON_QUOTE" => TEXT,
        "JSON_TYPE" => SqlType::Text {
            len_chars: Some(16),
            collation: Collation::Binary,
            fixed: false,
        },
        "JSON_VALID" | "JSON_LENGTH" | "JSON_DEPTH" | "JSON_CONTAINS" | "JSON_CONTAINS_PATH"
        | "JSON_OVERLAPS" | MEMBER_OF => SqlType::BIGINT,
        _ => SqlType::Json,
    }
}

/// ER_JSON_DOCUMENT_NULL_KEY (3158).
pub fn null_key() -> Error {
    Error::sql(
        3158,
        "22032",
        "JSON documents may not contain NULL member names.",
    )
}

/// The JSON value of a value argument: JSON text, or a number or date that is the
/// JSON scalar it is; NULL is null.
fn value_argument(v: &Value, position: usize, function: &str) -> Result<Json> {
    match v {
        Value::Bytes(_) | Value::Null => {
            Ok(json::argument(v, position, function)?.unwrap_or(Json::Null))
        }
        other => Ok(Json::from_sql(other, false)),
    }
}

/// A path argument; None for NULL.
fn path_argument(v: &Value) -> Result<Option<Path>> {
    match to_text(v) {
        None => Ok(None),
        Some(text) => Path::parse(&text).map(Some),
    }
}

/// The value of a document argument; `Ok(None)` (the result is NULL) for NULL.
macro_rules! document {
    ($args:expr, $i:expr, $name:expr) => {
        match json::argument(&$args[$i], $i + 1, $name)? {
            Some(doc) => doc,
            None => return Ok(Value::Null),
        }
    };
}

/// A path argument; the result is NULL for a NULL path.
macro_rules! path {
    ($v:expr) => {
        match path_argument($v)? {
            Some(p) => p,
            None => return Ok(Value::Null),
        }
    };
}

/// `upper(args)`; `collation` is the search string's for JSON_SEARCH.
pub fn call(upper: &str, args: &[Value], collation: Collation) -> Result<Value> {
    check_arity(upper, args.len())?;
    let name = mysql_name(upper);
    match upper {
        "JSON_EXTRACT" => {
            let doc = document!(args, 0, name);
            let mut paths = Vec::with_capacity(args.len() - 1);
            for a in &args[1..] {
                paths.push(path!(a));
            }
            let wild = paths.len() > 1 || paths.iter().any(Path::is_wild);
            let mut hits: Vec<&Json> = Vec::new();
            for p in &paths {
                hits.extend(p.seek(&doc));
            }
            match hits.as_slice() {
                [] => Ok(Value::Null),
                [one] if !wild => one.to_value(),
                many => Json::Array(many.iter().map(|v| (*v).clone()).collect()).to_value(),
            }
        }
        "JSON_UNQUOTE" => {
            let Some(text) = to_text(&args[0]) else {
                return Ok(Value::Null);
            };
            if text.len() >= 2 && text[0] == b'"' && text[text.len() - 1] == b'"' {
                match json::parse(&text) {
                    Ok(Json::String(s)) => Ok(Value::Bytes(s.into_bytes())),
                    Ok(_) => Ok(Value::Bytes(text)),
                    Err(e) => Err(e.for_argument(1, name)),
                }
            } else {
                Ok(Value::Bytes(text))
            }
        }
        "JSON_QUOTE" => Ok(match to_text(&args[0]) {
            None => Value::Null,
            Some(text) => {
                let mut out = String::new();
                json::quote(&String::from_utf8_lossy(&text), &mut out);
                Value::Bytes(out.into_bytes())
            }
        }),
        "JSON_OBJECT" => {
            let mut members = std::collections::BTreeMap::new();
            for (i, pair) in args.chunks(2).enumerate() {
                let key = to_text(&pair[0]).ok_or_else(null_key)?;
                let value = value_argument(&pair[1], 2 * i + 2, name)?;
                members.insert(Key(String::from_utf8_lossy(&key).into_owned()), value);
            }
            Json::Object(members).to_value()
        }
        "JSON_ARRAY" => {
            let elements = args
                .iter()
                .enumerate()
                .map(|(i, v)| value_argument(v, i + 1, name))
                .collect::<Result<Vec<_>>>()?;
            Json::Array(elements).to_value()
        }
        "JSON_VALID" => Ok(match &args[0] {
            Value::Null => Value::Null,
            Value::Bytes(b) => match json::parse(b) {
                Ok(_) => Value::Int(1),
                Err(json::ParseError::TooDeep) => return Err(json::too_deep()),
                Err(_) => Value::Int(0),
            },
            _ => Value::Int(0),
        }),
        "JSON_TYPE" => {
            let doc = document!(args, 0, name);
            Ok(Value::Bytes(doc.type_name().as_bytes().to_vec()))
        }
        "JSON_DEPTH" => {
            let doc = document!(args, 0, name);
            Ok(Value::Int(doc.depth() as i64))
        }
        "JSON_LENGTH" => {
            let doc = document!(args, 0, name);
            if args.len() == 1 {
                return Ok(Value::Int(doc.length() as i64));
            }
            let p = path!(&args[1]);
            let hits = p.seek(&doc);
            Ok(match hits.as_slice() {
                [] => Value::Null,
                [one] if !p.is_wild() => Value::Int(one.length() as i64),
                many => Value::Int(many.len() as i64),
            })
        }
        "JSON_KEYS" => {
            let doc = document!(args, 0, name);
            let target = if args.len() == 2 {
                let p = path!(&args[1]).check_not_wild()?;
                match p.seek(&doc).first() {
                    Some(v) => (*v).clone(),
                    None => return Ok(Value::Null),
                }
            } else {
                doc
            };
            match target {
                Json::Object(members) => {
                    Json::Array(members.into_keys().map(|k| Json::String(k.0)).collect()).to_value()
                }
                _ => Ok(Value::Null),
            }
        }
        "JSON_CONTAINS" => {
            let doc = document!(args, 0, name);
            let candidate = document!(args, 1, name);
            let target = if args.len() == 3 {
                let p = path!(&args[2]).check_not_wild()?;
                match p.seek(&doc).first() {
                    Some(v) => (*v).clone(),
                    None => return Ok(Value::Null),
                }
            } else {
                doc
            };
            Ok(Value::Int(i64::from(contains(&target, &candidate))))
        }
        "JSON_OVERLAPS" => {
            let a = document!(args, 0, name);
            let b = document!(args, 1, name);
            Ok(Value::Int(i64::from(overlaps(&a, &b))))
        }
        MEMBER_OF => {
            if args[0].is_null() {
                return Ok(Value::Null);
            }
            let value = value_argument(&args[0], 1, name)?;
            let array = document!(args, 1, name);
            let member = match &array {
                Json::Array(elements) => elements.iter().any(|e| e.equals(&value)),
                scalar => scalar.equals(&value),
            };
            Ok(Value::Int(i64::from(member)))
        }
        "JSON_CONTAINS_PATH" => {
            let doc = document!(args, 0, name);
            let Some(all) = one_or_all(&args[1], name)? else {
                return Ok(Value::Null);
            };
            let mut found = false;
            for a in &args[2..] {
                let p = path!(a);
                if p.seek(&doc).is_empty() {
                    if all {
                        found = false;
                        break;
                    }
                } else {
                    found = true;
                    if !all {
                        break;
                    }
                }
            }
            Ok(Value::Int(i64::from(found)))
        }
        "JSON_SET" | "JSON_INSERT" | "JSON_REPLACE" => {
            let mut doc = document!(args, 0, name);
            let mode = match upper {
                "JSON_SET" => Mode::Set,
                "JSON_INSERT" => Mode::Insert,
                _ => Mode::Replace,
            };
            for (i, pair) in args[1..].chunks(2).enumerate() {
                let p = path!(&pair[0]).check_not_wild()?;
                let value = value_argument(&pair[1], 2 * i + 3, name)?;
                set(&mut doc, &p.legs, value, mode);
            }
            doc.to_value()
        }
        "JSON_ARRAY_APPEND" => {
            let mut doc = document!(args, 0, name);
            for (i, pair) in args[1..].chunks(2).enumerate() {
                let p = path!(&pair[0]).check_not_wild()?;
                let value = value_argument(&pair[1], 2 * i + 3, name)?;
                if let Some(target) = Path::locate_mut(&p.legs, &mut doc) {
                    match target {
                        Json::Array(elements) => elements.push(value),
                        other => {
                            let old = std::mem::replace(other, Json::Null);
                            *other = Json::Array(vec![old, value]);
                        }
                    }
                }
            }
            doc.to_value()
        }
        "JSON_REMOVE" => {
            let mut doc = document!(args, 0, name);
            for a in &args[1..] {
                let p = path!(a).check_not_wild()?;
                let Some((last, parent_legs)) = p.legs.split_last() else {
                    return Err(Error::sql(
                        3153,
                        "42000",
                        "The path expression '$' is not allowed in this context.",
                    ));
                };
                match (last, Path::locate_mut(parent_legs, &mut doc)) {
                    (Leg::Member(key), Some(Json::Object(members))) => {
                        members.remove(&Key(key.clone()));
                    }
                    (Leg::Cell(index), Some(Json::Array(elements))) => {
                        if let Some(p) = index.position(elements.len()) {
                            elements.remove(p);
                        }
                    }
                    _ => {}
                }
            }
            doc.to_value()
        }
        "JSON_MERGE_PATCH" => {
            // None: NULL so far (a NULL merged with an object stays unknown; a
            // non-object patch replaces whatever came before).
            let mut result: Option<Json> = None;
            for (i, a) in args.iter().enumerate() {
                let patch = json::argument(a, i + 1, name)?;
                result = match (i, result, patch) {
                    (_, _, None) => None,
                    (0, _, Some(p)) => Some(p),
                    (_, None, Some(Json::Object(_))) => None,
                    (_, None, Some(p)) => Some(p),
                    (_, Some(target), Some(p)) => Some(merge_patch(target, p)),
                };
            }
            match result {
                Some(doc) => doc.to_value(),
                None => Ok(Value::Null),
            }
        }
        "JSON_MERGE_PRESERVE" | "JSON_MERGE" => {
            let mut result: Option<Json> = None;
            for (i, a) in args.iter().enumerate() {
                let Some(doc) = json::argument(a, i + 1, name)? else {
                    return Ok(Value::Null);
                };
                result = Some(match result {
                    None => doc,
                    Some(left) => merge_preserve(left, doc),
                });
            }
            result.map_or(Ok(Value::Null), |doc| doc.to_value())
        }
        "JSON_SEARCH" => search(args, name, collation),
        _ => Err(Error::sql(
            1305,
            "42000",
            format!("FUNCTION {upper} does not exist"),
        )),
    }
}

/// JSON_CONTAINS_PATH's and JSON_SEARCH's `'one'` (false) or `'all'` (true); None
/// for NULL; 3154 for anything else.
fn one_or_all(v: &Value, function: &str) -> Result<Option<bool>> {
    let Some(text) = to_text(v) else {
        return Ok(None);
    };
    match String::from_utf8_lossy(&text).to_ascii_lowercase().as_str() {
        "one" => Ok(Some(false)),
        "all" => Ok(Some(true)),
        _ => Err(Error::sql(
            3154,
            "42000",
            format!("The oneOrAll argument to {function} may take these values: 'one' or 'all'."),
        )),
    }
}

/// Whether `doc` contains `candidate` (MySQL's `contains_wr`): an object contains an
/// object whose members it has with values that contain theirs; an array contains
/// each element of a candidate array (or a candidate that is no array) when some
/// element of it does (an array element by containing it, a scalar by equality);
/// scalars contain what they equal.
pub fn contains(doc: &Json, candidate: &Json) -> bool {
    match doc {
        Json::Object(members) => match candidate {
            Json::Object(wanted) => {
                wanted.len() <= members.len()
                    && wanted
                        .iter()
                        .all(|(k, v)| members.get(k).is_some_and(|d| contains(d, v)))
            }
            _ => false,
        },
        Json::Array(elements) => {
            let wanted: &[Json] = match candidate {
                Json::Array(a) => a,
                other => std::slice::from_ref(other),
            };
            wanted.iter().all(|c| match c {
                Json::Array(_) => elements
                    .iter()
                    .any(|d| matches!(d, Json::Array(_)) && contains(d, c)),
                _ => elements.iter().any(|d| {
                    if d.is_container() {
                        contains(d, c)
                    } else {
                        d.equals(c)
                    }
                }),
            })
        }
        scalar => scalar.equals(candidate),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Set,
    Insert,
    Replace,
}

/// JSON_OVERLAPS: two arrays share an element; two objects a member (key and
/// value); an array and anything else hold that as an element; two other values
/// are equal (an object and a scalar never overlap). Values compare as MySQL
/// compares JSON ([`Json::equals`]).
pub fn overlaps(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => x.iter().any(|e| y.iter().any(|f| e.equals(f))),
        (Json::Array(x), other) | (other, Json::Array(x)) => x.iter().any(|e| e.equals(other)),
        (Json::Object(x), Json::Object(y)) => {
            x.iter().any(|(k, v)| y.get(k).is_some_and(|w| v.equals(w)))
        }
        (Json::Object(_), _) | (_, Json::Object(_)) => false,
        (x, y) => x.equals(y),
    }
}

/// JSON_SET / JSON_INSERT / JSON_REPLACE of one path: a value the path selects is
/// replaced (not by INSERT); a missing last member of an object, or a position past
/// an array's end, is added (not by REPLACE; at the end of the array, or its start
/// for `last-n` before it); a position past 0 on a value that is not an array makes
/// it an array of it and the new value. Nothing happens when the parent is missing.
fn set(doc: &mut Json, legs: &[Leg], value: Json, mode: Mode) {
    let Some((last, parent_legs)) = legs.split_last() else {
        if mode != Mode::Insert {
            *doc = value;
        }
        return;
    };
    let Some(parent) = Path::locate_mut(parent_legs, doc) else {
        return;
    };
    match (last, parent) {
        (Leg::Member(key), Json::Object(members)) => {
            let key = Key(key.clone());
            let exists = members.contains_key(&key);
            if (exists && mode != Mode::Insert) || (!exists && mode != Mode::Replace) {
                members.insert(key, value);
            }
        }
        (Leg::Cell(index), Json::Array(elements)) => match index.position(elements.len()) {
            Some(p) if mode != Mode::Insert => elements[p] = value,
            Some(_) => {}
            None if mode != Mode::Replace => {
                let at = if index.from_end { 0 } else { elements.len() };
                elements.insert(at, value);
            }
            None => {}
        },
        (Leg::Cell(index), other) => {
            let wraps = index.position(1).is_some();
            if wraps && mode != Mode::Insert {
                *other = value;
            } else if !wraps && mode != Mode::Replace {
                let old = std::mem::replace(other, Json::Null);
                *other = if index.from_end {
                    Json::Array(vec![value, old])
                } else {
                    Json::Array(vec![old, value])
                };
            }
        }
        _ => {}
    }
}

/// RFC 7396's merge of `patch` into `target`, as JSON_MERGE_PATCH does it.
fn merge_patch(target: Json, patch: Json) -> Json {
    let Json::Object(patch) = patch else {
        return patch;
    };
    let mut members = match target {
        Json::Object(m) => m,
        _ => Default::default(),
    };
    for (k, v) in patch {
        if v == Json::Null {
            members.remove(&k);
            continue;
        }
        let merged = match members.remove(&k) {
            Some(old) => merge_patch(old, v),
            None => merge_patch(Json::Null, v),
        };
        members.insert(k, merged);
    }
    Json::Object(members)
}

/// JSON_MERGE_PRESERVE: objects merge member by member (values of a key in both are
/// merged again); anything else becomes arrays joined end to end.
fn merge_preserve(left: Json, right: Json) -> Json {
    match (left, right) {
        (Json::Object(mut l), Json::Object(r)) => {
            for (k, v) in r {
                let merged = match l.remove(&k) {
                    Some(old) => merge_preserve(old, v),
                    None => v,
                };
                l.insert(k, merged);
            }
            Json::Object(l)
        }
        (l, r) => {
            let mut out = match l {
                Json::Array(a) => a,
                other => vec![other],
            };
            match r {
                Json::Array(a) => out.extend(a),
                other => out.push(other),
            }
            Json::Array(out)
        }
    }
}

/// JSON_SEARCH(doc, 'one' | 'all', search [, escape [, path ...]]): the paths of the
/// strings that match `search` as LIKE patterns, under the given paths (or all).
fn search(args: &[Value], name: &str, collation: Collation) -> Result<Value> {
    let doc = document!(args, 0, name);
    let Some(all) = one_or_all(&args[1], name)? else {
        return Ok(Value::Null);
    };
    let Some(pattern) = to_text(&args[2]) else {
        return Ok(Value::Null);
    };
    let escape = match args.get(3).map(to_text) {
        None | Some(None) => b'\\',
        Some(Some(e)) => match e.as_slice() {
            [] => b'\\',
            [c] => *c,
            _ => return Err(Error::sql(1210, "HY000", "Incorrect arguments to ESCAPE")),
        },
    };
    let mut paths = Vec::new();
    if args.len() > 4 {
        for a in &args[4..] {
            paths.push(path!(a));
        }
    } else {
        paths.push(Path { legs: Vec::new() });
    }
    let mut found: Vec<String> = Vec::new();
    'paths: for p in &paths {
        for (at, v) in p.seek_with_paths(&doc) {
            // Every value at or below `v`, with its path below `v`.
            let mut below: Vec<(Vec<Leg>, &Json)> = vec![(Vec::new(), v)];
            collect_below(v, &mut Vec::new(), &mut below);
            for (rest, s) in below {
                let Json::String(text) = s else { continue };
                if like(text.as_bytes(), &pattern, escape, collation) {
                    let mut legs = at.clone();
                    legs.extend(rest);
                    let shown = Path::display(&legs);
                    if !found.contains(&shown) {
                        found.push(shown);
                    }
                    if !all {
                        break 'paths;
                    }
                }
            }
        }
    }
    match found.len() {
        0 => Ok(Value::Null),
        1 => Json::String(found.remove(0)).to_value(),
        _ => Json::Array(found.into_iter().map(Json::String).collect()).to_value(),
    }
}

/// Appends the values strictly below `v` (at path `at`) with their paths, in
/// document order (recursion bounded by the document's depth).
fn collect_below<'a>(v: &'a Json, at: &mut Vec<Leg>, out: &mut Vec<(Vec<Leg>, &'a Json)>) {
    match v {
        Json::Array(elements) => {
            for (i, c) in elements.iter().enumerate() {
                at.push(Leg::Cell(Index {
                    n: i as u32,
                    from_end: false,
                }));
                out.push((at.clone(), c));
                collect_below(c, at, out);
                at.pop();
            }
        }
        Json::Object(members) => {
            for (k, c) in members {
                at.push(Leg::Member(k.0.clone()));
                out.push((at.clone(), c));
                collect_below(c, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn run(name: &str, args: &[&str]) -> String {
        let values: Vec<Value> = args
            .iter()
            .map(|a| if *a == "NULL" { Value::Null } else { s(a) })
            .collect();
        match call(name, &values, Collation::CaseInsensitive) {
            Ok(Value::Bytes(b)) => String::from_utf8(b).unwrap(),
            Ok(Value::Null) => "NULL".into(),
            Ok(Value::Int(i)) => i.to_string(),
            Ok(other) => format!("{other:?}"),
            Err(e) => format!("ERROR {}: {e}", e.mysql_code()),
        }
    }

    #[test]
    fn answers_as_mysql() {
        let doc = r#"{"a": [1, {"b": 2}], "c": "x", "d": null}"#;
        assert_eq!(run("JSON_EXTRACT", &[doc, "$.a[1].b"]), "2");
        assert_eq!(run("JSON_EXTRACT", &[doc, "$.c"]), r#""x""#);
        assert_eq!(run("JSON_EXTRACT", &[doc, "$.z"]), "NULL");
        assert_eq!(run("JSON_EXTRACT", &[doc, "$.d"]), "null");
        assert_eq!(run("JSON_EXTRACT", &[doc, "$.c", "$.a[0]"]), r#"["x", 1]"#);
        assert_eq!(run("JSON_EXTRACT", &[doc, "$.a[*]"]), r#"[1, {"b": 2}]"#);
        assert_eq!(run("JSON_EXTRACT", &[doc, "NULL"]), "NULL");
        assert!(run("JSON_EXTRACT", &["{", "$"]).starts_with("ERROR 3141: Invalid JSON text in argument 1 to function json_extract: \"Missing a name for object member.\" at position 1."));
        assert!(run("JSON_EXTRACT", &[doc, "a"]).starts_with("ERROR 3143"));
        assert_eq!(run("JSON_UNQUOTE", &[r#""a\tb""#]), "a\tb");
        assert_eq!(run("JSON_UNQUOTE", &["abc"]), "abc");
        assert_eq!(run("JSON_UNQUOTE", &["[1, 2]"]), "[1, 2]");
        assert_eq!(run("JSON_QUOTE", &["a\"b"]), r#""a\"b""#);
        assert_eq!(run("JSON_TYPE", &["1.5"]), "DOUBLE");
        assert_eq!(run("JSON_TYPE", &["4294967296"]), "UNSIGNED INTEGER");
        assert_eq!(run("JSON_VALID", &["{"]), "0");
        assert_eq!(run("JSON_LENGTH", &[doc]), "3");
        assert_eq!(run("JSON_LENGTH", &[doc, "$.a"]), "2");
        assert_eq!(run("JSON_LENGTH", &[doc, "$.zz"]), "NULL");
        assert_eq!(run("JSON_DEPTH", &[doc]), "4");
        assert_eq!(run("JSON_KEYS", &[doc]), r#"["a", "c", "d"]"#);
        assert!(run("JSON_KEYS", &[doc, "$.*"]).starts_with("ERROR 3149"));
        assert_eq!(run("JSON_CONTAINS", &[doc, r#"{"c": "x"}"#]), "1");
        assert_eq!(run("JSON_CONTAINS", &[doc, "2", "$.a"]), "0");
        assert_eq!(run("JSON_CONTAINS", &["[1, [2, 3]]", "2"]), "1");
        assert_eq!(run("JSON_CONTAINS", &["[1, [2, 3]]", "[[3]]"]), "1");
        assert_eq!(run("JSON_CONTAINS", &["[1, 2]", "[1.0, 2]"]), "1");
        assert_eq!(run("JSON_CONTAINS", &["1", "[1]"]), "0");
        assert_eq!(run("JSON_CONTAINS_PATH", &[doc, "one", "$.z", "$.c"]), "1");
        assert_eq!(run("JSON_CONTAINS_PATH", &[doc, "all", "$.z", "$.c"]), "0");
        assert!(run("JSON_CONTAINS_PATH", &[doc, "some", "$"]).starts_with("ERROR 3154"));
        assert_eq!(run("JSON_SET", &["1", "$[1]", "2"]), "[1, 2]");
        assert_eq!(run("JSON_SET", &["1", "$[0]", "2"]), "2");
        assert_eq!(
            run("JSON_SET", &[r#"{"a": 1}"#, "$.b", "2", "$.a", "3"]),
            r#"{"a": 3, "b": 2}"#
        );
        assert_eq!(
            run("JSON_INSERT", &[r#"{"a": 1}"#, "$.a", "9", "$.b.c", "9"]),
            r#"{"a": 1}"#
        );
        assert_eq!(
            run("JSON_REPLACE", &["[1]", "$[0]", "5", "$[3]", "6"]),
            "[5]"
        );
        assert_eq!(run("JSON_SET", &["[1]", "$[3]", "6"]), "[1, 6]");
        assert_eq!(
            run("JSON_REMOVE", &[doc, "$.a[0]", "$.c"]),
            r#"{"a": [{"b": 2}], "d": null}"#
        );
        assert!(run("JSON_REMOVE", &[doc, "$"]).starts_with("ERROR 3153"));
        assert_eq!(
            run("JSON_ARRAY_APPEND", &[r#"{"a": 1}"#, "$.a", "2"]),
            r#"{"a": [1, 2]}"#
        );
        assert_eq!(
            run(
                "JSON_MERGE_PATCH",
                &[
                    r#"{"a": 1, "b": {"c": 1}}"#,
                    r#"{"a": null, "b": {"d": 2}}"#
                ]
            ),
            r#"{"b": {"c": 1, "d": 2}}"#
        );
        assert_eq!(run("JSON_MERGE_PATCH", &["NULL", "[1]"]), "[1]");
        assert_eq!(run("JSON_MERGE_PATCH", &["NULL", r#"{"a": 1}"#]), "NULL");
        assert_eq!(
            run("JSON_MERGE_PRESERVE", &["[1]", r#"{"a": 1}"#]),
            r#"[1, {"a": 1}]"#
        );
        assert_eq!(
            run(
                "JSON_SEARCH",
                &[r#"{"a": ["xy", "z"], "b": "xz"}"#, "all", "x%"]
            ),
            r#"["$.a[0]", "$.b"]"#
        );
        assert_eq!(
            run(
                "JSON_SEARCH",
                &[r#"{"a": ["xy", "z"], "b": "xz"}"#, "one", "x%"]
            ),
            r#""$.a[0]""#
        );
        assert_eq!(run("JSON_SEARCH", &[r#"["a"]"#, "one", "b"]), "NULL");
        assert_eq!(run("JSON_OBJECT", &["k", "NULL"]), r#"{"k": null}"#);
        assert!(run("JSON_OBJECT", &["NULL", "1"]).starts_with("ERROR 3158"));
    }
}

/// What JSON_VALUE answers when its path selects nothing (`.. ON EMPTY`) or its value
/// does not convert to the RETURNING type (`.. ON ERROR`).
#[derive(Clone, Debug, PartialEq)]
pub enum JsonResponse {
    /// NULL (the default for both).
    Null,
    /// Error 3966 (ON EMPTY) or 1690 (ON ERROR).
    Error,
    /// The DEFAULT value, already of the RETURNING type.
    Default(Value),
}

/// JSON_VALUE's RETURNING type and responses.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonValueSpec {
    /// The RETURNING type; `CHAR(512)` when there is none, as MySQL's VARCHAR(512).
    pub returning: CastTarget,
    pub on_empty: JsonResponse,
    pub on_error: JsonResponse,
}

/// JSON_VALUE's result type without RETURNING: VARCHAR(512) utf8mb4_bin.
pub const JSON_VALUE_TEXT: SqlType = SqlType::Text {
    len_chars: Some(JSON_VALUE_TEXT_CHARS),
    collation: Collation::Binary,
    fixed: false,
};

/// The length of [`JSON_VALUE_TEXT`], in characters.
pub const JSON_VALUE_TEXT_CHARS: u32 = 512;

/// MySQL's name of a RETURNING type in error 1690.
fn returning_name(target: CastTarget) -> &'static str {
    match target {
        CastTarget::Signed => "SIGNED",
        CastTarget::Unsigned => "UNSIGNED",
        CastTarget::Decimal { .. } => "DECIMAL",
        CastTarget::Double => "DOUBLE",
        CastTarget::Date => "DATE",
        CastTarget::DateTime(_) => "DATETIME",
        CastTarget::Time(_) => "TIME",
        CastTarget::Binary(_) => "BINARY",
        CastTarget::Json(_) => "JSON",
        _ => "CHAR",
    }
}

/// ER_DATA_OUT_OF_RANGE (1690) for a value JSON_VALUE could not convert.
pub fn json_value_out_of_range(target: CastTarget) -> Error {
    Error::sql(
        1690,
        "22003",
        format!(
            "{} value is out of range in 'json_value'",
            returning_name(target)
        ),
    )
}

/// `v` as a value of the RETURNING type `target` when it converts without loss, as a
/// column of that type would store it in strict mode ([`super::cast::to_column_at`]:
/// `'12'` is 12, `'1x'`, `'2020-13-01'` and a string longer than CHAR(n) are None);
/// a number rounds to the scale as a column does. JSON text stays as it is for JSON.
pub fn convert_exactly(v: Value, target: CastTarget) -> Option<Value> {
    use tarn_row::types::ColumnType as C;
    let ty = match target {
        CastTarget::Signed => C::BigInt { unsigned: false },
        CastTarget::Unsigned => C::BigInt { unsigned: true },
        CastTarget::Decimal { precision, scale } => C::Decimal { precision, scale },
        CastTarget::Double => C::Double,
        CastTarget::Char(Some(len)) => C::VarChar { len },
        CastTarget::Char(None) => C::LongText,
        CastTarget::Binary(Some(len_bytes)) => C::VarBinary { len_bytes },
        CastTarget::Binary(None) => C::LongBlob,
        CastTarget::Date => C::Date,
        CastTarget::DateTime(fsp) => C::DateTime { fsp },
        CastTarget::Time(fsp) => C::Time { fsp },
        other => return super::cast::cast(&v, other).ok(),
    };
    super::cast::to_column_at(v, ty, Collation::Binary, "json_value", 1).ok()
}

/// `JSON_VALUE(doc, path ..)`: the scalar at `path` in the RETURNING type. A NULL
/// document or path, or a JSON null there, is NULL; a bad document is 3141, a bad
/// path 3143 and a wildcard 3149 (whatever the responses say, as in MySQL); no value
/// is the ON EMPTY response; a value that does not convert (an array or object for
/// anything but a string or JSON) the ON ERROR response.
pub fn json_value(doc: &Value, path: &Value, spec: &JsonValueSpec) -> Result<Value> {
    let Some(doc) = json::argument(doc, 1, "json_value")? else {
        return Ok(Value::Null);
    };
    let Some(path) = path_argument(path)? else {
        return Ok(Value::Null);
    };
    let path = path.check_not_wild()?;
    let Some(found) = path.seek(&doc).first().copied() else {
        return match &spec.on_empty {
            JsonResponse::Null => Ok(Value::Null),
            JsonResponse::Default(v) => Ok(v.clone()),
            JsonResponse::Error => Err(Error::sql(
                3966,
                "22035",
                "No value was found by 'json_value' on the specified path.",
            )),
        };
    };
    let sql = match (found, spec.returning) {
        (Json::Null, _) => return Ok(Value::Null),
        (_, CastTarget::Json(_)) => return found.to_value(),
        // A string type takes the text JSON_UNQUOTE shows (`1.0` for the double).
        (_, CastTarget::Char(_) | CastTarget::Binary(_))
        | (Json::String(_) | Json::Array(_) | Json::Object(_), _) => {
            Value::Bytes(found.unquoted()?.into_bytes())
        }
        (Json::Bool(b), _) => Value::Int(i64::from(*b)),
        (Json::Int(i), _) => Value::Int(*i),
        (Json::UInt(u), _) => Value::UInt(*u),
        (Json::Double(f), _) => Value::Double(*f),
        (Json::Decimal(d), _) => Value::Decimal(*d),
    };
    match convert_exactly(sql, spec.returning) {
        Some(v) => Ok(v),
        None => match &spec.on_error {
            JsonResponse::Null => Ok(Value::Null),
            JsonResponse::Default(v) => Ok(v.clone()),
            JsonResponse::Error => Err(json_value_out_of_range(spec.returning)),
        },
    }
}
