//! Column types, values, the row format and the key encoding.
#![forbid(unsafe_code)]

pub mod datetime;
pub mod decimal;
pub mod types;
pub mod value;
