//! `tarn bench locks`: the S3 comparison of lock scheduling policies (FIFO and CATS)
//! on a LinkBench-like workload, with the redo log on an SSD-like device (fsync) and
//! on emulated persistent memory (pmem).
//!
//! S3 found that once the log is on NVDIMM, commits stop waiting for flushes and lock
//! waits become the bottleneck: CATS (grant the waiter the most transactions depend
//! on) then beat FIFO by 1.3-1.6x; with the log on an SSD there was no difference.
//!
//! # The workload
//! LinkBench's schema, a social graph of nodes and typed links with a count row per
//! (node, link type):
//!
//! ```sql
//! nodetable (id BIGINT PRIMARY KEY, type INT, version BIGINT, time INT, data VARCHAR(255))
//! linktable (id1 BIGINT, link_type BIGINT, id2 BIGINT, visibility TINYINT,
//!            data VARCHAR(255), time BIGINT, version INT,
//!            PRIMARY KEY (id1, link_type, id2), INDEX id1_type (id1, link_type, time))
//! counttable (id BIGINT, link_type BIGINT, count INT, time BIGINT, version BIGINT,
//!             PRIMARY KEY (id, link_type))
//! ```
//!
//! Each client repeats one operation per transaction, drawn from LinkBench's default
//! mix (normalised; 69% reads): [`MIX`]. Link writes lock the link row
//! (`SELECT ... FOR UPDATE`, insert or update or delete it) and then update the count
//! row of (id1, link_type) under its exclusive lock, so the count rows of popular
//! nodes are where transactions queue. Reads are snapshot reads; `get_link_list` reads
//! up to 50 links of (id1, link_type) through `id1_type`.
//!
//! Keys are skewed as in a social graph: node ids (and `id1`) are zipfian with
//! `--theta` 0.99 (YCSB's constant; the hottest of 20,000 nodes gets about 10% of the
//! operations), scrambled so that hot nodes are spread over the key space. `link_type`
//! is uniform in 1..=3 and `id2` one of [`LINK_CANDIDATES`] fixed candidates of
//! (id1, link_type), so that adds, updates and deletes hit existing links about as
//! often as they miss. `add_node` takes new ids past the preloaded ones and
//! `delete_node` deletes one of those, so the preloaded nodes always exist.
//!
//! # How a run goes
//! 1. For each log device a fresh data directory (`<dir>/locks-<device>`; the pmem log
//!    in a directory under `/dev/shm`, removed at the end) is bulk-loaded with
//!    `--nodes` nodes, about `--links-per-node` links each and consistent counts. The
//!    workload changes the graph, so it is reloaded on every run.
//! 2. At each client count, the clients run once with both policies, switched at run
//!    time, in the order A B B A (A = fifo at even points, cats at odd ones): a
//!    warm-up, A for half of `--seconds`, B for `--seconds`, A for the other half,
//!    with a short settling window (unmeasured) after each switch. Transactions
//!    count in the window they complete in; lock statistics are reset at each window.
//! 3. A deadlock or lock-wait timeout rolls the transaction back and is counted.
//! 4. Verification: after each device, every count row must equal the number of links
//!    of its (id1, link_type); `update_node` must find its node; link lists must hold
//!    only links of the asked (id1, link_type).
//!
//! # Figures
//! - `ops_per_sec`: committed operations (each one transaction) per second.
//! - `p50_ms`, `p99_ms`: latency of an operation, begin to commit acknowledged.
//! - `lock_waits`, `lock_wait_s`: lock requests that waited, and the seconds they
//!   waited in total (summed over transactions, so it can exceed the window).
//! - `cats_vs_fifo`: cats ops/s / fifo ops/s at the same device and clients.
//! - `summary.cats_vs_fifo_pmem_peak`: that ratio on pmem at the most contended point,
//!   defined as the client count with the largest fifo `lock_wait_s` on pmem.
//! - `summary.cats_vs_fifo_min_low_contention`: the smallest ratio at the lowest client
//!   count (32 by default) over both devices.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use tarn_catalog::{IndexDef, RowLock, Storage, Table, TableDef, Transaction, WaitPolicy};
use tarn_common::rng::{Rng, Zipf};
use tarn_common::settings::{LockScheduling, LogDevice, Settings};
use tarn_io::os::process_cpu_time;
use tarn_row::{Column, ColumnType, Value};

use crate::commit::driver::{
    self, Outcome, PhaseStats, ShmLogDir, abort_outcome, check_clients, check_seconds, run_clients,
};
use crate::report::{
    BenchDocument, Output, Table as TextTable, data_dir_fate, format_count, format_number,
    format_ratio, ratio,
};
use crate::scan::cores;
use crate::workdir::WorkDir;
use crate::{BenchError, Result};

pub const DATABASE: &str = "linkdb";
pub const NODE_TABLE: &str = "nodetable";
pub const LINK_TABLE: &str = "linktable";
pub const COUNT_TABLE: &str = "counttable";
pub const LINK_INDEX: &str = "id1_type";

pub const CLIENTS_DEFAULT: [usize; 5] = [32, 64, 128, 256, 512];
pub const CLIENTS_QUICK: [usize; 3] = [32, 128, 512];
pub const CLIENTS_MAX: usize = 4096;
pub const DEVICES_DEFAULT: [LogDevice; 2] = [LogDevice::Fsync, LogDevice::Pmem];
pub const NODES_DEFAULT: u64 = 20_000;
pub const NODES_QUICK: u64 = 10_000;
pub const LINKS_PER_NODE_DEFAULT: f64 = 4.0;
pub const THETA_DEFAULT: f64 = 0.99;
/// Seconds per policy per point (split in two halves for A, whole for B).
pub const SECONDS_DEFAULT: f64 = 3.0;
pub const SECONDS_QUICK: f64 = 1.0;
pub const SEED_DEFAULT: u64 = 0x11_4B_BE_4C;
/// Link types are 1..=LINK_TYPES.
pub const LINK_TYPES: i64 = 3;
/// Candidate `id2`s of each (id1, link_type): link operations pick one at random.
pub const LINK_CANDIDATES: u64 = 4;
/// `get_link_list` reads at most this many links.
pub const LINK_LIST_LIMIT: usize = 50;
/// Warm-up and settling after a policy switch, as shares of `--seconds` (clamped).
const WARMUP_SHARE: f64 = 0.3;
const SETTLE_SHARE: f64 = 0.1;
/// The log the bench runs with unless `--set` says otherwise.
const LOG_FILE_SIZE_BYTES: u64 = 256 << 20;
const LOG_FILES: u32 = 4;

/// One LinkBench operation type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    AddLink,
    DeleteLink,
    UpdateLink,
    CountLink,
    GetLink,
    GetLinkList,
    GetNode,
    AddNode,
    UpdateNode,
    DeleteNode,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::AddLink => "add_link",
            Op::DeleteLink => "delete_link",
            Op::UpdateLink => "update_link",
            Op::CountLink => "count_link",
            Op::GetLink => "get_link",
            Op::GetLinkList => "get_link_list",
            Op::GetNode => "get_node",
            Op::AddNode => "add_node",
            Op::UpdateNode => "update_node",
            Op::DeleteNode => "delete_node",
        }
    }

    pub fn is_read(self) -> bool {
        matches!(
            self,
            Op::CountLink | Op::GetLink | Op::GetLinkList | Op::GetNode
        )
    }
}

/// LinkBench's default operation mix, normalised, in hundredths of a percent (sums to
/// 10,000). Reads: 69%.
pub const MIX: [(Op, u32); 10] = [
    (Op::AddLink, 900),
    (Op::DeleteLink, 300),
    (Op::UpdateLink, 800),
    (Op::CountLink, 490),
    (Op::GetLink, 50),
    (Op::GetLinkList, 5070),
    (Op::GetNode, 1290),
    (Op::AddNode, 260),
    (Op::UpdateNode, 740),
    (Op::DeleteNode, 100),
];

/// The operation for a draw in `0..10_000`.
pub fn op_for(draw: u32) -> Op {
    let mut left = draw;
    for (op, weight) in MIX {
        if left < weight {
            return op;
        }
        left -= weight;
    }
    MIX[MIX.len() - 1].0
}

/// What `tarn bench locks` was asked to do.
#[derive(Clone, Debug)]
pub struct LocksBenchOptions {
    /// Engine settings (from `--set`); the bench sets `data_dir`, `log_device`,
    /// `log_dir`, and a log of 4 x 256 MiB unless `log_file_size` or `log_files` was
    /// given.
    pub settings: Settings,
    pub quick: bool,
    pub data_dir: Option<PathBuf>,
    /// Measured seconds per policy per point.
    pub seconds: f64,
    pub clients: Vec<usize>,
    pub devices: Vec<LogDevice>,
    pub nodes: u64,
    pub links_per_node: f64,
    pub theta: f64,
    pub seed: u64,
}

impl LocksBenchOptions {
    pub fn new(settings: Settings, quick: bool) -> LocksBenchOptions {
        LocksBenchOptions {
            settings,
            quick,
            data_dir: None,
            seconds: if quick {
                SECONDS_QUICK
            } else {
                SECONDS_DEFAULT
            },
            clients: if quick {
                CLIENTS_QUICK.to_vec()
            } else {
                CLIENTS_DEFAULT.to_vec()
            },
            devices: DEVICES_DEFAULT.to_vec(),
            nodes: if quick { NODES_QUICK } else { NODES_DEFAULT },
            links_per_node: LINKS_PER_NODE_DEFAULT,
            theta: THETA_DEFAULT,
            seed: SEED_DEFAULT,
        }
    }

    fn validated(&self) -> Result<(Vec<LogDevice>, Vec<usize>)> {
        check_seconds(self.seconds, "--seconds")?;
        let clients = check_clients(&self.clients, CLIENTS_MAX)?;
        let mut devices = Vec::new();
        for device in &self.devices {
            if !devices.contains(device) {
                devices.push(*device);
            }
        }
        if devices.is_empty() {
            return Err(BenchError::Options("--devices selects nothing".into()));
        }
        if !(100..=100_000_000).contains(&self.nodes) {
            return Err(BenchError::Options(format!(
                "--nodes must be from 100 to 100,000,000, not {}",
                self.nodes
            )));
        }
        let most = (LINK_TYPES as u64 * LINK_CANDIDATES) as f64;
        if !(self.links_per_node >= 0.0 && self.links_per_node <= most) {
            return Err(BenchError::Options(format!(
                "--links-per-node must be from 0 to {most}, not {}",
                self.links_per_node
            )));
        }
        if !(self.theta > 0.0 && self.theta < 1.0) {
            return Err(BenchError::Options(format!(
                "--theta must be more than 0 and less than 1, not {}",
                self.theta
            )));
        }
        Ok((devices, clients))
    }
}

// ---------------------------------------------------------------------------------
// Schema, keys and load.

fn big() -> ColumnType {
    ColumnType::BigInt { unsigned: false }
}

fn int() -> ColumnType {
    ColumnType::Int { unsigned: false }
}

fn data_type() -> ColumnType {
    ColumnType::VarChar { len: 255 }
}

/// The three tables.
pub fn definitions() -> [TableDef; 3] {
    let node = TableDef::new(
        NODE_TABLE,
        vec![
            Column::new("id", big(), false),
            Column::new("type", int(), false),
            Column::new("version", big(), false),
            Column::new("time", int(), false),
            Column::new("data", data_type(), false),
        ],
        &[0],
    );
    let link = TableDef::new(
        LINK_TABLE,
        vec![
            Column::new("id1", big(), false),
            Column::new("link_type", big(), false),
            Column::new("id2", big(), false),
            Column::new("visibility", ColumnType::TinyInt { unsigned: false }, false),
            Column::new("data", data_type(), false),
            Column::new("time", big(), false),
            Column::new("version", int(), false),
        ],
        &[0, 1, 2],
    )
    .with_index(IndexDef::new(LINK_INDEX, &[0, 1, 5], false));
    let count = TableDef::new(
        COUNT_TABLE,
        vec![
            Column::new("id", big(), false),
            Column::new("link_type", big(), false),
            Column::new("count", int(), false),
            Column::new("time", big(), false),
            Column::new("version", big(), false),
        ],
        &[0, 1],
    );
    [node, link, count]
}

fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Candidate `k` of the `id2`s of (id1, link_type): a node id in 1..=nodes.
pub fn candidate_id2(id1: i64, link_type: i64, k: u64, nodes: u64) -> i64 {
    let h = mix64((id1 as u64) ^ ((link_type as u64) << 40) ^ (k << 56) ^ 0x11AB);
    1 + (h % nodes) as i64
}

/// The distinct candidate `id2`s of (id1, link_type), ascending.
fn candidates(id1: i64, link_type: i64, nodes: u64) -> Vec<i64> {
    let mut ids: Vec<i64> = (0..LINK_CANDIDATES)
        .map(|k| candidate_id2(id1, link_type, k, nodes))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// Printable data of `min..=max` bytes.
fn data(rng: &mut Rng, min: u64, max: u64) -> Value {
    let len = min + rng.below(max - min + 1);
    Value::Bytes((0..len).map(|_| b'a' + rng.below(26) as u8).collect())
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn node_row(id: i64, version: i64, rng: &mut Rng) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::Int(1 + (id % 8)),
        Value::Int(version),
        Value::Int(now_ms() / 1000),
        data(rng, 64, 128),
    ]
}

fn link_row(id1: i64, link_type: i64, id2: i64, version: i64, rng: &mut Rng) -> Vec<Value> {
    vec![
        Value::Int(id1),
        Value::Int(link_type),
        Value::Int(id2),
        Value::Int(1),
        data(rng, 16, 64),
        Value::Int(now_ms()),
        Value::Int(version),
    ]
}

fn count_row(id: i64, link_type: i64, count: i64, version: i64) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::Int(link_type),
        Value::Int(count),
        Value::Int(now_ms()),
        Value::Int(version),
    ]
}

fn int_at(row: &[Value], index: usize) -> tarn_common::Result<i64> {
    match row.get(index) {
        Some(Value::Int(v)) => Ok(*v),
        Some(Value::UInt(v)) => Ok(*v as i64),
        other => Err(tarn_common::Error::CorruptData(format!(
            "column {index} is {other:?}, not an integer"
        ))),
    }
}

/// What the load put in.
#[derive(Clone, Debug, Serialize)]
pub struct Loaded {
    pub device: String,
    pub nodes: u64,
    pub links: u64,
    pub count_rows: u64,
    pub seconds: f64,
}

/// Creates the schema in an empty storage and bulk-loads the graph: nodes 1..=nodes;
/// each candidate link present with probability links_per_node / (types x
/// candidates); a count row for every (id1, link_type) with links.
fn load(storage: &Storage, options: &LocksBenchOptions, device: LogDevice) -> Result<Loaded> {
    let started = Instant::now();
    storage.create_database(DATABASE)?;
    let [node_def, link_def, count_def] = definitions();
    let nodes_table = storage.create_table(DATABASE, node_def)?;
    let links_table = storage.create_table(DATABASE, link_def)?;
    let counts_table = storage.create_table(DATABASE, count_def)?;
    let n = options.nodes;
    let mut rng = Rng::new(options.seed ^ 0x10AD);
    let nodes = nodes_table.bulk_load((1..=n as i64).map(|id| Ok(node_row(id, 0, &mut rng))))?;
    let share = options.links_per_node / (LINK_TYPES as f64 * LINK_CANDIDATES as f64);
    // Which links exist, decided once, in primary-key order.
    let mut present: Vec<(i64, i64, i64)> = Vec::new();
    let mut pick = Rng::new(options.seed ^ 0x11CC);
    for id1 in 1..=n as i64 {
        for link_type in 1..=LINK_TYPES {
            for id2 in candidates(id1, link_type, n) {
                if pick.unit_f64() < share {
                    present.push((id1, link_type, id2));
                }
            }
        }
    }
    let links = links_table.bulk_load(
        present
            .iter()
            .map(|&(id1, t, id2)| Ok(link_row(id1, t, id2, 0, &mut rng))),
    )?;
    let mut counts: Vec<(i64, i64, i64)> = Vec::new();
    for &(id1, t, _) in &present {
        match counts.last_mut() {
            Some(last) if (last.0, last.1) == (id1, t) => last.2 += 1,
            _ => counts.push((id1, t, 1)),
        }
    }
    let count_rows = counts_table.bulk_load(
        counts
            .iter()
            .map(|&(id1, t, c)| Ok(count_row(id1, t, c, 0))),
    )?;
    storage.checkpoint()?;
    Ok(Loaded {
        device: device.to_string(),
        nodes,
        links,
        count_rows,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Checks that every count row equals the number of links of its (id1, link_type), and
/// that every (id1, link_type) with links has a count row. Returns the rows checked.
fn verify_counts(storage: &Storage, device: LogDevice) -> Result<u64> {
    let links = storage.table(DATABASE, LINK_TABLE)?;
    let counts = storage.table(DATABASE, COUNT_TABLE)?;
    let mut tx = storage.begin(None, true);
    let all = |table: &Table, tx: &mut Transaction| {
        table.scan_tx(
            tx,
            Bound::Unbounded,
            Bound::Unbounded,
            RowLock::None,
            WaitPolicy::Wait,
            usize::MAX,
        )
    };
    let mut expected: HashMap<(i64, i64), i64> = HashMap::new();
    let link_rows = all(&links, &mut tx)?;
    for row in &link_rows {
        *expected
            .entry((int_at(row, 0)?, int_at(row, 1)?))
            .or_default() += 1;
    }
    let count_rows = all(&counts, &mut tx)?;
    storage.commit(tx)?;
    let wrong = |detail: String| BenchError::WrongData {
        row: format!("{device} count check"),
        detail,
    };
    for row in &count_rows {
        let key = (int_at(row, 0)?, int_at(row, 1)?);
        let count = int_at(row, 2)?;
        let links = expected.remove(&key).unwrap_or(0);
        if count != links {
            return Err(wrong(format!(
                "counttable ({}, {}) holds {count} but linktable has {links} links",
                key.0, key.1
            )));
        }
    }
    if let Some(((id1, t), links)) = expected.into_iter().next() {
        return Err(wrong(format!(
            "({id1}, {t}) has {links} links but no count row"
        )));
    }
    Ok((link_rows.len() + count_rows.len()) as u64)
}

// ---------------------------------------------------------------------------------
// The operations.

/// What every client shares.
struct Graph<'a> {
    storage: &'a Storage,
    nodes: Arc<Table>,
    links: Arc<Table>,
    counts: Arc<Table>,
    zipf: &'a Zipf,
    preloaded: u64,
    /// The next id add_node takes (ids past the preloaded ones).
    next_node: &'a AtomicI64,
    /// Operations run, by [`MIX`] position (all phases).
    op_counts: &'a [AtomicU64; 10],
    label: &'a str,
}

impl Graph<'_> {
    fn node_id(&self, rng: &mut Rng) -> i64 {
        1 + self.zipf.sample_scrambled(rng) as i64
    }

    fn link_key(&self, rng: &mut Rng) -> (i64, i64, i64) {
        let id1 = self.node_id(rng);
        let link_type = 1 + rng.below(LINK_TYPES as u64) as i64;
        let id2 = candidate_id2(id1, link_type, rng.below(LINK_CANDIDATES), self.preloaded);
        (id1, link_type, id2)
    }

    /// Runs `body` in a transaction and commits; a deadlock, lock-wait timeout or
    /// duplicate key rolls back and becomes an [`Outcome`].
    fn transaction(
        &self,
        read_only: bool,
        body: impl FnOnce(&mut Transaction) -> tarn_common::Result<()>,
    ) -> Result<Outcome> {
        let mut tx = self.storage.begin(None, read_only);
        match body(&mut tx) {
            Ok(()) => {
                self.storage.commit(tx)?;
                Ok(Outcome::Committed)
            }
            Err(error) => {
                self.storage.rollback(tx)?;
                abort_outcome(error)
            }
        }
    }

    /// Adds `delta` to the count row of (id1, link_type) (at least 0) and touches its
    /// time and version, under its exclusive lock; inserts it if absent.
    fn bump_count(
        &self,
        tx: &mut Transaction,
        id1: i64,
        link_type: i64,
        delta: i64,
    ) -> tarn_common::Result<()> {
        let key = [Value::Int(id1), Value::Int(link_type)];
        match self.counts.get_tx(tx, &key, RowLock::Exclusive)? {
            Some(row) => {
                let count = (int_at(&row, 2)? + delta).max(0);
                let version = int_at(&row, 4)? + 1;
                self.counts
                    .update_tx(tx, &key, count_row(id1, link_type, count, version))?;
            }
            None => {
                self.counts
                    .insert_tx(tx, count_row(id1, link_type, delta.max(0), 0))?;
            }
        }
        Ok(())
    }

    fn run(&self, op: Op, rng: &mut Rng) -> Result<Outcome> {
        match op {
            Op::AddLink | Op::UpdateLink => {
                let (id1, t, id2) = self.link_key(rng);
                let mut row_rng = Rng::new(rng.next_u64());
                self.transaction(false, |tx| {
                    let key = [Value::Int(id1), Value::Int(t), Value::Int(id2)];
                    let inserted = match self.links.get_tx(tx, &key, RowLock::Exclusive)? {
                        Some(row) => {
                            let version = int_at(&row, 6)? + 1;
                            self.links.update_tx(
                                tx,
                                &key,
                                link_row(id1, t, id2, version, &mut row_rng),
                            )?;
                            false
                        }
                        None => {
                            self.links
                                .insert_tx(tx, link_row(id1, t, id2, 0, &mut row_rng))?;
                            true
                        }
                    };
                    self.bump_count(tx, id1, t, i64::from(inserted))
                })
            }
            Op::DeleteLink => {
                let (id1, t, id2) = self.link_key(rng);
                self.transaction(false, |tx| {
                    let key = [Value::Int(id1), Value::Int(t), Value::Int(id2)];
                    if self.links.get_tx(tx, &key, RowLock::Exclusive)?.is_some()
                        && self.links.delete_tx(tx, &key)?
                    {
                        self.bump_count(tx, id1, t, -1)?;
                    }
                    Ok(())
                })
            }
            Op::CountLink => {
                let id1 = self.node_id(rng);
                let t = 1 + rng.below(LINK_TYPES as u64) as i64;
                self.transaction(true, |tx| {
                    self.counts
                        .get_tx(tx, &[Value::Int(id1), Value::Int(t)], RowLock::None)
                        .map(drop)
                })
            }
            Op::GetLink => {
                let (id1, t, id2) = self.link_key(rng);
                self.transaction(true, |tx| {
                    let key = [Value::Int(id1), Value::Int(t), Value::Int(id2)];
                    self.links.get_tx(tx, &key, RowLock::None).map(drop)
                })
            }
            Op::GetLinkList => {
                let id1 = self.node_id(rng);
                let t = 1 + rng.below(LINK_TYPES as u64) as i64;
                self.transaction(true, |tx| {
                    let prefix = vec![Value::Int(id1), Value::Int(t)];
                    let rows = self.links.index_range_tx(
                        tx,
                        LINK_INDEX,
                        Bound::Included(prefix.clone()),
                        Bound::Included(prefix),
                        RowLock::None,
                        WaitPolicy::Wait,
                        LINK_LIST_LIMIT,
                    )?;
                    for row in &rows {
                        if (int_at(row, 0)?, int_at(row, 1)?) != (id1, t) {
                            return Err(tarn_common::Error::CorruptData(format!(
                                "{}: the link list of ({id1}, {t}) returned a link of ({}, {})",
                                self.label,
                                int_at(row, 0)?,
                                int_at(row, 1)?
                            )));
                        }
                    }
                    Ok(())
                })
            }
            Op::GetNode => {
                let id = self.node_id(rng);
                self.transaction(true, |tx| {
                    self.nodes
                        .get_tx(tx, &[Value::Int(id)], RowLock::None)
                        .map(drop)
                })
            }
            Op::AddNode => {
                let id = self.next_node.fetch_add(1, Ordering::Relaxed);
                let row = node_row(id, 0, rng);
                self.transaction(false, |tx| self.nodes.insert_tx(tx, row))
            }
            Op::UpdateNode => {
                let id = self.node_id(rng);
                let mut row_rng = Rng::new(rng.next_u64());
                self.transaction(false, |tx| {
                    let key = [Value::Int(id)];
                    let Some(row) = self.nodes.get_tx(tx, &key, RowLock::Exclusive)? else {
                        return Err(tarn_common::Error::CorruptData(format!(
                            "{}: update_node found no node {id} (preloaded nodes are never \
                             deleted)",
                            self.label
                        )));
                    };
                    let version = int_at(&row, 2)? + 1;
                    self.nodes
                        .update_tx(tx, &key, node_row(id, version, &mut row_rng))
                        .map(drop)
                })
            }
            Op::DeleteNode => {
                let first = self.preloaded as i64 + 1;
                let next = self.next_node.load(Ordering::Relaxed);
                let id = if next > first {
                    first + rng.below((next - first) as u64) as i64
                } else {
                    first
                };
                self.transaction(false, |tx| {
                    self.nodes.delete_tx(tx, &[Value::Int(id)]).map(drop)
                })
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Measurement.

/// Lock-manager counters over one or more measured windows.
#[derive(Clone, Copy, Debug, Default)]
struct LockDelta {
    requests: u64,
    waits: u64,
    wait_ns: u64,
    timeouts: u64,
    deadlocks: u64,
    grants_fifo: u64,
    grants_cats: u64,
    grants_starvation: u64,
    /// CPU time of the whole process (clients and engine threads) in the window.
    cpu_ns: u64,
    /// Committed transactions whose old versions purge had not removed yet, at the end
    /// of the window (the largest over windows).
    purge_backlog_trx: usize,
}

impl LockDelta {
    fn add(&mut self, other: &LockDelta) {
        self.requests += other.requests;
        self.waits += other.waits;
        self.wait_ns += other.wait_ns;
        self.timeouts += other.timeouts;
        self.deadlocks += other.deadlocks;
        self.grants_fifo += other.grants_fifo;
        self.grants_cats += other.grants_cats;
        self.grants_starvation += other.grants_starvation;
        self.cpu_ns += other.cpu_ns;
        self.purge_backlog_trx = self.purge_backlog_trx.max(other.purge_backlog_trx);
    }
}

/// One measured configuration (device x clients x scheduling), as printed and in the
/// JSON `rows`.
#[derive(Clone, Debug, Serialize)]
pub struct LocksRow {
    pub device: String,
    pub clients: usize,
    pub scheduling: String,
    /// Seconds measured (both halves for the policy run first at this point).
    pub seconds: f64,
    pub ops: u64,
    pub ops_per_sec: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub lock_requests: u64,
    pub lock_waits: u64,
    /// Seconds spent waiting for locks, summed over transactions.
    pub lock_wait_s: f64,
    /// Mean wait of a request that waited, in milliseconds.
    pub lock_wait_ms_per_wait: Option<f64>,
    pub deadlocks: u64,
    pub timeouts: u64,
    pub duplicates: u64,
    /// Waiting requests granted in arrival order, by CATS weight, and by CATS's
    /// anti-starvation fallback.
    pub grants_fifo: u64,
    pub grants_cats: u64,
    pub grants_starvation: u64,
    /// cats ops/s / fifo ops/s at this device and clients (on both rows).
    pub cats_vs_fifo: Option<f64>,
    /// The process's CPU time over the window / (window x cores), in percent: how busy
    /// the machine's cores were.
    pub cpu_busy_pct: f64,
    /// Committed transactions purge had not finished with at the end of a window.
    pub purge_backlog_trx: usize,
    /// Which policy ran first (A of A B B A) at this point.
    pub first: String,
}

/// The figures the team checks; `null` when an input was not measured.
#[derive(Clone, Debug, Serialize)]
pub struct LocksSummary {
    /// cats/fifo throughput on pmem at the most contended point: the client count with
    /// the largest fifo lock wait time on pmem (`pmem_peak_clients`).
    pub cats_vs_fifo_pmem_peak: Option<f64>,
    pub pmem_peak_clients: Option<usize>,
    /// The same on fsync.
    pub cats_vs_fifo_fsync_peak: Option<f64>,
    pub fsync_peak_clients: Option<usize>,
    /// The smallest cats/fifo ratio at the lowest client count measured
    /// (`low_contention_clients`, 32 by default), over both devices.
    pub cats_vs_fifo_min_low_contention: Option<f64>,
    pub low_contention_clients: Option<usize>,
    /// The best and worst cats/fifo ratio per device.
    pub cats_vs_fifo_max: BTreeMap<String, f64>,
    pub cats_vs_fifo_min: BTreeMap<String, f64>,
    /// cats/fifo by device and clients.
    pub cats_vs_fifo: BTreeMap<String, BTreeMap<usize, f64>>,
    /// pmem fifo ops/s / fsync fifo ops/s at the lowest client count.
    pub pmem_vs_fsync_fifo_low: Option<f64>,
    pub ops_total: u64,
    pub deadlocks_total: u64,
    pub timeouts_total: u64,
    pub rows_verified: u64,
    pub peak_definition: &'static str,
}

/// What the run measured under which conditions (the JSON `config`).
#[derive(Clone, Debug, Serialize)]
pub struct LocksBenchConfig {
    pub quick: bool,
    pub data_dir: String,
    pub data_dir_kept: bool,
    pub seconds_per_policy: f64,
    pub warmup_seconds: f64,
    pub settle_seconds: f64,
    pub clients: Vec<usize>,
    pub devices: Vec<String>,
    pub devices_skipped: Vec<String>,
    pub nodes: u64,
    pub links_per_node: f64,
    pub link_types: i64,
    pub link_candidates: u64,
    pub theta: f64,
    pub hottest_node_share_pct: f64,
    pub seed: u64,
    pub mix_pct: BTreeMap<&'static str, f64>,
    pub mix_achieved_pct: BTreeMap<&'static str, f64>,
    pub read_pct: f64,
    pub loaded: Vec<Loaded>,
    pub isolation: String,
    pub lock_wait_timeout_s: u32,
    pub log_file_size_bytes: u64,
    pub log_files: u32,
    pub buffer_pool_size_bytes: u64,
    pub pmem_log_dir: Option<String>,
    pub order: &'static str,
}

/// A finished run.
pub struct LocksReport {
    pub config: LocksBenchConfig,
    pub rows: Vec<LocksRow>,
    pub summary: LocksSummary,
}

const ORDER: &str = "per point, one client set runs A for half the seconds, B for the \
     seconds, A for the other half (A B B A), the policy switched at run time with a short \
     unmeasured settling window after each switch; A = fifo at even points, cats at odd";
const PEAK_DEFINITION: &str = "the most contended point of a device is the client count with \
     the largest fifo lock wait time (seconds waited, summed over transactions)";

/// Runs the bench and prints its tables and notes (and, with `--json`, the document).
pub fn run_and_print(options: &LocksBenchOptions, output: &Output) -> Result<LocksReport> {
    let report = run(options, output)?;
    print(&report, output)?;
    Ok(report)
}

/// The (hottest) share of node draws the zipf gives rank 0, in percent.
fn hottest_share_pct(nodes: u64, theta: f64) -> f64 {
    let zeta: f64 = (1..=nodes).map(|i| 1.0 / (i as f64).powf(theta)).sum();
    100.0 / zeta
}

/// Runs the bench, printing progress lines only.
pub fn run(options: &LocksBenchOptions, output: &Output) -> Result<LocksReport> {
    let (devices, clients) = options.validated()?;
    let workdir = WorkDir::open(options.data_dir.as_deref(), ".tarn-bench-locks-")?;
    workdir.warn_if_in_memory(output, "the fsync rows measure memory, not a device");
    let warmup = (options.seconds * WARMUP_SHARE).clamp(0.1, 1.0);
    let settle = (options.seconds * SETTLE_SHARE).clamp(0.05, 0.5);
    output.progress(&format!(
        "tarn bench locks: {} devices x {} client counts x fifo and cats, {:.1} s per \
         policy per point, {} nodes, theta {}, data in '{}'",
        devices.len(),
        clients.len(),
        options.seconds,
        options.nodes,
        options.theta,
        workdir.path().display()
    ));
    let zipf = Zipf::new(options.nodes, options.theta);

    let mut base = options.settings.clone();
    driver::bench_log_geometry(&mut base, LOG_FILE_SIZE_BYTES, LOG_FILES);

    let op_counts: [AtomicU64; 10] = Default::default();
    let mut rows: Vec<LocksRow> = Vec::new();
    let mut loaded = Vec::new();
    let mut skipped = Vec::new();
    let mut pmem_log_dir = None;
    let mut rows_verified = 0;
    let points = devices.len() * clients.len();
    let mut point = 0usize;
    for &device in &devices {
        let shm = if device == LogDevice::Pmem {
            match ShmLogDir::create("tarn-bench-locks", "pmem")? {
                Some(dir) => Some(dir),
                None => {
                    let note = "pmem: skipped, /dev/shm is missing".to_string();
                    output.progress(&note);
                    skipped.push(note);
                    continue;
                }
            }
        } else {
            None
        };
        let data = workdir.path().join(format!("locks-{device}"));
        driver::fresh_dir(&data)?;
        let mut settings = base.clone();
        settings.data_dir = data.clone();
        settings.log_device = device;
        settings.log_dir = shm
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default();
        if let Some(dir) = &shm {
            pmem_log_dir = Some(dir.path().display().to_string());
        }
        settings.validate()?;
        let storage = Storage::open(&settings)?;
        output.progress(&format!(
            "{device}: loading {} nodes into '{}' ...",
            options.nodes,
            data.display()
        ));
        let load = load(&storage, options, device)?;
        output.progress(&format!(
            "{device}: loaded {} nodes, {} links, {} count rows in {:.2} s",
            load.nodes, load.links, load.count_rows, load.seconds
        ));
        loaded.push(load);
        let next_node = AtomicI64::new(options.nodes as i64 + 1);
        for &n in &clients {
            let first = if point.is_multiple_of(2) {
                LockScheduling::Fifo
            } else {
                LockScheduling::Cats
            };
            point += 1;
            let label = format!("{device} {n} clients");
            let graph = Graph {
                storage: &storage,
                nodes: storage.table(DATABASE, NODE_TABLE)?,
                links: storage.table(DATABASE, LINK_TABLE)?,
                counts: storage.table(DATABASE, COUNT_TABLE)?,
                zipf: &zipf,
                preloaded: options.nodes,
                next_node: &next_node,
                op_counts: &op_counts,
                label: &label,
            };
            let measured = measure_point(&graph, options, n, point as u64, first, warmup, settle)?;
            let mut pair: Vec<LocksRow> = measured
                .into_iter()
                .map(|(scheduling, seconds, stats, locks)| {
                    build_row(device, n, scheduling, first, seconds, &stats, &locks)
                })
                .collect();
            let rate = |s: LockScheduling| {
                pair.iter()
                    .find(|r| r.scheduling == s.name())
                    .map(|r| r.ops_per_sec)
            };
            let cats_vs_fifo = ratio(rate(LockScheduling::Cats), rate(LockScheduling::Fifo));
            for row in &mut pair {
                row.cats_vs_fifo = cats_vs_fifo;
            }
            let describe = |r: &LocksRow| {
                format!(
                    "{} {} ops/s p99 {} ms, {} waits {:.2} s",
                    r.scheduling,
                    format_count(Some(r.ops_per_sec)),
                    format_number(r.p99_ms, 1),
                    r.lock_waits,
                    r.lock_wait_s
                )
            };
            output.progress(&format!(
                "[{point}/{points}] {label}: {}; {}; cats/fifo {}",
                describe(&pair[0]),
                describe(&pair[1]),
                format_ratio(cats_vs_fifo)
            ));
            rows.extend(pair);
        }
        rows_verified += verify_counts(&storage, device)?;
        drop(storage);
        if device == LogDevice::Pmem {
            let _ = std::fs::remove_dir_all(&data);
        }
        drop(shm);
    }

    let total_ops: u64 = op_counts.iter().map(|c| c.load(Ordering::Relaxed)).sum();
    let mix_achieved_pct = MIX
        .iter()
        .zip(&op_counts)
        .map(|((op, _), count)| {
            (
                op.name(),
                ratio(
                    Some(count.load(Ordering::Relaxed) as f64 * 100.0),
                    Some(total_ops as f64),
                )
                .unwrap_or(0.0),
            )
        })
        .collect();
    let summary = summarize(&rows, rows_verified);
    let config = LocksBenchConfig {
        quick: options.quick,
        data_dir: workdir.path().display().to_string(),
        data_dir_kept: !workdir.is_temporary(),
        seconds_per_policy: options.seconds,
        warmup_seconds: warmup,
        settle_seconds: settle,
        clients,
        devices: crate::report::distinct(rows.iter().map(|r| r.device.clone())),
        devices_skipped: skipped,
        nodes: options.nodes,
        links_per_node: options.links_per_node,
        link_types: LINK_TYPES,
        link_candidates: LINK_CANDIDATES,
        theta: options.theta,
        hottest_node_share_pct: hottest_share_pct(options.nodes, options.theta),
        seed: options.seed,
        mix_pct: MIX
            .iter()
            .map(|(op, w)| (op.name(), f64::from(*w) / 100.0))
            .collect(),
        mix_achieved_pct,
        read_pct: MIX
            .iter()
            .filter(|(op, _)| op.is_read())
            .map(|(_, w)| f64::from(*w) / 100.0)
            .sum(),
        loaded,
        isolation: base.transaction_isolation.to_string(),
        lock_wait_timeout_s: base.lock_wait_timeout_s,
        log_file_size_bytes: base.log_file_size_bytes,
        log_files: base.log_files,
        buffer_pool_size_bytes: base.buffer_pool_size_bytes,
        pmem_log_dir,
        order: ORDER,
    };
    drop(workdir);
    Ok(LocksReport {
        config,
        rows,
        summary,
    })
}

type PolicyResult = (LockScheduling, f64, PhaseStats, LockDelta);

/// Runs one point: `clients` clients through A B B A with A = `first`. Returns, for A
/// then B, the seconds measured, the clients' counts and the lock counters.
fn measure_point(
    graph: &Graph<'_>,
    options: &LocksBenchOptions,
    clients: usize,
    point: u64,
    first: LockScheduling,
    warmup: f64,
    settle: f64,
) -> Result<Vec<PolicyResult>> {
    let second = match first {
        LockScheduling::Fifo => LockScheduling::Cats,
        LockScheduling::Cats => LockScheduling::Fifo,
    };
    let locks = &graph.storage.txn_context().locks;
    let read_locks = || {
        let s = locks.stats();
        LockDelta {
            requests: s.requests,
            waits: s.waits,
            wait_ns: s.wait_ns_total,
            timeouts: s.timeouts,
            deadlocks: s.deadlocks,
            grants_fifo: s.grants_fifo,
            grants_cats: s.grants_cats,
            grants_starvation: s.grants_starvation,
            cpu_ns: 0,
            purge_backlog_trx: 0,
        }
    };
    let make_client = |client: usize| -> Result<_> {
        let mut rng = Rng::new(
            options.seed
                ^ point.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ (client as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9),
        );
        Ok(move || {
            let op = op_for(rng.below(10_000) as u32);
            let index = MIX.iter().position(|(o, _)| *o == op).unwrap_or(0);
            graph.op_counts[index].fetch_add(1, Ordering::Relaxed);
            graph.run(op, &mut rng)
        })
    };
    // Phases: warm-up, A, settle, B, settle, A, drain.
    const PHASES: [bool; 7] = [false, true, false, true, false, true, false];
    let half = options.seconds / 2.0;
    let (measured, phases) = run_clients(clients, &PHASES, make_client, |control| {
        let mut seconds = [0.0f64; 2];
        let mut deltas = [LockDelta::default(); 2];
        let mut window = |phase: usize, policy: usize, length: f64| {
            locks.reset_stats();
            control.enter(phase);
            let started = Instant::now();
            let cpu = process_cpu_time();
            control.sleep(length);
            control.enter(phase + 1);
            seconds[policy] += started.elapsed().as_secs_f64();
            let mut delta = read_locks();
            delta.cpu_ns = (process_cpu_time() - cpu).as_nanos() as u64;
            delta.purge_backlog_trx = graph.storage.txn_context().sys.stats().purge_backlog_trx;
            deltas[policy].add(&delta);
        };
        locks.set_scheduling(first);
        control.sleep(warmup);
        window(1, 0, half);
        locks.set_scheduling(second);
        control.sleep(settle);
        window(3, 1, options.seconds);
        locks.set_scheduling(first);
        control.sleep(settle);
        window(5, 0, options.seconds - half);
        Ok((seconds, deltas))
    })?;
    let (seconds, deltas) = measured;
    let mut a = phases[1].clone();
    a.merge(&phases[5]);
    let b = phases[3].clone();
    Ok(vec![
        (first, seconds[0], a, deltas[0]),
        (second, seconds[1], b, deltas[1]),
    ])
}

fn build_row(
    device: LogDevice,
    clients: usize,
    scheduling: LockScheduling,
    first: LockScheduling,
    seconds: f64,
    stats: &PhaseStats,
    locks: &LockDelta,
) -> LocksRow {
    let ms = |q: f64| stats.latency_quantile_us(q).map(|us| us / 1000.0);
    let lock_wait_s = locks.wait_ns as f64 / 1e9;
    LocksRow {
        device: device.to_string(),
        clients,
        scheduling: scheduling.to_string(),
        seconds,
        ops: stats.committed,
        ops_per_sec: ratio(Some(stats.committed as f64), Some(seconds)).unwrap_or(0.0),
        p50_ms: ms(0.5),
        p99_ms: ms(0.99),
        lock_requests: locks.requests,
        lock_waits: locks.waits,
        lock_wait_s,
        lock_wait_ms_per_wait: ratio(Some(lock_wait_s * 1000.0), Some(locks.waits as f64)),
        deadlocks: stats.deadlocks,
        timeouts: stats.timeouts,
        duplicates: stats.duplicates,
        grants_fifo: locks.grants_fifo,
        grants_cats: locks.grants_cats,
        grants_starvation: locks.grants_starvation,
        cats_vs_fifo: None,
        cpu_busy_pct: ratio(
            Some(locks.cpu_ns as f64 / 1e9),
            Some(seconds * cores() as f64),
        )
        .map_or(0.0, |r| r * 100.0),
        purge_backlog_trx: locks.purge_backlog_trx,
        first: first.to_string(),
    }
}

/// The summary of the measured rows (cats_vs_fifo already filled in).
pub fn summarize(rows: &[LocksRow], rows_verified: u64) -> LocksSummary {
    fn fifo_rows<'a>(rows: &'a [LocksRow], device: &'a str) -> impl Iterator<Item = &'a LocksRow> {
        rows.iter()
            .filter(move |r| r.device == device && r.scheduling == "fifo")
    }
    let fifo = |device: &'static str| fifo_rows(rows, device);
    let peak = |device: &'static str| -> (Option<f64>, Option<usize>) {
        let row = fifo(device).max_by(|a, b| a.lock_wait_s.total_cmp(&b.lock_wait_s));
        (row.and_then(|r| r.cats_vs_fifo), row.map(|r| r.clients))
    };
    let (pmem_peak, pmem_clients) = peak("pmem");
    let (fsync_peak, fsync_clients) = peak("fsync");

    let low = rows.iter().map(|r| r.clients).min();
    let cats_vs_fifo_min_low_contention = low.and_then(|low| {
        rows.iter()
            .filter(|r| r.clients == low && r.scheduling == "fifo")
            .filter_map(|r| r.cats_vs_fifo)
            .min_by(f64::total_cmp)
    });
    let mut by_point: BTreeMap<String, BTreeMap<usize, f64>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.scheduling == "fifo") {
        if let Some(r) = row.cats_vs_fifo {
            by_point
                .entry(row.device.clone())
                .or_default()
                .insert(row.clients, r);
        }
    }
    let extreme = |pick_max: bool| -> BTreeMap<String, f64> {
        by_point
            .iter()
            .filter_map(|(device, ratios)| {
                let values = ratios.values().copied();
                let value = if pick_max {
                    values.max_by(f64::total_cmp)
                } else {
                    values.min_by(f64::total_cmp)
                };
                value.map(|v| (device.clone(), v))
            })
            .collect()
    };
    let fifo_rate = |device: &'static str, clients: Option<usize>| {
        fifo(device)
            .find(|r| Some(r.clients) == clients)
            .map(|r| r.ops_per_sec)
    };
    LocksSummary {
        cats_vs_fifo_pmem_peak: pmem_peak,
        pmem_peak_clients: pmem_clients,
        cats_vs_fifo_fsync_peak: fsync_peak,
        fsync_peak_clients: fsync_clients,
        cats_vs_fifo_min_low_contention,
        low_contention_clients: low,
        cats_vs_fifo_max: extreme(true),
        cats_vs_fifo_min: extreme(false),
        cats_vs_fifo: by_point,
        pmem_vs_fsync_fifo_low: ratio(fifo_rate("pmem", low), fifo_rate("fsync", low)),
        ops_total: rows.iter().map(|r| r.ops).sum(),
        deadlocks_total: rows.iter().map(|r| r.deadlocks).sum(),
        timeouts_total: rows.iter().map(|r| r.timeouts).sum(),
        rows_verified,
        peak_definition: PEAK_DEFINITION,
    }
}

/// Prints the notes and tables, and the JSON document in `--json` mode.
pub fn print(report: &LocksReport, output: &Output) -> Result<()> {
    let config = &report.config;
    output.note(&format!(
        "\ntarn bench locks (S3): LinkBench-like mix ({:.0}% reads) on {} nodes, zipf theta {} \
         (hottest node {:.1}% of node draws), fifo vs cats by log device and clients; data \
         in '{}'{}",
        config.read_pct,
        config.nodes,
        config.theta,
        config.hottest_node_share_pct,
        config.data_dir,
        data_dir_fate(config.data_dir_kept)
    ));
    output.note(&format!(
        "- mix (%): {}",
        MIX.iter()
            .map(|(op, w)| format!("{} {:.1}", op.name(), f64::from(*w) / 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for load in &config.loaded {
        output.note(&format!(
            "- {}: loaded {} nodes, {} links, {} count rows in {:.2} s (reloaded every run: \
             the workload changes the graph)",
            load.device, load.nodes, load.links, load.count_rows, load.seconds
        ));
    }
    for line in &config.devices_skipped {
        output.note(&format!("- {line}"));
    }
    output.note(&format!(
        "- {:.1} s per policy per point after {:.2} s of warm-up; {}; isolation {}, \
         lock_wait_timeout {} s; log {} x {} MiB{}",
        config.seconds_per_policy,
        config.warmup_seconds,
        config.order,
        config.isolation,
        config.lock_wait_timeout_s,
        config.log_files,
        config.log_file_size_bytes >> 20,
        config
            .pmem_log_dir
            .as_ref()
            .map(|d| format!("; pmem log in '{d}' (tmpfs emulating persistent memory)"))
            .unwrap_or_default()
    ));
    output.note(
        "- latency: one operation (one transaction), begin to commit acknowledged; lock wait \
         s: seconds waited for locks summed over transactions; cpu %: the process's CPU \
         time / (window x cores); cats/fifo: ops/s ratio at the same device and clients",
    );
    let mut table = TextTable::new(
        "LinkBench-like mix by log device, clients and lock scheduling",
        &[
            "device",
            "clients",
            "scheduling",
            "ops/s",
            "p50 ms",
            "p99 ms",
            "lock waits",
            "lock wait s",
            "deadlocks",
            "timeouts",
            "cpu %",
            "purge backlog",
            "cats/fifo",
        ],
    );
    for row in &report.rows {
        table.add_row(vec![
            row.device.clone(),
            row.clients.to_string(),
            row.scheduling.clone(),
            format_count(Some(row.ops_per_sec)),
            format_number(row.p50_ms, 3),
            format_number(row.p99_ms, 3),
            format_count(Some(row.lock_waits as f64)),
            format_number(Some(row.lock_wait_s), 2),
            row.deadlocks.to_string(),
            row.timeouts.to_string(),
            format_number(Some(row.cpu_busy_pct), 0),
            format_count(Some(row.purge_backlog_trx as f64)),
            if row.scheduling == "cats" {
                format_ratio(row.cats_vs_fifo)
            } else {
                "-".into()
            },
        ]);
    }
    output.table(&table);
    let summary = &report.summary;
    output.note(&format!(
        "\ncats/fifo on pmem at the most contended point ({} clients): {}; on fsync ({} \
         clients): {}; lowest cats/fifo at {} clients: {} ({})",
        summary
            .pmem_peak_clients
            .map_or("-".to_string(), |c| c.to_string()),
        format_ratio(summary.cats_vs_fifo_pmem_peak),
        summary
            .fsync_peak_clients
            .map_or("-".to_string(), |c| c.to_string()),
        format_ratio(summary.cats_vs_fifo_fsync_peak),
        summary
            .low_contention_clients
            .map_or("-".to_string(), |c| c.to_string()),
        format_ratio(summary.cats_vs_fifo_min_low_contention),
        summary.peak_definition
    ));
    output.json(&BenchDocument::new("locks", config, &report.rows, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_sums_to_100_percent_with_69_percent_reads() {
        assert_eq!(MIX.iter().map(|(_, w)| w).sum::<u32>(), 10_000);
        let reads: u32 = MIX
            .iter()
            .filter(|(op, _)| op.is_read())
            .map(|(_, w)| w)
            .sum();
        assert_eq!(reads, 6_900);
        assert_eq!(op_for(0), Op::AddLink);
        assert_eq!(op_for(899), Op::AddLink);
        assert_eq!(op_for(900), Op::DeleteLink);
        assert_eq!(op_for(9_999), Op::DeleteNode);
    }

    #[test]
    fn candidates_are_node_ids_sorted_and_distinct() {
        for id1 in 1..50 {
            let ids = candidates(id1, 2, 1000);
            assert!(ids.windows(2).all(|w| w[0] < w[1]));
            assert!(ids.iter().all(|&id| (1..=1000).contains(&id)));
        }
    }

    fn row(device: &str, clients: usize, scheduling: &str, wait: f64, r: f64) -> LocksRow {
        LocksRow {
            device: device.into(),
            clients,
            scheduling: scheduling.into(),
            seconds: 1.0,
            ops: 100,
            ops_per_sec: 100.0,
            p50_ms: None,
            p99_ms: None,
            lock_requests: 0,
            lock_waits: 0,
            lock_wait_s: wait,
            lock_wait_ms_per_wait: None,
            deadlocks: 0,
            timeouts: 0,
            duplicates: 0,
            grants_fifo: 0,
            grants_cats: 0,
            grants_starvation: 0,
            cats_vs_fifo: Some(r),
            cpu_busy_pct: 50.0,
            purge_backlog_trx: 0,
            first: "fifo".into(),
        }
    }

    #[test]
    fn the_peak_is_where_fifo_waits_longest_and_low_contention_takes_the_minimum() {
        let rows = vec![
            row("pmem", 32, "fifo", 1.0, 1.1),
            row("pmem", 32, "cats", 0.5, 1.1),
            row("pmem", 128, "fifo", 9.0, 1.5),
            row("pmem", 128, "cats", 20.0, 1.5),
            row("pmem", 512, "fifo", 5.0, 1.2),
            row("fsync", 32, "fifo", 1.0, 0.95),
            row("fsync", 128, "fifo", 2.0, 1.0),
        ];
        let summary = summarize(&rows, 0);
        assert_eq!(summary.pmem_peak_clients, Some(128));
        assert_eq!(summary.cats_vs_fifo_pmem_peak, Some(1.5));
        assert_eq!(summary.fsync_peak_clients, Some(128));
        assert_eq!(summary.low_contention_clients, Some(32));
        assert_eq!(summary.cats_vs_fifo_min_low_contention, Some(0.95));
        assert_eq!(summary.cats_vs_fifo_max["pmem"], 1.5);
        let empty = summarize(&[], 0);
        assert_eq!(empty.cats_vs_fifo_pmem_peak, None);
        assert_eq!(empty.cats_vs_fifo_min_low_contention, None);
    }
}
