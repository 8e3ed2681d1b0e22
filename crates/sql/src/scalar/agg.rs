//! (temporary stub)
use tarn_common::Result;
use tarn_row::Value;
use tarn_row::types::Collation;
use crate::types::SqlType;
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFunc { Count, CountStar, Sum, Avg, Min, Max, BitAnd, BitOr, AnyValue }
pub fn agg_return_type(_f: AggFunc, a: SqlType) -> SqlType { a }
pub struct Accumulator { v: Value }
impl Accumulator {
    pub fn new(_f: AggFunc, _a: SqlType, _c: Collation) -> Accumulator { Accumulator { v: Value::Null } }
    pub fn update(&mut self, v: &Value) -> Result<()> { self.v = v.clone(); Ok(()) }
    pub fn merge(&mut self, _o: &Accumulator) -> Result<()> { Ok(()) }
    pub fn finish(&self) -> Result<Value> { Ok(self.v.clone()) }
}
