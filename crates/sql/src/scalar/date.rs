//! (temporary stub)
use tarn_common::{Error, Result};
use tarn_row::Value;
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntervalUnit { Microsecond, Second, Minute, Hour, Day, Week, Month, Quarter, Year, YearMonth }
pub fn add_interval(_v: &Value, _a: &Value, _u: IntervalUnit, _s: bool) -> Result<Value> { Err(Error::sql(1235, "42000", "stub")) }
pub fn extract(_u: IntervalUnit, _v: &Value) -> Result<Value> { Err(Error::sql(1235, "42000", "stub")) }
pub fn parse_unit(_n: &str) -> Option<IntervalUnit> { None }
