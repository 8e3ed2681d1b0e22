//! `CREATE [TEMPORARY] TABLE t [(definitions)] [IGNORE | REPLACE] [AS] SELECT ...`
//!
//! The new table has the declared columns, then a column for each selected column
//! not declared, typed by its expression (`SqlType::to_column`: a VARCHAR(10)
//! column stays VARCHAR(10), `UPPER(v)` too, `COUNT(*)` is a BIGINT), nullable as
//! the expression is; a `tinyint(1)` column selected as it is stays `tinyint(1)`
//! (`OutputColumn::tinyint1`), as in MySQL. A declared column of a selected name
//! takes the selected values, with its declared type. Keys come from the
//! declarations (`CREATE TABLE t (PRIMARY KEY (id)) SELECT ...`).
//!
//! The rows are then inserted by an `INSERT INTO t (selected names) SELECT ...` bound
//! and run as any INSERT (strict conversions, duplicate keys: 1062) and committed.
//! The statement is all or nothing, as in MySQL 8: if the insert fails, the new
//! table is dropped again. With IF NOT EXISTS and an existing table nothing is
//! inserted (a 1050 note).

use sqlparser::ast;
use tarn_common::{Error, Result};
use tarn_row::types::{Column, ColumnType};

use crate::bind::Binder;
use crate::session::{QueryResult, Session};

/// Creates table `db`.`name` from `create` and fills it from `query`.
pub(crate) fn create_table_select(
    session: &mut Session,
    db: &str,
    name: &str,
    create: &ast::CreateTable,
    query: &ast::Query,
) -> Result<QueryResult> {
    let plan = Binder::new(session).bind_statement_query(query)?;
    let mut selected: Vec<(Column, bool)> = Vec::new();
    for c in plan.columns() {
        if selected
            .iter()
            .any(|(s, _)| s.name.eq_ignore_ascii_case(&c.name))
        {
            return Err(Error::sql(
                1060,
                "42S21",
                format!("Duplicate column name '{}'", c.name),
            ));
        }
        let (ty, collation) = c.ty.to_column();
        let tinyint1 = c.tinyint1 && matches!(ty, ColumnType::TinyInt { .. });
        let column = Column::new(c.name.clone(), ty, c.nullable).with_collation(collation);
        selected.push((column, tinyint1));
    }
    let names: Vec<String> = selected.iter().map(|(c, _)| c.name.clone()).collect();
    let def = crate::ddl::table_def(session, create, db, name, selected)?;
    let warnings_before = session.warnings().len();
    crate::ddl::finish_create(session, db, def, create)?;
    let existed = session.warnings()[warnings_before..]
        .iter()
        .any(|w| w.code == 1050);
    if existed {
        return Ok(QueryResult::ok(0));
    }
    let insert = insert_statement(db, name, &names, query)?;
    let filled = crate::dml::bind(session, &insert)
        .and_then(|bound| session.run_bound(&bound, &[]))
        .and_then(|result| session.commit().map(|()| result));
    match filled {
        Ok(result) => Ok(result),
        Err(error) => {
            let _ = session.rollback();
            let temporary = if create.temporary { "TEMPORARY " } else { "" };
            let drop = format!("DROP {temporary}TABLE {}.{}", quoted(db), quoted(name));
            if let Err(e) = session.execute(&drop) {
                tracing::error!("CREATE TABLE ... SELECT could not drop {db}.{name}: {e}");
            }
            Err(error)
        }
    }
}

fn quoted(identifier: &str) -> String {
    format!("`{}`", identifier.replace('`', "``"))
}

/// `INSERT INTO db.name (names) <query>`, built from a parsed template so the query
/// keeps the tree it was parsed to.
fn insert_statement(
    db: &str,
    name: &str,
    names: &[String],
    query: &ast::Query,
) -> Result<ast::Statement> {
    let columns: Vec<String> = names.iter().map(|n| quoted(n)).collect();
    let template = format!(
        "INSERT INTO {}.{} ({}) SELECT 1",
        quoted(db),
        quoted(name),
        columns.join(", ")
    );
    let not_insert = || Error::sql(1105, "HY000", format!("{template} is not an INSERT"));
    let parsed = crate::parse::parse_one(&template)?;
    let crate::parse::Statement::Sql(statement) = parsed.statement else {
        return Err(not_insert());
    };
    let mut statement = *statement;
    let ast::Statement::Insert(insert) = &mut statement else {
        return Err(not_insert());
    };
    insert.source = Some(Box::new(query.clone()));
    Ok(statement)
}
