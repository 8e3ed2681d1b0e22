//! (temporary stub)
use tarn_common::{Error, Result};
use tarn_row::Value;
use crate::types::SqlType;
use super::FnContext;
pub fn return_type(name: &str, _args: &[SqlType]) -> Result<SqlType> { Err(Error::sql(1305, "42000", format!("FUNCTION {name} does not exist"))) }
pub fn call(name: &str, _args: &[Value], _ctx: &FnContext) -> Result<Value> { Err(Error::sql(1305, "42000", format!("FUNCTION {name} does not exist"))) }
