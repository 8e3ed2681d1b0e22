//! Column definitions and value checks at their bounds.

use tarn_common::Error;
use tarn_row::{Column, ColumnType, Decimal, Decimal64Form, Value, check_value};

#[test]
fn definitions_are_validated() {
    let ok = [
        ColumnType::Decimal {
            precision: 1,
            scale: 0,
        },
        ColumnType::Decimal {
            precision: 65,
            scale: 30,
        },
        ColumnType::Decimal {
            precision: 30,
            scale: 30,
        },
        ColumnType::DateTime { fsp: 6 },
        ColumnType::Timestamp { fsp: 0 },
        ColumnType::Char { len: 255 },
        ColumnType::Char { len: 0 },
        ColumnType::VarChar { len: 65_535 },
        ColumnType::Text,
        ColumnType::Binary { len_bytes: 255 },
        ColumnType::Binary { len_bytes: 0 },
        ColumnType::VarBinary { len_bytes: 65_535 },
        ColumnType::LongBlob,
    ];
    for ty in ok {
        assert!(ty.validate().is_ok(), "{ty:?}");
    }
    let bad = [
        ColumnType::Decimal {
            precision: 0,
            scale: 0,
        },
        ColumnType::Decimal {
            precision: 66,
            scale: 0,
        },
        ColumnType::Decimal {
            precision: 40,
            scale: 31,
        },
        ColumnType::Decimal {
            precision: 5,
            scale: 6,
        },
        ColumnType::DateTime { fsp: 7 },
        ColumnType::Timestamp { fsp: 7 },
        ColumnType::Char { len: 256 },
        ColumnType::VarChar { len: 65_536 },
        ColumnType::Binary { len_bytes: 256 },
        ColumnType::VarBinary { len_bytes: 65_536 },
    ];
    for ty in bad {
        assert!(
            matches!(ty.validate(), Err(Error::InvalidDefinition(_))),
            "{ty:?}"
        );
    }
    assert_eq!(
        ColumnType::Decimal {
            precision: 65,
            scale: 30
        }
        .fixed_len_bytes(),
        Some(30)
    );
    assert_eq!(ColumnType::Text.fixed_len_bytes(), None);
    assert!(ColumnType::Blob.is_variable_len() && !ColumnType::Blob.is_text());
    let binary = ColumnType::Binary { len_bytes: 16 };
    assert!(binary.is_variable_len() && binary.is_binary_string() && !binary.is_text());
    assert!(!binary.is_lob() && ColumnType::TinyBlob.is_lob() && ColumnType::LongText.is_lob());
    assert!(ColumnType::MediumText.is_text() && !ColumnType::MediumText.is_binary_string());
}

#[test]
fn size_classes_round_trip() {
    use tarn_row::LobSize;
    for size in [
        LobSize::Tiny,
        LobSize::Regular,
        LobSize::Medium,
        LobSize::Long,
    ] {
        assert_eq!(ColumnType::blob_of_size(size).blob_size(), Some(size));
        assert_eq!(ColumnType::text_of_size(size).text_size(), Some(size));
        assert_eq!(LobSize::holding(size.declared_len_max_bytes()), size);
    }
    assert_eq!(LobSize::holding(256), LobSize::Regular);
    assert_eq!(ColumnType::TinyBlob.lob_len_max_bytes(), Some(255));
    assert_eq!(ColumnType::MediumText.lob_len_max_bytes(), Some(16_777_215));
    assert_eq!(
        ColumnType::VarBinary { len_bytes: 8 }.lob_len_max_bytes(),
        None
    );
}

/// The catalog stores types as JSON by variant name: a type written before BINARY and
/// the size classes existed reads back as itself, and the new ones round-trip.
#[test]
fn serialized_types_stay_readable() {
    let old: ColumnType = serde_json::from_str(r#""Blob""#).unwrap();
    assert_eq!(old, ColumnType::Blob);
    let old: ColumnType = serde_json::from_str(r#"{"VarChar":{"len":10}}"#).unwrap();
    assert_eq!(old, ColumnType::VarChar { len: 10 });
    for ty in [
        ColumnType::Binary { len_bytes: 16 },
        ColumnType::VarBinary { len_bytes: 8 },
        ColumnType::TinyText,
        ColumnType::LongBlob,
        ColumnType::Time { fsp: 3 },
        ColumnType::Year,
    ] {
        let json = serde_json::to_string(&ty).unwrap();
        assert_eq!(serde_json::from_str::<ColumnType>(&json).unwrap(), ty);
    }
    // TIME and YEAR are stored by these names from now on.
    assert_eq!(
        serde_json::to_string(&ColumnType::Time { fsp: 3 }).unwrap(),
        r#"{"Time":{"fsp":3}}"#
    );
    assert_eq!(
        serde_json::to_string(&ColumnType::Year).unwrap(),
        r#""Year""#
    );
}

#[test]
fn fsp_rounding_for_every_precision() {
    let raw = Value::Bytes(b"2024-06-30 23:59:59.987654".to_vec());
    let want = [
        "2024-07-01 00:00:00",
        "2024-07-01 00:00:00.0",
        "2024-06-30 23:59:59.99",
        "2024-06-30 23:59:59.988",
        "2024-06-30 23:59:59.9877",
        "2024-06-30 23:59:59.98765",
        "2024-06-30 23:59:59.987654",
    ];
    for fsp in 0..=6u8 {
        let column = Column::new("t", ColumnType::DateTime { fsp }, false);
        let Value::DateTime(v) = check_value(&column, raw.clone()).unwrap() else {
            panic!("a datetime")
        };
        assert_eq!(v.display_fsp(fsp), want[usize::from(fsp)], "fsp {fsp}");
    }
}

/// The batch fast path for DECIMAL of at most 18 digits reads the same numbers as the
/// general decoder, for random values of every precision and scale, and rejects what
/// the general decoder rejects.
#[test]
fn decimal64_fast_path_agrees_with_the_general_decoder() {
    use tarn_common::rng::{Rng, test_seed};
    use tarn_row::decimal::{DECIMAL64_PRECISION_MAX, binary_len_bytes};
    let mut rng = Rng::new(test_seed("decimal64_fast_path"));
    for _ in 0..20_000 {
        let precision = 1 + rng.below(u64::from(DECIMAL64_PRECISION_MAX)) as u8;
        let scale = rng.below(u64::from(precision) + 1) as u8;
        let digits: String = (0..precision)
            .map(|_| char::from(b'0' + rng.below(10) as u8))
            .collect();
        let (int, frac) = digits.split_at(usize::from(precision - scale));
        let sign = if rng.below(2) == 0 { "-" } else { "" };
        let text = format!("{sign}{}.{}", if int.is_empty() { "0" } else { int }, frac);
        let value = Decimal::parse(&text)
            .unwrap()
            .rescale(precision, scale)
            .unwrap();
        let mut bytes = vec![0u8; binary_len_bytes(precision, scale)];
        value.write_binary(precision, scale, &mut bytes).unwrap();
        let fast = Decimal64Form::new(precision, scale)
            .unwrap()
            .read_i64(&bytes)
            .unwrap();
        let general = Decimal::read_binary(&bytes, precision, scale).unwrap();
        let parts = Decimal64Form::new(precision, scale)
            .unwrap()
            .read_parts(&bytes)
            .unwrap();
        assert_eq!(
            (parts.integer * 10u64.pow(u32::from(scale)) + parts.fraction) as i64,
            fast.abs(),
            "{text} in parts"
        );
        assert!(parts.fraction < 10u64.pow(u32::from(scale)), "{text}");
        assert_eq!(parts.negative, fast < 0, "{text}");
        assert_eq!(
            Decimal::from_i128(i128::from(fast), scale).unwrap(),
            general,
            "{text} as DECIMAL({precision},{scale})"
        );
        // A corrupted first byte is rejected by both or by neither.
        let mut bad = bytes.clone();
        bad[0] ^= 0x7f;
        assert_eq!(
            Decimal64Form::new(precision, scale)
                .unwrap()
                .read_i64(&bad)
                .is_ok(),
            Decimal::read_binary(&bad, precision, scale).is_ok(),
            "{text} corrupted"
        );
    }
}
