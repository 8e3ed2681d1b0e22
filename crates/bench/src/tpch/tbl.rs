//! Writing the generated TPC-H rows as text, for loading into another database (the
//! oracle `scripts/tpch-answers` builds in DuckDB).
//!
//! [`write_tables`] writes `<table>.tbl` for each of the eight tables: one line per row,
//! the values `|`-separated in column order, exactly the rows Tarn loads (the same
//! [`super::generate_parallel`] stream, converted the same way), printed with
//! [`Value`]'s `Display` (money with its two decimals, dates as `YYYY-MM-DD`). TPC-H
//! text never contains `|` or a line break. `schema.sql` beside them creates the
//! tables with portable types (`INTEGER`, `BIGINT`, `DECIMAL(15,2)`, `DATE`,
//! `VARCHAR(n)`), and `rows.txt` lists each table's row count.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use tarn_row::types::ColumnType;

use super::TpchTable;
use crate::{BenchError, Result};

/// Rows per chunk from the generator.
const CHUNK_ROWS: usize = 8192;

/// Writes the eight tables at `scale_factor` into `dir` (created if missing) with
/// `threads` generator threads; returns each table's row count.
pub fn write_tables(scale_factor: f64, dir: &Path, threads: usize) -> Result<Vec<(String, u64)>> {
    std::fs::create_dir_all(dir)
        .map_err(|source| os(format!("creating '{}'", dir.display()), source))?;
    let mut counts = Vec::new();
    let mut schema = String::new();
    for table in super::tables() {
        schema.push_str(&create_table(&table));
        let path = dir.join(format!("{}.tbl", table.name));
        let file = std::fs::File::create(&path)
            .map_err(|source| os(format!("creating '{}'", path.display()), source))?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let mut line = String::new();
        let rows =
            super::generate_parallel(table.name, scale_factor, threads, CHUNK_ROWS, |chunk| {
                for row in chunk {
                    line.clear();
                    for (index, value) in row.iter().enumerate() {
                        if index > 0 {
                            line.push('|');
                        }
                        let _ = write!(line, "{value}");
                    }
                    line.push('\n');
                    out.write_all(line.as_bytes())
                        .map_err(|source| os(format!("writing '{}'", path.display()), source))?;
                }
                Ok(())
            })?;
        out.flush()
            .map_err(|source| os(format!("writing '{}'", path.display()), source))?;
        counts.push((table.name.to_string(), rows));
    }
    write_file(&dir.join("schema.sql"), &schema)?;
    let listing: String = counts
        .iter()
        .map(|(name, rows)| format!("{name} {rows}\n"))
        .collect();
    write_file(&dir.join("rows.txt"), &listing)?;
    Ok(counts)
}

/// `CREATE TABLE` for `table` with portable types and its primary key.
pub fn create_table(table: &TpchTable) -> String {
    let mut text = format!("create table {} (\n", table.name);
    for column in &table.columns {
        let _ = writeln!(
            text,
            "    {} {} not null,",
            column.name,
            portable_type(&column.ty)
        );
    }
    let key: Vec<&str> = table
        .primary_key
        .iter()
        .map(|&i| table.columns[i].name.as_str())
        .collect();
    let _ = writeln!(text, "    primary key ({})\n);", key.join(", "));
    text
}

fn portable_type(ty: &ColumnType) -> String {
    match ty {
        ColumnType::Int { .. } => "integer".into(),
        ColumnType::BigInt { .. } => "bigint".into(),
        ColumnType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        ColumnType::Date => "date".into(),
        ColumnType::Char { len } | ColumnType::VarChar { len } => format!("varchar({len})"),
        other => unreachable!("TPC-H has no column of type {other:?}"),
    }
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|source| os(format!("writing '{}'", path.display()), source))
}

fn os(what: String, source: std::io::Error) -> BenchError {
    BenchError::Os { what, source }
}
