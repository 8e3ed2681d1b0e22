//! `SELECT .. INTO @a, @b`: MySQL's INTO clause, taken out of the tokens before
//! sqlparser parses the rest (sqlparser knows only the position after the select
//! list, and no OUTFILE).
//!
//! MySQL 8 takes the clause in two places of the statement's last query block:
//! right after the select list (`SELECT a INTO @x FROM t`) or at the end of the
//! statement, before or after a locking clause (`SELECT a FROM t LIMIT 1 INTO @x`,
//! `.. INTO @x FOR UPDATE`, `.. FOR UPDATE INTO @x`). In a UNION the clause belongs to
//! the last block and takes the union's result. What it refuses, and so does this:
//!
//! - an INTO before a UNION (`SELECT 1 INTO @v UNION SELECT 2`): 3954, as is one
//!   inside a subquery or derived table (which sqlparser parses into the tree and
//!   the binder refuses);
//! - two INTO clauses: 3953;
//! - a target that is not a user variable: 1327 (`x` would be a stored program's
//!   local variable, which Tarn has no stored programs for);
//! - `INTO OUTFILE` / `INTO DUMPFILE`: 1290 (Tarn writes no files of its own, as
//!   MySQL with `secure_file_priv` refusing the directory).
//!
//! Only statements that begin with `SELECT`, `WITH` or `(` (and have no INSERT or
//! REPLACE) are looked at; only tokens outside parentheses count, so an INTO inside
//! a subquery stays where it is.

use sqlparser::tokenizer::{Token, TokenWithSpan};
use tarn_common::{Error, Result};

/// Error 3954 (ER_MISPLACED_INTO).
pub(crate) fn misplaced() -> Error {
    Error::sql(
        3954,
        "HY000",
        "Misplaced INTO clause, INTO is not allowed inside subqueries, and must be placed at \
         end of UNION clauses.",
    )
}

fn word(token: &Token) -> Option<String> {
    match token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

fn significant(token: &Token) -> bool {
    !matches!(token, Token::Whitespace(_) | Token::EOF | Token::SemiColon)
}

/// Takes the INTO clause out of `tokens` (a statement beginning with SELECT, WITH or
/// `(`) and returns its user variables (without `@`, lower-cased); `None` if it has
/// none. `near` renders a syntax error at a token.
pub(super) fn take_into(
    tokens: &mut Vec<TokenWithSpan>,
    near: &dyn Fn(&TokenWithSpan) -> Error,
) -> Result<Option<Vec<String>>> {
    let mut depth = 0usize;
    // A FROM of the current query block was seen (outside parentheses).
    let mut from_seen = false;
    let mut found: Option<(usize, usize, Vec<String>)> = None;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            token if depth == 0 => match word(token).as_deref() {
                // `WITH .. INSERT INTO t ..`: that INTO is INSERT's (MySQL has no
                // such form; the parser says so).
                Some("INSERT" | "REPLACE") => return Ok(None),
                Some("FROM") => from_seen = true,
                Some("UNION" | "EXCEPT" | "INTERSECT") => {
                    if found.is_some() {
                        return Err(misplaced());
                    }
                    from_seen = false;
                }
                Some("INTO") => {
                    if found.is_some() {
                        return Err(Error::sql(
                            3953,
                            "HY000",
                            "Multiple INTO clauses in one query block.",
                        ));
                    }
                    let (end, variables) = clause(tokens, i + 1, near)?;
                    // What may follow: the end, the locking clause, or (right after
                    // the select list) FROM.
                    let next = tokens[end..].iter().find(|t| significant(&t.token));
                    match next.map(|t| (t, word(&t.token))) {
                        None => {}
                        Some((_, Some(w))) if w == "FOR" || w == "LOCK" => {}
                        Some((_, Some(w))) if w == "FROM" && !from_seen => {}
                        Some((_, Some(w))) if w == "UNION" || w == "EXCEPT" || w == "INTERSECT" => {
                            return Err(misplaced());
                        }
                        Some((t, _)) => return Err(near(t)),
                    }
                    found = Some((i, end, variables));
                    i = end;
                    continue;
                }
                _ => {}
            },
            _ => {}
        }
        i += 1;
    }
    Ok(found.map(|(start, end, variables)| {
        tokens.drain(start..end);
        variables
    }))
}

/// Reads the targets of an INTO clause from `tokens[start..]`; returns the index
/// after the last one and the variables.
fn clause(
    tokens: &[TokenWithSpan],
    start: usize,
    near: &dyn Fn(&TokenWithSpan) -> Error,
) -> Result<(usize, Vec<String>)> {
    let mut variables = Vec::new();
    let mut i = start;
    loop {
        let Some(at) = (i..tokens.len()).find(|&j| significant(&tokens[j].token)) else {
            // `INTO` at the very end: the syntax error MySQL gives near ''.
            return Err(near(tokens.last().expect("INTO itself is a token")));
        };
        let target = &tokens[at];
        match &target.token {
            Token::Word(w) if w.quote_style.is_none() => {
                let upper = w.value.to_ascii_uppercase();
                if variables.is_empty() && (upper == "OUTFILE" || upper == "DUMPFILE") {
                    return Err(Error::sql(
                        1290,
                        "HY000",
                        format!(
                            "The Tarn server writes no files of its own (as MySQL with \
                             --secure-file-priv): SELECT ... INTO {upper} is refused; \
                             select the rows and write them from the client"
                        ),
                    ));
                }
                match w.value.strip_prefix('@') {
                    Some(name) if !name.is_empty() && !name.starts_with('@') => {
                        variables.push(name.to_ascii_lowercase())
                    }
                    Some(_) => return Err(near(target)),
                    None => {
                        return Err(Error::sql(
                            1327,
                            "42000",
                            format!("Undeclared variable: {}", w.value),
                        ));
                    }
                }
            }
            _ => return Err(near(target)),
        }
        i = at + 1;
        let comma = (i..tokens.len()).find(|&j| significant(&tokens[j].token));
        match comma {
            Some(c) if tokens[c].token == Token::Comma => i = c + 1,
            _ => return Ok((i, variables)),
        }
    }
}
