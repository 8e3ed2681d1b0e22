//! Types every Tarn layer shares.
//!
//! This crate sits below all others and depends on none of them:
//!
//! - [`blocking`]: lets a thread pool learn that one of its threads is about to
//!   sleep (a lock wait, a commit's flush), so it can hand its other work on.
//! - [`config`]: the TOML configuration file and the order settings apply in.
//! - [`counter`]: a striped counter for events on hot paths.
//! - [`ids`]: newtypes for page ids, file ids and log sequence numbers, so that an
//!   index, a count and an id can never be mixed up.
//! - [`error`]: the one error type. Every variant maps to a MySQL error number and
//!   SQLSTATE, because in the end every error reaches a MySQL client.
//! - [`interrupt`]: the kill flag and `max_execution_time` deadline of a running
//!   statement, read by the executor and by lock waits alike, and the session's lock
//!   wait timeout.
//! - [`limits`]: every bound on a queue, cache, buffer or count, in one place.
//! - [`settings`]: the user-visible settings, their defaults and their validation.
//! - [`latch`]: the latch accounting registry (technique S4) and instrumented locks.
//! - [`rng`]: a seeded generator and a zipfian distribution for tests and benchmarks.

#![forbid(unsafe_code)]

pub mod blocking;
pub mod config;
pub mod counter;
pub mod error;
pub mod ids;
pub mod interrupt;
pub mod latch;
pub mod limits;
pub mod rng;
pub mod settings;

pub use error::{Error, Result};
pub use ids::{FileId, Lsn, PageId, PageNo};
pub use interrupt::StatementInterrupt;
