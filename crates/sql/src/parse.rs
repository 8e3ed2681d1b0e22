//! Parsing: a pre-pass for the MySQL forms `sqlparser` misses, then `sqlparser`.
