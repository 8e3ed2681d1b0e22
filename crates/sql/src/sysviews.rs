//! (temporary stub)
use tarn_common::{Error, Result};
use tarn_row::Value;
use crate::sysvars::SystemVariables;
use crate::types::SqlType;
pub struct Column { pub name: String, pub ty: SqlType }
pub type Rows = (Vec<Column>, Vec<Vec<Value>>);
pub struct ProcessInfo { pub id: u64, pub user: String, pub host: String, pub db: Option<String>, pub command: String, pub time_s: u64, pub state: String, pub info: Option<String> }
pub struct ViewContext<'a> { pub storage: &'a tarn_catalog::Storage, pub session_vars: &'a SystemVariables, pub global_vars: &'a SystemVariables, pub processes: &'a [ProcessInfo], pub current_database: Option<&'a str> }
fn stub() -> Error { Error::sql(1235, "42000", "stub") }
fn empty() -> Rows { (vec![], vec![]) }
pub fn system_table(_cx: &ViewContext, _db: &str, _name: &str) -> Option<Result<Rows>> { None }
pub fn show_databases(cx: &ViewContext) -> Rows { (vec![Column { name: "Database".into(), ty: SqlType::TEXT }], cx.storage.databases().into_iter().map(|d| vec![Value::Bytes(d.into_bytes())]).collect()) }
pub fn show_tables(_cx: &ViewContext, _db: &str, _full: bool) -> Result<Rows> { Err(stub()) }
pub fn show_columns(_cx: &ViewContext, _db: &str, _t: &str, _full: bool) -> Result<Rows> { Err(stub()) }
pub fn show_index(_cx: &ViewContext, _db: &str, _t: &str) -> Result<Rows> { Err(stub()) }
pub fn show_create_table(_cx: &ViewContext, _db: &str, _t: &str) -> Result<Rows> { Err(stub()) }
pub fn show_variables(_v: &SystemVariables) -> Rows { empty() }
pub fn show_status(_cx: &ViewContext) -> Rows { empty() }
pub fn show_processlist(_cx: &ViewContext, _full: bool) -> Rows { empty() }
pub fn show_table_status(_cx: &ViewContext, _db: &str) -> Result<Rows> { Err(stub()) }
pub fn show_engines() -> Rows { empty() }
pub fn show_engine_status(_cx: &ViewContext) -> Result<String> { Err(stub()) }
pub fn show_charset() -> Rows { empty() }
pub fn show_collation() -> Rows { empty() }
