//! Regular expressions: the `REGEXP` / `RLIKE` operators (bound as `REGEXP_LIKE`),
//! `REGEXP_LIKE`, `REGEXP_INSTR`, `REGEXP_SUBSTR` and `REGEXP_REPLACE`.
//!
//! MySQL 8 runs these on ICU; Tarn runs them on the `regex` crate, with MySQL's
//! arguments, positions and errors:
//!
//! - Matching is case-insensitive when the arguments' collation is (`_ci`), and
//!   case-sensitive for a binary collation or string; the `match_type` argument
//!   overrides it (`c`, `i`) and adds `m` (multi-line `^`/`$`) and `n` (`.` matches a
//!   newline); `u` (Unix line endings) is the engine's only mode anyway. Any other
//!   letter is error 1210.
//! - Positions and lengths count characters, from 1. A position below 1 is error 1583;
//!   past the subject it is error 3686 (`REGEXP_LIKE`/`REGEXP_INSTR` search the subject
//!   from the position on, so `^` matches there; `REGEXP_SUBSTR`/`REGEXP_REPLACE` search
//!   the whole subject from the position, as ICU's `find(start)` does). After an empty
//!   match the next search starts one character further, as ICU's `findNext`.
//! - `REGEXP_REPLACE` replaces every match (occurrence 0, the default) or only the
//!   n-th; the replacement takes ICU's syntax: `$n` (as many digits as name an existing
//!   group), `${name}`, and `\` quoting the next character. `REGEXP_SUBSTR` of no match
//!   is NULL.
//! - Arguments are checked before NULL is returned (a bad match type or position is an
//!   error even with a NULL subject), then a NULL argument gives NULL.
//! - Bad patterns get ICU's error numbers where the parser tells the cause (3691
//!   unbalanced parentheses, 3696 an unclosed bracket, 3688 a quantifier with nothing
//!   to repeat, ...), else 3685; an empty pattern and the old word-boundary classes
//!   `[[:<:]]`/`[[:>:]]` are 3685 as in MySQL 8.
//!
//! Differences from ICU, by the engine: back-references and look-around in a pattern
//! are not supported (error 1235); `$` without `m` matches only at the very end (ICU
//! also matches before a final newline); POSIX classes such as `[[:alpha:]]` are ASCII;
//! binary strings are matched as UTF-8 text too (a byte that is not UTF-8 matches no
//! `.`), with positions counted as [`super::cast::char_count`] counts them.
//!
//! Compiled patterns are cached per thread, so a constant pattern compiles once per
//! thread a statement runs on and a pattern column with few distinct values rarely
//! compiles at all: [`REGEXP_CACHE_ENTRIES_MAX`] programs of at most
//! [`REGEXP_CACHED_PROGRAM_BYTES_MAX`] each (most recently used first), and one larger
//! program (a bounded repetition of a Unicode class, `\w{1,300}`, takes megabytes) of
//! at most [`REGEXP_PROGRAM_BYTES_MAX`] (past it: error 3700). Each program's lazy DFA
//! is bounded by [`REGEXP_DFA_BYTES_MAX`], so a thread's cache holds a bounded amount
//! of memory.

use std::cell::RefCell;
use std::rc::Rc;

use regex::bytes::{Captures, Regex, RegexBuilder};
use regex_syntax::ast::ErrorKind;
use tarn_common::limits::SQL_STRING_RESULT_BYTES_MAX;
use tarn_common::{Error, Result};
use tarn_row::types::Collation;
use tarn_row::value::Value;

use super::cast::{char_boundary_after, char_count, to_i64, to_text, utf8_char_len};
use crate::limits::{
    REGEXP_CACHE_ENTRIES_MAX, REGEXP_CACHED_PROGRAM_BYTES_MAX, REGEXP_DFA_BYTES_MAX,
    REGEXP_PROGRAM_BYTES_MAX,
};

/// The names of the functions this module evaluates (uppercase).
pub const FUNCTIONS: [&str; 4] = [
    "REGEXP_LIKE",
    "REGEXP_INSTR",
    "REGEXP_SUBSTR",
    "REGEXP_REPLACE",
];

/// How a pattern is compiled: the match type's flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Flags {
    case_insensitive: bool,
    multi_line: bool,
    dot_all: bool,
}

struct Cached {
    pattern: Vec<u8>,
    flags: Flags,
    regex: Rc<Regex>,
}

thread_local! {
    /// Compiled patterns of at most [`REGEXP_CACHED_PROGRAM_BYTES_MAX`], most recently
    /// used first.
    static CACHE: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
    /// The last larger compiled pattern.
    static LARGE: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

fn error(code: u16, message: impl Into<String>) -> Error {
    Error::sql(code, "HY000", message)
}

fn illegal_argument() -> Error {
    error(3685, "Illegal argument to a regular expression.")
}

fn out_of_bounds() -> Error {
    error(3686, "Index out of bounds in regular expression search.")
}

fn wrong_arguments(name: &str) -> Error {
    Error::sql(
        1210,
        "HY000",
        format!("Incorrect arguments to {}", name.to_ascii_lowercase()),
    )
}

fn wrong_parameters(name: &str) -> Error {
    Error::sql(
        1583,
        "42000",
        format!(
            "Incorrect parameters in the call to native function '{}'",
            name.to_ascii_lowercase()
        ),
    )
}

/// `pattern` compiled with `flags`, from the cache or compiled and cached.
fn compiled(pattern: &[u8], flags: Flags) -> Result<Rc<Regex>> {
    let hit = CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        let i = cache
            .iter()
            .position(|e| e.flags == flags && e.pattern == pattern)?;
        let entry = cache.remove(i);
        let regex = Rc::clone(&entry.regex);
        cache.insert(0, entry);
        Some(regex)
    });
    if let Some(regex) = hit {
        return Ok(regex);
    }
    let large_hit = LARGE.with(|l| {
        l.borrow()
            .as_ref()
            .filter(|e| e.flags == flags && e.pattern == pattern)
            .map(|e| Rc::clone(&e.regex))
    });
    if let Some(regex) = large_hit {
        return Ok(regex);
    }
    let text = String::from_utf8_lossy(pattern);
    if text.is_empty() || text.contains("[[:<:]]") || text.contains("[[:>:]]") {
        return Err(illegal_argument());
    }
    let entry = |regex: &Rc<Regex>| Cached {
        pattern: pattern.to_vec(),
        flags,
        regex: Rc::clone(regex),
    };
    match compile(&text, flags, REGEXP_CACHED_PROGRAM_BYTES_MAX) {
        Ok(regex) => {
            let regex = Rc::new(regex);
            CACHE.with(|c| {
                let mut cache = c.borrow_mut();
                cache.insert(0, entry(&regex));
                cache.truncate(REGEXP_CACHE_ENTRIES_MAX);
            });
            Ok(regex)
        }
        Err(regex::Error::CompiledTooBig(_)) => {
            let regex = Rc::new(
                compile(&text, flags, REGEXP_PROGRAM_BYTES_MAX)
                    .map_err(|e| compile_error(&text, e))?,
            );
            LARGE.with(|l| *l.borrow_mut() = Some(entry(&regex)));
            Ok(regex)
        }
        Err(e) => Err(compile_error(&text, e)),
    }
}

fn compile(pattern: &str, flags: Flags, size_limit: usize) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .case_insensitive(flags.case_insensitive)
        .multi_line(flags.multi_line)
        .dot_matches_new_line(flags.dot_all)
        .size_limit(size_limit)
        .dfa_size_limit(REGEXP_DFA_BYTES_MAX)
        .build()
}

fn compile_error(pattern: &str, e: regex::Error) -> Error {
    match e {
        regex::Error::CompiledTooBig(_) => {
            error(3700, "Pattern exceeds limits on size or complexity.")
        }
        _ => syntax_error(pattern),
    }
}

/// ICU's error for a pattern the engine rejects, from what its parser says is wrong.
fn syntax_error(pattern: &str) -> Error {
    let Err(e) = regex_syntax::ast::parse::Parser::new().parse(pattern) else {
        // The syntax is fine; the engine refused it for another reason (a Unicode
        // class it does not know, ...).
        return illegal_argument();
    };
    let character = e.span().start.offset + 1;
    match e.kind() {
        ErrorKind::GroupUnclosed | ErrorKind::GroupUnopened => {
            error(3691, "Mismatched parenthesis in regular expression.")
        }
        ErrorKind::ClassUnclosed => error(
            3696,
            "The regular expression contains an unclosed bracket expression.",
        ),
        ErrorKind::ClassRangeInvalid => error(
            3697,
            "The regular expression contains an [x-y] character range where x comes after y.",
        ),
        ErrorKind::RepetitionCountInvalid => error(
            3693,
            "The maximum is less than the minumum in a {min,max} interval.",
        ),
        ErrorKind::RepetitionCountUnclosed
        | ErrorKind::RepetitionCountDecimalEmpty
        | ErrorKind::DecimalEmpty => error(3692, "Incorrect description of a {min,max} interval."),
        ErrorKind::DecimalInvalid => {
            error(4007, "Decimal number in regular expression is too large.")
        }
        ErrorKind::RepetitionMissing => error(
            3688,
            format!("Syntax error in regular expression on line 1, character {character}."),
        ),
        ErrorKind::EscapeUnrecognized
        | ErrorKind::EscapeUnexpectedEof
        | ErrorKind::EscapeHexEmpty
        | ErrorKind::EscapeHexInvalid
        | ErrorKind::EscapeHexInvalidDigit
        | ErrorKind::ClassEscapeInvalid => {
            error(3689, "Unrecognized escape sequence in regular expression.")
        }
        ErrorKind::FlagUnrecognized
        | ErrorKind::FlagDanglingNegation
        | ErrorKind::FlagDuplicate { .. }
        | ErrorKind::FlagRepeatedNegation { .. }
        | ErrorKind::FlagUnexpectedEof => {
            error(3900, "Invalid match mode flag in regular expression.")
        }
        ErrorKind::GroupNameDuplicate { .. }
        | ErrorKind::GroupNameEmpty
        | ErrorKind::GroupNameInvalid
        | ErrorKind::GroupNameUnexpectedEof => error(3887, "A capture group has an invalid name."),
        ErrorKind::NestLimitExceeded(_) | ErrorKind::CaptureLimitExceeded => {
            error(3700, "Pattern exceeds limits on size or complexity.")
        }
        ErrorKind::UnsupportedBackreference => {
            unsupported("back-references in regular expressions")
        }
        ErrorKind::UnsupportedLookAround => unsupported("look-around in regular expressions"),
        _ => illegal_argument(),
    }
}

fn unsupported(what: &str) -> Error {
    Error::sql(
        1235,
        "42000",
        format!("This version of Tarn doesn't yet support '{what}'"),
    )
}

/// Where each function's optional arguments are: (position, occurrence,
/// return_option, match_type), by index.
fn layout(name: &str) -> [Option<usize>; 4] {
    match name {
        "REGEXP_LIKE" => [None, None, None, Some(2)],
        "REGEXP_INSTR" => [Some(2), Some(3), Some(4), Some(5)],
        "REGEXP_SUBSTR" => [Some(2), Some(3), None, Some(4)],
        _ => [Some(3), Some(4), None, Some(5)],
    }
}

/// `name(args)` (`name` uppercase, one of [`FUNCTIONS`]); `collation` is the
/// arguments' (case-insensitive unless binary). The caller has checked the number
/// of arguments.
pub fn call(name: &str, args: &[Value], collation: Collation) -> Result<Value> {
    let [position_at, occurrence_at, return_at, match_at] = layout(name);
    let present = |at: Option<usize>| at.and_then(|i| args.get(i)).filter(|v| !v.is_null());
    let mut flags = Flags {
        case_insensitive: collation == Collation::CaseInsensitive,
        multi_line: false,
        dot_all: false,
    };
    if let Some(v) = present(match_at) {
        for c in to_text(v).unwrap_or_default() {
            match c {
                b'c' => flags.case_insensitive = false,
                b'i' => flags.case_insensitive = true,
                b'm' => flags.multi_line = true,
                b'n' => flags.dot_all = true,
                b'u' => {}
                _ => return Err(wrong_arguments(name)),
            }
        }
    }
    let position = present(position_at).map_or(1, |v| to_i64(v).unwrap_or(0));
    if position < 1 {
        return Err(wrong_parameters(name));
    }
    let return_option = present(return_at).map_or(0, |v| to_i64(v).unwrap_or(0));
    if !(0..=1).contains(&return_option) {
        return Err(wrong_arguments(name));
    }
    let regex = match args[1].is_null() {
        true => None,
        false => Some(compiled(&to_text(&args[1]).unwrap_or_default(), flags)?),
    };
    let (Some(regex), false) = (regex, args.iter().any(Value::is_null)) else {
        return Ok(Value::Null);
    };
    let subject = to_text(&args[0]).unwrap_or_default();
    let occurrence = present(occurrence_at).map_or(0, |v| to_i64(v).unwrap_or(0));
    let position = usize::try_from(position - 1).unwrap_or(usize::MAX);
    match name {
        "REGEXP_LIKE" | "REGEXP_INSTR" => {
            // The search sees the subject from the position on.
            if !subject.is_empty() && position >= char_count(&subject) {
                return Err(out_of_bounds());
            }
            let rest = &subject[char_boundary_after(&subject, position)..];
            if name == "REGEXP_LIKE" {
                return Ok(Value::Int(i64::from(regex.is_match(rest))));
            }
            let found = matches_from(&regex, rest, 0).nth(occurrence.max(1) as usize - 1);
            Ok(Value::Int(found.map_or(0, |(start, end)| {
                let at = if return_option == 0 { start } else { end };
                (char_count(&rest[..at]) + position + 1) as i64
            })))
        }
        "REGEXP_SUBSTR" => {
            let start = start_byte(&subject, position)?;
            Ok(matches_from(&regex, &subject, start)
                .nth(occurrence.max(1) as usize - 1)
                .map_or(Value::Null, |(s, e)| Value::Bytes(subject[s..e].to_vec())))
        }
        _ => {
            let start = start_byte(&subject, position)?;
            let replacement = to_text(&args[2]).unwrap_or_default();
            replace(&regex, &subject, start, occurrence, &replacement).map(Value::Bytes)
        }
    }
}

/// The byte offset of character `position` (0-based); the subject's end is allowed.
fn start_byte(subject: &[u8], position: usize) -> Result<usize> {
    if position > char_count(subject) {
        return Err(out_of_bounds());
    }
    Ok(char_boundary_after(subject, position))
}

/// The matches in `hay` from byte `start` on, as (start, end) byte ranges, with ICU's
/// rule for empty matches: the search after one starts a character further.
fn matches_from<'a>(
    regex: &'a Regex,
    hay: &'a [u8],
    start: usize,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut at = Some(start);
    std::iter::from_fn(move || {
        let m = regex.find_at(hay, at?)?;
        at = next_search(hay, m.start(), m.end());
        Some((m.start(), m.end()))
    })
}

fn next_search(hay: &[u8], start: usize, end: usize) -> Option<usize> {
    if start < end {
        Some(end)
    } else if end < hay.len() {
        Some(end + utf8_char_len(hay, end))
    } else {
        None
    }
}

/// REGEXP_REPLACE: the subject with its `occurrence`-th match from `start` (every
/// match for 0) replaced. Error 3684 past [`SQL_STRING_RESULT_BYTES_MAX`].
fn replace(
    regex: &Regex,
    subject: &[u8],
    start: usize,
    occurrence: i64,
    replacement: &[u8],
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(subject.len());
    let mut copied = 0;
    let mut at = Some(start);
    let mut seen = 0i64;
    while let Some(from) = at {
        let Some(caps) = regex.captures_at(subject, from) else {
            break;
        };
        let whole = caps.get(0).expect("group 0 is the match");
        seen += 1;
        at = next_search(subject, whole.start(), whole.end());
        if occurrence > 0 && seen < occurrence {
            continue;
        }
        out.extend_from_slice(&subject[copied..whole.start()]);
        expand(regex, &caps, replacement, &mut out)?;
        copied = whole.end();
        if out.len() > SQL_STRING_RESULT_BYTES_MAX {
            return Err(error(
                3684,
                "The result string is larger than the result buffer.",
            ));
        }
        if occurrence > 0 {
            break;
        }
    }
    out.extend_from_slice(&subject[copied..]);
    if out.len() > SQL_STRING_RESULT_BYTES_MAX {
        return Err(error(
            3684,
            "The result string is larger than the result buffer.",
        ));
    }
    Ok(out)
}

/// Appends `replacement` with its group references filled in (ICU's
/// `appendReplacement`): `\x` is `x`; `$` then digits is the group with the longest
/// digit prefix that names one (3686 if even the first digit names none); `${name}`
/// a named group; any other `$` is error 3887.
fn expand(regex: &Regex, caps: &Captures, replacement: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let invalid_name = || error(3887, "A capture group has an invalid name.");
    let groups = caps.len() - 1;
    let mut i = 0;
    while i < replacement.len() {
        match replacement[i] {
            b'\\' if i + 1 < replacement.len() => {
                let len = utf8_char_len(replacement, i + 1);
                out.extend_from_slice(&replacement[i + 1..i + 1 + len]);
                i += 1 + len;
            }
            // A backslash at the end escapes nothing.
            b'\\' => i += 1,
            b'$' => {
                i += 1;
                let group = match replacement.get(i) {
                    Some(b'{') => {
                        let close = replacement[i..]
                            .iter()
                            .position(|&b| b == b'}')
                            .ok_or_else(invalid_name)?;
                        let name = &replacement[i + 1..i + close];
                        i += close + 1;
                        let valid = name.first().is_some_and(u8::is_ascii_alphabetic)
                            && name.iter().all(u8::is_ascii_alphanumeric);
                        let name = std::str::from_utf8(name).map_err(|_| invalid_name())?;
                        if !valid || !regex.capture_names().any(|n| n == Some(name)) {
                            return Err(invalid_name());
                        }
                        caps.name(name)
                    }
                    Some(d) if d.is_ascii_digit() => {
                        let mut number = 0usize;
                        let mut digits = 0;
                        while let Some(d) = replacement.get(i).filter(|d| d.is_ascii_digit()) {
                            let next = number * 10 + usize::from(d - b'0');
                            if next > groups {
                                break;
                            }
                            number = next;
                            digits += 1;
                            i += 1;
                        }
                        if digits == 0 {
                            return Err(out_of_bounds());
                        }
                        caps.get(number)
                    }
                    _ => return Err(invalid_name()),
                };
                if let Some(m) = group {
                    out.extend_from_slice(m.as_bytes());
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CI: Collation = Collation::CaseInsensitive;

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn i(n: i64) -> Value {
        Value::Int(n)
    }

    fn run(name: &str, args: &[Value]) -> String {
        let v = call(name, args, CI).unwrap();
        String::from_utf8(to_text(&v).unwrap_or(b"NULL".to_vec())).unwrap()
    }

    fn code(name: &str, args: &[Value]) -> u16 {
        call(name, args, CI).unwrap_err().mysql_code()
    }

    /// The examples of MySQL's manual and its regexp test suite.
    #[test]
    fn mysql_answers() {
        assert_eq!(run("REGEXP_LIKE", &[s("CamelCase"), s("CAMELCASE")]), "1");
        assert_eq!(
            call(
                "REGEXP_LIKE",
                &[s("CamelCase"), s("CAMELCASE")],
                Collation::Binary
            )
            .unwrap(),
            i(0)
        );
        assert_eq!(run("REGEXP_LIKE", &[s("abc"), s("A"), s("c")]), "0");
        assert_eq!(run("REGEXP_LIKE", &[s("abc"), s("A"), s("ci")]), "1");
        assert_eq!(run("REGEXP_LIKE", &[s("a\nb\nc"), s("^b$")]), "0");
        assert_eq!(run("REGEXP_LIKE", &[s("a\nb\nc"), s("^b$"), s("m")]), "1");
        assert_eq!(run("REGEXP_LIKE", &[s("a\nb"), s("a.b")]), "0");
        assert_eq!(run("REGEXP_LIKE", &[s("a\nb"), s("a.b"), s("n")]), "1");
        assert_eq!(run("REGEXP_LIKE", &[s("a"), s("a+"), Value::Null]), "NULL");
        assert_eq!(run("REGEXP_INSTR", &[s("dog cat dog"), s("dog")]), "1");
        assert_eq!(
            run("REGEXP_INSTR", &[s("dog cat dog"), s("dog"), i(2)]),
            "9"
        );
        assert_eq!(run("REGEXP_INSTR", &[s("aa aaa aaaa"), s("a{4}")]), "8");
        assert_eq!(run("REGEXP_INSTR", &[s("abcabcabc"), s("b+"), i(3)]), "5");
        assert_eq!(
            run("REGEXP_INSTR", &[s("abcabcabc"), s("a+"), i(1), i(3)]),
            "7"
        );
        assert_eq!(
            run("REGEXP_INSTR", &[s("abcabcabc"), s("a+"), i(1), i(4)]),
            "0"
        );
        assert_eq!(
            run("REGEXP_INSTR", &[s("abcabcabc"), s("a+"), i(4), i(2)]),
            "7"
        );
        assert_eq!(
            run(
                "REGEXP_INSTR",
                &[s("aaabcabcabc"), s("a+"), i(1), i(1), i(1)]
            ),
            "4"
        );
        assert_eq!(
            run(
                "REGEXP_INSTR",
                &[s("aaabcabcabc"), s("A+"), i(1), i(1), i(1), s("c")]
            ),
            "0"
        );
        assert_eq!(run("REGEXP_INSTR", &[s("🍣🍣a"), s("a"), i(3)]), "3");
        assert_eq!(
            run("REGEXP_SUBSTR", &[s("abc def ghi"), s("[a-z]+")]),
            "abc"
        );
        assert_eq!(
            run(
                "REGEXP_SUBSTR",
                &[s("abc def ghi"), s("[a-z]+"), i(1), i(3)]
            ),
            "ghi"
        );
        assert_eq!(run("REGEXP_SUBSTR", &[s("ab ac ad"), s("A."), i(3)]), "ac");
        assert_eq!(
            run("REGEXP_SUBSTR", &[s("ab ac ad"), s("A."), i(3), i(3)]),
            "NULL"
        );
        assert_eq!(run("REGEXP_SUBSTR", &[s("a🍣b"), s("."), i(2)]), "🍣");
        assert_eq!(run("REGEXP_SUBSTR", &[s("a🍣b"), s("."), i(4)]), "NULL");
        assert_eq!(
            run("REGEXP_REPLACE", &[s("a b c"), s("b"), s("X")]),
            "a X c"
        );
        assert_eq!(
            run(
                "REGEXP_REPLACE",
                &[s("abc def ghi"), s("[a-z]+"), s("X"), i(1), i(3)]
            ),
            "abc def X"
        );
        assert_eq!(
            run(
                "REGEXP_REPLACE",
                &[s("aaabbccbbddaa"), s("(b+)"), s("<$1>"), i(1), i(2)]
            ),
            "aaabbcc<bb>ddaa"
        );
        assert_eq!(
            run(
                "REGEXP_REPLACE",
                &[s("aaabbccbbddaa"), s("x+"), s("x"), i(1), i(0)]
            ),
            "aaabbccbbddaa"
        );
        assert_eq!(
            run("REGEXP_REPLACE", &[s("abcbdb"), s("b"), s("X"), i(3)]),
            "abcXdX"
        );
        assert_eq!(
            run("REGEXP_REPLACE", &[s("aaa"), s("a"), s("XX"), i(2)]),
            "aXXXX"
        );
        assert_eq!(
            run("REGEXP_REPLACE", &[s("🍣🍣🍣"), s("."), s("a"), i(2), i(2)]),
            "🍣🍣a"
        );
        assert_eq!(
            run("REGEXP_REPLACE", &[s("abc"), s("x*"), s("-")]),
            "-a-b-c-"
        );
        assert_eq!(
            run("REGEXP_REPLACE", &[s("xab"), s("x*"), s("-")]),
            "--a-b-"
        );
        assert_eq!(
            run(
                "REGEXP_REPLACE",
                &[s("a a a"), s("^([[:alpha:]]+)[[:space:]].*$"), s("$1")]
            ),
            "a"
        );
        assert_eq!(
            run(
                "REGEXP_REPLACE",
                &[
                    s("John Smith"),
                    s("(?<first>\\w+) (\\w+)"),
                    s("$2, ${first} \\$1")
                ]
            ),
            "Smith, John $1"
        );
        // $12 with one group: group 1, then the digit 2.
        assert_eq!(run("REGEXP_REPLACE", &[s("ab"), s("(a)"), s("$12")]), "a2b");
        assert_eq!(run("REGEXP_REPLACE", &[s("ab"), s("a"), s("[$0]")]), "[a]b");
    }

    #[test]
    fn errors() {
        assert_eq!(code("REGEXP_LIKE", &[s("a"), s("(")]), 3691);
        assert_eq!(code("REGEXP_LIKE", &[s("a"), s("a[")]), 3696);
        assert_eq!(code("REGEXP_LIKE", &[s("a"), s("a{2,1}")]), 3693);
        assert_eq!(code("REGEXP_SUBSTR", &[s("ab"), s("[b-a]")]), 3697);
        assert_eq!(code("REGEXP_LIKE", &[s("a"), s("")]), 3685);
        assert_eq!(code("REGEXP_LIKE", &[s("a"), s("[[:<:]]a")]), 3685);
        let e = call("REGEXP_SUBSTR", &[s("aaa"), s("+")], CI).unwrap_err();
        assert_eq!(e.mysql_code(), 3688);
        assert_eq!(
            e.to_string(),
            "Syntax error in regular expression on line 1, character 1."
        );
        assert_eq!(code("REGEXP_LIKE", &[s("a"), s("\\")]), 3689);
        assert_eq!(code("REGEXP_LIKE", &[s("a"), s("(a)\\1")]), 1235);
        assert_eq!(code("REGEXP_LIKE", &[s("a"), s("a+"), s("x")]), 1210);
        assert_eq!(
            code("REGEXP_INSTR", &[s("a"), s("a+"), i(1), i(1), i(2)]),
            1210
        );
        assert_eq!(code("REGEXP_INSTR", &[s("a"), s("a+"), i(3)]), 3686);
        assert_eq!(code("REGEXP_INSTR", &[s("🍣🍣a"), s("a"), i(4)]), 3686);
        assert_eq!(
            code("REGEXP_REPLACE", &[s("a"), s("a+"), s("b"), i(3)]),
            3686
        );
        let e = call("REGEXP_REPLACE", &[s("aaa"), s("a"), s("X"), i(0)], CI).unwrap_err();
        assert_eq!((e.mysql_code(), e.sqlstate()), (1583, "42000"));
        assert_eq!(
            code("REGEXP_REPLACE", &[s("abc"), s("abc"), s("$abc")]),
            3887
        );
        assert_eq!(code("REGEXP_REPLACE", &[s("a"), s("(a)"), s("$2")]), 3686);
        assert_eq!(code("REGEXP_REPLACE", &[s("a"), s("(a)"), s("${1}")]), 3887);
        // Arguments are checked before a NULL subject gives NULL.
        assert_eq!(
            code(
                "REGEXP_INSTR",
                &[Value::Null, s("*"), i(1), i(1), i(-1), s("c")]
            ),
            1210
        );
        assert_eq!(
            code("REGEXP_REPLACE", &[Value::Null, s(""), Value::Null]),
            3685
        );
        assert_eq!(run("REGEXP_INSTR", &[Value::Null, s("a")]), "NULL");
        assert_eq!(run("REGEXP_INSTR", &[s(""), s("a"), i(5)]), "0");
        let e = call("REGEXP_LIKE", &[s("a"), s("(")], CI).unwrap_err();
        assert_eq!(e.sqlstate(), "HY000");
    }

    /// The cache keeps at most its bound and returns the same program for a pattern.
    #[test]
    fn cache_is_bounded() {
        for n in 0..REGEXP_CACHE_ENTRIES_MAX * 3 {
            assert_eq!(
                run("REGEXP_LIKE", &[s(&format!("x{n}")), s(&format!("^x{n}$"))]),
                "1"
            );
        }
        CACHE.with(|c| assert_eq!(c.borrow().len(), REGEXP_CACHE_ENTRIES_MAX));
        let flags = Flags {
            case_insensitive: true,
            multi_line: false,
            dot_all: false,
        };
        let a = compiled(b"abc", flags).unwrap();
        let b = compiled(b"abc", flags).unwrap();
        assert!(Rc::ptr_eq(&a, &b));
        // A large program is kept on the side, and the cache keeps its bound.
        let large = compiled(br"\w{1,300}", flags).unwrap();
        assert!(Rc::ptr_eq(&large, &compiled(br"\w{1,300}", flags).unwrap()));
        CACHE.with(|c| assert_eq!(c.borrow().len(), REGEXP_CACHE_ENTRIES_MAX));
        assert_eq!(
            run("REGEXP_LIKE", &[s(&"é".repeat(300)), s(r"^\w{1,300}$")]),
            "1"
        );
        assert_eq!(
            code(
                "REGEXP_LIKE",
                &[s("a"), s(r"\w{1,100}\w{1,100}\w{1,100}\w{1,100}")]
            ),
            3700
        );
    }
}
