"""Runs the TPC-H query texts in DuckDB over Tarn's generated rows and writes the answers.

Called by scripts/tpch-answers (read it first): loads DIR/<table>.tbl (written by the
tpch_oracle example: the exact rows Tarn loads) into an in-memory DuckDB database with
DIR/schema.sql, runs crates/bench/src/tpch/queries/qNN.sql (Q11's {FRACTION} replaced
by 0.0001 / SF, as the Rust side does), and writes OUT/qNN.tbl: a header line of column
names, then one line per row, cells '|'-separated, NULL for null. Numbers are printed in
full (DECIMAL exactly, DOUBLE with Python's shortest round-trip repr), dates ISO.
"""

import argparse
import datetime
import decimal
import pathlib
import sys

import duckdb

TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]


def q11_fraction(sf):
    text = f"{0.0001 / sf:.10f}".rstrip("0")
    return text.rstrip(".")


def cell(value):
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (decimal.Decimal, datetime.date)):
        return str(value)
    return str(value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sf", type=float, required=True)
    parser.add_argument("--tbl-dir", type=pathlib.Path, required=True)
    parser.add_argument("--queries", type=pathlib.Path, required=True)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args()

    con = duckdb.connect()
    con.execute((args.tbl_dir / "schema.sql").read_text())
    for table in TABLES:
        path = args.tbl_dir / f"{table}.tbl"
        con.execute(
            f"insert into {table} select * from read_csv('{path}', delim='|', header=false, "
            f"quote='', escape='', auto_detect=false, "
            f"columns={columns_of(con, table)})"
        )
    expected_rows = dict(
        line.split() for line in (args.tbl_dir / "rows.txt").read_text().splitlines() if line
    )
    for table in TABLES:
        (count,) = con.execute(f"select count(*) from {table}").fetchone()
        if count != int(expected_rows[table]):
            sys.exit(f"{table}: loaded {count} rows, generated {expected_rows[table]}")

    args.out.mkdir(parents=True, exist_ok=True)
    for number in range(1, 23):
        text = (args.queries / f"q{number:02}.sql").read_text()
        text = text.replace("{FRACTION}", q11_fraction(args.sf))
        result = None
        for statement in text.split(";"):
            if not statement.strip():
                continue
            cursor = con.execute(statement)
            if statement.strip().lower().startswith("select"):
                result = (cursor.description, cursor.fetchall())
        description, rows = result
        lines = ["|".join(column[0] for column in description)]
        lines += ["|".join(cell(v) for v in row) for row in rows]
        (args.out / f"q{number:02}.tbl").write_text("\n".join(lines) + "\n")
        print(f"Q{number:02}: {len(rows)} rows", file=sys.stderr)


def columns_of(con, table):
    rows = con.execute(
        "select column_name, data_type from information_schema.columns "
        "where table_name = ? order by ordinal_position",
        [table],
    ).fetchall()
    return "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in rows) + "}"


if __name__ == "__main__":
    main()
