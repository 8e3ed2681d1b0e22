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

/// ENUM, SET and BIT definitions: their bounds, widths, JSON form, and the values
/// `check_value` makes of strings and numbers (members matched by the collation).
#[test]
fn enum_set_and_bit_definitions_and_values() {
    use tarn_row::{Collation, Members};
    let members = |names: &[&str]| Members::intern(names).unwrap();
    let sizes = ColumnType::Enum {
        members: members(&["small", "Large"]),
    };
    let json = serde_json::to_string(&sizes).unwrap();
    assert_eq!(json, r#"{"Enum":{"members":["small","Large"]}}"#);
    assert_eq!(serde_json::from_str::<ColumnType>(&json).unwrap(), sizes);
    let bit = ColumnType::Bit { len_bits: 12 };
    assert_eq!(
        serde_json::from_str::<ColumnType>(&serde_json::to_string(&bit).unwrap()).unwrap(),
        bit
    );
    assert_eq!(
        (sizes.fixed_len_bytes(), bit.fixed_len_bytes()),
        (Some(1), Some(2))
    );
    assert!(sizes.has_collation() && !sizes.is_text() && !bit.has_collation());
    let wide: Vec<String> = (0..65).map(|i| format!("s{i}")).collect();
    for bad in [
        ColumnType::Enum {
            members: members(&[]),
        },
        ColumnType::Set {
            members: Members::intern(&wide).unwrap(),
        },
        ColumnType::Set {
            members: members(&["a,b"]),
        },
        ColumnType::Bit { len_bits: 0 },
        ColumnType::Bit { len_bits: 65 },
    ] {
        assert!(
            matches!(bad.validate(), Err(Error::InvalidDefinition(_))),
            "{bad:?}"
        );
    }
    assert!(
        ColumnType::Set {
            members: Members::intern(&wide[..64]).unwrap()
        }
        .validate()
        .is_ok()
    );

    let text = |s: &str| Value::Bytes(s.as_bytes().to_vec());
    let ci = Column::new("e", sizes, false).with_collation(Collation::CaseInsensitive);
    assert_eq!(check_value(&ci, text("LARGE  ")).unwrap(), text("Large"));
    assert_eq!(check_value(&ci, Value::Int(1)).unwrap(), text("small"));
    assert_eq!(check_value(&ci, text(" 2")).unwrap(), text("Large"));
    // '' is the error value, which only the SQL layer's strict mode refuses.
    assert_eq!(check_value(&ci, text("")).unwrap(), text(""));
    for bad in [
        text("medium"),
        text("  "),
        Value::Int(0),
        Value::Int(3),
        text("-1"),
    ] {
        assert!(check_value(&ci, bad.clone()).is_err(), "{bad:?}");
    }
    let bin = Column::new("e", sizes, false);
    assert!(check_value(&bin, text("large")).is_err());

    let set = ColumnType::Set {
        members: members(&["a", "b", "c"]),
    };
    let s = Column::new("s", set, true).with_collation(Collation::CaseInsensitive);
    assert_eq!(check_value(&s, text("c,A,a")).unwrap(), text("a,c"));
    assert_eq!(check_value(&s, Value::UInt(6)).unwrap(), text("b,c"));
    assert_eq!(check_value(&s, text("3")).unwrap(), text("a,b"));
    assert_eq!(check_value(&s, text("")).unwrap(), text(""));
    assert!(check_value(&s, Value::UInt(8)).is_err());
    assert!(check_value(&s, text("a,d")).is_err());

    let b = Column::new("b", bit, false);
    assert_eq!(
        check_value(&b, Value::Int(4095)).unwrap(),
        Value::UInt(4095)
    );
    assert_eq!(
        check_value(&b, Value::Bytes(vec![0, 0x0f, 0xff])).unwrap(),
        Value::UInt(4095)
    );
    for too_long in [
        Value::Int(4096),
        Value::Int(-1),
        Value::Bytes(b"ab".to_vec()),
    ] {
        assert!(
            matches!(
                check_value(&b, too_long.clone()),
                Err(Error::DataTooLong { .. })
            ),
            "{too_long:?}"
        );
    }
}

/// Appending members keeps rows readable as they are (an in-place ALTER); anything
/// else, or a change of width, does not.
#[test]
fn appended_members_store_like_the_old_type() {
    use tarn_row::Members;
    let of = |names: &[&str]| ColumnType::Enum {
        members: Members::intern(names).unwrap(),
    };
    assert!(of(&["a", "b", "c"]).stores_like(&of(&["a", "b"])));
    assert!(!of(&["a", "c"]).stores_like(&of(&["a", "b"])));
    assert!(!of(&["b", "a"]).stores_like(&of(&["a", "b"])));
    assert!(!of(&["a"]).stores_like(&of(&["a", "b"])));
    let names: Vec<String> = (0..256).map(|i| format!("m{i}")).collect();
    let wide = |n: usize| ColumnType::Enum {
        members: Members::intern(&names[..n]).unwrap(),
    };
    assert!(wide(255).stores_like(&wide(200)));
    assert!(!wide(256).stores_like(&wide(255)), "1 byte to 2");
    let set = |n: usize| ColumnType::Set {
        members: Members::intern(&names[..n]).unwrap(),
    };
    assert!(set(8).stores_like(&set(3)));
    assert!(!set(9).stores_like(&set(8)), "1 byte to 2");
    assert!(!set(3).stores_like(&of(&["m0", "m1", "m2"])));
    assert!(ColumnType::Bit { len_bits: 3 }.stores_like(&ColumnType::Bit { len_bits: 3 }));
}
