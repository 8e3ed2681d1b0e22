//! Tarn's SQL layer.
//!
//! A statement flows through it as follows (ARCHITECTURE.md names each function):
//!
//! 1. [`session::Session::execute`] takes the text; [`parse`] runs a pre-pass for the
//!    MySQL forms `sqlparser` misses, then `sqlparser` with its MySQL dialect.
//! 2. [`bind`] resolves names against the catalog and types every expression, and
//!    hands each query block's FROM and WHERE to [`planner`], which pushes predicates
//!    down, picks access paths and orders joins.
//! 3. [`exec`] runs the [`plan::Plan`] as a tree of operators that pass chunks of
//!    column vectors ([`chunk::Chunk`]; [`window`] holds window functions' node and
//!    operator); [`dml`], [`ddl`] and [`alter`] change rows and the catalog inside
//!    the session's transaction ([`checks`] defines and enforces CHECK constraints,
//!    [`foreign_keys`] FOREIGN KEYs, [`generated`] generated columns); [`load`] is LOAD DATA LOCAL INFILE; [`maintenance`]
//!    answers ANALYZE, OPTIMIZE, CHECK, CHECKSUM and REPAIR TABLE; [`temporary`]
//!    keeps each session's temporary tables.
//!
//! Before any of that, the session's account must hold the privileges the statement
//! needs: [`accounts`] keeps accounts and grants in `mysql.user` and `mysql.grants`
//! and a cached snapshot that the binder, DML and DDL check per table.
//!
//! [`scalar`] holds MySQL's value semantics (comparison, coercion, arithmetic,
//! functions) that the binder types against and the executor evaluates with;
//! [`json`] the JSON documents its JSON functions and the JSON type work on.

#![forbid(unsafe_code)]

pub mod accounts;
pub mod alter;
pub mod bind;
pub mod checks;
pub mod chunk;
pub mod create_select;
pub mod ddl;
pub mod ddl_types;
pub mod dml;
pub mod engine;
pub mod exec;
pub mod expr;
pub mod foreign_keys;
pub mod generated;
pub mod json;
pub mod limits;
pub mod load;
pub mod log_tables;
pub mod maintenance;
pub mod metadata_locks;
pub mod parallel;
pub mod parse;
pub mod plan;
pub mod planner;
pub mod scalar;
pub mod session;
pub mod show;
pub mod subquery;
pub mod sysvars;
pub mod sysviews;
pub mod table_locks;
pub mod temporary;
pub mod types;
pub mod user_locks;
pub mod window;
pub mod workers;

pub use accounts::{Account, AuthPlugin, native_password_hash, sha2_password_hash};
pub use engine::Engine;
pub use session::{EncodedRows, QueryResult, RowEncoder, RowSink, Session};
pub use tarn_catalog::CommitTicket;
pub use types::SqlType;
