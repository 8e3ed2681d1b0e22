//! Exact decimals.
pub struct Decimal;
