//! Tests at SF 0.01, the smallest scale factor: row counts, key order, parallel output
//! equal to serial output, and every value against tpchgen's own text and its column.

use super::*;
use std::sync::OnceLock;

use tarn_row::types::ColumnType;
use tpchgen::generators::PartSupp;

const SF: f64 = 0.01;

/// The row counts tpchgen gives at SF 0.01 (the spec's, with lineitem's exact count).
const ROWS_AT_SF_0_01: [(TableId, u64); 8] = [
    (TableId::Region, 5),
    (TableId::Nation, 25),
    (TableId::Supplier, 100),
    (TableId::Customer, 1_500),
    (TableId::Part, 2_000),
    (TableId::PartSupp, 8_000),
    (TableId::Orders, 15_000),
    (TableId::LineItem, 60_175),
];

/// The whole table from one part, generated once per test process and shared.
fn serial(table: TableId) -> &'static [Vec<Value>] {
    static SERIAL: [OnceLock<Vec<Vec<Value>>>; 8] = [const { OnceLock::new() }; 8];
    let slot = TableId::ALL.iter().position(|id| *id == table).unwrap();
    SERIAL[slot].get_or_init(|| {
        let mut rows = Vec::new();
        generate_part(table.name(), SF, 1, 1, &mut |row| {
            rows.push(row);
            Ok(())
        })
        .unwrap();
        rows
    })
}

fn parallel(table: TableId, part_count: i32, threads: usize, chunk_rows: usize) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    let count = generate_parts(table, SF, part_count, threads, chunk_rows, |chunk| {
        assert!((1..=chunk_rows).contains(&chunk.len()));
        rows.extend(chunk);
        Ok(())
    })
    .unwrap();
    assert_eq!(count, rows.len() as u64);
    rows
}

fn schema(table: TableId) -> TpchTable {
    tables()
        .into_iter()
        .find(|schema| schema.name == table.name())
        .unwrap()
}

/// Checks the primary keys independently of [`KeyOrder`].
fn assert_keys_strictly_increase(table: TableId, rows: &[Vec<Value>]) {
    let key_columns = schema(table).primary_key;
    let keys: Vec<Vec<i64>> = rows
        .iter()
        .map(|row| {
            key_columns
                .iter()
                .map(|&column| match row[column] {
                    Value::Int(value) => value,
                    ref other => panic!("{table:?} key column {column} holds {other:?}"),
                })
                .collect()
        })
        .collect();
    for pair in keys.windows(2) {
        assert!(
            pair[0] < pair[1],
            "{table:?}: key {:?} then {:?}",
            pair[0],
            pair[1]
        );
    }
}

#[test]
fn row_counts_match_the_spec_at_sf_0_01() {
    for (table, rows_expected) in ROWS_AT_SF_0_01 {
        let rows = generate_parallel(table.name(), SF, 2, 1000, |_| Ok(())).unwrap();
        assert_eq!(rows, rows_expected, "{table:?}");
        let estimate = row_count_estimate(table.name(), SF).unwrap();
        if table == TableId::LineItem {
            assert_eq!(estimate, 60_000);
        } else {
            assert_eq!(estimate, rows_expected, "{table:?}");
        }
    }
}

#[test]
fn parallel_output_equals_serial_output_in_key_order() {
    for table in TableId::ALL {
        let expected = serial(table);
        assert_keys_strictly_increase(table, expected);
        let default_parts = part_count_of(table, SF);
        for (threads, part_count) in [(1, 7), (2, default_parts), (3, 7)] {
            let rows = parallel(table, part_count, threads, 997);
            assert!(
                rows == expected,
                "{table:?} with {threads} threads and {part_count} parts differs"
            );
        }
    }
}

#[test]
fn part_counts_follow_the_estimate() {
    assert_eq!(part_count("region", 100.0).unwrap(), 1);
    assert_eq!(part_count("nation", 100.0).unwrap(), 1);
    assert_eq!(part_count("supplier", SF).unwrap(), 1);
    assert_eq!(part_count("lineitem", SF).unwrap(), 2);
    assert_eq!(part_count("lineitem", 1.0).unwrap(), 120);
    assert_eq!(part_count("partsupp", 1.0).unwrap(), 16);
    assert_eq!(part_count("lineitem", SCALE_FACTOR_MAX).unwrap(), 120_000);
}

/// tpchgen emits each part key's four suppliers in formula order, not key order; this
/// is why `generate_partsupp` sorts them. Pinned so that a tpchgen upgrade that
/// changes it is noticed.
#[test]
fn raw_partsupp_is_unsorted_within_a_part_key() {
    let raw: Vec<PartSupp> = PartSuppGenerator::new(SF, 1, 1).iter().collect();
    let out_of_order = raw
        .windows(2)
        .filter(|pair| {
            (pair[0].ps_partkey, pair[0].ps_suppkey) >= (pair[1].ps_partkey, pair[1].ps_suppkey)
        })
        .count();
    assert_eq!(out_of_order, 2_070);
    assert!(
        raw.windows(2)
            .all(|pair| pair[0].ps_partkey <= pair[1].ps_partkey)
    );
}

#[test]
fn repeated_partsupp_supplier_is_an_error() {
    // S = 102 suppliers: for part keys 919..=1020 the step is 34 and 3 * 34 = S.
    let result = generate_part("partsupp", 0.0102, 1, 1, &mut |_| Ok(()));
    assert!(matches!(result, Err(BenchError::Options(_))), "{result:?}");
}

/// Every value printed the way tpchgen prints it (TBL format) equals tpchgen's text:
/// this checks the conversions, including exact money and the dates.
#[test]
fn values_equal_tpchgen_text() {
    fn text(value: &Value) -> String {
        match value {
            Value::Int(value) => value.to_string(),
            Value::Decimal(value) => value.to_string(),
            Value::Date(date) => format!("{:04}-{:02}-{:02}", date.year, date.month, date.day),
            Value::Bytes(bytes) => String::from_utf8(bytes.clone()).unwrap(),
            other => panic!("TPC-H generates no {other:?}"),
        }
    }
    fn tbl(rows: &[Vec<Value>]) -> Vec<String> {
        rows.iter()
            .map(|row| row.iter().map(|value| text(value) + "|").collect())
            .collect()
    }
    fn lines<T: std::fmt::Display>(rows: impl Iterator<Item = T>) -> Vec<String> {
        rows.map(|row| row.to_string()).collect()
    }
    let mut partsupp: Vec<PartSupp> = PartSuppGenerator::new(SF, 1, 1).iter().collect();
    partsupp.sort_by_key(|row| (row.ps_partkey, row.ps_suppkey));
    let expected = [
        lines(RegionGenerator::new(SF, 1, 1).iter()),
        lines(NationGenerator::new(SF, 1, 1).iter()),
        lines(SupplierGenerator::new(SF, 1, 1).iter()),
        lines(CustomerGenerator::new(SF, 1, 1).iter()),
        lines(PartGenerator::new(SF, 1, 1).iter()),
        lines(partsupp.into_iter()),
        lines(OrderGenerator::new(SF, 1, 1).iter()),
        // tpchgen prints l_quantity without a fraction; the column is DECIMAL(15,2).
        lines(LineItemGenerator::new(SF, 1, 1).iter())
            .into_iter()
            .map(|line| {
                let mut fields: Vec<String> = line.split('|').map(str::to_string).collect();
                fields[4] += ".00";
                fields.join("|")
            })
            .collect(),
    ];
    for (table, expected) in TableId::ALL.into_iter().zip(expected) {
        let got = tbl(serial(table));
        assert_eq!(got.len(), expected.len(), "{table:?}");
        for (got, expected) in got.iter().zip(&expected) {
            assert_eq!(got, expected, "{table:?}");
        }
    }
}

#[test]
fn schemas_are_consistent() {
    let schemas = tables();
    let names: Vec<&str> = schemas.iter().map(|schema| schema.name).collect();
    let ids: Vec<&str> = TableId::ALL.iter().map(|table| table.name()).collect();
    assert_eq!(names, ids);
    for schema in &schemas {
        let mut column_names: Vec<&str> = schema.columns.iter().map(|c| c.name.as_str()).collect();
        column_names.sort_unstable();
        column_names.dedup();
        assert_eq!(column_names.len(), schema.columns.len(), "{}", schema.name);
        assert!(schema.columns.iter().all(|column| !column.nullable));
        for &column in &schema.primary_key {
            assert!(matches!(
                schema.columns[column].ty,
                ColumnType::Int { unsigned: false } | ColumnType::BigInt { unsigned: false }
            ));
        }
        for index in &schema.indexes {
            assert!(!index.unique);
            assert!(
                index
                    .columns
                    .iter()
                    .all(|&column| column < schema.columns.len())
            );
        }
    }
    let index_columns = |table: TableId| -> Vec<(&'static str, Vec<String>)> {
        let schema = schema(table);
        schema
            .indexes
            .iter()
            .map(|index| {
                let columns = index
                    .columns
                    .iter()
                    .map(|&c| schema.columns[c].name.clone());
                (index.name, columns.collect())
            })
            .collect()
    };
    assert_eq!(
        index_columns(TableId::Orders),
        [
            ("o_custkey", vec!["o_custkey".to_string()]),
            ("o_orderdate", vec!["o_orderdate".to_string()]),
        ]
    );
    assert_eq!(
        index_columns(TableId::LineItem),
        [("l_shipdate", vec!["l_shipdate".to_string()])]
    );
}

#[test]
fn sink_error_stops_generation() {
    let mut chunks = 0;
    let result = generate_parts(TableId::LineItem, SF, 7, 3, 100, |_| {
        chunks += 1;
        if chunks == 3 {
            return Err(BenchError::Options("stop".to_string()));
        }
        Ok(())
    });
    assert!(matches!(result, Err(BenchError::Options(ref message)) if message == "stop"));
    assert_eq!(chunks, 3);
}

#[test]
fn bad_arguments_are_rejected() {
    let is_options = |result: Result<u64>| matches!(result, Err(BenchError::Options(_)));
    assert!(is_options(generate_parallel(
        "lineitems",
        SF,
        1,
        10,
        |_| Ok(())
    )));
    for sf in [0.0, 0.001, f64::NAN, -1.0, 2000.0] {
        assert!(
            is_options(generate_parallel("nation", sf, 1, 10, |_| Ok(()))),
            "{sf}"
        );
    }
    for (threads, chunk_rows) in [
        (0, 10),
        (THREADS_MAX + 1, 10),
        (1, 0),
        (1, CHUNK_ROWS_MAX + 1),
    ] {
        assert!(is_options(generate_parallel(
            "nation",
            SF,
            threads,
            chunk_rows,
            |_| Ok(())
        )));
    }
    for (part, part_count) in [(0, 1), (2, 1), (1, 0)] {
        let result = generate_part("nation", SF, part, part_count, &mut |_| Ok(()));
        assert!(matches!(result, Err(BenchError::Options(_))));
    }
}

/// Every value passes `check_value` for its column unchanged: the generator already
/// produces the normal form (DECIMAL at the column's scale, CHAR without trailing
/// spaces, text within its length), so a loader may store the rows as they come.
#[test]
fn values_are_in_normal_form_for_their_columns() {
    for table in TableId::ALL {
        let columns = schema(table).columns;
        for row in serial(table) {
            assert_eq!(row.len(), columns.len(), "{table:?}");
            for (column, value) in columns.iter().zip(row) {
                if let Value::Decimal(decimal) = value {
                    assert_eq!(decimal.scale(), 2, "{}", column.name);
                }
                let checked = tarn_row::check_value(column, value.clone())
                    .unwrap_or_else(|error| panic!("{table:?}.{}: {error}", column.name));
                assert_eq!(&checked, value, "{table:?}.{}", column.name);
            }
        }
    }
}
