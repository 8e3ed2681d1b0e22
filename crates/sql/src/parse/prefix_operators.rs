//! The precedence of MySQL's prefix operators `BINARY expr` and `!expr`, which
//! sqlparser does not read as MySQL does.
//!
//! `!expr` is NOT with the precedence of unary minus, so `!1 + 1` is `(!1) + 1`;
//! sqlparser has no `!` prefix at all. Each becomes `(NOT operand)`.
//!
//! BINARY binds tighter than any other operator (with COLLATE), so `BINARY tok = 'abc'` compares `BINARY tok`
//! with 'abc', byte for byte. sqlparser reads the rest of the whole expression as
//! BINARY's operand instead (`BINARY (tok = 'abc')`), which turned a case-sensitive
//! lookup into a filter that let every row through.
//!
//! So before sqlparser parses a statement, each BINARY operator becomes a cast of
//! its operand alone: `CAST(tok AS BINARY) = 'abc'` (which MySQL's BINARY is; it
//! also makes `BINARY(x)`, which sqlparser took for a call of a function BINARY,
//! the cast it is). The new tokens carry the spans of the BINARY and of the
//! operand's end, so a result column is still named `BINARY tok`. The operand is one
//! primary: a literal, a placeholder, a user or system variable, a (qualified) name,
//! a function call, a parenthesized expression, or a unary `-`, `+`, `~`, `!` or
//! BINARY applied to one. Anything else (`BINARY CASE ..`, a typed literal or a
//! character set introducer after it) is left as it was.
//!
//! BINARY is an operator only where an operand may begin: after an operator, an
//! opening parenthesis or comma, or a keyword that an expression follows (SELECT,
//! WHERE, AND, ...). Elsewhere it is a type (`CAST(x AS BINARY)`, `c BINARY(16)`,
//! `VARCHAR(10) BINARY`) or a character set name, which this never touches; and it
//! rewrites only statements that read or write rows (and views), not table DDL,
//! where `CHARSET=binary COLLATE ..` would look like an operand.

use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::json_value::{next_significant, previous_significant};

/// Keywords after which an expression (so an operand) may begin.
const EXPRESSION_KEYWORDS: &[&str] = &[
    "SELECT", "WHERE", "AND", "OR", "XOR", "NOT", "ON", "CASE", "WHEN", "THEN", "ELSE", "HAVING",
    "BY", "LIKE", "REGEXP", "RLIKE", "BETWEEN", "DISTINCT", "ALL", "RETURN", "IN", "IS", "DIV",
    "MOD", "VALUES", "ROW", "LIMIT", "OFFSET", "DO",
];

/// Words that begin an expression that is not a simple primary.
const NOT_PRIMARY: &[&str] = &[
    "CASE", "EXISTS", "NOT", "INTERVAL", "SELECT", "WITH", "MATCH", "DEFAULT",
];

/// Where the rewrite starts in the statement whose leading words are `words`: at
/// once for statements that read or write rows, at the first SELECT for CREATE and
/// ALTER (a view's query, CREATE TABLE .. SELECT: never in column or table options);
/// None for the rest.
pub(super) fn start(words: &[String], tokens: &[TokenWithSpan]) -> Option<usize> {
    match words.first().map(String::as_str) {
        Some(
            "SELECT" | "WITH" | "(" | "INSERT" | "REPLACE" | "UPDATE" | "DELETE" | "SET" | "DO"
            | "VALUES" | "EXPLAIN" | "DESCRIBE" | "DESC" | "TABLE",
        ) => Some(0),
        Some("CREATE" | "ALTER") => tokens.iter().position(|t| word_is(&t.token, &["SELECT"])),
        _ => None,
    }
}

fn word_is(token: &Token, words: &[&str]) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none()
        && words.iter().any(|k| w.value.eq_ignore_ascii_case(k)))
}

/// Whether an operand may begin right after `token`.
fn operand_may_follow(token: &Token) -> bool {
    match token {
        Token::Word(_) => word_is(token, EXPRESSION_KEYWORDS),
        Token::Eq
        | Token::DoubleEq
        | Token::Neq
        | Token::Lt
        | Token::Gt
        | Token::LtEq
        | Token::GtEq
        | Token::Spaceship
        | Token::Plus
        | Token::Minus
        | Token::Mul
        | Token::Div
        | Token::Mod
        | Token::Caret
        | Token::Pipe
        | Token::Ampersand
        | Token::ShiftLeft
        | Token::ShiftRight
        | Token::StringConcat
        | Token::Tilde
        | Token::ExclamationMark
        | Token::Comma
        | Token::LParen
        | Token::Assignment => true,
        _ => false,
    }
}

/// The index of the `)` closing the `(` at `open`.
fn closing(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The index of the last token of the primary that begins at `at` (see the module
/// documentation), or None if no simple primary begins there.
fn operand_end(tokens: &[TokenWithSpan], at: usize, depth: usize) -> Option<usize> {
    // Unary chains are bounded already (`check_depth`); this only makes it plain.
    if depth > tarn_common::limits::SQL_EXPRESSION_DEPTH_MAX {
        return None;
    }
    match &tokens[at].token {
        Token::LParen => closing(tokens, at),
        Token::Minus | Token::Plus | Token::Tilde | Token::ExclamationMark => {
            operand_end(tokens, next_significant(tokens, at + 1)?, depth + 1)
        }
        Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::NationalStringLiteral(_)
        | Token::HexStringLiteral(_)
        | Token::SingleQuotedByteStringLiteral(_)
        | Token::Number(..)
        | Token::Placeholder(_) => Some(at),
        token if word_is(token, &["BINARY"]) => {
            operand_end(tokens, next_significant(tokens, at + 1)?, depth + 1)
        }
        token if word_is(token, NOT_PRIMARY) => None,
        Token::AtSign => {
            // `@name`, `@@name`, `@@session.name`
            let mut end = at;
            while matches!(tokens.get(end + 1).map(|t| &t.token), Some(Token::AtSign)) {
                end += 1;
            }
            name_end(tokens, end + 1)
        }
        Token::Word(_) => {
            let end = name_end(tokens, at)?;
            match next_significant(tokens, end + 1).map(|i| (i, &tokens[i].token)) {
                Some((open, Token::LParen)) => closing(tokens, open),
                // A typed literal (`DATE '..'`) or an introducer (`_utf8mb4'..'`).
                Some((_, Token::SingleQuotedString(_) | Token::HexStringLiteral(_))) => None,
                // A JSON path of a column (`j->'$.a'`, `j->>'$.a'`) is part of it.
                Some((arrow, Token::Arrow | Token::LongArrow)) => {
                    let path = next_significant(tokens, arrow + 1)?;
                    matches!(tokens[path].token, Token::SingleQuotedString(_)).then_some(path)
                }
                _ => Some(end),
            }
        }
        _ => None,
    }
}

/// The last token of the name `a[.b[.c]]` beginning at `at`.
fn name_end(tokens: &[TokenWithSpan], at: usize) -> Option<usize> {
    if !matches!(tokens.get(at)?.token, Token::Word(_)) {
        return None;
    }
    let mut end = at;
    while matches!(tokens.get(end + 1).map(|t| &t.token), Some(Token::Period))
        && matches!(
            tokens.get(end + 2).map(|t| &t.token),
            Some(Token::Word(_) | Token::Mul)
        )
    {
        end += 2;
    }
    Some(end)
}

/// Whether the token at `i` is an argument of a CONVERT call (`CONVERT(x, BINARY(16))`
/// names a type there).
fn in_convert(tokens: &[TokenWithSpan], i: usize) -> bool {
    let mut depth = 0usize;
    for j in (0..i).rev() {
        match tokens[j].token {
            Token::RParen => depth += 1,
            Token::LParen if depth > 0 => depth -= 1,
            Token::LParen => {
                return previous_significant(tokens, j)
                    .is_some_and(|p| word_is(&tokens[p].token, &["CONVERT"]));
            }
            _ => {}
        }
    }
    false
}

/// Turns each BINARY operator into a cast of its operand, and each `!` into NOT of
/// its operand (see the module documentation), from token `from` on.
pub(super) fn rewrite(tokens: &mut Vec<TokenWithSpan>, from: usize) {
    let mut i = from;
    while i < tokens.len() {
        if tokens[i].token == Token::DoubleExclamationMark {
            // `!!x`: two NOTs (the tokenizer reads them as one token).
            let span = tokens[i].span;
            tokens[i] = TokenWithSpan::new(Token::ExclamationMark, span);
            tokens.insert(i + 1, TokenWithSpan::new(Token::ExclamationMark, span));
        }
        if tokens[i].token == Token::ExclamationMark {
            if let Some(end) =
                next_significant(tokens, i + 1).and_then(|at| operand_end(tokens, at, 0))
            {
                let (first, last) = (tokens[i].span, tokens[end].span);
                tokens.insert(end + 1, TokenWithSpan::new(Token::RParen, last));
                tokens[i] = TokenWithSpan::new(Token::make_keyword("NOT"), first);
                tokens.insert(i, TokenWithSpan::new(Token::LParen, first));
            }
            // On into the operand (a `!` or BINARY inside it is rewritten in turn).
            i += 1;
            continue;
        }
        if !word_is(&tokens[i].token, &["BINARY"])
            || !previous_significant(tokens, i)
                .is_some_and(|p| operand_may_follow(&tokens[p].token))
            || in_convert(tokens, i)
        {
            i += 1;
            continue;
        }
        let Some(end) = next_significant(tokens, i + 1).and_then(|at| operand_end(tokens, at, 0))
        else {
            i += 1;
            continue;
        };
        let (first, last) = (tokens[i].span, tokens[end].span);
        let at = |token: Token, span| TokenWithSpan::new(token, span);
        tokens.splice(
            end + 1..end + 1,
            [
                at(Token::make_keyword("AS"), last),
                at(Token::make_keyword("BINARY"), last),
                at(Token::RParen, last),
            ],
        );
        tokens[i] = at(Token::make_keyword("CAST"), first);
        tokens.insert(i + 1, at(Token::LParen, first));
        // On into the operand: a BINARY inside it is rewritten in turn.
        i += 2;
    }
}
