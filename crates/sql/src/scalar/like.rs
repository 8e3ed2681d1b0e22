//! `LIKE` pattern matching.
//!
//! `%` matches any run of characters, `_` exactly one character, and the escape
//! character makes the next pattern character literal (an escape at the very end of
//! the pattern is itself literal, as in MySQL). Characters are UTF-8 code points; a
//! byte that is not part of valid UTF-8 is one character of its own. Under the
//! case-insensitive collation both sides are folded to the same simple uppercase the
//! key encoding uses; trailing spaces are significant (LIKE does not pad).
//!
//! The matcher is the classic two-pointer walk with one backtrack point per `%`
//! (the most recent one): O(text x pattern) in the worst case, no recursion and no
//! allocation per row beyond decoding the text.

use tarn_row::types::Collation;

/// A decoded character: a Unicode scalar, or `0x110000 + byte` for an invalid byte.
pub(crate) type Unit = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Literal(Unit),
    /// `_`
    One,
    /// `%`
    Any,
}

fn fold(c: char, collation: Collation) -> Unit {
    match collation {
        Collation::Binary => c as Unit,
        Collation::CaseInsensitive => {
            let mut upper = c.to_uppercase();
            match (upper.next(), upper.next()) {
                (Some(single), None) => single as Unit,
                _ => c as Unit,
            }
        }
    }
}

/// Decodes `bytes` into characters (folded for `collation`), invalid bytes one each.
pub(crate) fn decode(bytes: &[u8], collation: Collation, out: &mut Vec<Unit>) {
    out.clear();
    if bytes.is_ascii() {
        out.extend(bytes.iter().map(|&b| match collation {
            Collation::CaseInsensitive => Unit::from(b.to_ascii_uppercase()),
            Collation::Binary => Unit::from(b),
        }));
        return;
    }
    for chunk in bytes.utf8_chunks() {
        out.extend(chunk.valid().chars().map(|c| fold(c, collation)));
        out.extend(chunk.invalid().iter().map(|&b| 0x11_0000 + Unit::from(b)));
    }
}

/// A precompiled pattern for the vectorized path (the same pattern against many rows).
#[derive(Clone, Debug)]
pub struct LikePattern {
    tokens: Vec<Token>,
    collation: Collation,
}

impl LikePattern {
    pub fn new(pattern: &[u8], escape: u8, collation: Collation) -> LikePattern {
        let mut units = Vec::new();
        decode(pattern, collation, &mut units);
        // The escape byte as a unit, folded like the pattern.
        let escape_unit = match (escape.is_ascii(), collation) {
            (true, Collation::CaseInsensitive) => Unit::from(escape.to_ascii_uppercase()),
            (true, Collation::Binary) => Unit::from(escape),
            (false, _) => 0x11_0000 + Unit::from(escape),
        };
        let mut tokens = Vec::with_capacity(units.len());
        let mut i = 0;
        while i < units.len() {
            let u = units[i];
            if u == escape_unit && i + 1 < units.len() {
                tokens.push(Token::Literal(units[i + 1]));
                i += 2;
                continue;
            }
            tokens.push(match u {
                0x25 => Token::Any,
                0x5f => Token::One,
                _ => Token::Literal(u),
            });
            i += 1;
        }
        // Runs of `%` are one `%`.
        tokens.dedup_by(|a, b| *a == Token::Any && *b == Token::Any);
        LikePattern { tokens, collation }
    }

    pub fn matches(&self, text: &[u8]) -> bool {
        let mut units = Vec::new();
        decode(text, self.collation, &mut units);
        self.matches_units(&units)
    }

    fn matches_units(&self, text: &[Unit]) -> bool {
        let p = &self.tokens;
        let (mut ti, mut pi) = (0usize, 0usize);
        // After the last `%` seen: (pattern index after it, text index it resumes at).
        let mut backtrack: Option<(usize, usize)> = None;
        while ti < text.len() {
            match p.get(pi) {
                Some(Token::Any) => {
                    pi += 1;
                    backtrack = Some((pi, ti));
                    continue;
                }
                Some(Token::One) => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                Some(Token::Literal(u)) if *u == text[ti] => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                _ => {}
            }
            match backtrack {
                Some((after_any, resume)) => {
                    pi = after_any;
                    ti = resume + 1;
                    backtrack = Some((after_any, resume + 1));
                }
                None => return false,
            }
        }
        p[pi..].iter().all(|t| *t == Token::Any)
    }
}

/// `text LIKE pattern ESCAPE escape` under `collation` (see the module documentation).
pub fn like(text: &[u8], pattern: &[u8], escape: u8, collation: Collation) -> bool {
    LikePattern::new(pattern, escape, collation).matches(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tarn_common::rng::{Rng, test_seed};

    const CI: Collation = Collation::CaseInsensitive;
    const BIN: Collation = Collation::Binary;

    fn l(text: &str, pattern: &str) -> bool {
        like(text.as_bytes(), pattern.as_bytes(), b'\\', CI)
    }

    #[test]
    fn mysql_answers() {
        assert!(l("David!", "David_"));
        assert!(l("David!", "%D%v%"));
        assert!(l("abc", "ABC"));
        assert!(!like(b"abc", b"ABC", b'\\', BIN));
        assert!(l("abc", "a%"));
        assert!(l("abc", "%"));
        assert!(l("", "%"));
        assert!(!l("", "_"));
        assert!(l("a", "a%%%"));
        assert!(!l("abc ", "abc"));
        assert!(l("David_", "David\\_"));
        assert!(!l("David!", "David\\_"));
        assert!(!l("10%", "10|%"));
        assert!(like(b"10%", b"10|%", b'|', CI));
        assert!(!like(b"10x", b"10|%", b'|', CI));
        assert!(l("a\\", "a\\"));
        assert!(l("héllo", "h_llo"));
        assert!(l("HÉLLO", "hé%"));
        assert!(l("mississippi", "%iss%ppi"));
        assert!(!l("mississippi", "%iss%ppx"));
        assert!(l("abcabd", "%abd"));
        assert!(like(&[0xff, b'a'], b"_a", b'\\', BIN));
    }

    /// The matcher against a simple recursive model on small random strings.
    #[test]
    fn random_patterns_against_a_model() {
        fn model(t: &[u8], p: &[u8]) -> bool {
            match p.first() {
                None => t.is_empty(),
                Some(b'%') => (0..=t.len()).any(|k| model(&t[k..], &p[1..])),
                Some(b'_') => !t.is_empty() && model(&t[1..], &p[1..]),
                Some(c) => t.first() == Some(c) && model(&t[1..], &p[1..]),
            }
        }
        let mut rng = Rng::new(test_seed("random_patterns_against_a_model"));
        for _ in 0..20_000 {
            let word = |alphabet: &[u8], rng: &mut Rng| {
                let n = rng.below(8) as usize;
                (0..n)
                    .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                    .collect::<Vec<u8>>()
            };
            let text = word(b"ab", &mut rng);
            let pattern = word(b"ab%_", &mut rng);
            assert_eq!(
                like(&text, &pattern, b'\\', BIN),
                model(&text, &pattern),
                "{:?} LIKE {:?}",
                String::from_utf8_lossy(&text),
                String::from_utf8_lossy(&pattern)
            );
        }
    }
}
