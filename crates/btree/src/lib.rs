//! Placeholder until the B+tree lands in this session.
