//! (stage in progress)
