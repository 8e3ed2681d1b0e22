//! Generated columns, as MySQL 8 has them: `col type [GENERATED ALWAYS] AS (expr)
//! [VIRTUAL | STORED]` in CREATE TABLE and ALTER TABLE ADD / MODIFY / CHANGE COLUMN.
//!
//! # Definition
//!
//! [`spec`] reads the clause of one column (MySQL's errors for what the expression
//! may not hold: a user or system variable, 3765; a subquery, 3102; a function whose
//! value its arguments do not fix, 3763) and keeps the expression as text in the form
//! MySQL prints it ([`crate::checks::clause_text`]: `(`a` + `b`)`), naming columns
//! by name, in the catalog ([`tarn_catalog::GeneratedColumn`]). Once a definition's
//! columns are final (CREATE TABLE, or the folded ALTER TABLE),
//! [`check_definition`] binds every expression over the table's columns: an unknown
//! column is 1054, a generated column that is the column itself or comes after it
//! 3107, the AUTO_INCREMENT column 3109, a VIRTUAL column in the primary key 3106.
//! ALTER TABLE refuses to drop or rename a column a generated column reads (3108,
//! [`dependency_error`]).
//!
//! # Storage
//!
//! Rows store the value of every generated column, VIRTUAL ones too: a VIRTUAL
//! column costs its bytes in the row rather than an evaluation on every read, and an
//! index on it is an ordinary index over a stored value, maintained by the table like
//! any other. What the user wrote (VIRTUAL or STORED, and the expression) is kept
//! for SHOW CREATE TABLE and information_schema, which print it as MySQL does.
//!
//! # Values
//!
//! A statement binds its table's generated columns once ([`TableGenerated::bind`])
//! and computes them on each row after the base columns are converted to their
//! types and before CHECK constraints, foreign keys and indexes see the row
//! ([`TableGenerated::fill`]): INSERT (VALUES, SELECT, SET), REPLACE, LOAD DATA,
//! the row ON DUPLICATE KEY UPDATE makes, UPDATE (single and multi-table; every
//! changed row is computed again, which gives the same value unless a column the
//! expression reads changed), and ALTER TABLE's rebuild (so ADD COLUMN .. AS fills
//! existing rows). Expressions are evaluated in column order, so a generated column
//! reads the values of the ones before it. The value is converted into the column
//! as an assigned one is (strict mode; IGNORE clamps with a warning). A value given
//! for a generated column other than DEFAULT is 3105 ([`value_not_allowed`]).
//!
//! Left out: the FOREIGN KEY actions MySQL refuses on a generated column's base
//! columns (3104), which here would change the base column without computing the
//! generated one again.

use sqlparser::ast;
use tarn_catalog::{GeneratedColumn, TableDef};
use tarn_common::{Error, Result};
use tarn_row::Value;

use crate::bind::Binder;
use crate::checks::{Disallowed, check_tokens, clause_text, columns_read, scope_of};
use crate::expr::{EvalContext, Expr};
use crate::scalar::FnContext;
use crate::session::Session;

/// The generation of column `column` from its `AS (e) [VIRTUAL | STORED]` clause,
/// after the checks that need no other column (see the module documentation).
pub(crate) fn spec(
    column: &str,
    e: &ast::Expr,
    mode: Option<ast::GeneratedExpressionMode>,
) -> Result<GeneratedColumn> {
    check_tokens(&e.to_string(), |found| match found {
        Disallowed::Variable => Error::sql(
            3765,
            "HY000",
            format!(
                "Expression of generated column '{column}' cannot refer user or system \
                 variables."
            ),
        ),
        Disallowed::Subquery => disallowed_function(column),
        Disallowed::Function(shown) => Error::sql(
            3763,
            "HY000",
            format!(
                "Expression of generated column '{column}' contains a disallowed function: \
                 {shown}."
            ),
        ),
    })?;
    let expr = clause_text(e);
    if expr.len() > tarn_common::limits::GENERATED_COLUMN_TEXT_BYTES_MAX {
        return Err(Error::sql(
            1470,
            "HY000",
            format!("String '{column}' is too long for generated column expression"),
        ));
    }
    Ok(GeneratedColumn {
        expr,
        stored: matches!(mode, Some(ast::GeneratedExpressionMode::Stored)),
    })
}

/// ER_GENERATED_COLUMN_FUNCTION_IS_NOT_ALLOWED (3102).
fn disallowed_function(column: &str) -> Error {
    Error::sql(
        3102,
        "HY000",
        format!("Expression of generated column '{column}' contains a disallowed function."),
    )
}

/// ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN (3105).
pub(crate) fn value_not_allowed(column: &str, table: &str) -> Error {
    Error::sql(
        3105,
        "HY000",
        format!(
            "The value specified for generated column '{column}' in table '{table}' is not allowed."
        ),
    )
}

/// ER_DEPENDENT_BY_GENERATED_COLUMN (3108).
pub(crate) fn dependency_error(column: &str) -> Error {
    Error::sql(
        3108,
        "HY000",
        format!("Column '{column}' has a generated column dependency."),
    )
}

/// The bound expression of generated column `column` of `def`, over the table's
/// columns; an unknown column is MySQL's 1054 for generated columns.
fn bind_one(session: &Session, def: &TableDef, column: usize) -> Result<Expr> {
    let generated = def
        .column_generated(column)
        .expect("bind_one is given a generated column");
    let e = crate::dml::parse_expr(&generated.expr)?;
    match Binder::new(session).bind_in_scope(&e, &scope_of(def)) {
        Ok((bound, _)) => Ok(bound),
        Err(err) if err.mysql_code() == 1054 => {
            let message = err.to_string();
            let unknown = message
                .split_once("Unknown column '")
                .and_then(|(_, rest)| rest.rsplit_once("' in '"))
                .map_or(message.as_str(), |(c, _)| c);
            Err(Error::sql(
                1054,
                "42S22",
                format!("Unknown column '{unknown}' in 'generated column function'"),
            ))
        }
        Err(err) => Err(err),
    }
}

/// MySQL's checks of every generated column of `def` over its final columns (see
/// the module documentation).
pub(crate) fn check_definition(session: &Session, def: &TableDef) -> Result<()> {
    for c in 0..def.columns.len() {
        let Some(generated) = def.column_generated(c) else {
            continue;
        };
        let name = &def.columns[c].name;
        if !generated.stored && def.primary_key.contains(&c) {
            return Err(Error::sql(
                3106,
                "HY000",
                "'Defining a virtual generated column as primary key' is not supported for \
                 generated columns.",
            ));
        }
        if def.auto_increment.is_some_and(|a| a.column == c) {
            return Err(Error::sql(
                1221,
                "HY000",
                "Incorrect usage of AUTO_INCREMENT and generated column",
            ));
        }
        if def.column_default(c).is_some() {
            return Err(Error::sql(
                1221,
                "HY000",
                "Incorrect usage of DEFAULT and generated column",
            ));
        }
        let read = columns_read(&bind_one(session, def, c)?);
        if read.iter().any(|&r| r >= c && def.is_generated(r)) {
            return Err(Error::sql(
                3107,
                "HY000",
                "Generated column can refer only to generated columns defined prior to it.",
            ));
        }
        if let Some(auto) = def.auto_increment
            && read.contains(&auto.column)
        {
            return Err(Error::sql(
                3109,
                "HY000",
                format!("Generated column '{name}' cannot refer to auto-increment column."),
            ));
        }
    }
    Ok(())
}

/// 3108 if a generated column of `def` other than `column` itself reads `column`
/// (which is being dropped or renamed).
pub(crate) fn check_no_dependents(session: &Session, def: &TableDef, column: usize) -> Result<()> {
    for c in 0..def.columns.len() {
        if c == column || !def.is_generated(c) {
            continue;
        }
        if columns_read(&bind_one(session, def, c)?).contains(&column) {
            return Err(dependency_error(&def.columns[column].name));
        }
    }
    Ok(())
}

/// A table's generated columns, bound over its columns once per statement.
pub struct TableGenerated {
    /// Position and bound expression of each generated column, in column order.
    columns: Vec<(usize, Expr)>,
}

impl TableGenerated {
    /// The generated columns of `def`, or `None` when it has none (then writes
    /// compute nothing).
    pub(crate) fn bind(session: &Session, def: &TableDef) -> Result<Option<TableGenerated>> {
        if !def.column_generated.iter().any(Option::is_some) {
            return Ok(None);
        }
        let mut columns = Vec::new();
        for c in 0..def.columns.len() {
            if def.is_generated(c) {
                columns.push((c, bind_one(session, def, c)?));
            }
        }
        Ok(Some(TableGenerated { columns }))
    }

    /// Computes every generated column of `row` (a full row of the table whose other
    /// columns are converted to their types), in column order; `convert` turns each
    /// value into its column's type (it is given the column's position).
    pub(crate) fn fill(
        &self,
        row: &mut [Value],
        functions: &FnContext,
        convert: &mut dyn FnMut(usize, Value) -> Result<Value>,
    ) -> Result<()> {
        let cx = EvalContext {
            params: &[],
            outer: &[],
            functions,
            subqueries: &crate::dml::NoSubqueries,
        };
        for (c, e) in &self.columns {
            let value = e.eval_row(row, &cx)?;
            row[*c] = convert(*c, value)?;
        }
        Ok(())
    }
}
