//! Tarn's SQL layer.
//!
//! A statement flows through it as follows (ARCHITECTURE.md names each function):
//!
//! 1. [`parse`]: a pre-pass rewrites the MySQL forms `sqlparser` misses, then
//!    `sqlparser` with its MySQL dialect builds the syntax tree.
//! 2. The binder resolves names against the catalog and types every expression.
//! 3. The planner pushes predicates down, picks access paths and join order.
//! 4. The executor runs the plan over batches of column vectors.
//!
//! [`scalar`] holds MySQL's value semantics (comparison, coercion, arithmetic,
//! functions) that the binder types against and the executor evaluates with.

#![forbid(unsafe_code)]

pub mod parse;
pub mod scalar;
pub mod sysvars;
pub mod sysviews;
pub mod types;

pub use types::SqlType;
