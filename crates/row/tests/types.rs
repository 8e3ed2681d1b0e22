//! Column definitions and value checks at their bounds.

use tarn_common::Error;
use tarn_row::{Column, ColumnType, Value, check_value};

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
