//! The key encoding: memcmp order equals SQL order, for every type, composite keys and
//! both collations.

mod common;

use std::cmp::Ordering;

use common::{all_types, random_collation, random_text, random_value};
use tarn_common::Error;
use tarn_common::rng::{Rng, test_seed};
use tarn_row::limits::KEY_LEN_MAX_BYTES;
use tarn_row::{Collation, ColumnType, Decimal, Value, compare_values, encode_key, key_prefix_len};

fn key(columns: &[(ColumnType, Collation)], values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_key(columns, values, &mut out).unwrap();
    out
}

fn maybe_null(rng: &mut Rng, ty: ColumnType, collation: Collation) -> Value {
    if rng.percent(10) {
        Value::Null
    } else {
        random_value(rng, ty, collation)
    }
}

#[test]
fn single_columns_sort_like_compare_values() {
    let mut rng = Rng::new(test_seed("single_columns_sort_like_compare_values"));
    for ty in all_types() {
        for collation in [Collation::Binary, Collation::CaseInsensitive] {
            let columns = [(ty, collation)];
            let mut equal_pairs = 0;
            for _ in 0..3000 {
                let a = maybe_null(&mut rng, ty, collation);
                let b = maybe_null(&mut rng, ty, collation);
                let (ka, kb) = (
                    key(&columns, std::slice::from_ref(&a)),
                    key(&columns, std::slice::from_ref(&b)),
                );
                let want = compare_values(ty, collation, &a, &b);
                assert_eq!(ka.cmp(&kb), want, "{ty:?} {collation:?}: {a:?} vs {b:?}");
                assert_eq!(compare_values(ty, collation, &b, &a), want.reverse());
                assert_eq!(key_prefix_len(&columns, &ka, 1).unwrap(), ka.len());
                equal_pairs += usize::from(want == Ordering::Equal);
            }
            assert!(
                equal_pairs > 10,
                "{ty:?}: only {equal_pairs} equal pairs tested"
            );
        }
    }
}

#[test]
fn sorting_by_key_sorts_by_value() {
    let mut rng = Rng::new(test_seed("sorting_by_key_sorts_by_value"));
    for ty in all_types() {
        let collation = random_collation(&mut rng, ty);
        let columns = [(ty, collation)];
        let mut values: Vec<(Vec<u8>, Value)> = (0..500)
            .map(|_| {
                let v = maybe_null(&mut rng, ty, collation);
                (key(&columns, std::slice::from_ref(&v)), v)
            })
            .collect();
        values.sort_by(|a, b| a.0.cmp(&b.0));
        for pair in values.windows(2) {
            assert_ne!(
                compare_values(ty, collation, &pair[0].1, &pair[1].1),
                Ordering::Greater,
                "{ty:?}: {:?} then {:?}",
                pair[0].1,
                pair[1].1
            );
        }
    }
}

#[test]
fn composite_keys_sort_lexicographically_and_split() {
    let mut rng = Rng::new(test_seed("composite_keys_sort_lexicographically_and_split"));
    let types = all_types();
    for _ in 0..200 {
        let width = 1 + rng.below(4) as usize;
        let columns: Vec<(ColumnType, Collation)> = (0..width)
            .map(|_| {
                let ty = types[rng.below(types.len() as u64) as usize];
                (ty, random_collation(&mut rng, ty))
            })
            .collect();
        // Few distinct values per column, so ties in leading columns are common.
        let pools: Vec<Vec<Value>> = columns
            .iter()
            .map(|(ty, c)| (0..3).map(|_| maybe_null(&mut rng, *ty, *c)).collect())
            .collect();
        for _ in 0..100 {
            let pick = |rng: &mut Rng| -> Vec<Value> {
                pools
                    .iter()
                    .map(|p| p[rng.below(3) as usize].clone())
                    .collect()
            };
            let (a, b) = (pick(&mut rng), pick(&mut rng));
            let want = columns
                .iter()
                .zip(a.iter().zip(&b))
                .map(|((ty, c), (x, y))| compare_values(*ty, *c, x, y))
                .find(|o| *o != Ordering::Equal)
                .unwrap_or(Ordering::Equal);
            let (ka, kb) = (key(&columns, &a), key(&columns, &b));
            assert_eq!(ka.cmp(&kb), want, "{columns:?}: {a:?} vs {b:?}");
            // Secondary entry = key ++ more key bytes: split at every column boundary.
            let mut entry = ka.clone();
            entry.extend_from_slice(&kb);
            let doubled: Vec<_> = columns.iter().chain(&columns).copied().collect();
            assert_eq!(key_prefix_len(&doubled, &entry, width).unwrap(), ka.len());
            assert_eq!(
                key_prefix_len(&doubled, &entry, 2 * width).unwrap(),
                entry.len()
            );
            for n in 0..=width {
                let prefix = key(&columns, &a[..n]);
                assert_eq!(key_prefix_len(&columns, &ka, n).unwrap(), prefix.len());
                assert!(ka.starts_with(&prefix));
            }
        }
    }
}

#[test]
fn strings_are_prefix_free() {
    let columns = [
        (ColumnType::Blob, Collation::Binary),
        (ColumnType::Int { unsigned: false }, Collation::Binary),
    ];
    let k = |s: &[u8], i: i64| key(&columns, &[Value::Bytes(s.to_vec()), Value::Int(i)]);
    assert!(k(b"a", 100) < k(b"a\0", -100));
    assert!(k(b"a\0", 100) < k(b"ab", -100));
    assert!(k(b"", 100) < k(b"\0", -100));
    assert!(k(b"a\0\0", 0) > k(b"a\0", 0));
    assert!(k(b"a\xff", 0) > k(b"a\0", 0));
    assert_eq!(
        key(&columns[..1], &[Value::Bytes(b"a\0b".to_vec())]),
        [1, b'a', 0, 0xff, b'b', 0, 0]
    );
}

#[test]
fn collations() {
    let ci = (ColumnType::VarChar { len: 20 }, Collation::CaseInsensitive);
    let bin = (ColumnType::VarChar { len: 20 }, Collation::Binary);
    let k = |c: (ColumnType, Collation), s: &str| key(&[c], &[Value::Bytes(s.into())]);
    let cmp = |c: (ColumnType, Collation), a: &str, b: &str| {
        compare_values(c.0, c.1, &Value::Bytes(a.into()), &Value::Bytes(b.into()))
    };
    assert_eq!(k(ci, "abc"), k(ci, "ABC"));
    assert_eq!(k(ci, "abc"), k(ci, "Abc  "));
    assert_eq!(cmp(ci, "abc", "ABC  "), Ordering::Equal);
    assert_eq!(k(ci, "a"), k(ci, "a "));
    assert!(k(ci, "a") < k(ci, "B"));
    assert!(k(ci, "b") > k(ci, "A"));
    assert_ne!(k(bin, "abc"), k(bin, "ABC"));
    assert!(k(bin, "B") < k(bin, "a"));
    assert_ne!(k(bin, "a"), k(bin, "a "));
    assert_eq!(cmp(bin, "a", "a "), Ordering::Less);
    assert_eq!(k(ci, "é"), k(ci, "É"));
    assert_eq!(k(ci, "ÿ"), k(ci, "Ÿ"));
    assert_ne!(k(ci, "ß"), k(ci, "SS"), "no multi-character folding");
    assert_eq!(k(ci, "ß"), k(ci, "ß"));
    // CHAR ignores trailing spaces in both collations.
    let char_bin = (ColumnType::Char { len: 5 }, Collation::Binary);
    assert_eq!(k(char_bin, "ab"), k(char_bin, "ab  "));
    // BLOB ignores the collation.
    let blob = (ColumnType::Blob, Collation::CaseInsensitive);
    assert_ne!(k(blob, "a"), k(blob, "A"));
    // BINARY and VARBINARY order bytewise, trailing spaces and zeros included.
    for binary in [
        (ColumnType::Binary { len_bytes: 4 }, Collation::Binary),
        (
            ColumnType::VarBinary { len_bytes: 4 },
            Collation::CaseInsensitive,
        ),
    ] {
        assert!(k(binary, "B") < k(binary, "a"));
        assert!(k(binary, "a") < k(binary, "a\0"));
        assert!(k(binary, "a\0") < k(binary, "a "));
        assert_eq!(cmp(binary, "a", "a "), Ordering::Less);
    }
    // Invalid UTF-8 in a case-insensitive column does not crash.
    let bad = key(&[ci], &[Value::Bytes(vec![b'a', 0xff, b' ', 0xc3])]);
    assert_eq!(key_prefix_len(&[ci], &bad, 1).unwrap(), bad.len());
}

#[test]
fn random_case_insensitive_strings() {
    let mut rng = Rng::new(test_seed("random_case_insensitive_strings"));
    let ci = (ColumnType::Text, Collation::CaseInsensitive);
    for _ in 0..5000 {
        let chars = rng.below(6) as usize;
        let a = random_text(&mut rng, chars);
        // The same text in another case, with trailing spaces, is equal.
        let b: String = a
            .chars()
            .map(|c| {
                if rng.percent(50) {
                    c.to_uppercase().next().unwrap()
                } else {
                    c
                }
            })
            .collect();
        let b = format!("{b}{}", " ".repeat(rng.below(3) as usize));
        let single = |c: char| c.to_uppercase().count() == 1;
        if a.chars().all(single) {
            let (ka, kb) = (
                key(&[ci], &[Value::Bytes(a.clone().into())]),
                key(&[ci], &[Value::Bytes(b.clone().into())]),
            );
            assert_eq!(ka, kb, "{a:?} vs {b:?}");
        }
    }
}

#[test]
fn numbers_follow_numeric_order() {
    let dbl = [(ColumnType::Double, Collation::Binary)];
    let k = |v: f64| key(&dbl, &[Value::Double(v)]);
    assert_eq!(k(0.0), k(-0.0));
    assert!(k(f64::NEG_INFINITY) < k(f64::MIN));
    assert!(k(-1.0) < k(-f64::MIN_POSITIVE));
    assert!(k(-f64::MIN_POSITIVE) < k(0.0));
    assert!(k(0.0) < k(f64::MIN_POSITIVE));
    assert!(k(f64::MAX) < k(f64::INFINITY));
    let flt = [(ColumnType::Float, Collation::Binary)];
    assert_eq!(
        key(&flt, &[Value::Float(-0.0)]),
        key(&flt, &[Value::Float(0.0)])
    );
    let tiny = [(ColumnType::TinyInt { unsigned: false }, Collation::Binary)];
    assert_eq!(key(&tiny, &[Value::Int(-128)]), [1, 0x00]);
    assert_eq!(key(&tiny, &[Value::Int(127)]), [1, 0xff]);
    assert_eq!(key(&tiny, &[Value::Null]), [0]);
    let mut out = Vec::new();
    assert!(matches!(
        encode_key(&tiny, &[Value::Int(128)], &mut out),
        Err(Error::ValueOutOfRange { .. })
    ));
    assert!(out.is_empty());
    let dec = [(
        ColumnType::Decimal {
            precision: 5,
            scale: 2,
        },
        Collation::Binary,
    )];
    let d = |s: &str| Value::Decimal(Decimal::parse(s).unwrap());
    assert_eq!(key(&dec, &[d("1.5")]), key(&dec, &[d("1.50")]));
    assert!(key(&dec, &[d("-1.5")]) < key(&dec, &[d("-1.49")]));
    assert!(
        encode_key(&dec, &[d("1.555")], &mut out).is_err(),
        "keys never round"
    );
    assert!(encode_key(&dec, &[Value::Bytes(b"1".to_vec())], &mut out).is_err());
}

#[test]
fn limits_and_malformed_keys() {
    let text = [(ColumnType::Text, Collation::Binary)];
    let mut out = vec![9];
    let long = Value::Bytes(vec![b'x'; KEY_LEN_MAX_BYTES]);
    assert!(matches!(
        encode_key(&text, &[long], &mut out),
        Err(Error::KeyTooLong { .. })
    ));
    assert_eq!(out, [9]);
    assert!(encode_key(&text, &[Value::Null, Value::Null], &mut out).is_err());

    let mut rng = Rng::new(test_seed("limits_and_malformed_keys"));
    let types = all_types();
    for _ in 0..20_000 {
        let width = 1 + rng.below(3) as usize;
        let columns: Vec<(ColumnType, Collation)> = (0..width)
            .map(|_| {
                (
                    types[rng.below(types.len() as u64) as usize],
                    Collation::Binary,
                )
            })
            .collect();
        let mut bytes = vec![0u8; rng.below(40) as usize];
        for b in &mut bytes {
            *b = [0, 1, 2, 0xff, 0x41][rng.below(5) as usize];
        }
        if let Ok(len) = key_prefix_len(&columns, &bytes, width) {
            assert!(len <= bytes.len());
        }
    }
    assert!(key_prefix_len(&text, &[1, b'a', 0], 1).is_err());
    assert!(key_prefix_len(&text, &[1, b'a', 0, 7], 1).is_err());
    assert!(key_prefix_len(&text, &[2], 1).is_err());
    assert!(key_prefix_len(&text, &[0], 2).is_err());
}

/// ENUM keys order by the member's index and SET keys by the bitmask, as MySQL sorts
/// them, not by their text; BIT keys by the number.
#[test]
fn enum_set_and_bit_keys_order_by_number() {
    use tarn_row::Members;
    let text = |s: &str| Value::Bytes(s.as_bytes().to_vec());
    let e = ColumnType::Enum {
        members: Members::intern(&["pending", "active", "done"]).unwrap(),
    };
    let ci = Collation::CaseInsensitive;
    let keys: Vec<Vec<u8>> = ["", "pending", "active", "done"]
        .iter()
        .map(|v| key(&[(e, ci)], &[text(v)]))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(keys[2], [1, 2]);
    assert_eq!(
        compare_values(e, ci, &text("pending"), &text("done")),
        Ordering::Less
    );
    let mut out = Vec::new();
    assert!(encode_key(&[(e, ci)], &[text("ACTIVE")], &mut out).is_err());
    let s = ColumnType::Set {
        members: Members::intern(&["x", "y", "z"]).unwrap(),
    };
    let keys: Vec<Vec<u8>> = ["", "x", "y", "x,y", "z", "x,z"]
        .iter()
        .map(|v| key(&[(s, ci)], &[text(v)]))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
    let b = ColumnType::Bit { len_bits: 10 };
    assert_eq!(
        key(&[(b, Collation::Binary)], &[Value::UInt(0x3ff)]),
        [1, 3, 0xff]
    );
    assert!(encode_key(&[(b, Collation::Binary)], &[Value::UInt(0x400)], &mut out).is_err());
}
