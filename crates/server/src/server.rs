//! Listener and connections.
