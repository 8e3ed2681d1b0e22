//! The pre-pass: one linear scan over the query text that knows quoted strings and
//! comments and nothing else of SQL's grammar.
//!
//! It splits the text into statements at `;`, drops comments, opens version comments,
//! numbers `?` placeholders and makes the few textual rewrites listed in the parent
//! module's documentation. Everything inside quotes is copied byte for byte.
//!
//! Every delimiter it looks for is ASCII, so each position it slices the text at is a
//! character boundary (a byte of a multi-byte UTF-8 character is never ASCII).

/// MySQL version comments `/*!NNNNN ... */` run when `NNNNN` is at most this version
/// (the MySQL 8.0 dialect Tarn speaks); later ones are comments, as in MySQL 8.0.
pub const MYSQL_VERSION_ID: u32 = 80036;

/// One statement's text after the pre-pass.
#[derive(Debug)]
pub(super) struct Piece {
    /// The rewritten text, without surrounding whitespace and without the `;`.
    pub text: String,
    /// `?` placeholders, rewritten to `?1`, `?2`, ... left to right.
    pub param_count: usize,
    /// A `:=` outside a SET statement (user-variable assignment in an expression).
    pub assignment_outside_set: bool,
    /// `NTH_VALUE(..) FROM LAST OVER ..`, which MySQL parses and refuses.
    pub nth_value_from_last: bool,
}

/// Splits `sql` into statements and rewrites each; see the module documentation.
pub(super) fn split(sql: &str) -> Vec<Piece> {
    let mut scanner = Scanner {
        sql,
        bytes: sql.as_bytes(),
        pos: 0,
        pieces: Vec::new(),
        piece: PieceState::default(),
    };
    scanner.run();
    scanner.pieces
}

/// What the recent words were, to spot `LOCK IN SHARE MODE` and `FROM FIRST OVER`
/// without a second pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RecentWord {
    Lock,
    In,
    Share,
    From,
    Other,
}

#[derive(Default)]
struct PieceState {
    out: String,
    params: usize,
    words: usize,
    is_set: bool,
    assignment_outside_set: bool,
    nth_value_from_last: bool,
    in_version_comment: bool,
    /// The last significant (non-space, non-comment) byte copied to `out`.
    last_significant: u8,
    /// The last three words and where each starts in `out`; a token other than a word
    /// clears them.
    recent: [(Option<RecentWord>, usize); 3],
}

impl PieceState {
    fn forget_words(&mut self) {
        self.recent = [(None, 0); 3];
    }

    fn push_significant(&mut self, text: &str) {
        self.out.push_str(text);
        if let Some(&last) = text.as_bytes().last() {
            self.last_significant = last;
        }
    }

    /// A dropped comment becomes one space, so that `a/**/b` stays two tokens.
    fn push_separator(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with(|c: char| c.is_ascii_whitespace()) {
            self.out.push(' ');
        }
    }
}

struct Scanner<'a> {
    sql: &'a str,
    bytes: &'a [u8],
    pos: usize,
    pieces: Vec<Piece>,
    piece: PieceState,
}

/// MySQL's composite interval units as (first field, last field), in capitals.
const COMPOSITE_UNITS: [(&str, &str); 11] = [
    ("YEAR", "MONTH"),
    ("DAY", "HOUR"),
    ("DAY", "MINUTE"),
    ("DAY", "SECOND"),
    ("DAY", "MICROSECOND"),
    ("HOUR", "MINUTE"),
    ("HOUR", "SECOND"),
    ("HOUR", "MICROSECOND"),
    ("MINUTE", "SECOND"),
    ("MINUTE", "MICROSECOND"),
    ("SECOND", "MICROSECOND"),
];

/// The fields of `word` if it names a composite unit (`day_hour`: DAY, HOUR).
fn composite_unit(word: &str) -> Option<(&'static str, &'static str)> {
    let (first, last) = word.split_once('_')?;
    COMPOSITE_UNITS
        .into_iter()
        .find(|(f, l)| f.eq_ignore_ascii_case(first) && l.eq_ignore_ascii_case(last))
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'@' || b >= 0x80
}

impl Scanner<'_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn run(&mut self) {
        while self.pos < self.bytes.len() {
            let b = self.bytes[self.pos];
            match b {
                b'\'' | b'"' | b'`' => self.quoted(b),
                b'#' => self.line_comment(),
                b'-' if self.peek(1) == b'-' && matches!(self.peek(2), 0..=b' ') => {
                    self.line_comment()
                }
                b'/' if self.peek(1) == b'*' => self.block_comment(),
                b'*' if self.peek(1) == b'/' && self.piece.in_version_comment => {
                    self.piece.in_version_comment = false;
                    self.piece.push_separator();
                    self.pos += 2;
                }
                b';' => {
                    self.finish_piece();
                    self.pos += 1;
                }
                b'?' => self.placeholder(),
                b':' if self.peek(1) == b'=' => {
                    if self.piece.is_set {
                        self.piece.push_significant("=");
                    } else {
                        self.piece.assignment_outside_set = true;
                        self.piece.push_significant(":=");
                    }
                    self.piece.forget_words();
                    self.pos += 2;
                }
                _ if is_word_byte(b) => self.word(),
                _ if b.is_ascii_whitespace() => {
                    self.piece.out.push(b as char);
                    self.pos += 1;
                }
                _ => {
                    // Any other ASCII byte is one punctuation character.
                    self.piece
                        .push_significant(&self.sql[self.pos..self.pos + 1]);
                    self.piece.forget_words();
                    self.pos += 1;
                }
            }
        }
        self.finish_piece();
    }

    fn finish_piece(&mut self) {
        let piece = std::mem::take(&mut self.piece);
        self.pieces.push(Piece {
            text: piece.out.trim().to_string(),
            param_count: piece.params,
            assignment_outside_set: piece.assignment_outside_set,
            nth_value_from_last: piece.nth_value_from_last,
        });
    }

    /// A quoted string or identifier, copied verbatim. Backslash escapes apply in
    /// '..' and "..", doubled quotes in all three. An unterminated one runs to the end
    /// of the text (sqlparser then reports it).
    fn quoted(&mut self, quote: u8) {
        let start = self.pos;
        let mut i = start + 1;
        while i < self.bytes.len() {
            let b = self.bytes[i];
            if b == b'\\' && quote != b'`' {
                i += 2;
            } else if b == quote {
                if self.bytes.get(i + 1) == Some(&quote) {
                    i += 2;
                } else {
                    i += 1;
                    break;
                }
            } else {
                i += 1;
            }
        }
        // A backslash as the last byte would step past the end.
        let end = i.min(self.bytes.len());
        // `end` follows an ASCII quote or is the end: a character boundary. A
        // backslash before a multi-byte character skips only its first byte, and the
        // loop then walks over the continuation bytes one at a time.
        self.piece.push_significant(&self.sql[start..end]);
        self.piece.forget_words();
        self.pos = end;
    }

    fn line_comment(&mut self) {
        let rest = &self.bytes[self.pos..];
        let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        self.piece.push_separator();
        self.pos += len;
    }

    /// `/*!NNNNN body */` keeps its body (version permitting); `/*+ hints */`,
    /// `/*T! .. */`, MariaDB's `/*M! .. */` and plain comments are dropped. An
    /// unterminated comment is kept so that sqlparser reports it.
    fn block_comment(&mut self) {
        let start = self.pos;
        if self.peek(2) == b'!' && !self.piece.in_version_comment {
            let digits_start = start + 3;
            let digits = self.bytes[digits_start..]
                .iter()
                .take(6)
                .take_while(|b| b.is_ascii_digit())
                .count();
            let version: u32 = self.sql[digits_start..digits_start + digits]
                .parse()
                .unwrap_or(0);
            if digits == 0 || version <= MYSQL_VERSION_ID {
                self.piece.in_version_comment = true;
                self.piece.push_separator();
                self.pos = digits_start + digits;
                return;
            }
        }
        match self.sql[start + 2..].find("*/") {
            Some(offset) => {
                self.piece.push_separator();
                self.pos = start + 2 + offset + 2;
            }
            None => {
                self.piece.push_significant(&self.sql[start..]);
                self.pos = self.bytes.len();
            }
        }
    }

    fn placeholder(&mut self) {
        self.piece.params += 1;
        let numbered = format!("?{}", self.piece.params);
        self.piece.push_significant(&numbered);
        self.piece.forget_words();
        self.pos += 1;
        if is_word_byte(self.peek(0)) {
            self.piece.out.push(' ');
        }
    }

    fn word(&mut self) {
        let start = self.pos;
        let len = self.bytes[start..]
            .iter()
            .take_while(|&&b| is_word_byte(b))
            .count();
        let end = start + len;
        let word = &self.sql[start..end];
        self.pos = end;
        if self.piece.words == 0 {
            self.piece.is_set = word.eq_ignore_ascii_case("SET");
        }
        self.piece.words += 1;

        // `0b101` is MySQL's other spelling of the bit literal `b'101'` (sqlparser
        // reads it as 0 with the alias b101). Only a lowercase `b`, as in MySQL.
        if let Some(bits) = word
            .strip_prefix("0b")
            .filter(|_| self.piece.last_significant != b'.')
            .filter(|bits| !bits.is_empty() && bits.bytes().all(|b| b == b'0' || b == b'1'))
        {
            self.piece.push_significant(&format!("b'{bits}'"));
            self.piece.forget_words();
            return;
        }

        // `a MOD b` is `a % b`; `MOD(a, b)` is the function and `t.mod` a column.
        if word.eq_ignore_ascii_case("MOD")
            && self.piece.last_significant != b'.'
            && self.next_significant_byte() != b'('
        {
            self.piece.push_significant("%");
            self.piece.forget_words();
            return;
        }

        // MySQL's composite units (`HOUR_MINUTE`, reserved words, so never a bare
        // name): sqlparser knows none of them. In `EXTRACT(unit FROM x)` they become
        // `` `EXTRACT`(unit, x) ``, a call the binder reads as EXTRACT; elsewhere (an
        // INTERVAL's unit) `HOUR TO MINUTE`, whose two fields the binder joins again
        // (`SECONDS TO ..` for SECOND_MICROSECOND: sqlparser reads `SECOND TO` as
        // no range).
        if let Some((first, last)) =
            composite_unit(word).filter(|_| self.piece.last_significant != b'.')
        {
            let extract_at = self.extract_open_at().filter(|_| self.next_word_is("FROM"));
            if let Some(extract_at) = extract_at {
                let rest = &self.bytes[self.pos..];
                let spaces = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
                self.pos += spaces + "FROM".len();
                self.piece.out.truncate(extract_at);
                self.piece
                    .push_significant(&format!("`EXTRACT`({first}_{last},"));
            } else {
                let first = if first == "SECOND" { "SECONDS" } else { first };
                self.piece.push_significant(&format!("{first} TO {last}"));
            }
            self.piece.forget_words();
            return;
        }

        let kind = [
            ("LOCK", RecentWord::Lock),
            ("IN", RecentWord::In),
            ("SHARE", RecentWord::Share),
            ("FROM", RecentWord::From),
        ]
        .into_iter()
        .find(|(name, _)| word.eq_ignore_ascii_case(name))
        .map_or(RecentWord::Other, |(_, kind)| kind);
        let recent = self.piece.recent;
        if word.eq_ignore_ascii_case("MODE")
            && recent[0].0 == Some(RecentWord::Lock)
            && recent[1].0 == Some(RecentWord::In)
            && recent[2].0 == Some(RecentWord::Share)
        {
            // `LOCK IN SHARE MODE` is MySQL's older spelling of `FOR SHARE`.
            self.piece.out.truncate(recent[0].1);
            self.piece.push_significant("FOR SHARE");
            self.piece.forget_words();
            return;
        }
        if (word.eq_ignore_ascii_case("FIRST") || word.eq_ignore_ascii_case("LAST"))
            && recent[2].0 == Some(RecentWord::From)
            && self.next_word_is("OVER")
        {
            // `NTH_VALUE(x, n) FROM FIRST OVER w`: FROM FIRST is what NTH_VALUE does
            // anyway (sqlparser knows neither form); FROM LAST is refused later.
            self.piece.out.truncate(recent[2].1);
            self.piece.nth_value_from_last |= word.eq_ignore_ascii_case("LAST");
            self.piece.forget_words();
            return;
        }
        let at = self.piece.out.len();
        self.piece.recent = [recent[1], recent[2], (Some(kind), at)];
        self.piece.push_significant(word);
    }

    /// Where `EXTRACT` starts in the output when the output ends with `EXTRACT (`
    /// (any case, spaces between), that is, when the next word is EXTRACT's unit.
    fn extract_open_at(&self) -> Option<usize> {
        let out = self.piece.out.trim_end();
        let before = out.strip_suffix('(')?.trim_end();
        let start = before.len().checked_sub("EXTRACT".len())?;
        let name = before.get(start..)?;
        let separate = start == 0 || {
            let b = before.as_bytes()[start - 1];
            !is_word_byte(b) && b != b'.'
        };
        (name.eq_ignore_ascii_case("EXTRACT") && separate).then_some(start)
    }

    /// True if the next word after spaces is `word` (ASCII, any case).
    fn next_word_is(&self, word: &str) -> bool {
        let rest = &self.bytes[self.pos..];
        let start = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
        let rest = &rest[start..];
        rest.len() >= word.len()
            && rest[..word.len()].eq_ignore_ascii_case(word.as_bytes())
            && !rest.get(word.len()).is_some_and(|&b| is_word_byte(b))
    }

    /// The next byte after spaces (comments are not skipped: `MOD /**/ (` is rare).
    fn next_significant_byte(&self) -> u8 {
        self.bytes[self.pos..]
            .iter()
            .copied()
            .find(|b| !b.is_ascii_whitespace())
            .unwrap_or(0)
    }
}
