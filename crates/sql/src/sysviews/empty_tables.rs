//! `information_schema` tables for objects Tarn does not have: tablespace files
//! (`FILES`), triggers (`TRIGGERS`), stored routines (`ROUTINES`, `PARAMETERS`),
//! events (`EVENTS`) and histograms (`COLUMN_STATISTICS`, which Oracle's mysqldump 8
//! reads unless given `--column-statistics=0`). Each has MySQL 8's columns and no
//! rows, so that tools which ask for these objects learn that there are none
//! instead of failing on a missing table. The columns of `CHECK_CONSTRAINTS` are
//! here too; its rows come from the catalog (`sysviews::check_constraints`).

use tarn_common::Result;
use tarn_row::Value;

use super::{Column, ViewContext, bigint_unsigned, datetime, long_text, varchar};

/// The kind of one column of an empty table.
#[derive(Clone, Copy)]
enum Kind {
    /// `varchar(64)`, MySQL's width for names.
    Name,
    /// `bigint unsigned`.
    Count,
    Datetime,
    /// `longtext`, for definitions and bodies.
    Text,
}

fn columns(spec: &[(&str, Kind)]) -> Vec<Column> {
    spec.iter()
        .map(|&(name, kind)| match kind {
            Kind::Name => varchar(name, 64),
            Kind::Count => bigint_unsigned(name),
            Kind::Datetime => datetime(name),
            Kind::Text => long_text(name),
        })
        .collect()
}

pub(super) fn no_rows(_: &ViewContext) -> Result<Vec<Vec<Value>>> {
    Ok(Vec::new())
}

use Kind::{Count, Datetime, Name, Text};

/// `HISTOGRAM` is MySQL's JSON column; with no rows, its text type changes nothing.
pub(super) fn column_statistics_columns() -> Vec<Column> {
    columns(&[
        ("SCHEMA_NAME", Name),
        ("TABLE_NAME", Name),
        ("COLUMN_NAME", Name),
        ("HISTOGRAM", Text),
    ])
}

pub(super) fn files_columns() -> Vec<Column> {
    columns(&[
        ("FILE_ID", Count),
        ("FILE_NAME", Text),
        ("FILE_TYPE", Name),
        ("TABLESPACE_NAME", Name),
        ("TABLE_CATALOG", Name),
        ("TABLE_SCHEMA", Name),
        ("TABLE_NAME", Name),
        ("LOGFILE_GROUP_NAME", Name),
        ("LOGFILE_GROUP_NUMBER", Count),
        ("ENGINE", Name),
        ("FULLTEXT_KEYS", Name),
        ("DELETED_ROWS", Count),
        ("UPDATE_COUNT", Count),
        ("FREE_EXTENTS", Count),
        ("TOTAL_EXTENTS", Count),
        ("EXTENT_SIZE", Count),
        ("INITIAL_SIZE", Count),
        ("MAXIMUM_SIZE", Count),
        ("AUTOEXTEND_SIZE", Count),
        ("CREATION_TIME", Datetime),
        ("LAST_UPDATE_TIME", Datetime),
        ("LAST_ACCESS_TIME", Datetime),
        ("RECOVER_TIME", Count),
        ("TRANSACTION_COUNTER", Count),
        ("VERSION", Count),
        ("ROW_FORMAT", Name),
        ("TABLE_ROWS", Count),
        ("AVG_ROW_LENGTH", Count),
        ("DATA_LENGTH", Count),
        ("MAX_DATA_LENGTH", Count),
        ("INDEX_LENGTH", Count),
        ("DATA_FREE", Count),
        ("CREATE_TIME", Datetime),
        ("UPDATE_TIME", Datetime),
        ("CHECK_TIME", Datetime),
        ("CHECKSUM", Count),
        ("STATUS", Name),
        ("EXTRA", Name),
    ])
}

pub(super) fn triggers_columns() -> Vec<Column> {
    columns(&[
        ("TRIGGER_CATALOG", Name),
        ("TRIGGER_SCHEMA", Name),
        ("TRIGGER_NAME", Name),
        ("EVENT_MANIPULATION", Name),
        ("EVENT_OBJECT_CATALOG", Name),
        ("EVENT_OBJECT_SCHEMA", Name),
        ("EVENT_OBJECT_TABLE", Name),
        ("ACTION_ORDER", Count),
        ("ACTION_CONDITION", Text),
        ("ACTION_STATEMENT", Text),
        ("ACTION_ORIENTATION", Name),
        ("ACTION_TIMING", Name),
        ("ACTION_REFERENCE_OLD_TABLE", Name),
        ("ACTION_REFERENCE_NEW_TABLE", Name),
        ("ACTION_REFERENCE_OLD_ROW", Name),
        ("ACTION_REFERENCE_NEW_ROW", Name),
        ("CREATED", Datetime),
        ("SQL_MODE", Text),
        ("DEFINER", Name),
        ("CHARACTER_SET_CLIENT", Name),
        ("COLLATION_CONNECTION", Name),
        ("DATABASE_COLLATION", Name),
    ])
}

pub(super) fn routines_columns() -> Vec<Column> {
    columns(&[
        ("SPECIFIC_NAME", Name),
        ("ROUTINE_CATALOG", Name),
        ("ROUTINE_SCHEMA", Name),
        ("ROUTINE_NAME", Name),
        ("ROUTINE_TYPE", Name),
        ("DATA_TYPE", Text),
        ("CHARACTER_MAXIMUM_LENGTH", Count),
        ("CHARACTER_OCTET_LENGTH", Count),
        ("NUMERIC_PRECISION", Count),
        ("NUMERIC_SCALE", Count),
        ("DATETIME_PRECISION", Count),
        ("CHARACTER_SET_NAME", Name),
        ("COLLATION_NAME", Name),
        ("DTD_IDENTIFIER", Text),
        ("ROUTINE_BODY", Name),
        ("ROUTINE_DEFINITION", Text),
        ("EXTERNAL_NAME", Name),
        ("EXTERNAL_LANGUAGE", Name),
        ("PARAMETER_STYLE", Name),
        ("IS_DETERMINISTIC", Name),
        ("SQL_DATA_ACCESS", Name),
        ("SQL_PATH", Name),
        ("SECURITY_TYPE", Name),
        ("CREATED", Datetime),
        ("LAST_ALTERED", Datetime),
        ("SQL_MODE", Text),
        ("ROUTINE_COMMENT", Text),
        ("DEFINER", Name),
        ("CHARACTER_SET_CLIENT", Name),
        ("COLLATION_CONNECTION", Name),
        ("DATABASE_COLLATION", Name),
    ])
}

pub(super) fn parameters_columns() -> Vec<Column> {
    columns(&[
        ("SPECIFIC_CATALOG", Name),
        ("SPECIFIC_SCHEMA", Name),
        ("SPECIFIC_NAME", Name),
        ("ORDINAL_POSITION", Count),
        ("PARAMETER_MODE", Name),
        ("PARAMETER_NAME", Name),
        ("DATA_TYPE", Text),
        ("CHARACTER_MAXIMUM_LENGTH", Count),
        ("CHARACTER_OCTET_LENGTH", Count),
        ("NUMERIC_PRECISION", Count),
        ("NUMERIC_SCALE", Count),
        ("DATETIME_PRECISION", Count),
        ("CHARACTER_SET_NAME", Name),
        ("COLLATION_NAME", Name),
        ("DTD_IDENTIFIER", Text),
        ("ROUTINE_TYPE", Name),
    ])
}

pub(super) fn check_constraints_columns() -> Vec<Column> {
    columns(&[
        ("CONSTRAINT_CATALOG", Name),
        ("CONSTRAINT_SCHEMA", Name),
        ("CONSTRAINT_NAME", Name),
        ("CHECK_CLAUSE", Text),
    ])
}

pub(super) fn events_columns() -> Vec<Column> {
    columns(&[
        ("EVENT_CATALOG", Name),
        ("EVENT_SCHEMA", Name),
        ("EVENT_NAME", Name),
        ("DEFINER", Name),
        ("TIME_ZONE", Name),
        ("EVENT_BODY", Name),
        ("EVENT_DEFINITION", Text),
        ("EVENT_TYPE", Name),
        ("EXECUTE_AT", Datetime),
        ("INTERVAL_VALUE", Name),
        ("INTERVAL_FIELD", Name),
        ("SQL_MODE", Text),
        ("STARTS", Datetime),
        ("ENDS", Datetime),
        ("STATUS", Name),
        ("ON_COMPLETION", Name),
        ("CREATED", Datetime),
        ("LAST_ALTERED", Datetime),
        ("LAST_EXECUTED", Datetime),
        ("EVENT_COMMENT", Name),
        ("ORIGINATOR", Count),
        ("CHARACTER_SET_CLIENT", Name),
        ("COLLATION_CONNECTION", Name),
        ("DATABASE_COLLATION", Name),
    ])
}
