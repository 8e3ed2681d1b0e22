//! `tarn bench secondary`: the S2 sorted asynchronous prefetch for secondary-index range
//! scans, against the same scan without prefetch and against fio.
//!
//! S2 found that a range scan on a secondary index spends most of its time waiting for
//! one random clustered-index read at a time, and that reading the batch's leaf pages
//! ahead (sorted, de-duplicated, asynchronously) was about 3.1x faster, plateauing
//! where the device's internal parallelism is used up. This bench runs the equivalent
//! of
//!
//! ```sql
//! SELECT * FROM tpch.orders FORCE INDEX (o_custkey) WHERE o_custkey BETWEEN a AND b
//! ```
//!
//! through [`tarn_catalog::Table::index_scan`] for each prefetch unit (`0` = no
//! prefetch, the baseline; fixed units; `adaptive`) at several selectivities.
//!
//! # How a run goes
//! 1. TPC-H is loaded at `--sf` into the data directory, or a kept `--data-dir` whose
//!    load has the same scale factor is reused.
//! 2. For each selectivity and round, a custkey range holding about that share of the
//!    orders is chosen from the seed ([`choose_range`]); every unit of the round scans
//!    that same range, in an order rotated each round.
//! 3. **Cold**: each scan opens a fresh [`Storage`] (a new, empty buffer pool large
//!    enough to hold everything the scan reads) on `O_DIRECT` files, so every page the
//!    scan touches is read from the device once, never from the OS page cache.
//! 4. Every scan is verified: each row's `o_custkey` lies in the range and the rows
//!    come in index order, and every unit returns exactly the rows unit 0 returned
//!    (count and an order-sensitive hash of `o_orderkey`). A mismatch fails the bench.
//! 5. fio runs random 1-page reads (`direct=1`, io_uring) on the orders clustered data
//!    file at the queue depths the units can reach, in short passes before the scans
//!    and after each round (merged), and each row is compared with fio at its depth
//!    ([`matching_depth`]).
//! 6. [`summarize`] computes the ratios the issue's targets name.
//!
//! # Figures
//! - `seconds`: the median over rounds of the scan's wall time (first row to last).
//! - `speedup`: median seconds of unit 0 / median seconds of the unit.
//! - `read_iops`: buffer-pool page reads (synchronous misses plus prefetch reads) during
//!   the scans ÷ their seconds, summed over rounds.
//! - `waits`: row fetches per scan that waited for a read (longer than 20 us).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;

use tarn_btree::Direction;
use tarn_catalog::Storage;
use tarn_common::limits::{IO_THREADS_MAX, IO_URING_QUEUE_DEPTH_MAX, PREFETCH_UNIT_MAX};
use tarn_common::settings::{IoMethod, PrefetchUnit, Settings};
use tarn_row::Value;

use crate::fio::{self, Fio, FioJob, FioResult};
use crate::report::{
    BenchDocument, Output, Table, data_dir_fate, format_count, format_number, format_ratio, ratio,
};
use crate::stats::lower_median;
use crate::tpch::{self, load::DATABASE};
use crate::workdir::WorkDir;
use crate::{BenchError, Result, check_rounds};

/// The table and index scanned.
pub const TABLE: &str = "orders";
pub const INDEX: &str = "o_custkey";

pub const SCALE_FACTOR_DEFAULT: f64 = 1.0;
pub const SCALE_FACTOR_QUICK: f64 = 0.2;
pub const UNITS_DEFAULT: [PrefetchUnit; 6] = [
    PrefetchUnit::Fixed(0),
    PrefetchUnit::Fixed(8),
    PrefetchUnit::Fixed(32),
    PrefetchUnit::Fixed(128),
    PrefetchUnit::Fixed(256),
    PrefetchUnit::Adaptive,
];
pub const SELECTIVITIES_DEFAULT_PCT: [f64; 3] = [0.1, 1.0, 5.0];
pub const SELECTIVITIES_QUICK_PCT: [f64; 1] = [1.0];
/// The selectivity the summary's headline ratios are taken at.
pub const HEADLINE_SELECTIVITY_PCT: f64 = 1.0;
pub const ROUNDS_DEFAULT: u32 = 3;
pub const ROUNDS_QUICK: u32 = 1;
pub const ROUNDS_MAX: u32 = 101;
pub const SEED_DEFAULT: u64 = 0x5EC0_4DA2;
/// fio seconds per depth, split into equal passes before the scans and after each
/// round (each pass at least [`FIO_PASS_SECONDS_MIN`]).
pub const FIO_SECONDS_DEFAULT: f64 = 4.0;
pub const FIO_SECONDS_QUICK: f64 = 2.0;
pub const FIO_PASS_SECONDS_MIN: f64 = 0.5;
/// fio always runs at these depths too (synchronous, and the study's plateau).
pub const FIO_DEPTHS_ALWAYS: [u32; 2] = [1, 32];
/// Buffer pool slack over the bytes a scan can read (instances fill unevenly).
const POOL_SLACK_NUM: u64 = 5;
const POOL_SLACK_DEN: u64 = 4;
const POOL_EXTRA_BYTES: u64 = 64 << 20;

pub const COLD_NOTE: &str = "cold: every scan opens a fresh Storage (new, empty buffer pool \
     big enough for everything the scan reads) on O_DIRECT data files, so every page it \
     touches is a device read, never an OS page-cache hit";

/// What `tarn bench secondary` was asked to do.
#[derive(Clone, Debug)]
pub struct SecondaryBenchOptions {
    /// Engine settings (from `--set`); the bench sets `data_dir`, `io_method` and
    /// `buffer_pool_size` for the scans.
    pub settings: Settings,
    pub quick: bool,
    pub scale_factor: f64,
    pub data_dir: Option<PathBuf>,
    /// Prefetch units; unit 0 (the baseline) is added first if missing.
    pub units: Vec<PrefetchUnit>,
    pub selectivities_pct: Vec<f64>,
    pub rounds: u32,
    pub seed: u64,
    /// The scans' I/O path: `direct` (synchronous `O_DIRECT`, prefetch on I/O threads)
    /// or `uring` (`O_DIRECT` through io_uring). Both bypass the OS page cache.
    pub io_method: IoMethod,
    pub fio: bool,
    pub fio_seconds: f64,
}

impl SecondaryBenchOptions {
    /// The defaults for a full or a quick run.
    pub fn new(settings: Settings, quick: bool) -> SecondaryBenchOptions {
        SecondaryBenchOptions {
            settings,
            quick,
            scale_factor: if quick {
                SCALE_FACTOR_QUICK
            } else {
                SCALE_FACTOR_DEFAULT
            },
            data_dir: None,
            units: UNITS_DEFAULT.to_vec(),
            selectivities_pct: if quick {
                SELECTIVITIES_QUICK_PCT.to_vec()
            } else {
                SELECTIVITIES_DEFAULT_PCT.to_vec()
            },
            rounds: if quick { ROUNDS_QUICK } else { ROUNDS_DEFAULT },
            seed: SEED_DEFAULT,
            io_method: IoMethod::Uring,
            fio: true,
            fio_seconds: if quick {
                FIO_SECONDS_QUICK
            } else {
                FIO_SECONDS_DEFAULT
            },
        }
    }

    /// Checks the options; returns the units (unit 0 first, each once) and the
    /// selectivities (each once, in the given order).
    fn validated(&self) -> Result<(Vec<PrefetchUnit>, Vec<f64>)> {
        tpch::check_sf_option(self.scale_factor)?;
        check_rounds(self.rounds, ROUNDS_MAX)?;
        if !matches!(self.io_method, IoMethod::Direct | IoMethod::Uring) {
            return Err(BenchError::Options(format!(
                "--io-method must be direct or uring (both O_DIRECT), not {}",
                self.io_method
            )));
        }
        fio::check_seconds(self.fio_seconds)?;
        let mut units = vec![PrefetchUnit::Fixed(0)];
        for unit in &self.units {
            if !units.contains(unit) {
                units.push(*unit);
            }
        }
        if units.len() < 2 {
            return Err(BenchError::Options(
                "--units must name at least one unit besides 0 (the baseline)".into(),
            ));
        }
        let mut selectivities: Vec<f64> = Vec::new();
        for &pct in &self.selectivities_pct {
            if !(pct > 0.0 && pct <= 100.0) {
                return Err(BenchError::Options(format!(
                    "--selectivities are percentages of orders, more than 0 and at most 100, \
                     not {pct}"
                )));
            }
            if !selectivities.iter().any(|s| same_pct(*s, pct)) {
                selectivities.push(pct);
            }
        }
        if selectivities.is_empty() {
            return Err(BenchError::Options(
                "--selectivities selects nothing".into(),
            ));
        }
        Ok((units, selectivities))
    }
}

fn same_pct(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// `0`, `32` or `adaptive`.
pub fn unit_label(unit: PrefetchUnit) -> String {
    unit.to_string()
}

/// The custkey range `[low, high]` of `round` at `selectivity_pct`: a window of
/// `customers * selectivity_pct / 100` consecutive keys (at least one) at a seeded
/// pseudo-random position. TPC-H gives every customer key not divisible by 3 about the
/// same number of orders at random positions of the order key space, so the window
/// holds about `selectivity_pct` percent of the orders, scattered over the whole
/// clustered index.
pub fn choose_range(customers: u64, selectivity_pct: f64, seed: u64, round: u32) -> (i64, i64) {
    let customers = customers.max(1);
    let width = ((customers as f64 * selectivity_pct / 100.0).round() as u64).clamp(1, customers);
    let positions = customers - width + 1;
    let mut state = seed
        ^ selectivity_pct.to_bits().rotate_left(17)
        ^ u64::from(round).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let low = 1 + splitmix64(&mut state) % positions;
    (low as i64, (low + width - 1) as i64)
}

/// One step of splitmix64: a small, well-mixed, dependency-free generator.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The reads a unit can keep in flight, i.e. the queue depth fio should be compared at:
/// unit 0 reads synchronously (1); a fixed unit `n` keeps the pages of up to `n`
/// entries being read, bounded by the pool's `prefetch_in_flight_max` and the I/O
/// engine's depth (`io_uring_queue_depth`, or `io_threads` on the direct path);
/// `adaptive`, which may grow to `PREFETCH_UNIT_MAX`, is matched at the deepest.
pub fn matching_depth(unit: u32, in_flight_max: u32, engine_depth: u32) -> u32 {
    unit.min(in_flight_max).min(engine_depth).max(1)
}

/// What one cold scan did.
#[derive(Clone, Debug)]
pub struct ScanMeasurement {
    pub rows: u64,
    /// Order-sensitive hash of the rows' `o_orderkey`s.
    pub checksum: u64,
    pub seconds: f64,
    pub page_reads: u64,
    pub misses: u64,
    pub prefetch_issued: u64,
    pub prefetch_skipped: u64,
    pub io_waits: u64,
    pub waits: u64,
    pub pages_prefetched: u64,
    pub unit_final: u32,
    pub unit_max: u32,
    /// The most prefetch reads in flight at once during the scan.
    pub in_flight_peak: u64,
    /// Seconds of the same scan repeated on the now warm pool (no reads).
    pub warm_seconds: f64,
}

/// Checks the rows of one scan as they arrive and hashes their order keys.
struct RowCheck {
    low: i64,
    high: i64,
    rows: u64,
    hash: u64,
    last: Option<(i64, i64)>,
}

const FNV_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01B3;

impl RowCheck {
    fn new(low: i64, high: i64) -> RowCheck {
        RowCheck {
            low,
            high,
            rows: 0,
            hash: FNV_OFFSET,
            last: None,
        }
    }

    fn row(&mut self, row: &[Value]) -> std::result::Result<(), String> {
        let int = |index: usize, name: &str| match row.get(index) {
            Some(Value::Int(v)) => Ok(*v),
            Some(Value::UInt(v)) => i64::try_from(*v).map_err(|_| format!("{name} {v} too big")),
            other => Err(format!("{name} is {other:?}, not an integer")),
        };
        let orderkey = int(0, "o_orderkey")?;
        let custkey = int(1, "o_custkey")?;
        if custkey < self.low || custkey > self.high {
            return Err(format!(
                "row {} has o_custkey {custkey}, outside {}..={}",
                self.rows + 1,
                self.low,
                self.high
            ));
        }
        if let Some(last) = self.last
            && (custkey, orderkey) <= last
        {
            return Err(format!(
                "row {} (o_custkey {custkey}, o_orderkey {orderkey}) is not after the row \
                 before it ({last:?}) in index order",
                self.rows + 1
            ));
        }
        self.last = Some((custkey, orderkey));
        for byte in orderkey.to_le_bytes() {
            self.hash = (self.hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
        }
        self.rows += 1;
        Ok(())
    }
}

/// Scans `[low, high]` of `table` with `unit`, checking every row; returns the
/// scan's statistics, the row check and the seconds from start to the last row.
fn scan_range(
    table: &tarn_catalog::Table,
    low: i64,
    high: i64,
    unit: PrefetchUnit,
    label: &str,
) -> Result<(tarn_catalog::IndexScanStats, RowCheck, f64)> {
    let mut check = RowCheck::new(low, high);
    let started = Instant::now();
    let mut scan = table.index_scan(
        INDEX,
        Bound::Included(vec![Value::Int(low)]),
        Bound::Included(vec![Value::Int(high)]),
        Direction::Forward,
        Some(unit),
    )?;
    while let Some(row) = scan.next_row()? {
        check.row(&row).map_err(|detail| BenchError::WrongData {
            row: label.to_string(),
            detail,
        })?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let stats = scan.stats();
    if stats.rows != check.rows {
        return Err(BenchError::WrongData {
            row: label.to_string(),
            detail: format!(
                "the scan counted {} rows but returned {}",
                stats.rows, check.rows
            ),
        });
    }
    Ok((stats, check, seconds))
}

/// Runs one cold scan of `[low, high]` with `unit` on a fresh [`Storage`], then
/// repeats it on the now warm pool (the unit's CPU floor: no reads at all).
fn measure_scan(
    settings: &Settings,
    low: i64,
    high: i64,
    unit: PrefetchUnit,
    label: &str,
) -> Result<ScanMeasurement> {
    let storage = Storage::open(settings)?;
    let table = storage.table(DATABASE, TABLE)?;
    let pool = storage.pool().clone();
    let before = pool.stats();
    let (stats, check, seconds) = scan_range(&table, low, high, unit, label)?;
    let after = pool.stats();
    let warm_seconds = {
        let (_, warm_check, warm_seconds) = scan_range(&table, low, high, unit, label)?;
        if (warm_check.rows, warm_check.hash) != (check.rows, check.hash) {
            return Err(BenchError::WrongData {
                row: format!("{label} (warm repeat)"),
                detail: "the warm repeat returned other rows than the cold scan".into(),
            });
        }
        warm_seconds
    };
    if after.prefetch_failed > before.prefetch_failed {
        return Err(BenchError::WrongData {
            row: label.to_string(),
            detail: format!(
                "{} prefetch reads failed",
                after.prefetch_failed - before.prefetch_failed
            ),
        });
    }
    Ok(ScanMeasurement {
        rows: check.rows,
        checksum: check.hash,
        seconds,
        page_reads: after.page_reads - before.page_reads,
        misses: after.misses - before.misses,
        prefetch_issued: after.prefetch_issued - before.prefetch_issued,
        prefetch_skipped: after.prefetch_skipped - before.prefetch_skipped,
        io_waits: after.io_waits - before.io_waits,
        waits: stats.waits,
        pages_prefetched: stats.pages_prefetched,
        unit_final: stats.unit_final,
        unit_max: stats.unit_max,
        in_flight_peak: after.prefetch_in_flight_peak,
        warm_seconds,
    })
}

/// One measured cell (selectivity x unit), as printed and in the JSON `rows`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SecondaryRow {
    pub selectivity_pct: f64,
    pub unit: String,
    pub rounds: u32,
    /// Rows per scan, each round (every unit of a round returns the same rows).
    pub rows_per_round: Vec<u64>,
    /// Share of all orders the scans returned, in percent (mean over rounds).
    pub achieved_selectivity_pct: f64,
    /// Median scan seconds over rounds.
    pub seconds: f64,
    pub seconds_per_round: Vec<f64>,
    /// Median seconds of unit 0 / median seconds of this unit.
    pub speedup: Option<f64>,
    /// Buffer-pool page reads per scan (mean over rounds).
    pub page_reads: f64,
    /// Page reads ÷ scan seconds, over all rounds.
    pub read_iops: f64,
    /// Synchronous misses (the consumer read the page itself) and prefetch reads per
    /// scan (mean over rounds).
    pub misses: f64,
    pub prefetch_issued: f64,
    pub prefetch_skipped: f64,
    /// Row fetches that waited for a read, per scan (mean over rounds).
    pub waits: f64,
    /// The unit at the end of the scan (median over rounds) and the largest it reached
    /// (over all rounds); for a fixed unit both are the unit.
    pub unit_final: u32,
    pub unit_max: u32,
    /// The most prefetch reads in flight at once (the largest over rounds).
    pub in_flight_peak: u64,
    /// Median seconds of the same scan repeated warm (all pages cached, the prefetch
    /// work still done): the CPU floor of this unit.
    pub warm_seconds: Option<f64>,
    /// The fio queue depth this row is compared at ([`matching_depth`]), fio's IOPS
    /// there, and read_iops / fio_iops.
    pub fio_depth: u32,
    pub fio_iops: Option<f64>,
    pub iops_vs_fio: Option<f64>,
}

impl SecondaryRow {
    fn fixed_unit(&self) -> Option<u32> {
        self.unit.parse().ok()
    }

    fn is_adaptive(&self) -> bool {
        self.unit == "adaptive"
    }
}

/// Builds a row from its rounds' measurements.
fn build_row(
    selectivity_pct: f64,
    unit: PrefetchUnit,
    scans: &[ScanMeasurement],
    orders: u64,
    fio_depth: u32,
) -> SecondaryRow {
    let n = scans.len().max(1) as f64;
    let mean = |f: fn(&ScanMeasurement) -> u64| scans.iter().map(f).sum::<u64>() as f64 / n;
    let seconds_per_round: Vec<f64> = scans.iter().map(|s| s.seconds).collect();
    let total_seconds: f64 = seconds_per_round.iter().sum();
    let total_reads: u64 = scans.iter().map(|s| s.page_reads).sum();
    let finals: Vec<f64> = scans.iter().map(|s| f64::from(s.unit_final)).collect();
    SecondaryRow {
        selectivity_pct,
        unit: unit_label(unit),
        rounds: scans.len() as u32,
        rows_per_round: scans.iter().map(|s| s.rows).collect(),
        achieved_selectivity_pct: mean(|s| s.rows) / orders.max(1) as f64 * 100.0,
        seconds: lower_median(&seconds_per_round).unwrap_or(0.0),
        seconds_per_round,
        speedup: None,
        page_reads: mean(|s| s.page_reads),
        read_iops: if total_seconds > 0.0 {
            total_reads as f64 / total_seconds
        } else {
            0.0
        },
        misses: mean(|s| s.misses),
        prefetch_issued: mean(|s| s.prefetch_issued),
        prefetch_skipped: mean(|s| s.prefetch_skipped),
        waits: mean(|s| s.waits),
        unit_final: lower_median(&finals).unwrap_or(0.0) as u32,
        unit_max: scans.iter().map(|s| s.unit_max).max().unwrap_or(0),
        in_flight_peak: scans.iter().map(|s| s.in_flight_peak).max().unwrap_or(0),
        warm_seconds: lower_median(&scans.iter().map(|s| s.warm_seconds).collect::<Vec<_>>()),
        fio_depth,
        fio_iops: None,
        iops_vs_fio: None,
    }
}

/// The figures of one selectivity.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SelectivitySummary {
    pub selectivity_pct: f64,
    /// The fixed unit (> 0) with the lowest median time.
    pub best_fixed_unit: Option<u32>,
    /// time(unit 0) / time(best fixed unit).
    pub prefetch_speedup: Option<f64>,
    /// time(best fixed) / time(adaptive): 1 = as fast, >= 0.9 = within 10%.
    pub adaptive_vs_best_fixed: Option<f64>,
    /// The best fixed unit's read IOPS / fio's at its depth.
    pub best_fixed_iops_vs_fio: Option<f64>,
}

/// The ratios the issue's targets name (at 1% selectivity); `null` when a needed
/// cell (or fio) was not measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SecondarySummary {
    /// time(unit 0) / time(best fixed unit) at 1% (target >= 3.1).
    pub prefetch_speedup_1pct: Option<f64>,
    pub best_fixed_unit_1pct: Option<u32>,
    /// The best fixed unit's read IOPS at 1% / fio's random-read IOPS at the depth that
    /// unit can keep in flight (`prefetch_iops_vs_fio_depth`, see [`matching_depth`])
    /// (target >= 0.9).
    pub prefetch_iops_vs_fio: Option<f64>,
    pub prefetch_iops_vs_fio_depth: Option<u32>,
    pub prefetch_iops_1pct: Option<f64>,
    pub fio_iops_at_depth: Option<f64>,
    /// The same IOPS / the highest fio IOPS at any measured depth (the device's limit).
    pub prefetch_iops_vs_fio_max: Option<f64>,
    /// time(best fixed) / time(adaptive) at 1% (target >= 0.9).
    pub adaptive_vs_best_fixed: Option<f64>,
    pub adaptive_unit_max_1pct: Option<u32>,
    /// Unit 0's time at 1% / the same scan warm: the most any prefetch could gain.
    pub speedup_ceiling_cpu_1pct: Option<f64>,
    /// fio's best IOPS / fio's IOPS at depth 1: the most the device lets prefetch gain.
    pub speedup_ceiling_device: Option<f64>,
    /// Unit 0's read IOPS at 1% / fio at depth 1 (the synchronous path's overhead).
    pub no_prefetch_iops_vs_fio_qd1: Option<f64>,
    /// fio random-read IOPS by depth.
    pub fio_iops_by_depth: BTreeMap<u32, f64>,
    pub by_selectivity: Vec<SelectivitySummary>,
    pub scans: u64,
    pub rows_verified_total: u64,
}

/// Computes speedups for `rows` in place.
fn fill_speedups(rows: &mut [SecondaryRow]) {
    let baseline: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| r.fixed_unit() == Some(0))
        .map(|r| (r.selectivity_pct, r.seconds))
        .collect();
    for row in rows.iter_mut() {
        let base = baseline
            .iter()
            .find(|(pct, _)| same_pct(*pct, row.selectivity_pct))
            .map(|(_, seconds)| *seconds);
        row.speedup = ratio(base, Some(row.seconds));
    }
}

/// Attaches fio's IOPS at each row's depth.
fn fill_fio(rows: &mut [SecondaryRow], fio: &BTreeMap<u32, f64>) {
    for row in rows.iter_mut() {
        row.fio_iops = fio.get(&row.fio_depth).copied();
        row.iops_vs_fio = ratio(Some(row.read_iops), row.fio_iops);
    }
}

/// The summary of measured rows (speedups and fio figures already filled in).
pub fn summarize(
    rows: &[SecondaryRow],
    selectivities: &[f64],
    fio: &BTreeMap<u32, f64>,
) -> SecondarySummary {
    let by_selectivity: Vec<SelectivitySummary> = selectivities
        .iter()
        .map(|&pct| {
            let cells: Vec<&SecondaryRow> = rows
                .iter()
                .filter(|r| same_pct(r.selectivity_pct, pct))
                .collect();
            let best = cells
                .iter()
                .filter(|r| r.fixed_unit().is_some_and(|u| u > 0))
                .min_by(|a, b| a.seconds.total_cmp(&b.seconds));
            let adaptive = cells.iter().find(|r| r.is_adaptive());
            SelectivitySummary {
                selectivity_pct: pct,
                best_fixed_unit: best.and_then(|r| r.fixed_unit()),
                prefetch_speedup: best.and_then(|r| r.speedup),
                adaptive_vs_best_fixed: ratio(best.map(|r| r.seconds), adaptive.map(|r| r.seconds)),
                best_fixed_iops_vs_fio: best.and_then(|r| r.iops_vs_fio),
            }
        })
        .collect();
    let headline = |pct: f64| {
        rows.iter()
            .filter(move |r| same_pct(r.selectivity_pct, pct))
    };
    let head = by_selectivity
        .iter()
        .find(|s| same_pct(s.selectivity_pct, HEADLINE_SELECTIVITY_PCT));
    let best_row = head
        .and_then(|s| s.best_fixed_unit)
        .and_then(|unit| headline(HEADLINE_SELECTIVITY_PCT).find(|r| r.fixed_unit() == Some(unit)));
    let adaptive_row = headline(HEADLINE_SELECTIVITY_PCT).find(|r| r.is_adaptive());
    let unit0_row = headline(HEADLINE_SELECTIVITY_PCT).find(|r| r.fixed_unit() == Some(0));
    let fio_max = fio.values().copied().fold(None, |max: Option<f64>, v| {
        Some(max.map_or(v, |m| m.max(v)))
    });
    SecondarySummary {
        prefetch_speedup_1pct: head.and_then(|s| s.prefetch_speedup),
        best_fixed_unit_1pct: head.and_then(|s| s.best_fixed_unit),
        prefetch_iops_vs_fio: best_row.and_then(|r| r.iops_vs_fio),
        prefetch_iops_vs_fio_depth: best_row.map(|r| r.fio_depth),
        prefetch_iops_1pct: best_row.map(|r| r.read_iops),
        fio_iops_at_depth: best_row.and_then(|r| r.fio_iops),
        prefetch_iops_vs_fio_max: ratio(best_row.map(|r| r.read_iops), fio_max),
        adaptive_vs_best_fixed: head.and_then(|s| s.adaptive_vs_best_fixed),
        adaptive_unit_max_1pct: adaptive_row.map(|r| r.unit_max),
        speedup_ceiling_cpu_1pct: unit0_row.and_then(|r| ratio(Some(r.seconds), r.warm_seconds)),
        speedup_ceiling_device: ratio(fio_max, fio.get(&1).copied()),
        no_prefetch_iops_vs_fio_qd1: unit0_row
            .and_then(|r| ratio(Some(r.read_iops), fio.get(&1).copied())),
        fio_iops_by_depth: fio.clone(),
        by_selectivity,
        scans: rows.iter().map(|r| u64::from(r.rounds)).sum(),
        rows_verified_total: rows
            .iter()
            .map(|r| r.rows_per_round.iter().sum::<u64>())
            .sum(),
    }
}

/// One selectivity's custkey range in one round.
#[derive(Clone, Debug, Serialize)]
pub struct RangeUsed {
    pub selectivity_pct: f64,
    pub round: u32,
    pub o_custkey_low: i64,
    pub o_custkey_high: i64,
    pub rows: u64,
}

/// fio at one depth.
#[derive(Clone, Debug, Serialize)]
pub struct FioRow {
    pub depth: u32,
    pub iops: f64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
}

/// What the run measured against and under which conditions (the JSON `config`).
#[derive(Clone, Debug, Serialize)]
pub struct SecondaryBenchConfig {
    pub quick: bool,
    pub scale_factor: f64,
    pub data_dir: String,
    pub data_dir_kept: bool,
    pub loaded: String,
    pub orders: u64,
    pub customers: u64,
    pub clustered_file: String,
    pub clustered_file_bytes: u64,
    pub index_file_bytes: u64,
    pub page_size_bytes: u32,
    pub io_method: &'static str,
    pub io_uring_queue_depth: u32,
    pub io_threads: u32,
    pub prefetch_in_flight_max: u32,
    pub buffer_pool_size_bytes: u64,
    pub units: Vec<String>,
    pub selectivities_pct: Vec<f64>,
    pub rounds: u32,
    pub seed: u64,
    pub ranges: Vec<RangeUsed>,
    pub fio: bool,
    pub fio_version: Option<String>,
    pub fio_seconds_per_depth: f64,
    pub fio_results: Vec<FioRow>,
    pub cold: &'static str,
    pub baseline: String,
}

/// A finished run.
pub struct SecondaryReport {
    pub config: SecondaryBenchConfig,
    pub rows: Vec<SecondaryRow>,
    pub summary: SecondarySummary,
}

/// Runs the bench and prints its tables and notes (and, with `--json`, the document).
pub fn run_and_print(options: &SecondaryBenchOptions, output: &Output) -> Result<SecondaryReport> {
    let report = run(options, output)?;
    print(&report, output)?;
    Ok(report)
}

/// Runs the bench, printing progress lines only.
pub fn run(options: &SecondaryBenchOptions, output: &Output) -> Result<SecondaryReport> {
    let (units, selectivities) = options.validated()?;
    let fio = Fio::find_or_install_if(options.fio, output)?;
    let workdir = WorkDir::open(options.data_dir.as_deref(), ".tarn-bench-secondary-")?;
    workdir.warn_if_in_memory(output, "these scans measure memory, not a device");
    let mut settings = options.settings.clone();
    settings.data_dir = workdir.path().to_path_buf();

    // The data, the files the scans read, and a pool that holds all of them.
    let (loaded, clustered_file, clustered_bytes, index_bytes, page_size) = {
        let storage = Storage::open(&settings)?;
        let loaded = tpch::load::ensure_loaded(&storage, options.scale_factor, output)?;
        let table = storage.table(DATABASE, TABLE)?;
        let (clustered_file, clustered_bytes) =
            tpch::load::tree_file(&storage, table.clustered().file_id())?;
        let (_, index_bytes) = tpch::load::tree_file(&storage, table.index(INDEX)?.tree.file_id())?;
        (
            loaded.text,
            clustered_file,
            clustered_bytes,
            index_bytes,
            storage.datadir().page_size_bytes() as u32,
        )
    };
    settings.io_method = options.io_method;
    settings.page_size_bytes = page_size;
    let needed =
        (clustered_bytes + index_bytes) * POOL_SLACK_NUM / POOL_SLACK_DEN + POOL_EXTRA_BYTES;
    settings.buffer_pool_size_bytes = settings
        .buffer_pool_size_bytes
        .max(needed.next_multiple_of(1 << 20));
    settings.validate()?;

    let orders = tpch::row_count_estimate(TABLE, options.scale_factor)?;
    let customers = tpch::row_count_estimate("customer", options.scale_factor)?;
    let engine_depth = match options.io_method {
        IoMethod::Uring => settings.io_uring_queue_depth.min(IO_URING_QUEUE_DEPTH_MAX),
        _ => settings.io_threads.min(IO_THREADS_MAX),
    };
    let depth_of = |unit: u32| matching_depth(unit, settings.prefetch_in_flight_max, engine_depth);
    // Adaptive may grow to the largest unit, so it is compared at the deepest depth.
    let unit_depth = |unit: PrefetchUnit| match unit {
        PrefetchUnit::Fixed(n) => depth_of(n),
        PrefetchUnit::Adaptive => depth_of(PREFETCH_UNIT_MAX),
    };
    let fio_depths = {
        let mut depths: Vec<u32> = units
            .iter()
            .map(|u| unit_depth(*u))
            .chain(FIO_DEPTHS_ALWAYS)
            .collect();
        depths.sort_unstable();
        depths.dedup();
        depths
    };

    let cells = selectivities.len() * units.len() * options.rounds as usize;
    output.progress(&format!(
        "tarn bench secondary: {cells} cold scans of {DATABASE}.{TABLE} by {INDEX} \
         ({} selectivities x {} units x {} rounds), io_method={}, pool {} MiB, seed {:#x}",
        selectivities.len(),
        units.len(),
        options.rounds,
        options.io_method,
        settings.buffer_pool_size_bytes >> 20,
        options.seed
    ));

    // fio runs once before the scans and once after each round, each time at every
    // depth for an equal share of its seconds, so that drift of the shared device
    // reaches fio and the scans alike; the passes are merged.
    let file_pages = clustered_bytes / u64::from(page_size);
    let fio_pass_seconds =
        (options.fio_seconds / f64::from(options.rounds + 1)).max(FIO_PASS_SECONDS_MIN);
    let mut fio_passes: BTreeMap<u32, Vec<FioResult>> = BTreeMap::new();
    let mut fio_pass = |when: &str| -> Result<()> {
        let Some(fio) = &fio else {
            return Ok(());
        };
        let mut line = format!("fio randread {when}:");
        for &depth in &fio_depths {
            let result = fio.run(&FioJob::uring_read(
                &clustered_file,
                "randread",
                file_pages * u64::from(page_size),
                page_size,
                depth,
                fio_pass_seconds,
            ))?;
            line.push_str(&format!(" qd{depth} {}", format_count(Some(result.iops))));
            fio_passes.entry(depth).or_default().push(result);
        }
        output.progress(&format!("{line} IOPS"));
        Ok(())
    };
    fio_pass("before the scans")?;

    let mut ranges = Vec::new();
    let mut measured: Vec<Vec<Vec<ScanMeasurement>>> =
        vec![vec![Vec::new(); units.len()]; selectivities.len()];
    let mut done = 0;
    for round in 0..options.rounds {
        for (s, &pct) in selectivities.iter().enumerate() {
            let (low, high) = choose_range(customers, pct, options.seed, round);
            let mut reference: Option<(u64, u64)> = None;
            let mut results: Vec<Option<ScanMeasurement>> = vec![None; units.len()];
            // Rotate the order each round so drift does not favour one unit.
            for k in 0..units.len() {
                let u = (k + round as usize) % units.len();
                let unit = units[u];
                let label = format!(
                    "sel {pct}% unit {} round {} (o_custkey {low}..={high})",
                    unit_label(unit),
                    round + 1
                );
                let scan = measure_scan(&settings, low, high, unit, &label)?;
                done += 1;
                output.progress(&format!(
                    "[{done}/{cells}] {label}: {} rows in {:.3} s, {} reads ({} IOPS), {} waits, \
                     unit {}/{}, {} in flight at most; warm repeat {:.3} s",
                    scan.rows,
                    scan.seconds,
                    scan.page_reads,
                    format_count(ratio(Some(scan.page_reads as f64), Some(scan.seconds))),
                    scan.waits,
                    scan.unit_final,
                    scan.unit_max,
                    scan.in_flight_peak,
                    scan.warm_seconds,
                ));
                results[u] = Some(scan);
            }
            for (u, result) in results.into_iter().enumerate() {
                let scan = result.expect("every unit ran");
                let got = (scan.rows, scan.checksum);
                match reference {
                    None => reference = Some(got),
                    Some(expected) if expected != got => {
                        return Err(BenchError::WrongData {
                            row: format!(
                                "sel {pct}% unit {} round {}",
                                unit_label(units[u]),
                                round + 1
                            ),
                            detail: format!(
                                "returned {} rows (o_orderkey hash {:#x}) but unit 0 returned \
                                 {} rows (hash {:#x}) for o_custkey {low}..={high}",
                                got.0, got.1, expected.0, expected.1
                            ),
                        });
                    }
                    Some(_) => {}
                }
                if u == 0 {
                    ranges.push(RangeUsed {
                        selectivity_pct: pct,
                        round: round + 1,
                        o_custkey_low: low,
                        o_custkey_high: high,
                        rows: scan.rows,
                    });
                }
                measured[s][u].push(scan);
            }
        }
        fio_pass(&format!("after round {}", round + 1))?;
    }

    let mut rows: Vec<SecondaryRow> = Vec::new();
    for (s, &pct) in selectivities.iter().enumerate() {
        for (u, &unit) in units.iter().enumerate() {
            rows.push(build_row(
                pct,
                unit,
                &measured[s][u],
                orders,
                unit_depth(unit),
            ));
        }
    }
    fill_speedups(&mut rows);

    let fio_results: BTreeMap<u32, FioResult> = fio_passes
        .iter()
        .filter_map(|(depth, passes)| Some((*depth, FioResult::merge_all(passes)?)))
        .collect();
    let fio_iops: BTreeMap<u32, f64> = fio_results.iter().map(|(d, r)| (*d, r.iops)).collect();
    fill_fio(&mut rows, &fio_iops);
    let summary = summarize(&rows, &selectivities, &fio_iops);

    let config = SecondaryBenchConfig {
        quick: options.quick,
        scale_factor: options.scale_factor,
        data_dir: workdir.path().display().to_string(),
        data_dir_kept: !workdir.is_temporary(),
        loaded,
        orders,
        customers,
        clustered_file: clustered_file.display().to_string(),
        clustered_file_bytes: clustered_bytes,
        index_file_bytes: index_bytes,
        page_size_bytes: page_size,
        io_method: options.io_method.name(),
        io_uring_queue_depth: settings.io_uring_queue_depth,
        io_threads: settings.io_threads,
        prefetch_in_flight_max: settings.prefetch_in_flight_max,
        buffer_pool_size_bytes: settings.buffer_pool_size_bytes,
        units: units.iter().map(|u| unit_label(*u)).collect(),
        selectivities_pct: selectivities.clone(),
        rounds: options.rounds,
        seed: options.seed,
        ranges,
        fio: fio.is_some(),
        fio_version: fio.as_ref().map(|f| f.version().to_string()),
        fio_seconds_per_depth: options.fio_seconds,
        fio_results: fio_results
            .iter()
            .map(|(depth, r)| FioRow {
                depth: *depth,
                iops: r.iops,
                p50_us: r.p50_us,
                p99_us: r.p99_us,
            })
            .collect(),
        cold: COLD_NOTE,
        baseline: baseline_note(fio.is_some(), page_size),
    };
    drop(workdir);
    Ok(SecondaryReport {
        config,
        rows,
        summary,
    })
}

fn baseline_note(fio: bool, page_size_bytes: u32) -> String {
    let fio_text = if fio {
        format!(
            "fio randread on the orders clustered data file (bs {page_size_bytes}, direct=1, \
             ioengine=io_uring), in passes before the scans and after each round, merged; \
             each row is compared with fio at the depth its unit can keep in flight: \
             min(unit, prefetch_in_flight_max, engine queue depth), 1 for unit 0, the \
             deepest for adaptive"
        )
    } else {
        "fio: not run (--no-fio)".to_string()
    };
    format!(
        "baseline: unit 0 (no prefetch: one synchronous read per row fetch) in the same round on the same range; {fio_text}"
    )
}

/// Prints the notes and tables, and the JSON document in `--json` mode.
pub fn print(report: &SecondaryReport, output: &Output) -> Result<()> {
    let config = &report.config;
    output.note(&format!(
        "\ntarn bench secondary (S2): SELECT * FROM {DATABASE}.{TABLE} WHERE {INDEX} BETWEEN a AND b \
         through index {INDEX}, TPC-H SF {} ({} orders, {} customers), data in '{}'{}",
        config.scale_factor,
        config.orders,
        config.customers,
        config.data_dir,
        data_dir_fate(config.data_dir_kept)
    ));
    output.note(&format!("- {}", config.loaded));
    output.note(&format!(
        "- {}; io_method={} (io_uring_queue_depth {}, io_threads {}), \
         prefetch_in_flight_max {}, buffer pool {} MiB for {} MiB of orders data + {} MiB of index",
        config.cold,
        config.io_method,
        config.io_uring_queue_depth,
        config.io_threads,
        config.prefetch_in_flight_max,
        config.buffer_pool_size_bytes >> 20,
        config.clustered_file_bytes >> 20,
        config.index_file_bytes >> 20,
    ));
    output.note(&format!("- {}", config.baseline));
    output.note(&format!(
        "- ranges (seed {:#x}; every unit of a round scans the same range, order rotated per round): {}",
        config.seed,
        config
            .ranges
            .iter()
            .map(|r| format!(
                "{}% r{}: {}..={} ({} rows)",
                r.selectivity_pct, r.round, r.o_custkey_low, r.o_custkey_high, r.rows
            ))
            .collect::<Vec<_>>()
            .join("; ")
    ));
    output.note(
        "- seconds: median over rounds; speedup = unit 0 seconds / unit seconds; read IOPS = \
         buffer-pool page reads (misses + prefetch reads) / scan seconds; waits = row fetches \
         per scan that waited > 20 us for a read; every unit verified to return unit 0's rows \
         (count and o_orderkey hash)",
    );
    output.table(&rows_table(&report.rows));
    if !config.fio_results.is_empty() {
        let mut table = Table::new(
            "fio random read, orders clustered file (direct=1, io_uring)",
            &["depth", "IOPS", "p50 us", "p99 us"],
        );
        for row in &config.fio_results {
            table.add_row(vec![
                row.depth.to_string(),
                format_count(Some(row.iops)),
                format_number(row.p50_us, 1),
                format_number(row.p99_us, 1),
            ]);
        }
        output.table(&table);
    }
    output.table(&summary_table(&report.summary));
    output.json(&BenchDocument::new(
        "secondary",
        config,
        &report.rows,
        &report.summary,
    ))
}

fn rows_table(rows: &[SecondaryRow]) -> Table {
    let mut table = Table::new(
        "Secondary-index range scans (S2), cold",
        &[
            "sel %",
            "unit",
            "rows/scan",
            "seconds",
            "speedup",
            "reads/scan",
            "read IOPS",
            "sync misses",
            "prefetched",
            "waits",
            "unit final/max",
            "in flight max",
            "warm s",
            "fio qd",
            "fio IOPS",
            "Tarn/fio",
        ],
    );
    for row in rows {
        let rows_per_scan =
            row.rows_per_round.iter().sum::<u64>() as f64 / row.rows_per_round.len().max(1) as f64;
        table.add_row(vec![
            format!("{}", row.selectivity_pct),
            row.unit.clone(),
            format_count(Some(rows_per_scan)),
            format_number(Some(row.seconds), 3),
            format_ratio(row.speedup),
            format_count(Some(row.page_reads)),
            format_count(Some(row.read_iops)),
            format_count(Some(row.misses)),
            format_count(Some(row.prefetch_issued)),
            format_count(Some(row.waits)),
            format!("{}/{}", row.unit_final, row.unit_max),
            row.in_flight_peak.to_string(),
            format_number(row.warm_seconds, 3),
            row.fio_depth.to_string(),
            format_count(row.fio_iops),
            format_ratio(row.iops_vs_fio),
        ]);
    }
    table
}

fn summary_table(summary: &SecondarySummary) -> Table {
    let mut table = Table::new(
        "Summary (S2 targets, at 1% selectivity)",
        &["ratio", "value", "target"],
    );
    let unit = |u: Option<u32>| u.map_or("-".to_string(), |u| u.to_string());
    table.add_row(vec![
        format!(
            "prefetch speedup: unit 0 time / best fixed unit ({}) time",
            unit(summary.best_fixed_unit_1pct)
        ),
        format_ratio(summary.prefetch_speedup_1pct),
        ">= 3.1x".into(),
    ]);
    table.add_row(vec![
        format!(
            "best fixed unit read IOPS / fio randread IOPS at qd{}",
            unit(summary.prefetch_iops_vs_fio_depth)
        ),
        format_ratio(summary.prefetch_iops_vs_fio),
        ">= 0.90x".into(),
    ]);
    table.add_row(vec![
        "best fixed unit read IOPS / fio's best IOPS at any depth".into(),
        format_ratio(summary.prefetch_iops_vs_fio_max),
        "-".into(),
    ]);
    table.add_row(vec![
        format!(
            "adaptive: best fixed time / adaptive time (adaptive reached unit {})",
            unit(summary.adaptive_unit_max_1pct)
        ),
        format_ratio(summary.adaptive_vs_best_fixed),
        ">= 0.90x".into(),
    ]);
    table.add_row(vec![
        "ceilings: unit 0 cold / warm time (CPU), fio best / fio qd1 IOPS (device)".into(),
        format!(
            "{}, {}",
            format_ratio(summary.speedup_ceiling_cpu_1pct),
            format_ratio(summary.speedup_ceiling_device)
        ),
        "-".into(),
    ]);
    table.add_row(vec![
        "unit 0 read IOPS / fio qd1 IOPS".into(),
        format_ratio(summary.no_prefetch_iops_vs_fio_qd1),
        "-".into(),
    ]);
    for s in &summary.by_selectivity {
        table.add_row(vec![
            format!(
                "{}%: speedup (best fixed {}), adaptive vs best, best IOPS vs fio",
                s.selectivity_pct,
                unit(s.best_fixed_unit)
            ),
            format!(
                "{}, {}, {}",
                format_ratio(s.prefetch_speedup),
                format_ratio(s.adaptive_vs_best_fixed),
                format_ratio(s.best_fixed_iops_vs_fio)
            ),
            "-".into(),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_deterministic_in_bounds_and_sized_by_selectivity() {
        let customers = 150_000;
        let a = choose_range(customers, 1.0, SEED_DEFAULT, 0);
        assert_eq!(a, choose_range(customers, 1.0, SEED_DEFAULT, 0));
        assert_eq!(a.1 - a.0 + 1, 1500);
        assert_ne!(a, choose_range(customers, 1.0, SEED_DEFAULT, 1));
        assert_ne!(a, choose_range(customers, 1.0, SEED_DEFAULT + 1, 0));
        for round in 0..200 {
            for pct in [0.1, 1.0, 5.0, 100.0] {
                let (low, high) = choose_range(customers, pct, 7, round);
                assert!(low >= 1 && high <= customers as i64 && low <= high);
                let width = (customers as f64 * pct / 100.0).round() as i64;
                assert_eq!(high - low + 1, width);
            }
        }
        assert_eq!(choose_range(150_000, 100.0, 3, 0), (1, 150_000));
        // Tiny selectivities still select one key.
        let (low, high) = choose_range(10, 0.001, 3, 0);
        assert_eq!(low, high);
    }

    #[test]
    fn depths_and_row_checks() {
        assert_eq!(matching_depth(0, 256, 128), 1);
        assert_eq!(matching_depth(32, 256, 128), 32);
        assert_eq!(matching_depth(256, 256, 128), 128);
        assert_eq!(matching_depth(1024, 64, 128), 64);

        let mut check = RowCheck::new(10, 20);
        check.row(&[Value::Int(5), Value::Int(10)]).unwrap();
        check.row(&[Value::Int(7), Value::Int(10)]).unwrap();
        check.row(&[Value::Int(1), Value::Int(12)]).unwrap();
        assert!(
            check.row(&[Value::Int(0), Value::Int(12)]).is_err(),
            "out of order"
        );
        assert!(
            check.row(&[Value::Int(9), Value::Int(21)]).is_err(),
            "out of range"
        );
        assert_eq!(check.rows, 3);
        let mut other = RowCheck::new(10, 20);
        other.row(&[Value::Int(7), Value::Int(10)]).unwrap();
        other.row(&[Value::Int(5), Value::Int(11)]).unwrap();
        other.row(&[Value::Int(1), Value::Int(12)]).unwrap();
        assert_ne!(check.hash, other.hash);
    }

    fn scan(seconds: f64, reads: u64, unit_max: u32) -> ScanMeasurement {
        ScanMeasurement {
            rows: 1000,
            checksum: 1,
            seconds,
            page_reads: reads,
            misses: 0,
            prefetch_issued: reads,
            prefetch_skipped: 0,
            io_waits: 0,
            waits: 0,
            pages_prefetched: reads,
            unit_final: unit_max,
            unit_max,
            in_flight_peak: 0,
            warm_seconds: seconds / 10.0,
        }
    }

    #[test]
    fn the_summary_takes_the_best_fixed_unit_and_compares_adaptive_and_fio() {
        let depth = |u| matching_depth(u, 256, 128);
        let mut rows = Vec::new();
        for pct in [0.1, 1.0] {
            let cell = |unit: PrefetchUnit, seconds: &[f64], max: u32| {
                let scans: Vec<ScanMeasurement> =
                    seconds.iter().map(|s| scan(*s, 1000, max)).collect();
                let d = match unit {
                    PrefetchUnit::Fixed(n) => depth(n),
                    PrefetchUnit::Adaptive => depth(max),
                };
                build_row(pct, unit, &scans, 100_000, d)
            };
            rows.push(cell(PrefetchUnit::Fixed(0), &[1.2, 1.0, 0.9], 0));
            rows.push(cell(PrefetchUnit::Fixed(8), &[0.5, 0.5, 0.5], 8));
            rows.push(cell(PrefetchUnit::Fixed(32), &[0.25, 0.2, 0.3], 32));
            rows.push(cell(PrefetchUnit::Adaptive, &[0.25, 0.25, 0.25], 64));
        }
        fill_speedups(&mut rows);
        let fio: BTreeMap<u32, f64> = [(1, 1000.0), (8, 4000.0), (32, 4000.0), (64, 5000.0)]
            .into_iter()
            .collect();
        fill_fio(&mut rows, &fio);
        let summary = summarize(&rows, &[0.1, 1.0, 5.0], &fio);
        assert_eq!(summary.best_fixed_unit_1pct, Some(32));
        assert_eq!(summary.prefetch_speedup_1pct, Some(1.0 / 0.25));
        assert_eq!(summary.prefetch_iops_vs_fio_depth, Some(32));
        // 3 scans x 1000 reads in 0.75 s = 4000 IOPS, fio at qd32 4000.
        assert_eq!(summary.prefetch_iops_1pct, Some(4000.0));
        assert_eq!(summary.prefetch_iops_vs_fio, Some(1.0));
        assert_eq!(summary.prefetch_iops_vs_fio_max, Some(0.8));
        assert_eq!(summary.adaptive_vs_best_fixed, Some(1.0));
        assert_eq!(summary.adaptive_unit_max_1pct, Some(64));
        assert_eq!(
            summary.no_prefetch_iops_vs_fio_qd1,
            Some(3000.0 / 3.1 / 1000.0)
        );
        assert_eq!(summary.by_selectivity.len(), 3);
        assert_eq!(summary.by_selectivity[2].prefetch_speedup, None);
        assert_eq!(summary.scans, 24);
        let value = serde_json::to_value(&summary).unwrap();
        for key in [
            "prefetch_speedup_1pct",
            "prefetch_iops_vs_fio",
            "adaptive_vs_best_fixed",
        ] {
            assert!(value.get(key).is_some(), "{key} missing");
        }

        // Without the 1% cells the headline ratios are null, not missing.
        let only: Vec<SecondaryRow> = rows
            .iter()
            .filter(|r| same_pct(r.selectivity_pct, 0.1))
            .cloned()
            .collect();
        let summary = summarize(&only, &[0.1], &BTreeMap::new());
        assert_eq!(summary.prefetch_speedup_1pct, None);
        let value = serde_json::to_value(&summary).unwrap();
        assert!(value["prefetch_iops_vs_fio"].is_null());
        assert!(value["adaptive_vs_best_fixed"].is_null());
    }

    #[test]
    fn options_add_the_baseline_and_reject_nonsense() {
        let mut options = SecondaryBenchOptions::new(Settings::default(), false);
        assert_eq!(options.units, UNITS_DEFAULT.to_vec());
        options.units = vec![PrefetchUnit::Fixed(32), PrefetchUnit::Fixed(32)];
        let (units, _) = options.validated().unwrap();
        assert_eq!(units, vec![PrefetchUnit::Fixed(0), PrefetchUnit::Fixed(32)]);
        options.units = vec![PrefetchUnit::Fixed(0)];
        assert!(options.validated().is_err());
        options.units = UNITS_DEFAULT.to_vec();
        options.selectivities_pct = vec![0.0];
        assert!(options.validated().is_err());
        options.selectivities_pct = vec![1.0, 1.0, 5.0];
        assert_eq!(options.validated().unwrap().1, vec![1.0, 5.0]);
        options.rounds = 0;
        assert!(options.validated().is_err());
    }
}
