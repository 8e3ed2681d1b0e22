//! Placeholder until the catalog lands in this session.
