//! The S4 analysis of measured cells: the rows ([`BufferPoolRow`], with latch waits
//! per class from [`latch_classes`]), the S4 table of wait per class by instance count
//! ([`S4Table`]) and its explanation ([`explain_shape`]), and the summary of named
//! figures ([`summarize`]).

use std::fmt::Write as _;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use tarn_common::latch::LatchSnapshot;

use crate::report::{format_number, ratio};
use crate::stats::{median, min_max};

use super::baseline::AbComparison;
use super::driver::{self, Window};
use super::{CellSpec, Dataset, Distribution, LATCH_CLASSES};

/// One latch class's counters in a row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LatchClassRow {
    pub class: String,
    pub acquisitions: u64,
    pub contended: u64,
    pub wait_ns: u64,
}

/// Per-class rows in [`LATCH_CLASSES`] order (every listed class, zero if absent),
/// then any other class by name.
pub fn latch_classes(snapshot: &[LatchSnapshot]) -> Vec<LatchClassRow> {
    let mut rows: Vec<LatchClassRow> = LATCH_CLASSES
        .iter()
        .map(|class| LatchClassRow {
            class: (*class).to_string(),
            acquisitions: 0,
            contended: 0,
            wait_ns: 0,
        })
        .collect();
    let mut others: Vec<LatchClassRow> = Vec::new();
    for entry in snapshot {
        let row = match rows.iter_mut().find(|r| r.class == entry.class) {
            Some(row) => row,
            None => match others.iter_mut().position(|r| r.class == entry.class) {
                Some(index) => &mut others[index],
                None => {
                    others.push(LatchClassRow {
                        class: entry.class.to_string(),
                        acquisitions: 0,
                        contended: 0,
                        wait_ns: 0,
                    });
                    others.last_mut().expect("just pushed")
                }
            },
        };
        row.acquisitions += entry.acquisitions;
        row.contended += entry.contended;
        row.wait_ns += entry.wait_ns;
    }
    others.sort_by(|a, b| a.class.cmp(&b.class));
    rows.extend(others);
    rows
}

/// One measured cell, as printed and as it appears in the JSON `rows` array.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferPoolRow {
    pub dataset: &'static str,
    pub distribution: &'static str,
    pub instances: u32,
    pub threads: u32,
    pub seconds: f64,
    pub warm_seconds: f64,
    /// Share of the pool's frames holding pages when measurement began.
    pub resident_pct: f64,
    /// False if the warm-up ended at its time limit before the pool was full (or, for
    /// `fits`, before the data set was resident).
    pub warm_reached: bool,
    pub ops: u64,
    pub writes: u64,
    pub ops_per_s: f64,
    pub cpu_us_per_op: f64,
    /// hits / fetches over the window (`null` with no fetches).
    pub hit_rate: Option<f64>,
    pub fetches: u64,
    pub misses: u64,
    pub page_reads_per_s: f64,
    pub page_writes_per_s: f64,
    pub evictions: u64,
    pub optimistic_retries: u64,
    /// Total wait over every latch class, nanoseconds summed over threads.
    pub latch_wait_ns: u64,
    pub latch_contended: u64,
    pub latch_acquisitions: u64,
    pub latches: Vec<LatchClassRow>,
}

impl BufferPoolRow {
    pub(super) fn new(cell: &CellSpec, warm: &driver::Warm, window: &Window) -> BufferPoolRow {
        let seconds = window.elapsed.as_secs_f64();
        let per_s = |count: u64| {
            if seconds > 0.0 {
                count as f64 / seconds
            } else {
                0.0
            }
        };
        let latches = latch_classes(&window.latches);
        BufferPoolRow {
            dataset: cell.dataset.name(),
            distribution: cell.distribution.name(),
            instances: cell.instances,
            threads: cell.threads,
            seconds,
            warm_seconds: warm.elapsed.as_secs_f64(),
            resident_pct: if warm.frames > 0 {
                warm.resident as f64 * 100.0 / warm.frames as f64
            } else {
                0.0
            },
            warm_reached: warm.reached,
            ops: window.ops,
            writes: window.writes,
            ops_per_s: window.ops_per_s(),
            cpu_us_per_op: if window.ops > 0 {
                window.cpu.as_secs_f64() * 1e6 / window.ops as f64
            } else {
                0.0
            },
            hit_rate: window.stats.hit_rate(),
            fetches: window.stats.fetches,
            misses: window.stats.misses,
            page_reads_per_s: per_s(window.stats.page_reads),
            page_writes_per_s: per_s(window.stats.page_writes),
            evictions: window.stats.evictions,
            optimistic_retries: window.stats.optimistic_retries,
            latch_wait_ns: latches.iter().map(|l| l.wait_ns).sum(),
            latch_contended: latches.iter().map(|l| l.contended).sum(),
            latch_acquisitions: latches.iter().map(|l| l.acquisitions).sum(),
            latches,
        }
    }

    pub(super) fn hottest(&self) -> Option<&LatchClassRow> {
        self.latches
            .iter()
            .filter(|l| l.wait_ns > 0)
            .max_by_key(|l| l.wait_ns)
    }
}

/// A map from instance count to a number, serialized as a JSON object whose keys are
/// the counts in increasing order: `{"1": ..., "4": ..., "16": ...}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ByInstances(pub Vec<(u32, u64)>);

impl ByInstances {
    pub fn get(&self, instances: u32) -> Option<u64> {
        self.0
            .iter()
            .find(|(n, _)| *n == instances)
            .map(|(_, v)| *v)
    }
}

impl Serialize for ByInstances {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (instances, value) in &self.0 {
            map.serialize_entry(&instances.to_string(), value)?;
        }
        map.end()
    }
}

/// The S4 table of one data set and distribution at one thread count: latch wait per
/// class (rows) by instance count (columns).
#[derive(Clone, Debug, PartialEq)]
pub struct S4Table {
    pub dataset: &'static str,
    pub distribution: &'static str,
    pub threads: u32,
    pub instances: Vec<u32>,
    /// (class, wait ns per instance count) in [`LATCH_CLASSES`] order.
    pub classes: Vec<(String, Vec<u64>)>,
    pub total_wait_ns: Vec<u64>,
    /// The total without [`IO_WAIT_CLASS`].
    pub latch_only_wait_ns: Vec<u64>,
    pub contended: Vec<u64>,
    pub ops_per_s: Vec<f64>,
}

impl S4Table {
    /// The table for `dataset`, `distribution` and `threads` from the measured rows,
    /// or `None` if no row matches.
    pub fn build(
        rows: &[BufferPoolRow],
        dataset: Dataset,
        distribution: Distribution,
        threads: u32,
    ) -> Option<S4Table> {
        let mut selected: Vec<&BufferPoolRow> = rows
            .iter()
            .filter(|r| {
                r.dataset == dataset.name()
                    && r.distribution == distribution.name()
                    && r.threads == threads
            })
            .collect();
        if selected.is_empty() {
            return None;
        }
        selected.sort_by_key(|r| r.instances);
        selected.dedup_by_key(|r| r.instances);
        let mut classes: Vec<(String, Vec<u64>)> = Vec::new();
        for (column, row) in selected.iter().enumerate() {
            for latch in &row.latches {
                let index = match classes.iter().position(|(c, _)| *c == latch.class) {
                    Some(index) => index,
                    None => {
                        classes.push((latch.class.clone(), vec![0; selected.len()]));
                        classes.len() - 1
                    }
                };
                classes[index].1[column] = latch.wait_ns;
            }
        }
        let io_wait: Vec<u64> = classes
            .iter()
            .find(|(class, _)| class == IO_WAIT_CLASS)
            .map_or_else(|| vec![0; selected.len()], |(_, waits)| waits.clone());
        let total_wait_ns: Vec<u64> = selected.iter().map(|r| r.latch_wait_ns).collect();
        Some(S4Table {
            latch_only_wait_ns: total_wait_ns
                .iter()
                .zip(&io_wait)
                .map(|(total, io)| total.saturating_sub(*io))
                .collect(),
            total_wait_ns,
            dataset: dataset.name(),
            distribution: distribution.name(),
            threads,
            instances: selected.iter().map(|r| r.instances).collect(),
            classes,
            contended: selected.iter().map(|r| r.latch_contended).collect(),
            ops_per_s: selected.iter().map(|r| r.ops_per_s).collect(),
        })
    }

    pub fn totals(&self) -> ByInstances {
        self.by_instances(&self.total_wait_ns)
    }

    pub fn latch_only_totals(&self) -> ByInstances {
        self.by_instances(&self.latch_only_wait_ns)
    }

    fn by_instances(&self, values: &[u64]) -> ByInstances {
        ByInstances(
            self.instances
                .iter()
                .copied()
                .zip(values.iter().copied())
                .collect(),
        )
    }

    /// The class with the most wait at column `column`, if any waited.
    fn hottest(&self, column: usize, with_io_wait: bool) -> Option<&str> {
        self.classes
            .iter()
            .filter(|(class, waits)| waits[column] > 0 && (with_io_wait || class != IO_WAIT_CLASS))
            .max_by_key(|(_, waits)| waits[column])
            .map(|(class, _)| class.as_str())
    }

    /// The column with the least total wait (the smallest instance count on ties).
    pub fn best(&self) -> Option<usize> {
        (0..self.instances.len()).min_by_key(|&i| (self.total_wait_ns[i], self.instances[i]))
    }

    /// First-column total / best total: how many times less waiting the best instance
    /// count has than the first (S4's "8.5x less at 16 instances").
    pub fn reduction(&self) -> Option<f64> {
        let best = self.best()?;
        ratio(
            Some(self.total_wait_ns[0] as f64),
            Some(self.total_wait_ns[best] as f64),
        )
    }

    /// The shape of the total wait against the instance count, and, where waits for
    /// reads in flight are part of it, the shape without them.
    pub fn explain(&self) -> String {
        let mut text = format!(
            "{}, {}, {} threads: total wait {}",
            self.dataset,
            self.distribution,
            self.threads,
            explain_shape(&self.instances, &self.total_wait_ns, |column| {
                self.hottest(column, true)
            })
        );
        if self.latch_only_wait_ns != self.total_wait_ns {
            let _ = write!(
                text,
                ". Without {IO_WAIT_CLASS} (waiting for a read in flight, i.e. the device): {}",
                explain_shape(&self.instances, &self.latch_only_wait_ns, |column| {
                    self.hottest(column, false)
                })
            );
        }
        text
    }
}

/// A share at or below which a later instance count counts as an improvement.
const IMPROVEMENT_FACTOR: f64 = 0.9;

/// The class of waits for another thread's read of a page (the device, not a latch
/// holder); the S4 tables also show the total without it.
pub const IO_WAIT_CLASS: &str = "buffer.io_wait";

/// Nanoseconds as milliseconds with one decimal.
pub(super) fn ms(ns: u64) -> String {
    format_number(Some(ns as f64 / 1e6), 1)
}

/// Describes how `waits` (total wait per instance count) changes with `instances`:
/// from the first count to the best, where it stops improving (no later count is more
/// than 10% lower), whether it rises again, and the hottest class (`hottest(column)`).
pub fn explain_shape<'a>(
    instances: &[u32],
    waits: &[u64],
    hottest: impl Fn(usize) -> Option<&'a str>,
) -> String {
    assert_eq!(instances.len(), waits.len());
    let plural = |n: u32| if n == 1 { "instance" } else { "instances" };
    if instances.is_empty() {
        return "nothing measured".into();
    }
    if waits.iter().all(|&w| w == 0) {
        return "no waits at any instance count measured".into();
    }
    let first = (instances[0], waits[0]);
    if instances.len() == 1 {
        return format!(
            "{} ms at {} {} (only one instance count measured)",
            ms(first.1),
            first.0,
            plural(first.0)
        );
    }
    let best = (0..instances.len())
        .min_by_key(|&i| (waits[i], instances[i]))
        .expect("not empty");
    let knee = (0..instances.len())
        .find(|&i| {
            waits[i + 1..]
                .iter()
                .all(|&w| (w as f64) > IMPROVEMENT_FACTOR * waits[i] as f64)
        })
        .expect("the last count always qualifies");
    let factor = |w: u64| {
        if w == 0 {
            "to none".to_string()
        } else {
            format!("{:.1}x less", first.1 as f64 / w as f64)
        }
    };
    let mut text = if best == 0 {
        format!(
            "lowest at {} {} ({} ms); more instances do not reduce it",
            first.0,
            plural(first.0),
            ms(first.1)
        )
    } else if knee == 0 {
        format!(
            "hardly changes with the instance count (no count is 10% below {} ms at {} {}; \
             lowest {} ms at {}, {})",
            ms(first.1),
            first.0,
            plural(first.0),
            ms(waits[best]),
            instances[best],
            factor(waits[best])
        )
    } else {
        let mut text = format!(
            "goes from {} ms at {} {} to {} ms at {} ({})",
            ms(first.1),
            first.0,
            plural(first.0),
            ms(waits[best]),
            instances[best],
            factor(waits[best])
        );
        if knee + 1 < instances.len() {
            let _ = write!(text, "; it stops improving at {}", instances[knee]);
        } else {
            let _ = write!(
                text,
                "; still improving at the largest count measured ({})",
                instances[knee]
            );
        }
        text
    };
    let later: Vec<String> = (best + 1..instances.len())
        .map(|i| format!("{}: {} ms", instances[i], ms(waits[i])))
        .collect();
    if !later.is_empty() {
        let last = *waits.last().expect("not empty");
        let rises = last as f64 * IMPROVEMENT_FACTOR > waits[best] as f64;
        let _ = write!(
            text,
            " ({}{})",
            later.join(", "),
            if rises { ", rising again" } else { "" }
        );
    }
    match (hottest(0), hottest(best)) {
        (Some(a), Some(b)) if best != 0 && a != b => {
            let _ = write!(
                text,
                "; hottest: {a} at {} {}, {b} at {}",
                first.0,
                plural(first.0),
                instances[best]
            );
        }
        (Some(a), _) => {
            let _ = write!(text, "; hottest: {a}");
        }
        _ => {}
    }
    text
}

/// The named figures the team checks; `null` where the inputs were not measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferPoolSummary {
    /// (ops/s off - ops/s on) / ops/s off * 100 (target <= 3).
    pub accounting_overhead_pct: Option<f64>,
    pub accounting_overhead_rounds_pct: Vec<f64>,
    pub accounting_overhead_min_pct: Option<f64>,
    pub accounting_overhead_max_pct: Option<f64>,
    /// The median of the per-round overheads (robust to one disturbed round).
    pub accounting_overhead_median_pct: Option<f64>,
    /// The overhead from operations per CPU-second (robust to other load).
    pub accounting_overhead_cpu_pct: Option<f64>,
    pub accounting_on_ops_per_s: Option<f64>,
    pub accounting_off_ops_per_s: Option<f64>,
    /// ops/s with optimistic reads / ops/s with shared-latch reads (read-only, hot).
    pub optimistic_vs_shared_ratio: Option<f64>,
    pub optimistic_vs_shared_rounds: Vec<f64>,
    /// The ratio from operations per CPU-second.
    pub optimistic_vs_shared_cpu_ratio: Option<f64>,
    pub optimistic_ops_per_s: Option<f64>,
    pub shared_ops_per_s: Option<f64>,
    /// The thread count and distribution of the S4 tables behind the fields below.
    pub s4_threads: u32,
    pub s4_distribution: Option<&'static str>,
    /// Total latch wait (ns, every class) per instance count, `larger` data set.
    pub latch_wait_ns_by_instances: Option<ByInstances>,
    /// The same for the `fits` data set.
    pub latch_wait_ns_by_instances_fits: Option<ByInstances>,
    /// The same two without `buffer.io_wait` (waits for a read in flight).
    pub latch_wait_ns_by_instances_excl_io: Option<ByInstances>,
    pub latch_wait_ns_by_instances_fits_excl_io: Option<ByInstances>,
    /// The instance count with the least total wait, and first count's wait / its wait.
    pub best_instances: Option<u32>,
    pub wait_reduction_at_best: Option<f64>,
    pub best_instances_fits: Option<u32>,
    pub wait_reduction_at_best_fits: Option<f64>,
    pub explanation: Option<String>,
    pub explanation_fits: Option<String>,
    pub rows: usize,
    pub ops_total: u64,
    pub errors_total: u64,
}

/// The baselines' results.
#[derive(Clone, Debug, Default)]
pub struct Baselines {
    /// A = accounting on, B = off.
    pub accounting: Option<AbComparison>,
    /// A = optimistic reads, B = shared-latch reads.
    pub optimistic: Option<AbComparison>,
}

/// The distribution the summary's S4 figures use: zipf if measured, else uniform.
fn summary_distribution(rows: &[BufferPoolRow]) -> Option<Distribution> {
    [Distribution::Zipf, Distribution::Uniform]
        .into_iter()
        .find(|d| rows.iter().any(|r| r.distribution == d.name()))
}

pub fn summarize(
    rows: &[BufferPoolRow],
    baselines: &Baselines,
    s4_threads: u32,
) -> BufferPoolSummary {
    let distribution = summary_distribution(rows);
    let table = |dataset| distribution.and_then(|d| S4Table::build(rows, dataset, d, s4_threads));
    let larger = table(Dataset::Larger);
    let fits = table(Dataset::Fits);
    let best = |t: &Option<S4Table>| t.as_ref().and_then(|t| t.best().map(|i| t.instances[i]));
    let accounting = baselines.accounting.as_ref();
    let optimistic = baselines.optimistic.as_ref();
    let accounting_rounds = accounting.map(|a| a.round_costs_pct()).unwrap_or_default();
    let (min, max) = min_max(&accounting_rounds);
    BufferPoolSummary {
        accounting_overhead_pct: accounting.map(|a| a.a_cost_pct()),
        accounting_overhead_min_pct: min,
        accounting_overhead_max_pct: max,
        accounting_overhead_median_pct: median(&accounting_rounds),
        accounting_overhead_cpu_pct: accounting.and_then(AbComparison::a_cpu_cost_pct),
        accounting_overhead_rounds_pct: accounting_rounds,
        accounting_on_ops_per_s: accounting.map(|a| a.a_ops_per_s),
        accounting_off_ops_per_s: accounting.map(|a| a.b_ops_per_s),
        optimistic_vs_shared_ratio: optimistic.map(|o| o.ratio),
        optimistic_vs_shared_rounds: optimistic
            .map(|o| o.round_ratios.clone())
            .unwrap_or_default(),
        optimistic_vs_shared_cpu_ratio: optimistic.and_then(|o| o.cpu_ratio),
        optimistic_ops_per_s: optimistic.map(|o| o.a_ops_per_s),
        shared_ops_per_s: optimistic.map(|o| o.b_ops_per_s),
        s4_threads,
        s4_distribution: distribution.map(Distribution::name),
        latch_wait_ns_by_instances: larger.as_ref().map(S4Table::totals),
        latch_wait_ns_by_instances_fits: fits.as_ref().map(S4Table::totals),
        latch_wait_ns_by_instances_excl_io: larger.as_ref().map(S4Table::latch_only_totals),
        latch_wait_ns_by_instances_fits_excl_io: fits.as_ref().map(S4Table::latch_only_totals),
        best_instances: best(&larger),
        wait_reduction_at_best: larger.as_ref().and_then(S4Table::reduction),
        best_instances_fits: best(&fits),
        wait_reduction_at_best_fits: fits.as_ref().and_then(S4Table::reduction),
        explanation: larger.as_ref().map(S4Table::explain),
        explanation_fits: fits.as_ref().map(S4Table::explain),
        rows: rows.len(),
        ops_total: rows.iter().map(|r| r.ops).sum(),
        errors_total: 0,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::bufferpool::print::s4_table;

    fn row(
        dataset: Dataset,
        distribution: Distribution,
        instances: u32,
        threads: u32,
        waits: &[(&'static str, u64)],
    ) -> BufferPoolRow {
        let snapshot: Vec<LatchSnapshot> = waits
            .iter()
            .map(|&(class, wait_ns)| LatchSnapshot {
                class,
                instance: None,
                acquisitions: 100,
                contended: u64::from(wait_ns > 0),
                wait_ns,
            })
            .collect();
        let window = Window {
            ops: 1000,
            writes: 100,
            elapsed: Duration::from_secs(1),
            cpu: Duration::from_millis(500),
            stats: driver::StatsDelta {
                fetches: 1000,
                hits: 900,
                misses: 100,
                page_reads: 100,
                ..Default::default()
            },
            latches: snapshot,
        };
        let warm = driver::Warm {
            elapsed: Duration::from_millis(300),
            resident: 95,
            frames: 100,
            reached: true,
        };
        BufferPoolRow::new(
            &CellSpec {
                dataset,
                distribution,
                instances,
                threads,
            },
            &warm,
            &window,
        )
    }

    #[test]
    fn a_row_sums_latch_classes_in_canonical_order_and_computes_rates() {
        let r = row(
            Dataset::Larger,
            Distribution::Zipf,
            8,
            64,
            &[
                ("buffer.lru", 3_000_000),
                ("buffer.page", 1_000_000),
                ("x.other", 5),
            ],
        );
        assert_eq!(r.latch_wait_ns, 4_000_005);
        assert_eq!(r.latch_contended, 3);
        assert_eq!(r.hit_rate, Some(0.9));
        assert_eq!((r.ops_per_s, r.page_reads_per_s), (1000.0, 100.0));
        assert_eq!(r.cpu_us_per_op, 500.0);
        assert_eq!(r.resident_pct, 95.0);
        let classes: Vec<&str> = r.latches.iter().map(|l| l.class.as_str()).collect();
        assert_eq!(&classes[..LATCH_CLASSES.len()], &LATCH_CLASSES);
        assert_eq!(classes.last(), Some(&"x.other"));
        assert_eq!(r.hottest().unwrap().class, "buffer.lru");
        let value = serde_json::to_value(&r).unwrap();
        for key in [
            "dataset",
            "distribution",
            "instances",
            "threads",
            "ops_per_s",
            "hit_rate",
            "page_reads_per_s",
            "latch_wait_ns",
            "latch_contended",
            "latches",
        ] {
            assert!(value.get(key).is_some(), "{key} missing from {value}");
        }
        assert_eq!(value["latches"][1]["class"], "buffer.lru");
        assert_eq!(value["latches"][1]["wait_ns"], 3_000_000);
    }

    #[test]
    fn the_s4_table_puts_classes_in_rows_and_instance_counts_in_columns() {
        let rows = vec![
            row(
                Dataset::Larger,
                Distribution::Zipf,
                16,
                64,
                &[("buffer.lru", 100), ("buffer.page", 50)],
            ),
            row(
                Dataset::Larger,
                Distribution::Zipf,
                1,
                64,
                &[("buffer.lru", 900), ("buffer.page", 100)],
            ),
            row(
                Dataset::Larger,
                Distribution::Zipf,
                1,
                8,
                &[("buffer.lru", 7)],
            ),
            row(
                Dataset::Fits,
                Distribution::Zipf,
                1,
                64,
                &[("buffer.lru", 1)],
            ),
        ];
        let table = S4Table::build(&rows, Dataset::Larger, Distribution::Zipf, 64).unwrap();
        assert_eq!(table.instances, [1, 16]);
        assert_eq!(table.total_wait_ns, [1000, 150]);
        let lru = table
            .classes
            .iter()
            .find(|(c, _)| c == "buffer.lru")
            .unwrap();
        assert_eq!(lru.1, [900, 100]);
        assert_eq!(table.classes.len(), LATCH_CLASSES.len());
        assert_eq!(table.best(), Some(1));
        assert_eq!(table.reduction(), Some(1000.0 / 150.0));
        let totals = serde_json::to_string(&table.totals()).unwrap();
        assert_eq!(totals, r#"{"1":1000,"16":150}"#);
        assert!(S4Table::build(&rows, Dataset::Fits, Distribution::Uniform, 64).is_none());
        let rendered = s4_table(&table).render();
        assert!(
            rendered.contains("buffer.lru") && rendered.contains("16 inst"),
            "{rendered}"
        );

        let summary = summarize(&rows, &Baselines::default(), 64);
        assert_eq!(summary.s4_distribution, Some("zipf"));
        assert_eq!(summary.best_instances, Some(16));
        assert_eq!(
            summary.latch_wait_ns_by_instances.as_ref().unwrap().get(1),
            Some(1000)
        );
        assert_eq!(
            summary.latch_wait_ns_by_instances_fits,
            Some(ByInstances(vec![(1, 1)]))
        );
        assert!(summary.accounting_overhead_pct.is_none());
        let value = serde_json::to_value(&summary).unwrap();
        assert!(value["accounting_overhead_pct"].is_null());
        assert_eq!(value["latch_wait_ns_by_instances"]["16"], 150);
        assert!(value.get("optimistic_vs_shared_ratio").is_some());
    }

    #[test]
    fn the_explanation_names_the_reduction_the_knee_and_a_rise() {
        let hot = |_| Some("buffer.lru");
        let text = explain_shape(
            &[1, 4, 8, 16, 32, 64],
            &[
                850_000_000,
                300_000_000,
                150_000_000,
                100_000_000,
                95_000_000,
                180_000_000,
            ],
            hot,
        );
        assert!(
            text.starts_with("goes from 850.0 ms at 1 instance to 95.0 ms at 32 (8.9x less)"),
            "{text}"
        );
        assert!(text.contains("stops improving at 16"), "{text}");
        assert!(text.contains("64: 180.0 ms, rising again"), "{text}");
        assert!(text.ends_with("; hottest: buffer.lru"), "{text}");

        let flat = explain_shape(&[1, 8, 64], &[10, 12, 11], |_| None);
        assert!(flat.starts_with("lowest at 1 instance"), "{flat}");
        let slight = explain_shape(&[1, 8, 64], &[1000, 960, 950], |_| None);
        assert!(slight.starts_with("hardly changes"), "{slight}");
        assert!(
            slight.contains("lowest 0.0 ms at 64, 1.1x less"),
            "{slight}"
        );
        let improving = explain_shape(&[1, 8, 64], &[1000, 500, 100], |_| None);
        assert!(improving.contains("still improving at the largest count measured (64)"));
        let none = explain_shape(&[1, 8], &[0, 0], |_| None);
        assert!(none.contains("no waits"), "{none}");
        let hottest = |i| Some(if i == 0 { "buffer.lru" } else { "buffer.page" });
        let moved = explain_shape(&[1, 8], &[1000, 10], hottest);
        assert!(
            moved.ends_with("hottest: buffer.lru at 1 instance, buffer.page at 8"),
            "{moved}"
        );
    }

    #[test]
    fn the_s4_explanation_adds_the_shape_without_io_waits() {
        let rows = vec![
            row(
                Dataset::Larger,
                Distribution::Zipf,
                1,
                64,
                &[("buffer.lru", 90_000_000), (IO_WAIT_CLASS, 2_000_000_000)],
            ),
            row(
                Dataset::Larger,
                Distribution::Zipf,
                16,
                64,
                &[("buffer.lru", 9_000_000), (IO_WAIT_CLASS, 1_900_000_000)],
            ),
        ];
        let table = S4Table::build(&rows, Dataset::Larger, Distribution::Zipf, 64).unwrap();
        assert_eq!(table.latch_only_wait_ns, [90_000_000, 9_000_000]);
        let text = table.explain();
        assert!(
            text.starts_with("larger, zipf, 64 threads: total wait hardly changes"),
            "{text}"
        );
        assert!(
            text.contains(
                "Without buffer.io_wait (waiting for a read in flight, i.e. the device): \
                           goes from 90.0 ms at 1 instance to 9.0 ms at 16 (10.0x less)"
            ),
            "{text}"
        );
        assert!(text.ends_with("; hottest: buffer.lru"), "{text}");
    }
}
