//! Micro-benchmark of the text-protocol row serializer that `tarn bench wire` spends
//! most of its server time in: stored rows shaped like TPC-H `lineitem` (a BIGINT,
//! three INTs, four DECIMAL(15,2), two CHAR(1), three DATEs, two CHARs and a VARCHAR)
//! are validated (`RowLayout::view`) and written as row packets
//! (`TextRowSerializer::serialize`), as a scan worker does for `SELECT * FROM lineitem`.
//!
//! The rows are random (the seed is printed) with TPC-H's value ranges; the figure to
//! read is the time per row, in CPU time of the benchmark's thread, so that a busy
//! machine slows the measurement less.
//!
//! Run: `cargo bench -p tarn-server --bench serialize`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tarn_row::{
    Collation, Column, ColumnType, Date, Decimal, NoOverflow, RowHeader, RowLayout, RowLimits,
    RowSerializer, Value,
};
use tarn_server::protocol::results::TextRowSerializer;
use tarn_sql::SqlType;

const ROWS: usize = 16_384;

fn column(name: &str, ty: ColumnType) -> Column {
    Column {
        name: name.to_string(),
        ty,
        nullable: false,
        collation: Collation::Binary,
    }
}

fn lineitem_columns() -> Vec<Column> {
    let money = ColumnType::Decimal {
        precision: 15,
        scale: 2,
    };
    let int = ColumnType::Int { unsigned: false };
    vec![
        column("l_orderkey", ColumnType::BigInt { unsigned: false }),
        column("l_partkey", int),
        column("l_suppkey", int),
        column("l_linenumber", int),
        column("l_quantity", money),
        column("l_extendedprice", money),
        column("l_discount", money),
        column("l_tax", money),
        column("l_returnflag", ColumnType::Char { len: 1 }),
        column("l_linestatus", ColumnType::Char { len: 1 }),
        column("l_shipdate", ColumnType::Date),
        column("l_commitdate", ColumnType::Date),
        column("l_receiptdate", ColumnType::Date),
        column("l_shipinstruct", ColumnType::Char { len: 25 }),
        column("l_shipmode", ColumnType::Char { len: 10 }),
        column("l_comment", ColumnType::VarChar { len: 44 }),
    ]
}

/// Random text of `min..=max` lowercase letters and spaces.
fn text(rng: &mut tarn_common::rng::Rng, min: u64, max: u64) -> Value {
    let len = min + rng.below(max - min + 1);
    Value::Bytes(
        (0..len)
            .map(|_| b"abcdefghijklmnopqrstuvwxyz "[rng.below(27) as usize])
            .collect(),
    )
}

fn lineitem_rows(layout: &RowLayout, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = tarn_common::rng::Rng::new(seed);
    let limits = RowLimits {
        overflow_threshold_bytes: 4096,
        max_row_bytes: 8192,
    };
    let first_day = Date::new(1992, 1, 1).expect("a date").to_days();
    let day = |rng: &mut tarn_common::rng::Rng| {
        Value::Date(Date::from_days(first_day + rng.below(2500) as u32).expect("a day"))
    };
    (0..ROWS)
        .map(|i| {
            let money = |rng: &mut tarn_common::rng::Rng, max: u64| {
                Value::Decimal(Decimal::from_i128(rng.below(max) as i128, 2).expect("fits"))
            };
            let values = vec![
                Value::Int(i as i64 / 4 * 32 + 1),
                Value::Int(rng.below(200_000) as i64 + 1),
                Value::Int(rng.below(10_000) as i64 + 1),
                Value::Int(i as i64 % 4 + 1),
                money(&mut rng, 5_000),
                money(&mut rng, 10_000_000),
                money(&mut rng, 11),
                money(&mut rng, 9),
                text(&mut rng, 1, 1),
                text(&mut rng, 1, 1),
                day(&mut rng),
                day(&mut rng),
                day(&mut rng),
                text(&mut rng, 4, 17),
                text(&mut rng, 3, 7),
                text(&mut rng, 10, 43),
            ];
            let mut bytes = Vec::new();
            layout
                .encode(
                    &values,
                    RowHeader::default(),
                    &NoOverflow,
                    limits,
                    &mut bytes,
                )
                .expect("the row encodes");
            bytes
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let seed = tarn_common::rng::test_seed("serialize_lineitem");
    let columns = lineitem_columns();
    let layout = RowLayout::new(&columns).expect("a layout");
    let rows = lineitem_rows(&layout, seed);
    let mut group = c.benchmark_group("serialize");
    group.throughput(Throughput::Elements(ROWS as u64));
    // All of `SELECT *`, then each kind of column alone (and none: validation only).
    let subsets: [(&str, Vec<usize>); 6] = [
        ("lineitem_text_rows", (0..columns.len()).collect()),
        ("integers", vec![0, 1, 2, 3]),
        ("decimals", vec![4, 5, 6, 7]),
        ("dates", vec![10, 11, 12]),
        ("strings", vec![8, 9, 13, 14, 15]),
        ("no_columns", vec![]),
    ];
    for (name, chosen) in subsets {
        let column_types: Vec<ColumnType> = chosen.iter().map(|&c| columns[c].ty).collect();
        let types: Vec<SqlType> = chosen
            .iter()
            .map(|&c| SqlType::of_column(columns[c].ty, columns[c].collation))
            .collect();
        let serializer = TextRowSerializer::new(&chosen, &column_types, &types);
        let mut out = Vec::with_capacity(ROWS * 160);
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let started = tarn_io::os::thread_cpu_time();
                for _ in 0..iterations {
                    out.clear();
                    for row in &rows {
                        let view = layout.view(row).expect("a valid row");
                        serializer
                            .serialize(&view, &NoOverflow, &mut out)
                            .expect("the row serializes");
                    }
                    black_box(out.len());
                }
                tarn_io::os::thread_cpu_time() - started
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
