//! The MySQL client/server protocol codec.
