//! The helper behind `scripts/tpch-answers`:
//!
//! - `tpch_oracle tbl --sf X --out DIR` writes Tarn's generated TPC-H rows as `|`-separated
//!   text (`tarn_bench::tpch::tbl`), with `schema.sql`, for loading into DuckDB.
//! - `tpch_oracle query N --sf X` prints query N's text for scale factor X.
//! - `tpch_oracle check --sf X --answers DIR` compares `DIR/qNN.tbl` (answers made
//!   elsewhere) with the expected answers Tarn ships for X, query by query, and exits
//!   non-zero if any differ.

use std::path::PathBuf;
use std::process::ExitCode;

use tarn_bench::tpch::queries::{self, Answer, QUERY_COUNT};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("tpch_oracle: {message}");
            ExitCode::from(2)
        }
    }
}

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn scale_factor(args: &[String]) -> Result<f64, String> {
    let text = flag(args, "--sf").ok_or("--sf is required")?;
    text.parse()
        .map_err(|_| format!("--sf {text} is not a number"))
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    match args.first().map(String::as_str) {
        Some("tbl") => {
            let sf = scale_factor(args)?;
            let out = PathBuf::from(flag(args, "--out").ok_or("--out is required")?);
            let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
            let counts = tarn_bench::tpch::tbl::write_tables(sf, &out, threads)
                .map_err(|e| e.to_string())?;
            for (table, rows) in counts {
                eprintln!("{table}: {rows} rows");
            }
            Ok(ExitCode::SUCCESS)
        }
        Some("query") => {
            let number: usize = args
                .get(1)
                .and_then(|n| n.parse().ok())
                .ok_or("query needs a query number")?;
            let text =
                queries::query_text(number, scale_factor(args)?).map_err(|e| e.to_string())?;
            print!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Some("check") => {
            let sf = scale_factor(args)?;
            let dir = PathBuf::from(flag(args, "--answers").ok_or("--answers is required")?);
            let mut failed = 0;
            for number in 1..=QUERY_COUNT {
                let (expected, source) = queries::expected_answer(number, sf)
                    .ok_or_else(|| format!("no expected answers for SF {sf}"))?;
                let path = dir.join(format!("q{number:02}.tbl"));
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("reading '{}': {e}", path.display()))?;
                match queries::compare(&expected, &Answer::parse(&text)) {
                    Ok(()) => println!(
                        "Q{number:02} matches ({} rows; {})",
                        expected.rows.len(),
                        source.name()
                    ),
                    Err(diff) => {
                        failed += 1;
                        println!("Q{number:02} DIFFERS: {diff}");
                    }
                }
            }
            println!("{} passed, {failed} failed", QUERY_COUNT - failed);
            Ok(if failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        _ => Err(
            "usage: tpch_oracle tbl --sf X --out DIR | query N --sf X | check --sf X --answers DIR"
                .into(),
        ),
    }
}
