//! Test tools shared by the integration tests: an in-memory overflow store and random
//! values of every column type.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use tarn_common::rng::Rng;
use tarn_common::{Error, Result};
use tarn_row::datetime::{DAYS_MAX, MICROS_MAX, TIME_MAX_MICROS};
use tarn_row::{
    Collation, Column, ColumnType, Date, DateTime, Decimal, Members, OverflowRef, OverflowStore,
    Time, Value, check_value,
};

/// Overflow values kept in a map, keyed by a made-up first page number. Can be told to
/// fail writes after a number of successes, and counts reads.
#[derive(Default)]
pub struct MemOverflowStore {
    values: Mutex<HashMap<u32, Vec<u8>>>,
    next_page_no: AtomicUsize,
    writes_before_failure: Mutex<Option<usize>>,
    pub reads: AtomicUsize,
    pub fail_reads: std::sync::atomic::AtomicBool,
}

impl MemOverflowStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Values currently stored (written and not freed).
    pub fn live_count(&self) -> usize {
        self.values.lock().unwrap().len()
    }

    /// The next `successes` writes succeed, later ones fail.
    pub fn fail_writes_after(&self, successes: usize) {
        *self.writes_before_failure.lock().unwrap() = Some(successes);
    }
}

impl OverflowStore for MemOverflowStore {
    fn write(&self, bytes: &[u8]) -> Result<OverflowRef> {
        if let Some(left) = self.writes_before_failure.lock().unwrap().as_mut() {
            if *left == 0 {
                return Err(Error::OutOfResources(
                    "injected overflow write failure".into(),
                ));
            }
            *left -= 1;
        }
        let page = self.next_page_no.fetch_add(1, Ordering::Relaxed) as u32 + 1;
        self.values.lock().unwrap().insert(page, bytes.to_vec());
        Ok(OverflowRef {
            first_page_no: page,
            len_bytes: bytes.len() as u64,
        })
    }

    fn read(&self, r: &OverflowRef, out: &mut Vec<u8>) -> Result<()> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        if self.fail_reads.load(Ordering::Relaxed) {
            return Err(Error::OutOfResources(
                "injected overflow read failure".into(),
            ));
        }
        let values = self.values.lock().unwrap();
        let value = values.get(&r.first_page_no).ok_or_else(|| {
            Error::OutOfResources(format!("no overflow value at {}", r.first_page_no))
        })?;
        out.extend_from_slice(value);
        Ok(())
    }

    fn free(&self, r: &OverflowRef) -> Result<()> {
        self.values
            .lock()
            .unwrap()
            .remove(&r.first_page_no)
            .map(|_| ())
            .ok_or_else(|| Error::OutOfResources(format!("double free of {}", r.first_page_no)))
    }
}

/// Every column type, with a spread of parameters.
pub fn all_types() -> Vec<ColumnType> {
    let mut types = Vec::new();
    for unsigned in [false, true] {
        types.push(ColumnType::TinyInt { unsigned });
        types.push(ColumnType::SmallInt { unsigned });
        types.push(ColumnType::Int { unsigned });
        types.push(ColumnType::BigInt { unsigned });
    }
    for (precision, scale) in [
        (1, 0),
        (5, 2),
        (10, 10),
        (18, 4),
        (30, 9),
        (65, 0),
        (65, 30),
    ] {
        types.push(ColumnType::Decimal { precision, scale });
    }
    types.extend([ColumnType::Float, ColumnType::Double, ColumnType::Date]);
    for fsp in 0..=6 {
        types.push(ColumnType::DateTime { fsp });
    }
    types.push(ColumnType::Timestamp { fsp: 3 });
    for fsp in [0, 3, 6] {
        types.push(ColumnType::Time { fsp });
    }
    types.push(ColumnType::Year);
    // Before the strings: tests rely on the last type being a long string (JSON).
    let names: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    let members = |n: usize| Members::intern(&names[..n]).unwrap();
    types.extend([
        ColumnType::Enum {
            members: Members::intern(&["b", "a", "", "Zz"]).unwrap(),
        },
        ColumnType::Enum {
            members: members(300),
        },
        ColumnType::Set {
            members: Members::intern(&["x", "Y", "é"]).unwrap(),
        },
        ColumnType::Set {
            members: members(40),
        },
        ColumnType::Set {
            members: members(64),
        },
        ColumnType::Bit { len_bits: 1 },
        ColumnType::Bit { len_bits: 10 },
        ColumnType::Bit { len_bits: 64 },
    ]);
    types.extend([
        ColumnType::Char { len: 5 },
        ColumnType::Char { len: 255 },
        ColumnType::VarChar { len: 10 },
        ColumnType::VarChar { len: 300 },
        ColumnType::Text,
        ColumnType::Blob,
        ColumnType::Binary { len_bytes: 1 },
        ColumnType::Binary { len_bytes: 16 },
        ColumnType::VarBinary { len_bytes: 8 },
        ColumnType::VarBinary { len_bytes: 300 },
        ColumnType::TinyText,
        ColumnType::MediumText,
        ColumnType::LongText,
        ColumnType::TinyBlob,
        ColumnType::MediumBlob,
        ColumnType::LongBlob,
        ColumnType::Json,
    ]);
    types
}

/// Characters random strings draw from: case pairs, spaces, NUL, multi-byte letters.
const ALPHABET: &[char] = &[
    'a', 'A', 'b', 'B', 'z', ' ', '\0', '\t', 'ß', 'é', 'É', 'ÿ', 'Ÿ', '中', '😀', '~',
];

fn random_digits(rng: &mut Rng, count: usize) -> String {
    (0..count)
        .map(|_| char::from(b'0' + rng.below(10) as u8))
        .collect()
}

/// A random value of `ty` in the normal form `check_value` produces (never NULL).
/// Values are drawn from small pools often enough that equal pairs are common.
pub fn random_value(rng: &mut Rng, ty: ColumnType, collation: Collation) -> Value {
    let column = Column::new("c", ty, false).with_collation(collation);
    loop {
        let raw = random_raw(rng, ty);
        if let Ok(value) = check_value(&column, raw) {
            return value;
        }
    }
}

fn random_raw(rng: &mut Rng, ty: ColumnType) -> Value {
    match ty {
        ColumnType::TinyInt { .. }
        | ColumnType::SmallInt { .. }
        | ColumnType::Int { .. }
        | ColumnType::BigInt { .. } => {
            let (min, max) = ty.int_range().unwrap();
            let v = match rng.below(4) {
                0 => [min, max, 0, 1, -1]
                    .get(rng.below(5) as usize)
                    .copied()
                    .unwrap(),
                1 => rng.below(7) as i128 - 3,
                _ => {
                    let span = (max - min) as u128 + 1;
                    let r = (u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())) % span;
                    min + r as i128
                }
            };
            if ty.is_unsigned_int() {
                Value::UInt(v.clamp(0, max) as u64)
            } else {
                Value::Int(v.clamp(min, max) as i64)
            }
        }
        ColumnType::Decimal { precision, scale } => {
            let int_digits = usize::from(precision - scale);
            let text = match rng.below(4) {
                0 => ["0", "1", "-1", "0.5", "-0.5"][rng.below(5) as usize].to_string(),
                _ => {
                    let sign = if rng.percent(50) { "-" } else { "" };
                    let int_count = rng.below(int_digits as u64 + 1) as usize;
                    let ints = random_digits(rng, int_count);
                    let fraction_count = rng.below(u64::from(scale) + 1) as usize;
                    let fraction = random_digits(rng, fraction_count);
                    format!("{sign}0{ints}.{fraction}0")
                }
            };
            Value::Decimal(Decimal::parse(&text).unwrap())
        }
        ColumnType::Float | ColumnType::Double => {
            let v = match rng.below(4) {
                0 => [
                    0.0,
                    -0.0,
                    1.0,
                    -1.0,
                    0.5,
                    f64::from(f32::MAX),
                    f64::MIN_POSITIVE,
                ][rng.below(7) as usize],
                1 => rng.below(10) as f64 - 5.0,
                _ => {
                    let bits = rng.next_u64();
                    let v = f64::from_bits(bits);
                    if ty == ColumnType::Float {
                        f64::from(v as f32)
                    } else {
                        v
                    }
                }
            };
            if ty == ColumnType::Float {
                Value::Float(v as f32)
            } else {
                Value::Double(v)
            }
        }
        ColumnType::Date => {
            let days = if rng.percent(30) {
                738_000 + rng.below(5) as u32
            } else {
                rng.below(u64::from(DAYS_MAX) + 1) as u32
            };
            Value::Date(Date::from_days(days).unwrap())
        }
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            let micros = match rng.below(4) {
                0 => 63_800_000_000_000_000 + rng.below(3) * 500_000,
                1 => 62_167_219_200_000_000 + rng.below(2_200_000_000_000_000),
                _ => rng.below(MICROS_MAX + 1),
            };
            Value::DateTime(DateTime::from_micros(micros).unwrap())
        }
        // Around zero (where the sign flips) and over the whole range.
        ColumnType::Time { .. } => {
            let micros = match rng.below(3) {
                0 => rng.below(5_000_001) as i64 - 2_500_000,
                _ => rng.below(2 * TIME_MAX_MICROS as u64 + 1) as i64 - TIME_MAX_MICROS,
            };
            Value::Time(Time::from_micros(micros).unwrap())
        }
        ColumnType::Year => match rng.below(8) {
            0 => Value::UInt(0),
            _ => Value::UInt(1901 + rng.below(255)),
        },
        ColumnType::Char { len } | ColumnType::VarChar { len } => {
            let chars = rng.below(u64::from(len.min(40)) + 1) as usize;
            Value::Bytes(random_text(rng, chars).into_bytes())
        }
        ColumnType::Text | ColumnType::TinyText | ColumnType::MediumText | ColumnType::LongText => {
            let chars = rng.below(60) as usize;
            Value::Bytes(random_text(rng, chars).into_bytes())
        }
        // The row format sees a JSON document as text (the SQL layer checks it).
        ColumnType::Json => {
            let chars = rng.below(60) as usize;
            Value::Bytes(random_text(rng, chars).into_bytes())
        }
        ColumnType::Blob | ColumnType::TinyBlob | ColumnType::MediumBlob | ColumnType::LongBlob => {
            let len = rng.below(60) as usize;
            random_bytes(rng, len)
        }
        // Half as text (in any case), half as the index or bitmask.
        ColumnType::Enum { members } => {
            let index = rng.below(members.len() as u64 + 1);
            if rng.percent(50) {
                Value::UInt(index)
            } else {
                Value::Bytes(members.name(index as u32).to_uppercase().into_bytes())
            }
        }
        ColumnType::Set { members } => {
            let bits =
                rng.next_u64() & members.set_mask() & [u64::MAX, 0b1011, 1][rng.below(3) as usize];
            if rng.percent(50) {
                Value::UInt(bits)
            } else {
                Value::Bytes(members.set_text(bits).to_ascii_uppercase())
            }
        }
        ColumnType::Bit { len_bits } => {
            let max = if len_bits == 64 {
                u64::MAX
            } else {
                (1 << len_bits) - 1
            };
            Value::UInt(match rng.below(3) {
                0 => [0, 1, max][rng.below(3) as usize],
                _ => rng.next_u64() & max,
            })
        }
        // Short and zero-heavy, so that a padded BINARY value often equals another.
        ColumnType::Binary { len_bytes } | ColumnType::VarBinary { len_bytes } => {
            let len = rng.below(u64::from(len_bytes.min(40)) + 1) as usize;
            random_bytes(rng, len)
        }
    }
}

fn random_bytes(rng: &mut Rng, len: usize) -> Value {
    Value::Bytes(
        (0..len)
            .map(|_| [0u8, 1, 0xff, b'a', b' ', 0x80][rng.below(6) as usize])
            .collect(),
    )
}

pub fn random_text(rng: &mut Rng, chars: usize) -> String {
    (0..chars)
        .map(|_| ALPHABET[rng.below(ALPHABET.len() as u64) as usize])
        .collect()
}

pub fn random_collation(rng: &mut Rng, ty: ColumnType) -> Collation {
    if ty.has_collation() && rng.percent(50) {
        Collation::CaseInsensitive
    } else {
        Collation::Binary
    }
}
