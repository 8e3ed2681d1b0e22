//! CHECK constraints, as MySQL 8.0.16 and later have them: defined in CREATE TABLE
//! (on a column or the table) and ALTER TABLE, kept in the catalog
//! ([`tarn_catalog::CheckDef`]), and enforced on every row a statement writes.
//!
//! # Definition
//!
//! [`add_checks`] names each new constraint (its own name, or MySQL's generated
//! `<table>_chk_<n>` with `n` one past the largest generated number the table has)
//! and checks it with MySQL's errors, cheapest first: a user or system variable
//! (3816), a subquery (3815), a non-deterministic function such as `NOW()` or
//! `RAND()` (3814), a condition that is not a truth value (3812), a column-level
//! constraint naming another column (3813), an unknown column (3820), the
//! AUTO_INCREMENT column (3818), a name longer than 64 characters (1059) or taken by
//! another CHECK constraint of the database (3822; temporary tables have their own
//! names, as in MySQL). The condition is kept as text in the form MySQL prints it
//! ([`clause_text`]: `(`a` > 0)`), naming columns by name, so that moving or
//! dropping other columns leaves it alone; ALTER TABLE refuses to drop or rename a
//! column a constraint uses (3959), but dropping the only column of a constraint
//! drops the constraint too (MySQL 8's rule).
//!
//! # Enforcement
//!
//! A statement binds its table's enforced constraints once ([`TableChecks::bind`]:
//! the text is parsed and bound over the table's columns), and evaluates them on
//! each converted row before it writes it ([`Checker::check`]): INSERT (VALUES,
//! SELECT, SET), REPLACE, the row ON DUPLICATE KEY UPDATE makes, UPDATE (single and
//! multi-table), LOAD DATA, CREATE TABLE ... SELECT. A condition that is false fails
//! the statement with 3819, which statement rollback makes change nothing; true and
//! NULL (unknown) pass. IGNORE makes the violation a warning and skips the row. A
//! table without enforced constraints binds to `None`, so its writes cost one
//! `Option` test per row.
//!
//! Left as MySQL has them but not checked here: constraints on columns that foreign
//! key actions change (MySQL's 3823), and the `_utf8mb4` introducer MySQL prints
//! before string literals (Tarn's parser reads introducers into plain literals, so
//! the stored text keeps plain literals).

use sqlparser::ast::{self, Spanned};
use sqlparser::dialect::MySqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};
use tarn_catalog::{CheckDef, TableDef};
use tarn_common::{Error, Result};
use tarn_row::Value;

use crate::bind::{Binder, Scope, ScopeColumn};
use crate::expr::{EvalContext, Expr};
use crate::scalar::FnContext;
use crate::session::Session;
use crate::types::SqlType;

/// The longest name MySQL allows for a constraint.
const NAME_CHARS_MAX: usize = 64;

/// A CHECK constraint as a statement writes it, before it is named and checked.
pub(crate) struct CheckSpec {
    name: Option<String>,
    expr: ast::Expr,
    enforced: bool,
    /// The column of a column-level constraint (which may name only that column).
    column: Option<String>,
    /// Where it was written, so that generated numbers follow the written order of
    /// column-level and table-level constraints together, as MySQL's do.
    at: (u64, u64),
}

impl CheckSpec {
    /// `[CONSTRAINT [name]] CHECK (expr) [[NOT] ENFORCED]` among a table's elements.
    pub(crate) fn table_level(c: &ast::CheckConstraint) -> CheckSpec {
        let start = c.span().start;
        CheckSpec {
            name: c.name.as_ref().map(|n| n.value.clone()),
            expr: (*c.expr).clone(),
            enforced: c.enforced.unwrap_or(true),
            column: None,
            at: (start.line, start.column),
        }
    }

    /// The same clause in column `column`'s definition (`name`: its `CONSTRAINT`).
    pub(crate) fn column_level(
        name: Option<&ast::Ident>,
        c: &ast::CheckConstraint,
        column: &str,
    ) -> CheckSpec {
        let mut spec = CheckSpec::table_level(c);
        spec.name = name.map(|n| n.value.clone()).or(spec.name);
        spec.column = Some(column.to_string());
        spec
    }
}

/// Names, checks and appends `specs` to `def` (see the module documentation).
/// `db` is the database whose CHECK constraint names must stay unique, `None` for a
/// temporary table.
pub(crate) fn add_checks(
    session: &mut Session,
    db: Option<&str>,
    def: &mut TableDef,
    mut specs: Vec<CheckSpec>,
) -> Result<()> {
    if specs.is_empty() {
        return Ok(());
    }
    specs.sort_by_key(|s| s.at);
    let taken = match db {
        Some(db) => names_in_database(session, db, &def.name),
        None => Vec::new(),
    };
    let mut next = def
        .checks
        .iter()
        .filter_map(|c| c.generated_number(&def.name))
        .max()
        .unwrap_or(0);
    for spec in specs {
        let name = match spec.name {
            Some(name) => name,
            None => {
                next += 1;
                format!(
                    "{}{}{next}",
                    def.name,
                    tarn_catalog::catalog::GENERATED_CHECK_INFIX
                )
            }
        };
        if name.chars().count() > NAME_CHARS_MAX {
            return Err(Error::sql(
                1059,
                "42000",
                format!("Identifier name '{name}' is too long"),
            ));
        }
        validate(session, def, &name, &spec.expr, spec.column.as_deref())?;
        let duplicate = def
            .checks
            .iter()
            .map(|c| c.name.as_str())
            .chain(taken.iter().map(String::as_str))
            .any(|n| n.eq_ignore_ascii_case(&name));
        if duplicate {
            return Err(duplicate_name(&name));
        }
        def.checks.push(CheckDef {
            name,
            clause: clause_text(&spec.expr),
            enforced: spec.enforced,
        });
    }
    Ok(())
}

/// ER_CHECK_CONSTRAINT_DUP_NAME (3822).
pub(crate) fn duplicate_name(name: &str) -> Error {
    Error::sql(
        3822,
        "HY000",
        format!("Duplicate check constraint name '{name}'."),
    )
}

/// ER_CHECK_CONSTRAINT_NOT_FOUND (3821).
pub(crate) fn not_found(name: &str) -> Error {
    Error::sql(
        3821,
        "HY000",
        format!("Check constraint '{name}' is not found in the table."),
    )
}

/// ER_DEPENDENT_BY_CHECK_CONSTRAINT (3959).
pub(crate) fn column_in_use(check: &str, column: &str) -> Error {
    Error::sql(
        3959,
        "HY000",
        format!(
            "Check constraint '{check}' uses column '{column}', hence column cannot be \
             dropped or renamed."
        ),
    )
}

/// ER_CHECK_CONSTRAINT_VIOLATED (3819).
pub(crate) fn violated(name: &str) -> Error {
    Error::sql(
        3819,
        "HY000",
        format!("Check constraint '{name}' is violated."),
    )
}

/// The CHECK constraint names of the tables of `db` other than `table`.
fn names_in_database(session: &Session, db: &str, table: &str) -> Vec<String> {
    let storage = session.engine().storage();
    let mut names = Vec::new();
    for other in storage.tables(db).unwrap_or_default() {
        if other == table {
            continue;
        }
        if let Ok(t) = storage.table(db, &other) {
            names.extend(t.def().checks.iter().map(|c| c.name.clone()));
        }
    }
    names
}

/// Whether a table of `db` other than `table` has a CHECK constraint called `name`.
pub(crate) fn name_taken(session: &Session, db: &str, table: &str, name: &str) -> bool {
    names_in_database(session, db, table)
        .iter()
        .any(|n| n.eq_ignore_ascii_case(name))
}

/// 3822 if renaming table `db.old` to `new_db.new` would give one of its CHECK
/// constraints (a generated name follows the table) the name of another's in
/// `new_db`.
pub(crate) fn check_rename(
    session: &Session,
    db: &str,
    old: &str,
    new_db: &str,
    new: &str,
) -> Result<()> {
    let Ok(table) = session.engine().storage().table(db, old) else {
        return Ok(());
    };
    if table.def().checks.is_empty() {
        return Ok(());
    }
    let mut def = table.def().clone();
    def.rename_generated_checks(old, new);
    let skip = if db == new_db { old } else { "" };
    let taken = names_in_database(session, new_db, skip);
    match def
        .checks
        .iter()
        .find(|c| taken.iter().any(|t| t.eq_ignore_ascii_case(&c.name)))
    {
        Some(c) => Err(duplicate_name(&c.name)),
        None => Ok(()),
    }
}

/// The scope a constraint of `def` is bound in: the table's columns.
pub(crate) fn scope_of(def: &TableDef) -> Scope {
    Scope {
        columns: def
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| ScopeColumn {
                table: Some(def.name.clone()),
                name: c.name.clone(),
                ty: SqlType::of_column(c.ty, c.collation),
                nullable: c.nullable,
                tinyint1: def.is_tinyint1(i),
                hidden: false,
                using_first: false,
                key: None,
            })
            .collect(),
    }
}

/// The positions of the columns of `def` a bound condition reads.
pub(crate) fn columns_read(e: &Expr) -> Vec<usize> {
    let mut out = Vec::new();
    e.visit(&mut |node| {
        if let Expr::Column(c) = node
            && !out.contains(c)
        {
            out.push(*c);
        }
    });
    out
}

/// The positions of the columns of `def` that constraint `clause` (stored text)
/// reads.
pub(crate) fn clause_columns(
    session: &Session,
    def: &TableDef,
    clause: &str,
) -> Result<Vec<usize>> {
    let e = crate::dml::parse_expr(clause)?;
    let (bound, _) = Binder::new(session).bind_in_scope(&e, &scope_of(def))?;
    Ok(columns_read(&bound))
}

/// MySQL's checks of one new constraint `name` over the columns of `def`.
fn validate(
    session: &Session,
    def: &TableDef,
    name: &str,
    e: &ast::Expr,
    column: Option<&str>,
) -> Result<()> {
    check_tokens(&e.to_string(), |found| match found {
        Disallowed::Variable => Error::sql(
            3816,
            "HY000",
            format!(
                "An expression of a check constraint '{name}' cannot refer to a user or system \
                 variable."
            ),
        ),
        Disallowed::Subquery => Error::sql(
            3815,
            "HY000",
            format!("An expression of a check constraint '{name}' contains disallowed function."),
        ),
        Disallowed::Function(shown) => Error::sql(
            3814,
            "HY000",
            format!(
                "An expression of a check constraint '{name}' contains disallowed function: \
                 {shown}."
            ),
        ),
    })?;
    if !is_truth_valued(e) {
        return Err(Error::sql(
            3812,
            "HY000",
            format!("An expression of non-boolean type specified to a check constraint '{name}'."),
        ));
    }
    let other_column = || {
        Error::sql(
            3813,
            "HY000",
            format!("Column check constraint '{name}' references other column."),
        )
    };
    let bound = match Binder::new(session).bind_in_scope(e, &scope_of(def)) {
        Ok((bound, _)) => bound,
        Err(err) if err.mysql_code() == 1054 => {
            if column.is_some() {
                return Err(other_column());
            }
            let message = err.to_string();
            let unknown = message
                .split_once("Unknown column '")
                .and_then(|(_, rest)| rest.rsplit_once("' in '"))
                .map_or(message.as_str(), |(c, _)| c);
            return Err(Error::sql(
                3820,
                "HY000",
                format!("Check constraint '{name}' refers to non-existing column '{unknown}'."),
            ));
        }
        Err(err) => return Err(err),
    };
    let read = columns_read(&bound);
    if let Some(column) = column
        && read
            .iter()
            .any(|&c| !def.columns[c].name.eq_ignore_ascii_case(column))
    {
        return Err(other_column());
    }
    if let Some(auto) = def.auto_increment
        && read.contains(&auto.column)
    {
        return Err(Error::sql(
            3818,
            "HY000",
            format!("Check constraint '{name}' cannot refer to an auto-increment column."),
        ));
    }
    Ok(())
}

/// Functions whose value is not fixed by their arguments, which a CHECK condition
/// may not call (MySQL's 3814), each with the name MySQL's message gives it; `true`
/// for those that need no parentheses (`CURRENT_DATE`).
const DISALLOWED_FUNCTIONS: &[(&str, &str, bool)] = &[
    ("NOW", "now", false),
    ("CURRENT_TIMESTAMP", "now", true),
    ("LOCALTIME", "now", true),
    ("LOCALTIMESTAMP", "now", true),
    ("SYSDATE", "sysdate", false),
    ("CURDATE", "curdate", false),
    ("CURRENT_DATE", "curdate", true),
    ("CURTIME", "curtime", false),
    ("CURRENT_TIME", "curtime", true),
    ("UTC_DATE", "utc_date", true),
    ("UTC_TIME", "utc_time", true),
    ("UTC_TIMESTAMP", "utc_timestamp", true),
    ("CONNECTION_ID", "connection_id", false),
    ("CURRENT_USER", "current_user", true),
    ("SESSION_USER", "user", false),
    ("SYSTEM_USER", "user", false),
    ("USER", "user", false),
    ("CURRENT_ROLE", "current_role", false),
    ("DATABASE", "database", false),
    ("SCHEMA", "database", false),
    ("VERSION", "version()", false),
    ("FOUND_ROWS", "found_rows", false),
    ("LAST_INSERT_ID", "last_insert_id", false),
    ("ROW_COUNT", "row_count", false),
    ("RAND", "rand", false),
    ("RANDOM_BYTES", "random_bytes", false),
    ("GET_LOCK", "get_lock", false),
    ("IS_FREE_LOCK", "is_free_lock", false),
    ("IS_USED_LOCK", "is_used_lock", false),
    ("RELEASE_LOCK", "release_lock", false),
    ("RELEASE_ALL_LOCKS", "release_all_locks", false),
    ("LOAD_FILE", "load_file", false),
    ("UUID", "uuid", false),
    ("UUID_SHORT", "uuid_short", false),
    ("SLEEP", "sleep", false),
    ("BENCHMARK", "benchmark", false),
];

/// What an expression that must be a function of its row's columns alone (a CHECK
/// condition, a generated column) may not hold; each caller has its own error.
pub(crate) enum Disallowed<'a> {
    /// A user or system variable.
    Variable,
    /// A subquery.
    Subquery,
    /// A function whose value its arguments do not fix, by the name MySQL's message
    /// gives it.
    Function(&'a str),
}

/// Variables, subqueries and disallowed functions in the expression text `text`,
/// found among its tokens; the first is the error `error` makes of it.
pub(crate) fn check_tokens(text: &str, error: impl Fn(Disallowed) -> Error) -> Result<()> {
    let dialect = MySqlDialect {};
    let tokens = Tokenizer::new(&dialect, text)
        .tokenize()
        .map_err(|e| Error::sql(1064, "42000", e.to_string()))?;
    let tokens: Vec<&Token> = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    for (i, token) in tokens.iter().enumerate() {
        let Token::Word(w) = token else { continue };
        if w.quote_style.is_some() {
            continue;
        }
        if w.value.starts_with('@') {
            return Err(error(Disallowed::Variable));
        }
        if w.keyword == Keyword::SELECT {
            return Err(error(Disallowed::Subquery));
        }
        // A qualified name (`t.now`) is a column, not a function.
        if i > 0 && matches!(tokens[i - 1], Token::Period) {
            continue;
        }
        let called = matches!(tokens.get(i + 1), Some(Token::LParen));
        let found = DISALLOWED_FUNCTIONS
            .iter()
            .find(|(f, _, bare)| w.value.eq_ignore_ascii_case(f) && (called || *bare));
        if let Some((_, shown, _)) = found {
            return Err(error(Disallowed::Function(shown)));
        }
    }
    Ok(())
}

/// Whether `e` yields a truth value, as MySQL requires of a CHECK condition: not a
/// bare column, literal number or string, or arithmetic (3812). Comparisons,
/// logical operators, IS, IN, BETWEEN, LIKE and function calls pass.
fn is_truth_valued(e: &ast::Expr) -> bool {
    use ast::BinaryOperator as B;
    use ast::Expr as E;
    match e {
        E::Nested(inner) => is_truth_valued(inner),
        E::Identifier(_) | E::CompoundIdentifier(_) => false,
        E::Value(v) => matches!(v.value, ast::Value::Boolean(_)),
        E::UnaryOp { op, expr } => match op {
            ast::UnaryOperator::Not => true,
            ast::UnaryOperator::Minus | ast::UnaryOperator::Plus => false,
            _ => is_truth_valued(expr),
        },
        E::BinaryOp { op, .. } => !matches!(
            op,
            B::Plus
                | B::Minus
                | B::Multiply
                | B::Divide
                | B::Modulo
                | B::MyIntegerDivide
                | B::BitwiseAnd
                | B::BitwiseOr
                | B::BitwiseXor
                | B::StringConcat
        ),
        E::Case { .. } | E::Cast { .. } => false,
        _ => true,
    }
}

// ------------------------------------------------------------------ the stored text

/// The text a condition is kept (and shown) as: MySQL's printed form, where every
/// operator is parenthesised, keywords and function names are lower case and columns
/// are quoted (`CHECK (a+b > 10 AND c IN (1,2))` is kept as
/// `(((`a` + `b`) > 10) and (`c` in (1,2)))`). Forms without a rule here keep
/// sqlparser's printing, which Tarn's parser reads back alike.
pub(crate) fn clause_text(e: &ast::Expr) -> String {
    let mut out = String::new();
    print(e, &mut out);
    out
}

fn print(e: &ast::Expr, out: &mut String) {
    use ast::Expr as E;
    match e {
        E::Nested(inner) => print(inner, out),
        E::Identifier(id) if !id.value.starts_with('@') => {
            out.push_str(&crate::sysviews::quote_identifier(&id.value));
        }
        E::CompoundIdentifier(parts) if parts.len() <= 3 => {
            // A column: `t.a` is this table's `a`.
            let last = parts.last().map_or("", |p| p.value.as_str());
            out.push_str(&crate::sysviews::quote_identifier(last));
        }
        E::Value(v) => print_value(&v.value, out),
        E::BinaryOp { left, op, right } => {
            out.push('(');
            print(left, out);
            out.push(' ');
            out.push_str(&binary_operator(op));
            out.push(' ');
            print(right, out);
            out.push(')');
        }
        E::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr,
        } => {
            out.push_str("(not(");
            print(expr, out);
            out.push_str("))");
        }
        E::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } if matches!(&**expr, E::Value(v) if matches!(v.value, ast::Value::Number(..))) => {
            out.push('-');
            print(expr, out);
        }
        E::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => {
            out.push_str("-(");
            print(expr, out);
            out.push(')');
        }
        E::IsNull(x) => postfix(x, " is null", out),
        E::IsNotNull(x) => postfix(x, " is not null", out),
        E::IsTrue(x) => postfix(x, " is true", out),
        E::IsNotTrue(x) => postfix(x, " is not true", out),
        E::IsFalse(x) => postfix(x, " is false", out),
        E::IsNotFalse(x) => postfix(x, " is not false", out),
        E::IsUnknown(x) => postfix(x, " is unknown", out),
        E::IsNotUnknown(x) => postfix(x, " is not unknown", out),
        E::InList {
            expr,
            list,
            negated,
        } => {
            out.push('(');
            print(expr, out);
            out.push_str(if *negated { " not in (" } else { " in (" });
            print_list(list, out);
            out.push_str("))");
        }
        E::Between {
            expr,
            negated,
            low,
            high,
        } => {
            out.push('(');
            print(expr, out);
            out.push_str(if *negated {
                " not between "
            } else {
                " between "
            });
            print(low, out);
            out.push_str(" and ");
            print(high, out);
            out.push(')');
        }
        E::Like {
            negated,
            any: false,
            expr,
            pattern,
            escape_char: None,
        } => {
            out.push('(');
            print(expr, out);
            out.push_str(if *negated { " not like " } else { " like " });
            print(pattern, out);
            out.push(')');
        }
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            out.push_str("(case");
            if let Some(operand) = operand {
                out.push(' ');
                print(operand, out);
            }
            for when in conditions {
                out.push_str(" when ");
                print(&when.condition, out);
                out.push_str(" then ");
                print(&when.result, out);
            }
            if let Some(e) = else_result {
                out.push_str(" else ");
                print(e, out);
            }
            out.push_str(" end)");
        }
        E::Function(f) => match plain_arguments(f) {
            Some(args) => {
                out.push_str(&f.name.to_string().to_lowercase());
                out.push('(');
                let mut first = true;
                for a in args {
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    print(a, out);
                }
                out.push(')');
            }
            None => out.push_str(&e.to_string()),
        },
        other => out.push_str(&other.to_string()),
    }
}

/// A call's arguments when they are plain expressions (no DISTINCT, named
/// arguments, `*`, ORDER BY or a window).
fn plain_arguments(f: &ast::Function) -> Option<Vec<&ast::Expr>> {
    if f.over.is_some() || f.filter.is_some() || !f.within_group.is_empty() {
        return None;
    }
    if !matches!(f.parameters, ast::FunctionArguments::None) {
        return None;
    }
    match &f.args {
        ast::FunctionArguments::None => None,
        ast::FunctionArguments::Subquery(_) => None,
        ast::FunctionArguments::List(list) => {
            if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
                return None;
            }
            list.args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect()
        }
    }
}

fn postfix(e: &ast::Expr, suffix: &str, out: &mut String) {
    out.push('(');
    print(e, out);
    out.push_str(suffix);
    out.push(')');
}

fn print_list(list: &[ast::Expr], out: &mut String) {
    for (i, e) in list.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        print(e, out);
    }
}

fn print_value(v: &ast::Value, out: &mut String) {
    match v {
        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
            out.push('\'');
            for ch in s.chars() {
                match ch {
                    '\'' => out.push_str("''"),
                    '\\' => out.push_str("\\\\"),
                    ch => out.push(ch),
                }
            }
            out.push('\'');
        }
        ast::Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        ast::Value::Null => out.push_str("NULL"),
        other => out.push_str(&other.to_string()),
    }
}

fn binary_operator(op: &ast::BinaryOperator) -> String {
    use ast::BinaryOperator as B;
    match op {
        B::And => "and".into(),
        B::Or => "or".into(),
        B::Xor => "xor".into(),
        B::NotEq => "<>".into(),
        B::MyIntegerDivide => "DIV".into(),
        B::Modulo => "%".into(),
        other => other.to_string(),
    }
}

// ------------------------------------------------------------------- enforcement

/// A table's enforced CHECK constraints, bound over its columns once per statement.
pub struct TableChecks {
    /// Name and bound condition of each enforced constraint, in definition order.
    checks: Vec<(String, Expr)>,
}

impl TableChecks {
    /// The enforced constraints of `def`, or `None` when it has none (then writes
    /// check nothing).
    pub(crate) fn bind(session: &Session, def: &TableDef) -> Result<Option<TableChecks>> {
        if !def.checks.iter().any(|c| c.enforced) {
            return Ok(None);
        }
        let scope = scope_of(def);
        let mut checks = Vec::new();
        for check in def.checks.iter().filter(|c| c.enforced) {
            let e = crate::dml::parse_expr(&check.clause)?;
            let (bound, _) = Binder::new(session).bind_in_scope(&e, &scope)?;
            checks.push((check.name.clone(), bound));
        }
        Ok(Some(TableChecks { checks }))
    }

    /// The constraints with the functions' context of one execution.
    pub(crate) fn checker(&self, functions: FnContext) -> Checker<'_> {
        Checker {
            checks: self,
            functions,
        }
    }
}

/// [`TableChecks`] ready to evaluate rows of one statement execution.
pub(crate) struct Checker<'a> {
    checks: &'a TableChecks,
    functions: FnContext,
}

impl Checker<'_> {
    /// 3819 naming the first constraint whose condition is false for `row` (a full
    /// row of the table, converted to its column types).
    pub(crate) fn check(&self, row: &[Value]) -> Result<()> {
        let cx = EvalContext {
            params: &[],
            outer: &[],
            functions: &self.functions,
            subqueries: &crate::dml::NoSubqueries,
        };
        for (name, e) in &self.checks.checks {
            if crate::scalar::cast::to_bool(&e.eval_row(row, &cx)?) == Some(false) {
                return Err(violated(name));
            }
        }
        Ok(())
    }
}

/// ALTER TABLE in place: 3819 if a row of `table` fails one of `checks` (bound over
/// the table's columns, which an in-place change leaves where they are).
pub(crate) fn check_existing_rows(
    session: &Session,
    table: &tarn_catalog::Table,
    checks: &TableChecks,
) -> Result<()> {
    let storage = session.engine().storage();
    let checker = checks.checker(session.fn_context());
    let mut scan = storage.begin(None, true);
    let mut failure = None;
    let scanned = table.scan_each_tx(
        &mut scan,
        std::ops::Bound::Unbounded,
        std::ops::Bound::Unbounded,
        tarn_catalog::RowLock::None,
        tarn_catalog::WaitPolicy::Wait,
        usize::MAX,
        &mut |_, row| {
            if failure.is_none()
                && let Err(e) = checker.check(&row)
            {
                failure = Some(e);
            }
        },
    );
    storage.rollback(scan)?;
    scanned?;
    failure.map_or(Ok(()), Err)
}
