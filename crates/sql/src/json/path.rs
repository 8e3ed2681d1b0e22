//! JSON path expressions, as MySQL 8 reads them: `$` followed by legs, each one of
//!
//! - `.name` (an ECMAScript identifier) or `."any name"` (a JSON string), `.*`;
//! - `[n]`, `[last]`, `[last - n]`, `[m to n]`, `[*]`;
//! - `**` (any depth, the value itself included; not last, not `***`).
//!
//! Whitespace may separate the tokens. A path that does not read is error 3143 with
//! the byte offset where reading stopped, as MySQL reports it.
//!
//! [`Path::seek`] finds what a path selects, one leg at a time over the set of values
//! the legs before selected (each value once, in document order): `**` adds every
//! value below a candidate, so any number of them costs one pass over the document
//! per leg, never a walk per combination. An array leg on a value that is not an
//! array selects the value itself when the leg would select the first element of a
//! one-element array (`$[0]`, `$[last]`): MySQL's auto-wrapping.

use std::collections::HashSet;

use tarn_common::{Error, Result};

use super::{Json, Key};

/// An array position, from the start or (`last - n`) from the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Index {
    pub n: u32,
    pub from_end: bool,
}

impl Index {
    /// The position this index names in an array of `len` elements; None past
    /// either end.
    pub fn position(self, len: usize) -> Option<usize> {
        let n = self.n as usize;
        if self.from_end {
            len.checked_sub(1)?.checked_sub(n)
        } else if n < len {
            Some(n)
        } else {
            None
        }
    }
}

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Leg {
    Member(String),
    MemberWildcard,
    Cell(Index),
    /// `[m to n]`, both ends included.
    Range(Index, Index),
    CellWildcard,
    /// `**`.
    Ellipsis,
}

impl Leg {
    /// The elements `[start, end)` this array leg selects in an array of `len`.
    fn range(&self, len: usize) -> (usize, usize) {
        match self {
            Leg::Cell(i) => match i.position(len) {
                Some(p) => (p, p + 1),
                None => (0, 0),
            },
            Leg::CellWildcard => (0, len),
            Leg::Range(from, to) => {
                let start = if from.from_end {
                    len.saturating_sub(1).saturating_sub(from.n as usize)
                } else {
                    from.n as usize
                };
                let end = if to.from_end {
                    match len
                        .checked_sub(1)
                        .and_then(|l| l.checked_sub(to.n as usize))
                    {
                        Some(p) => p + 1,
                        None => 0,
                    }
                } else {
                    (to.n as usize + 1).min(len)
                };
                (start.min(end), end)
            }
            _ => (0, 0),
        }
    }

    /// An array leg that selects the only element of a one-element array, and so a
    /// value that is not an array (auto-wrapping).
    fn wraps(&self) -> bool {
        matches!(self, Leg::Cell(_) | Leg::Range(..)) && {
            let (start, end) = self.range(1);
            start < end
        }
    }
}

/// A parsed path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub legs: Vec<Leg>,
}

/// ER_INVALID_JSON_PATH (3143).
fn invalid(position: usize) -> Error {
    Error::sql(
        3143,
        "42000",
        format!("Invalid JSON path expression. The error is around character position {position}."),
    )
}

/// ER_INVALID_JSON_PATH_WILDCARD (3149).
pub fn wildcard_not_allowed() -> Error {
    Error::sql(
        3149,
        "42000",
        "In this situation, path expressions may not contain the * and ** tokens.",
    )
}

/// MySQL's whitespace in paths (`my_isspace`).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

struct Reader<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.pos).copied().is_some_and(is_space) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn fail<T>(&self) -> Result<T> {
        Err(invalid(self.pos))
    }

    fn index(&mut self) -> Result<Index> {
        let mut from_end = false;
        if self.text[self.pos..].starts_with(b"last") {
            self.pos += 4;
            from_end = true;
            self.skip_space();
            if self.peek() != Some(b'-') {
                return Ok(Index { n: 0, from_end });
            }
            self.pos += 1;
            self.skip_space();
        }
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        if start == self.pos {
            return self.fail();
        }
        let digits = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("");
        match digits.parse::<u32>() {
            Ok(n) => Ok(Index { n, from_end }),
            Err(_) => self.fail(),
        }
    }

    fn array_leg(&mut self) -> Result<Leg> {
        self.pos += 1;
        self.skip_space();
        let leg = match self.peek() {
            None => return self.fail(),
            Some(b'*') => {
                self.pos += 1;
                Leg::CellWildcard
            }
            Some(_) => {
                let first = self.index()?;
                self.skip_space();
                if self.peek().is_none() {
                    return self.fail();
                }
                let rest = &self.text[self.pos..];
                let after_space = self.pos > 0 && is_space(self.text[self.pos - 1]);
                if rest.len() > 3 && after_space && rest.starts_with(b"to") && is_space(rest[2]) {
                    self.pos += 3;
                    self.skip_space();
                    let last = self.index()?;
                    // A range that can select nothing in any array is refused.
                    if first.from_end == last.from_end
                        && ((first.from_end && first.n < last.n)
                            || (!first.from_end && last.n < first.n))
                    {
                        return self.fail();
                    }
                    Leg::Range(first, last)
                } else {
                    Leg::Cell(first)
                }
            }
        };
        self.skip_space();
        if self.peek() != Some(b']') {
            return self.fail();
        }
        self.pos += 1;
        Ok(leg)
    }

    fn member_leg(&mut self) -> Result<Leg> {
        self.pos += 1;
        self.skip_space();
        match self.peek() {
            None => self.fail(),
            Some(b'*') => {
                self.pos += 1;
                Ok(Leg::MemberWildcard)
            }
            Some(b'"') => {
                // Up to the next unescaped quote (or the end), read as a JSON string.
                let start = self.pos;
                let mut i = start + 1;
                let mut end = self.text.len();
                while i < self.text.len() {
                    match self.text[i] {
                        b'\\' => i += 2,
                        b'"' => {
                            end = i + 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
                let end = end.min(self.text.len());
                self.pos = end;
                match super::parse(&self.text[start..end]) {
                    Ok(Json::String(name)) => Ok(Leg::Member(name)),
                    _ => self.fail(),
                }
            }
            Some(_) => {
                let start = self.pos;
                while self
                    .peek()
                    .is_some_and(|b| !is_space(b) && !matches!(b, b'[' | b'.' | b'*'))
                {
                    self.pos += 1;
                }
                // An unquoted name may hold escapes: read it as a JSON string.
                let mut quoted = Vec::with_capacity(self.pos - start + 2);
                quoted.push(b'"');
                quoted.extend_from_slice(&self.text[start..self.pos]);
                quoted.push(b'"');
                match super::parse(&quoted) {
                    Ok(Json::String(name)) if is_identifier(&name) => Ok(Leg::Member(name)),
                    _ => self.fail(),
                }
            }
        }
    }
}

/// An ECMAScript identifier (ES5 7.6, as MySQL approximates it): a letter, `$` or `_`,
/// then those, digits, combining marks and connector punctuation.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let combining = |c: char| ('\u{300}'..='\u{36f}').contains(&c);
    let starts = |c: char| (c.is_alphabetic() && !combining(c)) || c == '$' || c == '_';
    starts(first)
        && chars.all(|c| {
            starts(c)
                || combining(c)
                || c.is_ascii_digit()
                || c.is_numeric()
                || matches!(
                    c,
                    '\u{203f}'
                        | '\u{2040}'
                        | '\u{2054}'
                        | '\u{fe33}'
                        | '\u{fe34}'
                        | '\u{fe4d}'
                        | '\u{fe4e}'
                        | '\u{fe4f}'
                        | '\u{ff3f}'
                        | '\u{200c}'
                        | '\u{200d}'
                )
        })
}

impl Path {
    /// Reads a path expression (error 3143 when it does not read).
    pub fn parse(text: &[u8]) -> Result<Path> {
        let mut r = Reader { text, pos: 0 };
        r.skip_space();
        if r.peek() != Some(b'$') {
            // MySQL reads the first character before it complains.
            return Err(invalid((r.pos + 1).min(text.len())));
        }
        r.pos += 1;
        r.skip_space();
        let mut legs = Vec::new();
        while let Some(b) = r.peek() {
            let leg = match b {
                b'[' => r.array_leg()?,
                b'.' => r.member_leg()?,
                b'*' => {
                    r.pos += 1;
                    if r.peek() != Some(b'*') {
                        return r.fail();
                    }
                    r.pos += 1;
                    if matches!(r.peek(), None | Some(b'*')) {
                        return r.fail();
                    }
                    Leg::Ellipsis
                }
                _ => return r.fail(),
            };
            legs.push(leg);
            r.skip_space();
        }
        if legs.last() == Some(&Leg::Ellipsis) {
            return r.fail();
        }
        Ok(Path { legs })
    }

    /// Whether the path may select more than one value (`*`, `**`, ranges).
    pub fn is_wild(&self) -> bool {
        self.legs.iter().any(|l| {
            matches!(
                l,
                Leg::MemberWildcard | Leg::CellWildcard | Leg::Ellipsis | Leg::Range(..)
            )
        })
    }

    /// Refuses a wild path with 3149 (where MySQL wants one value).
    pub fn check_not_wild(self) -> Result<Path> {
        if self.is_wild() {
            return Err(wildcard_not_allowed());
        }
        Ok(self)
    }

    /// The values the path selects in `doc`, in document order, each once.
    pub fn seek<'a>(&self, doc: &'a Json) -> Vec<&'a Json> {
        self.walk(doc, false).into_iter().map(|(_, v)| v).collect()
    }

    /// [`Path::seek`] with the concrete path (members and positions) of each value.
    pub fn seek_with_paths<'a>(&self, doc: &'a Json) -> Vec<(Vec<Leg>, &'a Json)> {
        self.walk(doc, true)
    }

    /// The legs one at a time over the values selected so far; `track`: keep each
    /// value's concrete path (else the paths stay empty).
    fn walk<'a>(&self, doc: &'a Json, track: bool) -> Vec<(Vec<Leg>, &'a Json)> {
        type Found<'a> = Vec<(Vec<Leg>, &'a Json)>;
        let mut current: Found<'a> = vec![(Vec::new(), doc)];
        let step = |path: &Vec<Leg>, leg: Leg| {
            let mut p = Vec::new();
            if track {
                p.reserve(path.len() + 1);
                p.extend_from_slice(path);
                p.push(leg);
            }
            p
        };
        let cell = |n: usize| {
            Leg::Cell(Index {
                n: n as u32,
                from_end: false,
            })
        };
        for leg in &self.legs {
            let mut next: Found<'a> = Vec::new();
            let mut seen: HashSet<usize> = HashSet::new();
            let mut add = |path: Vec<Leg>, v: &'a Json, next: &mut Found<'a>| {
                if seen.insert(v as *const Json as usize) {
                    next.push((path, v));
                }
            };
            for (path, v) in &current {
                match (leg, *v) {
                    (Leg::Member(name), Json::Object(members)) => {
                        if let Some(child) = members.get(&Key(name.clone())) {
                            add(step(path, leg.clone()), child, &mut next);
                        }
                    }
                    (Leg::MemberWildcard, Json::Object(members)) => {
                        for (k, child) in members {
                            add(step(path, Leg::Member(k.0.clone())), child, &mut next);
                        }
                    }
                    (Leg::Cell(_) | Leg::Range(..) | Leg::CellWildcard, Json::Array(elements)) => {
                        let (start, end) = leg.range(elements.len());
                        for (i, child) in elements.iter().enumerate().take(end).skip(start) {
                            add(step(path, cell(i)), child, &mut next);
                        }
                    }
                    (Leg::Cell(_) | Leg::Range(..), other) if leg.wraps() => {
                        add(path.clone(), other, &mut next)
                    }
                    (Leg::Ellipsis, v) => {
                        descendants(path, v, track, &mut |p, c| add(p, c, &mut next))
                    }
                    _ => {}
                }
            }
            current = next;
            if current.is_empty() {
                break;
            }
        }
        current
    }

    /// The value a path without wildcards selects, to change it.
    pub fn locate_mut<'a>(legs: &[Leg], doc: &'a mut Json) -> Option<&'a mut Json> {
        let mut current = doc;
        for leg in legs {
            current = match (leg, current) {
                (Leg::Member(name), Json::Object(members)) => {
                    members.get_mut(&Key(name.clone()))?
                }
                (Leg::Cell(i), Json::Array(elements)) => {
                    let p = i.position(elements.len())?;
                    &mut elements[p]
                }
                (Leg::Cell(_), other) if leg.wraps() => other,
                _ => return None,
            };
        }
        Some(current)
    }

    /// MySQL's text of the path (JSON_SEARCH's answers): `$`, `.name` or `."name"`
    /// when it is no identifier, `[n]`.
    pub fn display(legs: &[Leg]) -> String {
        let mut out = String::from("$");
        for leg in legs {
            match leg {
                Leg::Member(name) if is_identifier(name) => {
                    out.push('.');
                    out.push_str(name);
                }
                Leg::Member(name) => {
                    out.push('.');
                    super::quote(name, &mut out);
                }
                Leg::Cell(i) if !i.from_end => out.push_str(&format!("[{}]", i.n)),
                Leg::Cell(i) => out.push_str(&format!("[last-{}]", i.n)),
                Leg::MemberWildcard => out.push_str(".*"),
                Leg::CellWildcard => out.push_str("[*]"),
                Leg::Range(..) => out.push_str("[..]"),
                Leg::Ellipsis => out.push_str("**"),
            }
        }
        out
    }
}

/// Calls `f` on `v` and every value below it, in document order, with their paths
/// (when `track`; `path` is `v`'s).
fn descendants<'a>(path: &[Leg], v: &'a Json, track: bool, f: &mut dyn FnMut(Vec<Leg>, &'a Json)) {
    f(if track { path.to_vec() } else { Vec::new() }, v);
    let child_path = |leg: Leg| {
        let mut p = Vec::new();
        if track {
            p.extend_from_slice(path);
            p.push(leg);
        }
        p
    };
    match v {
        Json::Array(elements) => {
            for (i, c) in elements.iter().enumerate() {
                let leg = Leg::Cell(Index {
                    n: i as u32,
                    from_end: false,
                });
                descendants(&child_path(leg), c, track, f);
            }
        }
        Json::Object(members) => {
            for (k, c) in members {
                descendants(&child_path(Leg::Member(k.0.clone())), c, track, f);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_at(text: &str) -> String {
        Path::parse(text.as_bytes()).unwrap_err().to_string()
    }

    fn select(doc: &str, path: &str) -> Vec<String> {
        let doc = super::super::parse(doc.as_bytes()).unwrap();
        Path::parse(path.as_bytes())
            .unwrap()
            .seek(&doc)
            .iter()
            .map(|v| v.to_text().unwrap())
            .collect()
    }

    #[test]
    fn reads_mysql_paths() {
        let p = Path::parse(br#" $ . a [ 1 ] ."b c"[last - 1][*].*[2 to 3]**.d"#).unwrap();
        assert_eq!(
            p.legs,
            vec![
                Leg::Member("a".into()),
                Leg::Cell(Index {
                    n: 1,
                    from_end: false
                }),
                Leg::Member("b c".into()),
                Leg::Cell(Index {
                    n: 1,
                    from_end: true
                }),
                Leg::CellWildcard,
                Leg::MemberWildcard,
                Leg::Range(
                    Index {
                        n: 2,
                        from_end: false
                    },
                    Index {
                        n: 3,
                        from_end: false
                    }
                ),
                Leg::Ellipsis,
                Leg::Member("d".into()),
            ]
        );
        assert!(p.is_wild());
        assert!(!Path::parse(b"$.a[0]").unwrap().is_wild());
        for (bad, at) in [
            ("a", 1),
            ("", 0),
            ("$.", 2),
            ("$.1a", 4),
            ("$**", 3),
            ("$***.a", 3),
            ("$[", 2),
            ("$[a]", 2),
            ("$[1", 3),
            ("$.a b", 4),
            ("$[3 to 1]", 8),
        ] {
            assert!(
                err_at(bad).contains(&format!("character position {at}.")),
                "{bad}: {}",
                err_at(bad)
            );
        }
    }

    #[test]
    fn selects_as_mysql() {
        let doc = r#"{"a": [1, {"b": 2}, [3]], "c": {"b": 4}, "d e": 5}"#;
        assert_eq!(select(doc, "$.a[1].b"), ["2"]);
        assert_eq!(select(doc, "$.a[last][0]"), ["3"]);
        assert_eq!(select(doc, "$.a[0][0]"), ["1"]);
        assert_eq!(select(doc, "$.a[0][1]"), Vec::<String>::new());
        assert_eq!(select(doc, "$**.b"), ["2", "4"]);
        assert_eq!(select(doc, "$.a**.b"), ["2"]);
        // Two `**` select each value once.
        assert_eq!(select(doc, "$**.a**.b"), ["2"]);
        assert_eq!(select(doc, r#"$."d e""#), ["5"]);
        assert_eq!(select(doc, "$.a[*]"), ["1", r#"{"b": 2}"#, "[3]"]);
        assert_eq!(select(doc, "$.a[1 to last]"), [r#"{"b": 2}"#, "[3]"]);
        assert_eq!(select(doc, "$.*.b"), ["4"]);
        assert_eq!(select(doc, "$.x"), Vec::<String>::new());
        assert_eq!(
            Path::display(&Path::parse(br#"$."d e"[2].f"#).unwrap().legs),
            r#"$."d e"[2].f"#
        );
    }
}
