//! Tarn's MySQL protocol server.
//!
//! - [`protocol`]: the wire codec, written by hand: packet framing, the handshake,
//!   authentication scrambles, OK/ERR/EOF, column definitions, text and binary rows.
//! - [`server`]: the listener and one async task per connection; statements run on
//!   a bounded pool of statement threads, never on the network threads.

pub mod protocol;
pub mod server;
pub mod tls;
