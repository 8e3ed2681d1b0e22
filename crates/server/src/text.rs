//! Statement text from the wire.
//!
//! Clients send statements as bytes. Text is UTF-8, but a string literal may hold
//! any bytes: PyMySQL, for one, sends binary parameters as `_binary'…'` with the raw
//! bytes between the quotes (backslash-escaped quotes, NUL and newlines only). The
//! SQL layer parses `str`, so a literal that is not UTF-8 is rewritten here as the
//! hexadecimal literal `X'…'` of its bytes (after undoing MySQL's backslash
//! escapes), which means the same value. Bytes outside literals that are not UTF-8
//! are replaced by U+FFFD and then fail to parse as they would in MySQL.

use std::borrow::Cow;

/// The statement text of `bytes`.
pub fn query_text(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(rewrite_binary_literals(bytes))
}

/// Whether the first word of `text`, past whitespace and comments (`/* */`, `-- `,
/// `#`), is `word` (any case). A cheap look before a parse.
pub fn first_word_is(text: &str, word: &str) -> bool {
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("/*") {
            match after.find("*/") {
                Some(end) => rest = &after[end + 2..],
                None => return false,
            }
        } else if rest.starts_with("-- ") || rest.starts_with('#') {
            match rest.find('\n') {
                Some(end) => rest = &rest[end + 1..],
                None => return false,
            }
        } else {
            break;
        }
    }
    rest.get(..word.len())
        .is_some_and(|w| w.eq_ignore_ascii_case(word))
        && !rest[word.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

fn unescape(body: &[u8], quote: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        if b == b'\\' && i + 1 < body.len() {
            let next = body[i + 1];
            out.extend_from_slice(match next {
                b'0' => b"\0",
                b'n' => b"\n",
                b'r' => b"\r",
                b't' => b"\t",
                b'b' => b"\x08",
                b'Z' => b"\x1a",
                // MySQL keeps the backslash before % and _ (they are LIKE escapes).
                b'%' => b"\\%",
                b'_' => b"\\_",
                _ => std::slice::from_ref(&body[i + 1]),
            });
            i += 2;
        } else if b == quote && i + 1 < body.len() && body[i + 1] == quote {
            out.push(quote);
            i += 2;
        } else {
            out.push(b);
            i += 1;
        }
    }
    out
}

fn rewrite_binary_literals(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    let mut i = 0;
    let mut plain_from = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b != b'\'' && b != b'"' {
            i += 1;
            continue;
        }
        // A quoted literal: find its end.
        let quote = b;
        let mut j = i + 1;
        while j < bytes.len() {
            if bytes[j] == b'\\' {
                j += 2;
                continue;
            }
            if bytes[j] == quote {
                if j + 1 < bytes.len() && bytes[j + 1] == quote {
                    j += 2;
                    continue;
                }
                break;
            }
            j += 1;
        }
        let end = j.min(bytes.len());
        let body = &bytes[i + 1..end];
        if std::str::from_utf8(body).is_ok() {
            i = end + 1;
            continue;
        }
        // Flush the text before the literal, dropping a `_binary` introducer.
        let mut before = &bytes[plain_from..i];
        let trimmed = before.trim_ascii_end();
        if trimmed.len() >= 7 && trimmed[trimmed.len() - 7..].eq_ignore_ascii_case(b"_binary") {
            before = &trimmed[..trimmed.len() - 7];
        }
        out.push_str(&String::from_utf8_lossy(before));
        out.push_str("X'");
        for byte in unescape(body, quote) {
            out.push_str(&format!("{byte:02X}"));
        }
        out.push('\'');
        i = end + 1;
        plain_from = i.min(bytes.len());
    }
    out.push_str(&String::from_utf8_lossy(
        &bytes[plain_from.min(bytes.len())..],
    ));
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_first_word_is_found_past_comments() {
        use super::first_word_is;
        assert!(first_word_is(
            "  load data local infile 'x' into table t",
            "LOAD"
        ));
        assert!(first_word_is("/* a */ -- b\n# c\nLOAD DATA", "LOAD"));
        assert!(!first_word_is("LOADS", "LOAD"));
        assert!(!first_word_is("SELECT 'LOAD'", "LOAD"));
        assert!(!first_word_is("/* unclosed LOAD", "LOAD"));
    }

    use super::*;

    #[test]
    fn utf8_text_is_borrowed_unchanged() {
        assert!(matches!(
            query_text(b"SELECT 'caf\xc3\xa9'"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn binary_literals_become_hex_with_escapes_undone() {
        let sql = b"INSERT INTO t VALUES (1, _binary'\xff\\0\\'a''\x80')";
        assert_eq!(query_text(sql), "INSERT INTO t VALUES (1, X'FF0027612780')");
        let sql = b"SELECT 'ok', \"\xfe\"";
        assert_eq!(query_text(sql), "SELECT 'ok', X'FE'");
    }

    #[test]
    fn unterminated_or_stray_bytes_never_panic() {
        for sql in [&b"SELECT '\xff"[..], b"\xff\xfe", b"'\\", b"_binary'\x80\\"] {
            let _ = query_text(sql);
        }
    }
}
