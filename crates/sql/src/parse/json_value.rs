//! `JSON_VALUE(doc, path [RETURNING type] [on_empty] [on_error])`: MySQL's
//! `{NULL | ERROR | DEFAULT value} ON EMPTY` and `.. ON ERROR` clauses, which
//! sqlparser does not know, turned into arguments before sqlparser parses the
//! statement (sqlparser itself reads the `RETURNING type` clause).
//!
//! A call with either clause becomes a call of the internal name
//! [`JSON_VALUE_WITH_RESPONSES`] with four more arguments, inserted after the path
//! (before `RETURNING`): the ON EMPTY response's kind and DEFAULT value, then the ON
//! ERROR response's. A kind is the number 0 (NULL), 1 (ERROR) or 2 (DEFAULT); the
//! value is the DEFAULT's tokens as written, or NULL. So
//! `JSON_VALUE(j, '$.a' RETURNING SIGNED DEFAULT 7 ON EMPTY ERROR ON ERROR)` becomes
//! `` `JSON_VALUE ON`(j, '$.a', 2, 7, 1, NULL RETURNING SIGNED) ``; the binder
//! (`crate::bind::json`) reads it back. The internal name has a space, so no
//! unquoted call reaches it, and a call without the clauses stays as it is.
//!
//! As in MySQL's grammar, ON EMPTY comes before ON ERROR and each at most once;
//! anything else is a syntax error at the clause. Only tokens at the call's own
//! parenthesis level count, so `ON` inside a subquery argument is left alone.

use sqlparser::tokenizer::{Location, Token, TokenWithSpan};

/// The name the binder reads a rewritten call by (see the module documentation).
pub(crate) const JSON_VALUE_WITH_RESPONSES: &str = "JSON_VALUE ON";

fn is_word(token: &Token, word: &str) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

/// The next non-whitespace token's index at or after `i`.
pub(super) fn next_significant(tokens: &[TokenWithSpan], mut i: usize) -> Option<usize> {
    while i < tokens.len() {
        if !matches!(tokens[i].token, Token::Whitespace(_)) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The previous non-whitespace token's index before `i`.
pub(super) fn previous_significant(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    (0..i)
        .rev()
        .find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))
}

/// One `.. ON EMPTY` / `.. ON ERROR` clause: its tokens `start..end`, and the
/// response's kind and DEFAULT value tokens.
struct Clause {
    start: usize,
    end: usize,
    kind: u8,
    value: Vec<TokenWithSpan>,
}

/// Rewrites every JSON_VALUE call with an ON EMPTY or ON ERROR clause (see the module
/// documentation). Err: where the syntax error is.
pub(super) fn rewrite(tokens: &mut Vec<TokenWithSpan>) -> Result<(), Location> {
    let mut i = 0;
    while i < tokens.len() {
        let is_call = is_word(&tokens[i].token, "JSON_VALUE")
            && previous_significant(tokens, i).is_none_or(|p| tokens[p].token != Token::Period)
            && next_significant(tokens, i + 1).is_some_and(|o| tokens[o].token == Token::LParen);
        if is_call {
            rewrite_call(tokens, i)?;
        }
        i += 1;
    }
    Ok(())
}

fn rewrite_call(tokens: &mut Vec<TokenWithSpan>, name_at: usize) -> Result<(), Location> {
    let open = next_significant(tokens, name_at + 1).unwrap_or(tokens.len());
    let mut depth = 0usize;
    let mut close = None;
    let mut returning = None;
    let mut ons = Vec::new();
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            // A comma after RETURNING belongs to its type (`DECIMAL(5, 2)` is one
            // level deeper) or is a syntax error sqlparser reports.
            Token::Comma if depth == 1 => returning = None,
            tok if depth == 1 && is_word(tok, "RETURNING") => returning = Some(i),
            tok if depth == 1 && is_word(tok, "ON") => ons.push(i),
            _ => {}
        }
    }
    let Some(close) = close else {
        return Ok(()); // unbalanced: sqlparser reports it
    };
    let mut clauses: Vec<(bool, Clause)> = Vec::new();
    let mut floor = returning.map_or(open, |r| r + 1);
    for on in ons {
        let Some(what) = next_significant(tokens, on + 1) else {
            continue;
        };
        let empty = is_word(&tokens[what].token, "EMPTY");
        if !empty && !is_word(&tokens[what].token, "ERROR") {
            continue;
        }
        let clause = response(tokens, floor, on, what + 1)?;
        let misplaced = match clauses.as_slice() {
            [] => false,
            [(first_empty, _)] => !*first_empty || empty,
            _ => true,
        };
        if misplaced {
            return Err(tokens[clause.start].span.start);
        }
        floor = what + 1;
        clauses.push((empty, clause));
    }
    if clauses.is_empty() {
        return Ok(());
    }
    if let Some(r) = returning.filter(|&r| r > clauses[0].1.start) {
        return Err(tokens[r].span.start);
    }
    // The new arguments, from the responses (NULL where a clause is absent).
    let null_response = || (0u8, vec![]);
    let mut on_empty = null_response();
    let mut on_error = null_response();
    for (empty, c) in &clauses {
        let slot = if *empty { &mut on_empty } else { &mut on_error };
        *slot = (c.kind, c.value.clone());
    }
    let mut args = Vec::new();
    for (kind, value) in [on_empty, on_error] {
        args.push(plain(Token::Comma));
        args.push(plain(Token::Number(kind.to_string(), false)));
        args.push(plain(Token::Comma));
        if value.is_empty() {
            args.push(plain(Token::make_keyword("NULL")));
        } else {
            args.extend(value);
        }
    }
    // Take the clauses out (last first, so earlier positions hold), then insert the
    // arguments where the arguments end.
    for (_, c) in clauses.iter().rev() {
        tokens.drain(c.start..c.end);
    }
    let removed: usize = clauses.iter().map(|(_, c)| c.end - c.start).sum();
    let insert_at = returning.unwrap_or(close - removed);
    tokens.splice(insert_at..insert_at, args);
    tokens[name_at].token = Token::Word(sqlparser::tokenizer::Word {
        value: JSON_VALUE_WITH_RESPONSES.to_string(),
        quote_style: Some('`'),
        keyword: sqlparser::keywords::Keyword::NoKeyword,
    });
    Ok(())
}

/// The response before `ON` (at `on`; the clause ends before `end`), looked for no
/// earlier than `floor`: `NULL`, `ERROR` or `DEFAULT value`.
fn response(
    tokens: &[TokenWithSpan],
    floor: usize,
    on: usize,
    end: usize,
) -> Result<Clause, Location> {
    let syntax_error = || tokens[on].span.start;
    let last = previous_significant(tokens, on)
        .filter(|&p| p >= floor)
        .ok_or_else(syntax_error)?;
    let before_last = previous_significant(tokens, last).filter(|&p| p >= floor);
    let default_null = is_word(&tokens[last].token, "NULL")
        && before_last.is_some_and(|b| is_word(&tokens[b].token, "DEFAULT"));
    if !default_null {
        for (word, kind) in [("NULL", 0), ("ERROR", 1)] {
            if is_word(&tokens[last].token, word) {
                return Ok(Clause {
                    start: last,
                    end,
                    kind,
                    value: vec![],
                });
            }
        }
    }
    // DEFAULT value: MySQL takes a literal (a signed number, a string), so the
    // nearest DEFAULT before ON starts it.
    let default = (floor..last)
        .rev()
        .find(|&j| is_word(&tokens[j].token, "DEFAULT"))
        .ok_or_else(syntax_error)?;
    let value: Vec<TokenWithSpan> = tokens[default + 1..on]
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .cloned()
        .collect();
    if value.is_empty() {
        return Err(syntax_error());
    }
    Ok(Clause {
        start: default,
        end,
        kind: 2,
        value,
    })
}

fn plain(token: Token) -> TokenWithSpan {
    TokenWithSpan::wrap(token)
}
