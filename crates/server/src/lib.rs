//! Tarn's MySQL protocol server.
//!
//! - [`protocol`]: the wire codec, written by hand: packet framing, the handshake,
//!   authentication scrambles, OK/ERR/EOF, column definitions, text and binary rows.
//! - [`server`]: the listener and what connections share.
//! - [`connection`]: one connection's handshake and command loop; statements run on
//!   statement threads, never on the network threads.
//! - [`runners`]: the threads that run busy connections' statements, going from one
//!   ready connection to the next.
//! - [`send`]: a connection's output, and rows encoded in parallel (S1, §3).
//! - [`tls`]: certificates and the rustls configuration.
//! - [`tls_stream`]: TLS over a connection's socket after the handshake, on the
//!   network task and on the runners.
//! - [`watch`]: notices clients that disconnect while their statement runs.
//! - [`limits`]: every bound the server keeps.

pub mod connection;
pub mod limits;
pub mod protocol;
pub mod runners;
pub mod send;
pub mod server;
pub mod text;
pub mod tls;
pub mod tls_stream;
pub mod watch;
