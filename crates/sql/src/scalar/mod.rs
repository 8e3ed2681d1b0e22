//! MySQL value semantics: comparison and coercion, arithmetic with exact decimals,
//! casts, and the built-in scalar functions.
//!
//! Every function here is total: bad input is an `Err` carrying MySQL's error number,
//! SQLSTATE and message, or `Value::Null` exactly where MySQL (in a SELECT) returns
//! NULL. Where MySQL also raises a warning with that NULL (`1/0`, an invalid date),
//! the warning is not produced yet: the functions document it and a later layer adds
//! warnings. Nothing here panics on user data, and integer arithmetic is checked.
//!
//! - [`decimal`]: exact DECIMAL arithmetic (on `i128` mantissas, 38 digits).
//! - [`cast`]: conversions between values (truthiness, numbers from strings, text
//!   from numbers), `CAST()` and the strict conversion into a column ([`cast::to_column`]).
//! - [`compare`]: MySQL's comparison with its coercion rules, the total order for
//!   sorting and the grouping key consistent with it.
//! - [`arith`]: `+ - * / DIV %` and unary minus with MySQL's result types.
//! - [`like`]: `LIKE` pattern matching.
//! - [`func`]: scalar built-ins by name.
//! - [`json`]: the JSON functions (over [`crate::json`]'s documents).
//! - [`date`]: intervals, `EXTRACT`, `DATE_FORMAT` and the date helpers.
//! - [`time`]: reading TIME and YEAR values, and the TIME functions.
//! - [`tz`]: time zones, fixed and named, and conversions between them and UTC.
//! - [`strings`]: `SUBSTRING_INDEX`, `FIND_IN_SET`, base64, digests and other string
//!   functions.
//! - [`math`]: `CONV`, `CRC32` and the bit operators.
//! - [`regexp`]: `REGEXP` and the `REGEXP_*` functions.
//! - [`rand`]: `RAND()` with MySQL's seeded sequence.
//! - [`uuid`]: `UUID()` and the UUID conversions.
//! - [`agg`]: aggregate accumulators.

use tarn_common::Error;
use tarn_row::datetime::DateTime;

pub mod agg;
pub mod arith;
pub mod cast;
pub mod compare;
pub mod date;
pub mod decimal;
pub mod func;
pub mod json;
pub mod like;
pub mod math;
pub mod rand;
pub mod regexp;
pub mod strings;
pub mod time;
pub mod tz;
pub mod uuid;

/// What a function may read from the statement it runs in.
#[derive(Clone, Debug)]
pub struct FnContext {
    /// The statement's start, in the session time zone (NOW() and friends).
    pub now: DateTime,
    /// The statement's start in UTC (`UTC_TIMESTAMP()`, `UNIX_TIMESTAMP()`).
    pub utc_now: DateTime,
    /// The session's `time_zone`: `now` is `utc_now` in it, `UNIX_TIMESTAMP(x)` reads
    /// `x` in it and `FROM_UNIXTIME` answers in it.
    pub time_zone: tz::TimeZone,
    /// `div_precision_increment`: extra fraction digits of `/` (MySQL's default is 4).
    pub div_precision_increment: u8,
    /// `group_concat_max_len`: GROUP_CONCAT's results are cut at this many bytes.
    pub group_concat_max_len: usize,
    /// Which statement execution this is ([`next_statement_id`]): a `RAND(N)` call
    /// seeds its sequence once per execution.
    pub statement: u64,
    /// The session the statement runs in, for the functions that act on it
    /// (`SLEEP`, `GET_LOCK` and the other user-level lock functions,
    /// [`crate::user_locks`]); `None` outside a session, where they fail with 1305.
    pub session: Option<std::sync::Arc<crate::user_locks::SessionLink>>,
}

/// A number no earlier statement execution of this process was given.
pub fn next_statement_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl FnContext {
    /// A context in UTC with MySQL's default `div_precision_increment` (4).
    pub fn new(now: DateTime) -> FnContext {
        FnContext {
            now,
            utc_now: now,
            time_zone: tz::TimeZone::UTC,
            div_precision_increment: 4,
            group_concat_max_len: tarn_common::limits::GROUP_CONCAT_MAX_LEN_BYTES,
            statement: next_statement_id(),
            session: None,
        }
    }
}

/// ER_DATA_OUT_OF_RANGE (1690): `kind` is `BIGINT`, `BIGINT UNSIGNED`, `DECIMAL` or
/// `DOUBLE`; `expression` is the offending expression as text.
pub fn out_of_range(kind: &str, expression: &str) -> Error {
    Error::sql(
        1690,
        "22003",
        format!("{kind} value is out of range in '{expression}'"),
    )
}
