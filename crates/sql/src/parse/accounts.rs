//! The account statements, parsed from sqlparser's tokens (its own CREATE USER,
//! GRANT and REVOKE follow other dialects and lose MySQL's `'user'@'host'`).
//!
//! ```text
//! CREATE USER [IF NOT EXISTS] user [auth] [, user [auth]] ...
//! DROP USER [IF EXISTS] user [, user] ...
//! ALTER USER [IF EXISTS] user [auth] [, user [auth]] ...
//!     auth: IDENTIFIED {BY 'pw' | WITH plugin [BY 'pw']}
//! SET PASSWORD [FOR user] = {'pw' | PASSWORD('pw')}
//! GRANT privileges ON level TO user [, user] ... [WITH GRANT OPTION]
//! REVOKE privileges ON level FROM user [, user] ...
//!     privileges: ALL [PRIVILEGES] | priv [, priv] ...  (priv may be GRANT OPTION)
//!     level: *.* | * | db.* | db.tbl | tbl  (optionally after TABLE)
//! SHOW GRANTS [FOR user]
//! FLUSH PRIVILEGES
//!     user: 'u'@'h' | u@h | `u`@`h` | 'u' (host %) | CURRENT_USER[()]
//! ```
//!
//! sqlparser's MySQL tokenizer reads `'u'@'h'` as string, `@`, string; `'u'@h` as a
//! string and the word `@h`; `u@h` as one word `u@h`; `u@'h'` as the word `u@` and a
//! string. [`user_name`] takes each of these apart. Host names are lower-cased, as
//! MySQL stores them.

use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::special::{eat_word, eat_words, expect_word, expect_words, unexpected};
use crate::accounts::{AccountStatement, AuthPlugin, GrantLevel, Privileges, UserName, UserSpec};

pub(super) fn parse(p: &mut Parser) -> Result<AccountStatement, ParserError> {
    if eat_word(p, "CREATE") {
        expect_word(p, "USER")?;
        let if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
        let users = comma_separated(p, user_spec)?;
        return Ok(AccountStatement::CreateUser {
            if_not_exists,
            users,
        });
    }
    if eat_word(p, "DROP") {
        expect_word(p, "USER")?;
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        let users = comma_separated(p, required_user)?;
        return Ok(AccountStatement::DropUser { if_exists, users });
    }
    if eat_word(p, "ALTER") {
        expect_word(p, "USER")?;
        let if_exists = eat_words(p, &["IF", "EXISTS"]);
        let users = comma_separated(p, user_spec)?;
        return Ok(AccountStatement::AlterUser { if_exists, users });
    }
    if eat_word(p, "SET") {
        expect_word(p, "PASSWORD")?;
        let user = if eat_word(p, "FOR") {
            user_name(p)?
        } else {
            None
        };
        p.expect_token(&Token::Eq)?;
        let password = if eat_word(p, "PASSWORD") {
            p.expect_token(&Token::LParen)?;
            let pw = p.parse_literal_string()?;
            p.expect_token(&Token::RParen)?;
            pw
        } else {
            p.parse_literal_string()?
        };
        return Ok(AccountStatement::SetPassword { user, password });
    }
    if eat_word(p, "GRANT") {
        let (privileges, all) = privilege_list(p)?;
        let level = level(p)?;
        expect_word(p, "TO")?;
        let users = comma_separated(p, required_user)?;
        let grant_option = eat_words(p, &["WITH", "GRANT", "OPTION"]);
        return Ok(AccountStatement::Grant {
            privileges: with_all(privileges, all, &level),
            level,
            users,
            grant_option,
        });
    }
    if eat_word(p, "REVOKE") {
        let (privileges, all) = privilege_list(p)?;
        let level = level(p)?;
        expect_word(p, "FROM")?;
        let users = comma_separated(p, required_user)?;
        return Ok(AccountStatement::Revoke {
            privileges: with_all(privileges, all, &level),
            level,
            users,
        });
    }
    if eat_word(p, "SHOW") {
        expect_word(p, "GRANTS")?;
        let user = if eat_word(p, "FOR") {
            user_name(p)?
        } else {
            None
        };
        return Ok(AccountStatement::ShowGrants { user });
    }
    expect_words(p, &["FLUSH", "PRIVILEGES"])?;
    Ok(AccountStatement::FlushPrivileges)
}

fn comma_separated<T>(
    p: &mut Parser,
    mut item: impl FnMut(&mut Parser) -> Result<T, ParserError>,
) -> Result<Vec<T>, ParserError> {
    let mut items = vec![item(p)?];
    while p.consume_token(&Token::Comma) {
        items.push(item(p)?);
    }
    Ok(items)
}

/// ALL means every privilege of the level.
fn with_all(privileges: Privileges, all: bool, level: &GrantLevel) -> Privileges {
    if !all {
        return privileges;
    }
    let everything = match level {
        GrantLevel::Global => Privileges::ALL_GLOBAL,
        _ => Privileges::ALL_OBJECT,
    };
    privileges.union(everything)
}

/// `ALL [PRIVILEGES] | priv [, priv] ...` up to ON; returns the privileges and
/// whether ALL was among them.
fn privilege_list(p: &mut Parser) -> Result<(Privileges, bool), ParserError> {
    let mut privileges = Privileges::NONE;
    let mut all = false;
    loop {
        if eat_word(p, "ALL") {
            eat_word(p, "PRIVILEGES");
            all = true;
        } else if eat_words(p, &["GRANT", "OPTION"]) {
            privileges = privileges.union(Privileges::GRANT_OPTION);
        } else if eat_words(p, &["CREATE", "USER"]) {
            privileges = privileges.union(Privileges::CREATE_USER);
        } else if eat_word(p, "USAGE") {
            // No privilege at all.
        } else {
            let Token::Word(w) = p.peek_token().token else {
                return Err(unexpected(p, "a privilege"));
            };
            let Some(privilege) = Privileges::parse(&w.value) else {
                return Err(unexpected(p, "a privilege"));
            };
            p.next_token();
            if p.peek_token().token == Token::LParen {
                return Err(unexpected(p, "ON (column privileges are not supported)"));
            }
            privileges = privileges.union(privilege);
        }
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    expect_word(p, "ON")?;
    Ok((privileges, all))
}

/// `*.* | * | db.* | db.tbl | tbl`, optionally after TABLE.
fn level(p: &mut Parser) -> Result<GrantLevel, ParserError> {
    eat_word(p, "TABLE");
    if p.consume_token(&Token::Mul) {
        if p.consume_token(&Token::Period) {
            p.expect_token(&Token::Mul)?;
            return Ok(GrantLevel::Global);
        }
        return Ok(GrantLevel::Database(None));
    }
    let first = identifier(p)?;
    if !p.consume_token(&Token::Period) {
        return Ok(GrantLevel::Table(None, first));
    }
    if p.consume_token(&Token::Mul) {
        return Ok(GrantLevel::Database(Some(first)));
    }
    Ok(GrantLevel::Table(Some(first), identifier(p)?))
}

fn identifier(p: &mut Parser) -> Result<String, ParserError> {
    Ok(p.parse_identifier()?.value)
}

fn required_user(p: &mut Parser) -> Result<UserName, ParserError> {
    user_name(p)?.ok_or_else(|| unexpected(p, "a user name"))
}

/// A user with its optional authentication.
fn user_spec(p: &mut Parser) -> Result<UserSpec, ParserError> {
    let name = required_user(p)?;
    let mut spec = UserSpec {
        name,
        plugin: None,
        password: None,
    };
    if !eat_word(p, "IDENTIFIED") {
        return Ok(spec);
    }
    if eat_word(p, "WITH") {
        let plugin = match p.peek_token().token {
            Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) => {
                p.parse_literal_string()?
            }
            _ => identifier(p)?,
        };
        spec.plugin = Some(
            AuthPlugin::parse(&plugin)
                .ok_or_else(|| unexpected(p, "mysql_native_password or caching_sha2_password"))?,
        );
        if !eat_word(p, "BY") {
            return Ok(spec);
        }
    } else {
        expect_word(p, "BY")?;
    }
    spec.password = Some(p.parse_literal_string()?);
    Ok(spec)
}

/// `'u'@'h'` and its spellings (see the module doc); None for CURRENT_USER.
fn user_name(p: &mut Parser) -> Result<Option<UserName>, ParserError> {
    let token = p.next_token().token;
    let (user, mut host) = match token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => (s, None),
        Token::Word(w) if w.quote_style.is_some() => (w.value, None),
        Token::Word(w) if w.value.eq_ignore_ascii_case("CURRENT_USER") => {
            if p.consume_token(&Token::LParen) {
                p.expect_token(&Token::RParen)?;
            }
            return Ok(None);
        }
        Token::Word(w) => match w.value.split_once('@') {
            Some((user, host)) => (user.to_string(), Some(host.to_string())),
            None => (w.value, None),
        },
        _ => {
            p.prev_token();
            return Err(unexpected(p, "a user name"));
        }
    };
    // `u@` (a word ending in @) or `'u'` then `@`: the host follows as its own token.
    let host_follows = match &host {
        Some(h) => h.is_empty(),
        None => {
            let at = p.consume_token(&Token::AtSign);
            if !at {
                if let Token::Word(w) = &p.peek_token().token {
                    if w.quote_style.is_none() && w.value.starts_with('@') {
                        host = Some(w.value[1..].to_string());
                        p.next_token();
                    }
                }
            }
            at
        }
    };
    if host_follows {
        host = Some(match p.next_token().token {
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s,
            Token::Word(w) => w.value,
            Token::Mod => "%".to_string(),
            _ => {
                p.prev_token();
                return Err(unexpected(p, "a host name"));
            }
        });
    }
    let host = host.unwrap_or_else(|| "%".to_string()).to_ascii_lowercase();
    Ok(Some(UserName { user, host }))
}
