//! The human output of `tarn bench bufferpool`: the notes, the cell, S4, totals,
//! baselines and summary tables, and the JSON document in `--json` mode.

use crate::Result;
use crate::report::{
    BenchDocument, Output, Table, data_dir_fate, format_count, format_number, format_ratio, ratio,
};
use crate::stats::{median, min_max};

use super::analysis::{Baselines, BufferPoolRow, BufferPoolSummary, IO_WAIT_CLASS, S4Table, ms};
use super::{BufferPoolReport, Dataset, Distribution, LARGER_FACTOR};

/// Prints the notes and tables, and the JSON document in `--json` mode.
pub fn print(report: &BufferPoolReport, output: &Output) -> Result<()> {
    let config = &report.config;
    let page = u64::from(config.page_size_bytes);
    output.note(&format!(
        "\ntarn bench bufferpool (S4): pool {} MiB ({} frames of {} bytes); data sets larger {} \
         MiB ({} pages, {}x the pool) and fits {} MiB ({} pages); {:.1} s per cell; {}% writes; \
         data in '{}'{}",
        config.pool_size_bytes >> 20,
        config.pool_frames,
        config.page_size_bytes,
        (config.larger_pages * page) >> 20,
        config.larger_pages,
        LARGER_FACTOR,
        (config.fits_pages * page) >> 20,
        config.fits_pages,
        config.seconds_per_cell,
        config.write_pct,
        config.data_dir,
        data_dir_fate(config.data_dir_kept)
    ));
    output.note(&format!("- {}", config.loaded));
    output.note(&format!(
        "- io_method {}: {}",
        config.io_method, config.io_method_reason
    ));
    output.note(&format!("- {}", config.cold));
    output.note(&format!("- {}", config.warm));
    output.note(&format!(
        "- each operation: a page picked uniformly or zipfian (theta {}, scrambled); a read is \
         read_optimistic of the header page id and a body word (checked against what was \
         loaded), a write ({}%) is fetch_exclusive + counter + mark_dirty at a shared LSN",
        config.zipf_theta, config.write_pct
    ));
    output.note(&format!("- {}", config.baseline));
    if let (Some(start), Some(end)) = (&config.loadavg_start, &config.loadavg_end) {
        output.note(&format!(
            "- load average (1, 5, 15 min) at start {start}, at end {end}, on {} CPUs",
            std::thread::available_parallelism().map_or(0, |n| n.get())
        ));
    }
    output.note(
        "- latch wait = time threads spent waiting for a latch (or for another thread's read \
         of the page, class buffer.io_wait), summed over threads: it can exceed wall time",
    );
    output.table(&rows_table(&report.rows));
    let s4_threads = report.summary.s4_threads;
    for dataset in Dataset::ALL {
        for distribution in Distribution::ALL {
            if let Some(table) = S4Table::build(&report.rows, dataset, distribution, s4_threads) {
                output.table(&s4_table(&table));
                output.note(&table.explain());
            }
        }
    }
    output.table(&totals_table(&report.rows));
    output.table(&baselines_table(&report.baselines));
    if let Some(note) = unstable_note(&report.summary) {
        output.note(&note);
    }
    output.table(&summary_table(&report.summary));
    output.json(&BenchDocument::new(
        "bufferpool",
        config,
        &report.rows,
        &report.summary,
    ))
}

fn rows_table(rows: &[BufferPoolRow]) -> Table {
    let mut table = Table::new(
        "Buffer pool cells (S4): throughput, hits and latch waits",
        &[
            "data set",
            "dist",
            "threads",
            "inst",
            "ops/s",
            "hit %",
            "reads/s",
            "page writes/s",
            "CPU us/op",
            "latch wait ms",
            "contended",
            "hottest latch",
        ],
    );
    for row in rows {
        table.add_row(vec![
            row.dataset.to_string(),
            row.distribution.to_string(),
            row.threads.to_string(),
            row.instances.to_string(),
            format_count(Some(row.ops_per_s)),
            format_number(row.hit_rate.map(|h| h * 100.0), 2),
            format_count(Some(row.page_reads_per_s)),
            format_count(Some(row.page_writes_per_s)),
            format_number(Some(row.cpu_us_per_op), 2),
            ms(row.latch_wait_ns),
            format_count(Some(row.latch_contended as f64)),
            row.hottest()
                .map_or_else(|| "-".to_string(), |l| l.class.clone()),
        ]);
    }
    table
}

pub(super) fn s4_table(table: &S4Table) -> Table {
    let mut headers = vec!["latch wait ms".to_string()];
    headers.extend(table.instances.iter().map(|n| format!("{n} inst")));
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut out = Table::new(
        format!(
            "S4: latch wait per latch class by instance count: {}, {}, {} threads",
            table.dataset, table.distribution, table.threads
        ),
        &header_refs,
    );
    for (class, waits) in &table.classes {
        let mut cells = vec![class.clone()];
        cells.extend(waits.iter().map(|&w| ms(w)));
        out.add_row(cells);
    }
    let mut total = vec!["total".to_string()];
    total.extend(table.total_wait_ns.iter().map(|&w| ms(w)));
    out.add_row(total);
    let mut latch_only = vec![format!("total without {IO_WAIT_CLASS}")];
    latch_only.extend(table.latch_only_wait_ns.iter().map(|&w| ms(w)));
    out.add_row(latch_only);
    let first = table.total_wait_ns.first().copied().unwrap_or(0) as f64;
    let mut reduction = vec!["1st column / this (x less)".to_string()];
    reduction.extend(
        table
            .total_wait_ns
            .iter()
            .map(|&w| format_ratio(ratio(Some(first), Some(w as f64)))),
    );
    out.add_row(reduction);
    let mut contended = vec!["contended acquisitions".to_string()];
    contended.extend(
        table
            .contended
            .iter()
            .map(|&c| format_count(Some(c as f64))),
    );
    out.add_row(contended);
    let mut ops = vec!["ops/s".to_string()];
    ops.extend(table.ops_per_s.iter().map(|&o| format_count(Some(o))));
    out.add_row(ops);
    out
}

/// Total latch wait (ms) per instance count for every data set, distribution and
/// thread count measured.
fn totals_table(rows: &[BufferPoolRow]) -> Table {
    let instances = {
        let mut all: Vec<u32> = rows.iter().map(|r| r.instances).collect();
        all.sort_unstable();
        all.dedup();
        all
    };
    let mut headers = vec![
        "data set".to_string(),
        "dist".to_string(),
        "threads".to_string(),
    ];
    headers.extend(instances.iter().map(|n| format!("{n} inst")));
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut table = Table::new(
        "Total latch wait (ms) by instance count, every thread count",
        &header_refs,
    );
    let mut groups: Vec<(&str, &str, u32)> = Vec::new();
    for row in rows {
        let key = (row.dataset, row.distribution, row.threads);
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    for (dataset, distribution, threads) in groups {
        let mut cells = vec![
            dataset.to_string(),
            distribution.to_string(),
            threads.to_string(),
        ];
        for &n in &instances {
            cells.push(
                rows.iter()
                    .find(|r| {
                        r.dataset == dataset
                            && r.distribution == distribution
                            && r.threads == threads
                            && r.instances == n
                    })
                    .map_or_else(|| "-".to_string(), |r| ms(r.latch_wait_ns)),
            );
        }
        table.add_row(cells);
    }
    table
}

fn baselines_table(baselines: &Baselines) -> Table {
    let mut table = Table::new(
        "Baselines: the technique switched off, alternating rounds (rates from summed ops)",
        &[
            "comparison",
            "A ops/s",
            "B ops/s",
            "result",
            "per-round range",
            "from CPU time",
        ],
    );
    if let Some(a) = &baselines.accounting {
        let costs = a.round_costs_pct();
        let (min, max) = min_max(&costs);
        table.add_row(vec![
            "latch accounting: A on, B off".into(),
            format_count(Some(a.a_ops_per_s)),
            format_count(Some(a.b_ops_per_s)),
            format!("overhead {}%", format_number(Some(a.a_cost_pct()), 2)),
            format!(
                "{}% .. {}% (median {}%)",
                format_number(min, 2),
                format_number(max, 2),
                format_number(median(&costs), 2)
            ),
            a.a_cpu_cost_pct().map_or_else(
                || "-".into(),
                |v| format!("overhead {}%", format_number(Some(v), 2)),
            ),
        ]);
    }
    if let Some(o) = &baselines.optimistic {
        let (min, max) = min_max(&o.round_ratios);
        table.add_row(vec![
            "page reads: A optimistic, B shared latch".into(),
            format_count(Some(o.a_ops_per_s)),
            format_count(Some(o.b_ops_per_s)),
            format!("A/B {}", format_ratio(Some(o.ratio))),
            format!("{} .. {}", format_ratio(min), format_ratio(max)),
            format!("A/B {}", format_ratio(o.cpu_ratio)),
        ]);
    }
    table
}

/// Per-round overheads further apart than this (percentage points) mean some round
/// was disturbed (by other work, or by the pool switching speed; see the crate docs).
const UNSTABLE_SPREAD_PCT: f64 = 10.0;

/// A warning when the accounting rounds disagree too much for the summed figure.
fn unstable_note(summary: &BufferPoolSummary) -> Option<String> {
    let (min, max) = (
        summary.accounting_overhead_min_pct?,
        summary.accounting_overhead_max_pct?,
    );
    (max - min > UNSTABLE_SPREAD_PCT).then(|| {
        format!(
            "note: the accounting rounds disagree ({}% .. {}%): at least one window was \
             disturbed, which skews the summed figure; the median ({}%) is the steadier one",
            format_number(Some(min), 1),
            format_number(Some(max), 1),
            format_number(summary.accounting_overhead_median_pct, 2)
        )
    })
}

fn summary_table(summary: &BufferPoolSummary) -> Table {
    let mut table = Table::new("Summary (S4 targets)", &["figure", "value", "target"]);
    let pct = |v: Option<f64>| {
        v.map_or_else(|| "-".into(), |v| format!("{}%", format_number(Some(v), 2)))
    };
    table.add_row(vec![
        "latch accounting overhead (summed ops)".into(),
        pct(summary.accounting_overhead_pct),
        "<= 3%".into(),
    ]);
    table.add_row(vec![
        "  median of rounds / from CPU time".into(),
        format!(
            "{} / {}",
            pct(summary.accounting_overhead_median_pct),
            pct(summary.accounting_overhead_cpu_pct)
        ),
        "-".into(),
    ]);
    table.add_row(vec![
        "optimistic / shared-latch reads".into(),
        format_ratio(summary.optimistic_vs_shared_ratio),
        "> 1x".into(),
    ]);
    let best = |n: Option<u32>, r: Option<f64>| match (n, r) {
        (Some(n), Some(r)) => format!("{r:.1}x less at {n} instances"),
        _ => "-".into(),
    };
    table.add_row(vec![
        format!(
            "larger: total latch wait, 1st count / best ({} threads)",
            summary.s4_threads
        ),
        best(summary.best_instances, summary.wait_reduction_at_best),
        "S4: 8.5x-13x less at 16".into(),
    ]);
    table.add_row(vec![
        format!(
            "fits: total latch wait, 1st count / best ({} threads)",
            summary.s4_threads
        ),
        best(
            summary.best_instances_fits,
            summary.wait_reduction_at_best_fits,
        ),
        "waits low at any count".into(),
    ]);
    table
}
