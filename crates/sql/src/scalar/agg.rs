//! Aggregate accumulators.
//!
//! An [`Accumulator`] folds the values of one group: [`Accumulator::update`] per row,
//! [`Accumulator::merge`] to combine partial aggregates from parallel workers, and
//! [`Accumulator::finish`] for the result. NULL inputs are skipped by every function
//! but `COUNT(*)`. Over no (non-NULL) rows `COUNT` is 0, `BIT_AND` is
//! 18446744073709551615, `BIT_OR`/`BIT_XOR` are 0, and the others are NULL.
//!
//! Sums follow the argument's type ([`agg_return_type`], as MySQL types them):
//!
//! - integers and DECIMALs are summed exactly (an `i128` mantissa, so at most 38
//!   digits; past that the sum is error 1690), giving a DECIMAL;
//! - FLOAT, DOUBLE and strings are summed as DOUBLEs (strings by their numeric prefix).
//!
//! `AVG` is the exact sum divided with 4 more fraction digits (as `/` with MySQL's
//! default `div_precision_increment`), or the DOUBLE quotient.
//!
//! `VAR_POP` (`VARIANCE`), `VAR_SAMP`, `STDDEV_POP` (`STD`, `STDDEV`) and `STDDEV_SAMP`
//! are DOUBLEs computed with Welford's recurrence over the values as DOUBLEs (MySQL's
//! `variance_fp_recurrence_next`, so a serial pass gives MySQL's digits); partial
//! states merge with Chan et al.'s pairwise formula. The sample forms of one value are
//! NULL, the population forms 0. `MIN`/`MAX` use
//! [`super::compare::sort_cmp`] under the accumulator's collation. DISTINCT is the
//! executor's (it feeds distinct values).
//!
//! JSON_ARRAYAGG and JSON_OBJECTAGG build a JSON array (in arrival order) and object
//! (of rows with one key the last wins) from JSON text the binder makes per row; past
//! [`SQL_STRING_RESULT_BYTES_MAX`] bytes the result is NULL, as MySQL's is past
//! `max_allowed_packet`.
//!
//! GROUP_CONCAT joins the text of its non-NULL rows (a row with any NULL argument is
//! skipped) with its separator. Without ORDER BY the text grows as rows arrive, in
//! arrival order (merged partials follow each other); with ORDER BY the accumulator
//! keeps (sort keys, text) pairs and sorts them stably at [`Accumulator::finish`]. The
//! result stops at `group_concat_max_len` bytes (on a character boundary), and
//! [`Accumulator::concat_cut_row`] tells which row was cut (MySQL's warning 1260).

use std::cmp::Ordering;

use std::collections::BTreeMap;

use tarn_common::Result;
use tarn_common::limits::{GROUP_CONCAT_MAX_LEN_BYTES, SQL_STRING_RESULT_BYTES_MAX};
use tarn_row::decimal::Decimal;
use tarn_row::types::Collation;
use tarn_row::value::Value;

use super::cast::{self, char_boundary_after};
use super::compare::{decimal_shape, sort_cmp};
use super::decimal::{self, pow10};
use super::math::to_bits;
use super::out_of_range;
use crate::json::{self, Json, Key};
use crate::types::SqlType;

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggFunc {
    /// `COUNT(x)`: non-NULL values.
    Count,
    /// `COUNT(*)`: rows.
    CountStar,
    Sum,
    Avg,
    Min,
    Max,
    BitAnd,
    BitOr,
    BitXor,
    /// `GROUP_CONCAT(x, ...)` (see [`Accumulator::group_concat`]).
    GroupConcat,
    /// `VAR_POP`, `VARIANCE`.
    VarPop,
    VarSamp,
    /// `STDDEV_POP`, `STD`, `STDDEV`.
    StdPop,
    StdSamp,
    /// `ANY_VALUE(x)`, and a selected column that is neither grouped nor aggregated:
    /// the first non-NULL value of the group.
    AnyValue,
    /// `JSON_ARRAYAGG(x)`: the binder passes `JSON_ARRAY(x)`, so a NULL `x` is a
    /// JSON null and no row is skipped.
    JsonArrayAgg,
    /// `JSON_OBJECTAGG(k, v)`: the binder passes `JSON_OBJECT(k, v)` (a NULL key is
    /// error 3158); of rows with one key the last wins.
    JsonObjectAgg,
}

/// The digits MySQL adds to the precision of a SUM (`DECIMAL_LONGLONG_DIGITS`).
const SUM_EXTRA_DIGITS: u8 = 22;
/// The fraction digits AVG adds (`div_precision_increment`'s default).
const AVG_EXTRA_SCALE: u8 = 4;

/// MySQL's result type of `f(arg)`: COUNT is BIGINT; SUM of an integer or
/// DECIMAL(p, s) is DECIMAL(p + 22, s) (INT: DECIMAL(32,0), BIGINT: DECIMAL(41,0));
/// AVG of one is DECIMAL(p + 4, s + 4); SUM/AVG of anything else is DOUBLE; MIN/MAX
/// keep the argument's type; the BIT_ functions are BIGINT UNSIGNED; GROUP_CONCAT is
/// text (a BLOB for a BLOB argument).
pub fn agg_return_type(f: AggFunc, arg: SqlType) -> SqlType {
    match f {
        AggFunc::Count | AggFunc::CountStar => SqlType::BIGINT,
        AggFunc::Min | AggFunc::Max | AggFunc::AnyValue => arg,
        AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => SqlType::Json,
        AggFunc::BitAnd | AggFunc::BitOr | AggFunc::BitXor => SqlType::UInt { bits: 64 },
        AggFunc::VarPop | AggFunc::VarSamp | AggFunc::StdPop | AggFunc::StdSamp => SqlType::Double,
        AggFunc::GroupConcat => match arg {
            SqlType::Blob { .. } | SqlType::Binary { .. } => SqlType::BLOB,
            SqlType::Text { collation, .. } => SqlType::Text {
                len_chars: None,
                collation,
                fixed: false,
            },
            _ => SqlType::TEXT,
        },
        AggFunc::Sum | AggFunc::Avg => {
            let arg = if arg == SqlType::Null {
                SqlType::BIGINT
            } else {
                arg.plain()
            };
            let Some((precision, scale)) = decimal_shape(arg) else {
                return SqlType::Double;
            };
            if f == AggFunc::Sum {
                SqlType::Decimal {
                    precision: precision.saturating_add(SUM_EXTRA_DIGITS).min(65),
                    scale,
                }
            } else {
                SqlType::Decimal {
                    precision: precision.saturating_add(AVG_EXTRA_SCALE).min(65),
                    scale: (scale + AVG_EXTRA_SCALE).min(30),
                }
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum State {
    Count,
    /// An exact sum: `mantissa / 10^scale`.
    Exact {
        mantissa: i128,
        scale: u8,
    },
    Float(f64),
    Extreme(Option<Value>),
    Bits(u64),
    /// GROUP_CONCAT without ORDER BY: the text so far.
    Concat {
        text: Vec<u8>,
        full: bool,
    },
    /// GROUP_CONCAT with ORDER BY: each row's sort keys and text, sorted at the end.
    Ordered(Vec<(Vec<Value>, Vec<u8>)>),
    /// The variances: the mean so far and the sum of squared differences from it
    /// (the count is the accumulator's).
    Moments {
        mean: f64,
        squares: f64,
    },
    /// JSON_ARRAYAGG: the elements' text so far, joined by `, `; `full` once it
    /// passed [`SQL_STRING_RESULT_BYTES_MAX`] (the result is then NULL).
    JsonArray {
        text: String,
        full: bool,
    },
    /// JSON_OBJECTAGG: each key's latest value, as text.
    JsonObject {
        members: BTreeMap<Key, String>,
        bytes: usize,
        full: bool,
    },
}

/// The memory a GROUP_CONCAT row's entry is charged beyond its bytes.
const CONCAT_ENTRY_OVERHEAD_BYTES: usize = 48;

/// The running state of one aggregate over one group.
#[derive(Clone, Debug, PartialEq)]
pub struct Accumulator {
    func: AggFunc,
    collation: Collation,
    /// Values (rows, for COUNT(*)) folded in.
    count: u64,
    state: State,
    separator: Vec<u8>,
    /// GROUP_CONCAT: `group_concat_max_len`.
    max_len: usize,
    /// GROUP_CONCAT ... ORDER BY: per key, descending and its collation.
    order: Vec<(bool, Collation)>,
    /// GROUP_CONCAT: the row (1-based, in the result's order) whose text was cut.
    cut_row: Option<u64>,
    /// GROUP_CONCAT: bytes the state holds (charged to the query's memory budget).
    held_bytes: usize,
}

impl Accumulator {
    /// An empty accumulator for `f` over values of type `arg`; `collation` orders
    /// strings for MIN and MAX.
    pub fn new(f: AggFunc, arg: SqlType, collation: Collation) -> Accumulator {
        let exact = arg == SqlType::Null || decimal_shape(arg.plain()).is_some();
        let state = match f {
            AggFunc::Count | AggFunc::CountStar => State::Count,
            AggFunc::Sum | AggFunc::Avg if exact => State::Exact {
                mantissa: 0,
                scale: 0,
            },
            AggFunc::Sum | AggFunc::Avg => State::Float(0.0),
            AggFunc::Min | AggFunc::Max | AggFunc::AnyValue => State::Extreme(None),
            AggFunc::BitAnd => State::Bits(u64::MAX),
            AggFunc::BitOr | AggFunc::BitXor => State::Bits(0),
            AggFunc::GroupConcat => State::Concat {
                text: Vec::new(),
                full: false,
            },
            AggFunc::VarPop | AggFunc::VarSamp | AggFunc::StdPop | AggFunc::StdSamp => {
                State::Moments {
                    mean: 0.0,
                    squares: 0.0,
                }
            }
            AggFunc::JsonArrayAgg => State::JsonArray {
                text: String::new(),
                full: false,
            },
            AggFunc::JsonObjectAgg => State::JsonObject {
                members: BTreeMap::new(),
                bytes: 0,
                full: false,
            },
        };
        Accumulator {
            func: f,
            collation,
            count: 0,
            state,
            separator: b",".to_vec(),
            max_len: GROUP_CONCAT_MAX_LEN_BYTES,
            order: Vec::new(),
            cut_row: None,
            held_bytes: 0,
        }
    }

    /// A GROUP_CONCAT accumulator with `separator`, cut at `max_len` bytes, ordered by
    /// `order` (per key: descending, collation) if not empty.
    pub fn group_concat(
        separator: &[u8],
        max_len: usize,
        order: Vec<(bool, Collation)>,
    ) -> Accumulator {
        let mut acc = Accumulator::new(AggFunc::GroupConcat, SqlType::TEXT, Collation::Binary);
        acc.separator = separator.to_vec();
        acc.max_len = max_len;
        if !order.is_empty() {
            acc.state = State::Ordered(Vec::new());
        }
        acc.order = order;
        acc
    }

    /// GROUP_CONCAT: folds in one row, the values of its arguments and its ORDER BY
    /// keys; skipped if an argument is NULL.
    pub fn update_concat(&mut self, parts: &[&Value], keys: Vec<Value>) {
        if parts.iter().any(|v| v.is_null()) {
            return;
        }
        let mut value = Vec::new();
        for v in parts {
            value.extend_from_slice(&cast::to_text(v).unwrap_or_default());
        }
        self.count += 1;
        match &mut self.state {
            State::Concat { text, full } => {
                if *full {
                    return;
                }
                let before = text.len();
                if self.count > 1 {
                    append_bounded(text, full, &self.separator, self.max_len);
                }
                append_bounded(text, full, &value, self.max_len);
                if *full {
                    self.cut_row = Some(self.count);
                }
                self.held_bytes += text.len() - before;
            }
            State::Ordered(entries) => {
                self.held_bytes += value.len()
                    + CONCAT_ENTRY_OVERHEAD_BYTES
                    + keys.iter().map(value_bytes).sum::<usize>();
                entries.push((keys, value));
            }
            _ => {}
        }
    }

    /// Bytes the accumulator's state holds beyond its fixed size (GROUP_CONCAT's
    /// text or rows).
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// GROUP_CONCAT's result and the row (1-based) whose text it cut, if any (MySQL's
    /// warning 1260 names it). After a parallel merge without ORDER BY the row is
    /// approximate.
    fn concat_result(&self) -> (Value, Option<u64>) {
        if self.count == 0 {
            return (Value::Null, None);
        }
        match &self.state {
            State::Ordered(entries) => {
                let (text, cut) = self.sorted_concat(entries);
                (Value::Bytes(text), cut)
            }
            State::Concat { text, .. } => (Value::Bytes(text.clone()), self.cut_row),
            _ => (Value::Null, None),
        }
    }

    /// GROUP_CONCAT with ORDER BY: the entries sorted and joined, and the cut row.
    fn sorted_concat(&self, entries: &[(Vec<Value>, Vec<u8>)]) -> (Vec<u8>, Option<u64>) {
        let mut sorted: Vec<&(Vec<Value>, Vec<u8>)> = entries.iter().collect();
        sorted.sort_by(|(a, _), (b, _)| {
            for ((x, y), (descending, collation)) in a.iter().zip(b).zip(&self.order) {
                let ordering = sort_cmp(x, y, *collation);
                if ordering != Ordering::Equal {
                    return if *descending {
                        ordering.reverse()
                    } else {
                        ordering
                    };
                }
            }
            Ordering::Equal
        });
        let mut text = Vec::new();
        let mut full = false;
        for (row, (_, value)) in sorted.iter().enumerate() {
            if row > 0 {
                append_bounded(&mut text, &mut full, &self.separator, self.max_len);
            }
            append_bounded(&mut text, &mut full, value, self.max_len);
            if full {
                return (text, Some(row as u64 + 1));
            }
        }
        (text, None)
    }

    pub fn func(&self) -> AggFunc {
        self.func
    }

    /// Folds in one value; NULLs are skipped except by COUNT(*). Errors: an exact sum
    /// beyond 38 digits (1690).
    pub fn update(&mut self, v: &Value) -> Result<()> {
        if self.func == AggFunc::CountStar {
            self.count += 1;
            return Ok(());
        }
        if self.func == AggFunc::GroupConcat {
            self.update_concat(&[v], Vec::new());
            return Ok(());
        }
        if v.is_null() {
            return Ok(());
        }
        self.count += 1;
        let func = self.func;
        let collation = self.collation;
        match &mut self.state {
            State::Count => {}
            State::Exact { mantissa, scale } => {
                let d = cast::to_decimal(v).unwrap_or(Decimal::ZERO);
                add_exact(mantissa, scale, &d)?;
            }
            State::Float(sum) => *sum += cast::to_f64(v).unwrap_or(0.0),
            State::Extreme(best) => {
                let replace = match best {
                    None => true,
                    Some(b) => {
                        let ordering = sort_cmp(v, b, collation);
                        (func == AggFunc::Max && ordering == Ordering::Greater)
                            || (func == AggFunc::Min && ordering == Ordering::Less)
                    }
                };
                if replace {
                    *best = Some(v.clone());
                }
            }
            State::Bits(bits) => {
                let x = to_bits(v);
                match func {
                    AggFunc::BitAnd => *bits &= x,
                    AggFunc::BitOr => *bits |= x,
                    _ => *bits ^= x,
                }
            }
            State::Moments { mean, squares } => {
                let x = cast::to_f64(v).unwrap_or(0.0);
                if self.count == 1 {
                    *mean = x;
                    *squares = 0.0;
                } else {
                    let before = *mean;
                    *mean = before + (x - before) / self.count as f64;
                    *squares += (x - before) * (x - *mean);
                }
            }
            State::Concat { .. } | State::Ordered(_) => {}
            State::JsonArray { text, full } => {
                // `[x]`, JSON_ARRAY's text of the row's value.
                let element = cast::to_text(v).unwrap_or_default();
                let inner = element
                    .get(1..element.len().saturating_sub(1))
                    .unwrap_or_default();
                let before = text.len();
                append_json(text, full, inner);
                self.held_bytes += text.len() - before;
            }
            State::JsonObject {
                members,
                bytes,
                full,
            } => {
                // `{"k": v}`, JSON_OBJECT's text of the row's key and value.
                let text = cast::to_text(v).unwrap_or_default();
                let member = match json::parse(&text) {
                    Ok(Json::Object(m)) => m.into_iter().next(),
                    _ => None,
                };
                if let Some((key, value)) = member {
                    let value = value.to_text()?;
                    let added = key.0.len() + value.len() + JSON_MEMBER_OVERHEAD_BYTES;
                    if *full || *bytes + added > SQL_STRING_RESULT_BYTES_MAX {
                        *full = true;
                    } else {
                        *bytes += added;
                        self.held_bytes += added;
                        members.insert(key, value);
                    }
                }
            }
        }
        Ok(())
    }

    /// Takes back a value [`Accumulator::update`] folded in before: a row leaving a
    /// window's frame (`crate::window`). COUNT, SUM, AVG and BIT_XOR can (an exact sum
    /// is subtracted exactly; a DOUBLE sum is subtracted, as MySQL's windows do, so its
    /// last digits may differ from a sum folded afresh); the others cannot, and return
    /// false with the state unchanged (the caller folds the frame again).
    pub fn remove(&mut self, v: &Value) -> Result<bool> {
        if self.func == AggFunc::CountStar {
            self.count = self.count.saturating_sub(1);
            return Ok(true);
        }
        let invertible = matches!(
            self.state,
            State::Count | State::Exact { .. } | State::Float(_)
        ) || self.func == AggFunc::BitXor;
        if !invertible {
            return Ok(false);
        }
        if v.is_null() {
            return Ok(true);
        }
        self.count = self.count.saturating_sub(1);
        match &mut self.state {
            State::Exact { mantissa, scale } => {
                let d = cast::to_decimal(v).unwrap_or(Decimal::ZERO);
                fold_exact(mantissa, scale, &d, true)?;
            }
            // Back to exactly zero when the frame is empty, so no rounding residue
            // outlives the values that made it.
            State::Float(sum) if self.count == 0 => *sum = 0.0,
            State::Float(sum) => *sum -= cast::to_f64(v).unwrap_or(0.0),
            State::Bits(bits) => *bits ^= to_bits(v),
            _ => {}
        }
        Ok(true)
    }

    /// Folds in a partial aggregate of the same function (parallel aggregation).
    pub fn merge(&mut self, other: &Accumulator) -> Result<()> {
        let func = self.func;
        let collation = self.collation;
        let had_values = self.count > 0;
        match (&mut self.state, &other.state) {
            (State::Count, State::Count) => {}
            (
                State::Exact { mantissa, scale },
                State::Exact {
                    mantissa: m,
                    scale: s,
                },
            ) => {
                let d = decimal::make(*m, *s, || format!("sum({m})"))?;
                add_exact(mantissa, scale, &d)?;
            }
            (State::Float(sum), State::Float(x)) => *sum += x,
            (State::Extreme(best), State::Extreme(Some(x))) => {
                let replace = match best {
                    None => true,
                    Some(b) => {
                        let ordering = sort_cmp(x, b, collation);
                        (func == AggFunc::Max && ordering == Ordering::Greater)
                            || (func == AggFunc::Min && ordering == Ordering::Less)
                    }
                };
                if replace {
                    *best = Some(x.clone());
                }
            }
            (State::Extreme(_), State::Extreme(None)) => {}
            (State::Bits(bits), State::Bits(x)) => match func {
                AggFunc::BitAnd => *bits &= x,
                AggFunc::BitOr => *bits |= x,
                _ => *bits ^= x,
            },
            (
                State::Concat { text, full },
                State::Concat {
                    text: other_text, ..
                },
            ) => {
                if other.count > 0 && !*full {
                    let before = text.len();
                    if had_values {
                        append_bounded(text, full, &self.separator, self.max_len);
                    }
                    append_bounded(text, full, other_text, self.max_len);
                    if *full {
                        self.cut_row = Some(self.count + other.cut_row.unwrap_or(other.count));
                    }
                    self.held_bytes += text.len() - before;
                }
            }
            (State::Ordered(entries), State::Ordered(more)) => {
                entries.extend(more.iter().cloned());
                self.held_bytes += other.held_bytes;
            }
            (
                State::JsonArray { text, full },
                State::JsonArray {
                    text: more,
                    full: other_full,
                },
            ) => {
                let before = text.len();
                *full |= *other_full;
                append_json(text, full, more.as_bytes());
                self.held_bytes += text.len() - before;
            }
            (
                State::JsonObject {
                    members,
                    bytes,
                    full,
                },
                State::JsonObject {
                    members: more,
                    bytes: more_bytes,
                    full: other_full,
                },
            ) => {
                *full |= *other_full || *bytes + more_bytes > SQL_STRING_RESULT_BYTES_MAX;
                if !*full {
                    *bytes += more_bytes;
                    self.held_bytes += more_bytes;
                    members.extend(more.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
            (
                State::Moments { mean, squares },
                State::Moments {
                    mean: other_mean,
                    squares: other_squares,
                },
            ) => {
                if other.count > 0 {
                    let (n_a, n_b) = (self.count as f64, other.count as f64);
                    let n = n_a + n_b;
                    let delta = other_mean - *mean;
                    *mean += delta * n_b / n;
                    *squares += other_squares + delta * delta * n_a * n_b / n;
                }
            }
            _ => {
                return Err(tarn_common::Error::sql(
                    1105,
                    "HY000",
                    format!("cannot merge {:?} into {:?}", other.func, self.func),
                ));
            }
        }
        self.count += other.count;
        Ok(())
    }

    /// The aggregate's value (see the module documentation for empty groups).
    pub fn finish(&self) -> Result<Value> {
        if matches!(self.func, AggFunc::Count | AggFunc::CountStar) {
            return Ok(Value::Int(i64::try_from(self.count).unwrap_or(i64::MAX)));
        }
        if let State::Bits(bits) = self.state {
            return Ok(Value::UInt(bits));
        }
        if self.count == 0 {
            return Ok(Value::Null);
        }
        Ok(match &self.state {
            State::Exact { mantissa, scale } => {
                let sum = decimal::make(*mantissa, *scale, || format!("sum({mantissa})"))?;
                if self.func == AggFunc::Avg {
                    let count = Decimal::from(self.count);
                    match decimal::div(&sum, &count, AVG_EXTRA_SCALE)? {
                        Some(avg) => Value::Decimal(avg),
                        None => Value::Null,
                    }
                } else {
                    Value::Decimal(sum)
                }
            }
            State::Float(sum) if self.func == AggFunc::Avg => {
                Value::Double(sum / self.count as f64)
            }
            State::Float(sum) => Value::Double(*sum),
            State::Extreme(best) => best.clone().unwrap_or(Value::Null),
            State::Concat { .. } | State::Ordered(_) => self.concat_result().0,
            // Past the bound MySQL answers NULL (with a warning).
            State::JsonArray { full: true, .. } | State::JsonObject { full: true, .. } => {
                Value::Null
            }
            State::JsonArray { text, .. } => Value::Bytes(format!("[{text}]").into_bytes()),
            State::JsonObject { members, .. } => {
                let mut out = String::from("{");
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    json::quote(&k.0, &mut out);
                    out.push_str(": ");
                    out.push_str(v);
                }
                out.push('}');
                Value::Bytes(out.into_bytes())
            }
            State::Moments { squares, .. } => {
                let sample = matches!(self.func, AggFunc::VarSamp | AggFunc::StdSamp);
                if sample && self.count < 2 {
                    return Ok(Value::Null);
                }
                let variance = squares / (self.count - u64::from(sample)) as f64;
                Value::Double(match self.func {
                    AggFunc::StdPop | AggFunc::StdSamp => variance.sqrt(),
                    _ => variance,
                })
            }
            State::Count | State::Bits(_) => Value::Null,
        })
    }
}

thread_local! {
    /// The rows GROUP_CONCAT cut since the last [`take_concat_cuts`] (on the thread
    /// that finishes the aggregates: the session's).
    static CONCAT_CUTS: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Returns the rows GROUP_CONCAT cut (for warning 1260 "Row N was cut by
/// GROUP_CONCAT()") and forgets them.
pub fn take_concat_cuts() -> Vec<u64> {
    CONCAT_CUTS.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

/// Finishes one group's accumulators onto `row`. `rows_before` holds, per aggregate,
/// the GROUP_CONCAT rows of the groups finished before: MySQL numbers a cut row
/// across the statement's groups, counting a cut group's rows up to the cut one.
pub fn finish_group(
    accumulators: &[Accumulator],
    rows_before: &mut [u64],
    row: &mut Vec<Value>,
) -> Result<()> {
    for (a, acc) in accumulators.iter().enumerate() {
        if acc.func != AggFunc::GroupConcat {
            row.push(acc.finish()?);
            continue;
        }
        let (value, cut) = acc.concat_result();
        match cut {
            Some(k) => {
                rows_before[a] += k;
                let n = rows_before[a];
                CONCAT_CUTS.with(|c| {
                    let mut cuts = c.borrow_mut();
                    if cuts.len() < crate::limits::WARNINGS_MAX {
                        cuts.push(n);
                    }
                });
            }
            None => rows_before[a] += acc.count,
        }
        row.push(value);
    }
    Ok(())
}

/// Adds `d` to the exact sum `mantissa / 10^scale`, widening the scale as needed.
fn add_exact(mantissa: &mut i128, scale: &mut u8, d: &Decimal) -> Result<()> {
    fold_exact(mantissa, scale, d, false)
}

/// Adds `d` to (or, `subtract`, takes it from) the exact sum `mantissa / 10^scale`.
fn fold_exact(mantissa: &mut i128, scale: &mut u8, d: &Decimal, subtract: bool) -> Result<()> {
    let (m, s) = decimal::parts(d)?;
    let m = if subtract { -m } else { m };
    let overflow = || out_of_range("DECIMAL", &format!("sum(... + {d})"));
    if s > *scale {
        let factor = pow10(u32::from(s - *scale)).ok_or_else(overflow)?;
        *mantissa = mantissa.checked_mul(factor).ok_or_else(overflow)?;
        *scale = s;
    }
    let factor = pow10(u32::from(*scale - s)).ok_or_else(overflow)?;
    let aligned = m.checked_mul(factor).ok_or_else(overflow)?;
    *mantissa = mantissa.checked_add(aligned).ok_or_else(overflow)?;
    Ok(())
}

/// The memory a JSON_OBJECTAGG member is charged beyond its key and value.
const JSON_MEMBER_OVERHEAD_BYTES: usize = 48;

/// Appends JSON_ARRAYAGG elements' text (`, ` between them) unless that takes the
/// text past [`SQL_STRING_RESULT_BYTES_MAX`], which makes it `full`.
fn append_json(text: &mut String, full: &mut bool, elements: &[u8]) {
    if *full || elements.is_empty() {
        return;
    }
    if text.len() + elements.len() + 2 > SQL_STRING_RESULT_BYTES_MAX {
        *full = true;
        text.clear();
        return;
    }
    if !text.is_empty() {
        text.push_str(", ");
    }
    text.push_str(&String::from_utf8_lossy(elements));
}

/// An estimate of the memory a value holds.
fn value_bytes(v: &Value) -> usize {
    match v {
        Value::Bytes(b) => 32 + b.len(),
        _ => 32,
    }
}

/// Appends `bytes` unless the text is full; cuts at `max_len` on a character boundary.
fn append_bounded(text: &mut Vec<u8>, full: &mut bool, bytes: &[u8], max_len: usize) {
    if *full {
        return;
    }
    let room = max_len.saturating_sub(text.len());
    if bytes.len() <= room {
        text.extend_from_slice(bytes);
        return;
    }
    // The longest prefix of whole characters that fits.
    let mut cut = 0;
    let mut chars = 1;
    loop {
        let next = char_boundary_after(bytes, chars);
        if next > room || next == cut {
            break;
        }
        cut = next;
        chars += 1;
    }
    text.extend_from_slice(&bytes[..cut]);
    *full = true;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tarn_common::rng::{Rng, test_seed};

    const CI: Collation = Collation::CaseInsensitive;

    fn dec(text: &str) -> Value {
        Value::Decimal(Decimal::parse(text).unwrap())
    }

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn run(f: AggFunc, arg: SqlType, values: &[Value]) -> Value {
        let mut acc = Accumulator::new(f, arg, CI);
        for v in values {
            acc.update(v).unwrap();
        }
        acc.finish().unwrap()
    }

    fn text(v: Value) -> String {
        String::from_utf8(cast::to_text(&v).unwrap_or(b"NULL".to_vec())).unwrap()
    }

    const INT: SqlType = SqlType::Int { bits: 32 };

    #[test]
    fn mysql_answers() {
        let ints = [Value::Int(1), Value::Null, Value::Int(2), Value::Int(4)];
        assert_eq!(run(AggFunc::Count, INT, &ints), Value::Int(3));
        assert_eq!(run(AggFunc::CountStar, INT, &ints), Value::Int(4));
        assert_eq!(text(run(AggFunc::Sum, INT, &ints)), "7");
        assert_eq!(text(run(AggFunc::Avg, INT, &ints)), "2.3333");
        assert_eq!(run(AggFunc::Min, INT, &ints), Value::Int(1));
        assert_eq!(run(AggFunc::Max, INT, &ints), Value::Int(4));
        assert_eq!(run(AggFunc::BitOr, INT, &ints), Value::UInt(7));
        assert_eq!(run(AggFunc::BitAnd, INT, &ints), Value::UInt(0));
        assert_eq!(run(AggFunc::BitXor, INT, &ints), Value::UInt(7));
        assert_eq!(run(AggFunc::Sum, INT, &[]), Value::Null);
        assert_eq!(run(AggFunc::Avg, INT, &[Value::Null]), Value::Null);
        assert_eq!(run(AggFunc::Count, INT, &[]), Value::Int(0));
        assert_eq!(run(AggFunc::Max, INT, &[]), Value::Null);
        assert_eq!(run(AggFunc::BitAnd, INT, &[]), Value::UInt(u64::MAX));
        let d = SqlType::Decimal {
            precision: 5,
            scale: 2,
        };
        assert_eq!(
            text(run(AggFunc::Sum, d, &[dec("1.25"), dec("2.50")])),
            "3.75"
        );
        assert_eq!(
            text(run(AggFunc::Avg, d, &[dec("1.25"), dec("2.50")])),
            "1.875000"
        );
        assert_eq!(
            run(
                AggFunc::Sum,
                SqlType::Double,
                &[Value::Double(0.5), Value::Double(1.0)]
            ),
            Value::Double(1.5)
        );
        assert_eq!(
            run(
                AggFunc::Avg,
                SqlType::Double,
                &[Value::Double(1.0), Value::Double(2.0)]
            ),
            Value::Double(1.5)
        );
        assert_eq!(
            run(AggFunc::Max, SqlType::TEXT, &[s("a"), s("B"), s("b")]),
            s("B")
        );
        assert_eq!(
            run(AggFunc::Min, SqlType::TEXT, &[s("b"), s("A"), s("a")]),
            s("A")
        );
        assert_eq!(
            text(run(
                AggFunc::GroupConcat,
                SqlType::TEXT,
                &[s("a"), Value::Null, s("b")]
            )),
            "a,b"
        );
        let mut big = Accumulator::new(AggFunc::Sum, SqlType::BIGINT, CI);
        for _ in 0..4 {
            big.update(&Value::Int(i64::MAX)).unwrap();
        }
        assert_eq!(text(big.finish().unwrap()), "36893488147419103228");
        let max = Value::Decimal(Decimal::from_i128(i128::MAX / 2 + 1, 0).unwrap());
        let mut over = Accumulator::new(AggFunc::Sum, d, CI);
        over.update(&max).unwrap();
        assert_eq!(over.update(&max).unwrap_err().mysql_code(), 1690);
    }

    #[test]
    fn return_types() {
        assert_eq!(
            agg_return_type(AggFunc::Sum, INT),
            SqlType::Decimal {
                precision: 32,
                scale: 0
            }
        );
        assert_eq!(
            agg_return_type(AggFunc::Sum, SqlType::BIGINT),
            SqlType::Decimal {
                precision: 41,
                scale: 0
            }
        );
        assert_eq!(
            agg_return_type(AggFunc::Avg, INT),
            SqlType::Decimal {
                precision: 14,
                scale: 4
            }
        );
        assert_eq!(
            agg_return_type(AggFunc::Sum, SqlType::Double),
            SqlType::Double
        );
        assert_eq!(
            agg_return_type(AggFunc::Avg, SqlType::TEXT),
            SqlType::Double
        );
        assert_eq!(
            agg_return_type(AggFunc::Count, SqlType::TEXT),
            SqlType::BIGINT
        );
        assert_eq!(agg_return_type(AggFunc::Max, SqlType::Date), SqlType::Date);
    }

    #[test]
    fn group_concat_is_bounded_on_a_character_boundary() {
        let mut acc = Accumulator::group_concat(b"-", GROUP_CONCAT_MAX_LEN_BYTES, Vec::new());
        for _ in 0..1000 {
            acc.update(&s("é")).unwrap();
        }
        let Value::Bytes(out) = acc.finish().unwrap() else {
            panic!("not text");
        };
        assert!(out.len() <= GROUP_CONCAT_MAX_LEN_BYTES);
        assert!(std::str::from_utf8(&out).is_ok());
    }

    /// GROUP_CONCAT ... ORDER BY: partials merged in any order give the single pass's
    /// sorted, cut result.
    #[test]
    fn ordered_group_concat_merges_and_cuts() {
        let order = vec![(true, CI)];
        let values: Vec<i64> = (0..50).map(|i| (i * 37) % 50).collect();
        let feed = |acc: &mut Accumulator, xs: &[i64]| {
            for x in xs {
                acc.update_concat(&[&Value::Int(*x), &s("!")], vec![Value::Int(*x)]);
            }
        };
        let mut whole = Accumulator::group_concat(b"/", 20, order.clone());
        feed(&mut whole, &values);
        let mut merged = Accumulator::group_concat(b"/", 20, order.clone());
        for chunk in values.chunks(7).rev() {
            let mut partial = Accumulator::group_concat(b"/", 20, order.clone());
            feed(&mut partial, chunk);
            merged.merge(&partial).unwrap();
        }
        assert_eq!(text(whole.finish().unwrap()), "49!/48!/47!/46!/45!/");
        assert_eq!(merged.finish().unwrap(), whole.finish().unwrap());
        let mut row = Vec::new();
        let mut before = vec![10];
        finish_group(&[merged], &mut before, &mut row).unwrap();
        assert_eq!(take_concat_cuts(), vec![16]);
        // A row with a NULL argument is skipped.
        let mut acc = Accumulator::group_concat(b",", 1024, Vec::new());
        acc.update_concat(&[&Value::Int(1), &Value::Null], Vec::new());
        assert_eq!(acc.finish().unwrap(), Value::Null);
    }

    /// A window sliding over values: folding in the entering values and taking back
    /// the leaving ones gives what folding the window afresh gives (exactly, for the
    /// exact sums and counts); the functions that cannot take values back say so.
    #[test]
    fn remove_agrees_with_a_fresh_fold() {
        let mut rng = Rng::new(test_seed("remove_agrees_with_a_fresh_fold"));
        let ty = SqlType::Decimal {
            precision: 10,
            scale: 2,
        };
        for _ in 0..200 {
            let values: Vec<Value> = (0..rng.below(40))
                .map(|_| {
                    if rng.percent(20) {
                        Value::Null
                    } else {
                        let m = rng.below(100_000) as i128 - 50_000;
                        Value::Decimal(Decimal::from_i128(m, 2).unwrap())
                    }
                })
                .collect();
            let width = 1 + rng.below(6) as usize;
            for f in [
                AggFunc::Count,
                AggFunc::CountStar,
                AggFunc::Sum,
                AggFunc::Avg,
                AggFunc::BitXor,
            ] {
                let mut sliding = Accumulator::new(f, ty, CI);
                for (i, v) in values.iter().enumerate() {
                    sliding.update(v).unwrap();
                    if i >= width {
                        assert!(sliding.remove(&values[i - width]).unwrap());
                    }
                    let window = &values[(i + 1).saturating_sub(width)..=i];
                    assert_eq!(
                        sliding.finish().unwrap(),
                        run(f, ty, window),
                        "{f:?} over {window:?}"
                    );
                }
            }
        }
        for f in [AggFunc::Min, AggFunc::Max, AggFunc::BitAnd, AggFunc::BitOr] {
            let mut acc = Accumulator::new(f, INT, CI);
            acc.update(&Value::Int(3)).unwrap();
            assert!(!acc.remove(&Value::Int(3)).unwrap());
            assert_eq!(acc.finish().unwrap(), run(f, INT, &[Value::Int(3)]));
        }
        // A DOUBLE sum returns to exactly zero once its window is empty.
        let mut acc = Accumulator::new(AggFunc::Sum, SqlType::Double, CI);
        for x in [0.1, 0.2, 0.3] {
            acc.update(&Value::Double(x)).unwrap();
        }
        for x in [0.1, 0.2, 0.3] {
            acc.remove(&Value::Double(x)).unwrap();
        }
        assert_eq!(acc.finish().unwrap(), Value::Null);
        acc.update(&Value::Double(0.5)).unwrap();
        assert_eq!(acc.finish().unwrap(), Value::Double(0.5));
    }

    /// The variances: MySQL's answers, and merged partial states agree with one pass
    /// (to rounding: the merge formula adds in another order).
    #[test]
    fn variances_merge() {
        let xs: Vec<Value> = [2, 4, 4, 4, 5, 5, 7, 9].map(Value::Int).to_vec();
        assert_eq!(run(AggFunc::StdPop, INT, &xs), Value::Double(2.0));
        assert_eq!(run(AggFunc::VarPop, INT, &xs), Value::Double(4.0));
        assert_eq!(run(AggFunc::VarSamp, INT, &[Value::Int(3)]), Value::Null);
        assert_eq!(
            run(AggFunc::StdPop, INT, &[Value::Int(3)]),
            Value::Double(0.0)
        );
        assert_eq!(run(AggFunc::VarPop, INT, &[Value::Null]), Value::Null);
        assert_eq!(agg_return_type(AggFunc::StdSamp, INT), SqlType::Double);
        let mut rng = Rng::new(test_seed("variances_merge"));
        let funcs = [
            AggFunc::VarPop,
            AggFunc::VarSamp,
            AggFunc::StdPop,
            AggFunc::StdSamp,
        ];
        for _ in 0..300 {
            let f = funcs[rng.below(4) as usize];
            let values: Vec<Value> = (0..rng.below(40))
                .map(|_| {
                    if rng.percent(10) {
                        Value::Null
                    } else {
                        Value::Double(rng.unit_f64() * 1e6 - 5e5)
                    }
                })
                .collect();
            let whole = run(f, SqlType::Double, &values);
            let mut merged = Accumulator::new(f, SqlType::Double, CI);
            for chunk in values.chunks(1 + rng.below(8) as usize) {
                let mut partial = Accumulator::new(f, SqlType::Double, CI);
                for v in chunk {
                    partial.update(v).unwrap();
                }
                merged.merge(&partial).unwrap();
            }
            match (merged.finish().unwrap(), &whole) {
                (Value::Double(a), Value::Double(b)) => {
                    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{f:?}: {a} {b}")
                }
                (a, b) => assert_eq!(&a, b, "{f:?} over {values:?}"),
            }
        }
    }

    /// Splitting the input among partial accumulators and merging gives the same
    /// result as one accumulator.
    #[test]
    fn merge_agrees_with_a_single_pass() {
        let mut rng = Rng::new(test_seed("merge_agrees_with_a_single_pass"));
        let funcs = [
            AggFunc::Count,
            AggFunc::CountStar,
            AggFunc::Sum,
            AggFunc::Avg,
            AggFunc::Min,
            AggFunc::Max,
            AggFunc::BitAnd,
            AggFunc::BitOr,
            AggFunc::BitXor,
            AggFunc::GroupConcat,
        ];
        for _ in 0..500 {
            let f = funcs[rng.below(funcs.len() as u64) as usize];
            let ty = SqlType::Decimal {
                precision: 10,
                scale: 2,
            };
            let values: Vec<Value> = (0..rng.below(20))
                .map(|_| {
                    if rng.percent(20) {
                        Value::Null
                    } else {
                        let m = rng.below(100_000) as i128 - 50_000;
                        Value::Decimal(Decimal::from_i128(m, 2).unwrap())
                    }
                })
                .collect();
            let whole = run(f, ty, &values);
            let parts = 1 + rng.below(4) as usize;
            let mut merged = Accumulator::new(f, ty, CI);
            for chunk in values.chunks(values.len().div_ceil(parts).max(1)) {
                let mut partial = Accumulator::new(f, ty, CI);
                for v in chunk {
                    partial.update(v).unwrap();
                }
                merged.merge(&partial).unwrap();
            }
            assert_eq!(merged.finish().unwrap(), whole, "{f:?} over {values:?}");
        }
    }
}
