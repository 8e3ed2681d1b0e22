//! Transactions (being written).

#![forbid(unsafe_code)]

pub mod lock;
