//! MySQL value semantics: comparison and coercion, arithmetic with exact decimals,
//! casts, and the built-in scalar functions.
