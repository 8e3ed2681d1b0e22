//! Recursive common table expressions: [`RecursiveCteOp`], and [`WorkTableOp`], the
//! leaf its recursive part reads the previous run's rows through.
//!
//! `WITH RECURSIVE r AS (anchor UNION [ALL | DISTINCT] recursive)` runs as MySQL 8
//! runs it: the anchor once, then the recursive part again and again, each run
//! reading only the rows the run before it produced (the anchor's, for the first),
//! until a run produces no row. Before it opens the recursive part for run k, the
//! operator puts run k-1's rows into the statement's [`WorkTables`] under the node's
//! `work_table` id; every [`Plan::WorkTable`] leaf with that id reads them from there
//! when it starts. Rows go to the consumer as they are produced, a chunk at a time:
//! the operator holds only the previous run's rows, the running one's, and with
//! UNION DISTINCT the key of every row produced so far.
//!
//! Rules (MySQL's):
//! - every row is converted to the CTE's column types, which are the anchor's
//!   ([`cast::to_column_at`], strict: a string longer than the anchor's type holds is
//!   1406, a number out of its type's range 1264), as MySQL stores the rows into a
//!   temporary table of those types;
//! - with UNION DISTINCT a row equal to one produced before (under the columns'
//!   collations) is dropped: neither returned nor run over again, so a recursion
//!   over a cycle ends;
//! - run k starts only when run k-1 produced rows, and k past the statement's
//!   `cte_max_recursion_depth` is error 3636 ("aborted after k iterations"): a
//!   recursion whose last run, number `cte_max_recursion_depth`, produces nothing
//!   succeeds;
//! - the CTE's own LIMIT (`row_limit`) ends the recursion once that many rows are
//!   produced.
//!
//! Bounds: the held rows and keys are charged to the statement's memory budget (a
//! work table's charge is given back when the next run replaces it), and their
//! number is bounded by [`RECURSIVE_CTE_HELD_ROWS_MAX`].

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::types::{Collation, ColumnType};

use super::{ExecContext, Operator, join_key, open};
use crate::chunk::Chunk;
use crate::limits::RECURSIVE_CTE_HELD_ROWS_MAX;
use crate::plan::{Plan, RowCount};
use crate::scalar::cast;

/// The work tables of the recursive CTEs a statement is running: the rows of each
/// one's previous run, by the node's `work_table` id.
pub type WorkTables = RefCell<HashMap<u64, Arc<Vec<Chunk>>>>;

/// Runs a [`Plan::RecursiveCte`].
pub(crate) struct RecursiveCteOp<'p> {
    name: &'p str,
    anchor: &'p Plan,
    recursive: &'p Plan,
    work_table: u64,
    distinct: bool,
    /// The plan's LIMIT (offset and count), read into `row_limit` when the anchor
    /// starts (a parameter's from the execution's parameters).
    plan_row_limit: Option<(RowCount, RowCount)>,
    row_limit: Option<u64>,
    /// The column types every row is converted to, with the names errors give.
    types: Vec<(ColumnType, &'p str)>,
    /// The collation each column compares strings under (UNION DISTINCT).
    collations: Vec<Collation>,
    /// The anchor or the recursive part's current run; None between runs.
    running: Option<Box<dyn Operator + 'p>>,
    started: bool,
    done: bool,
    /// Runs of the recursive part so far.
    runs: u64,
    /// The rows the running run has produced: the next run's work table.
    produced: Vec<Chunk>,
    produced_rows: usize,
    produced_bytes: usize,
    /// The current work table's rows and charged bytes.
    work_rows: usize,
    work_bytes: usize,
    /// UNION DISTINCT: the key of every row produced, and their charged bytes.
    /// Hashed with foldhash, as DISTINCT's keys are.
    seen: HashSet<Vec<u8>, foldhash::fast::RandomState>,
    seen_bytes: usize,
    /// Rows returned so far.
    rows_out: u64,
}

impl<'p> RecursiveCteOp<'p> {
    pub(crate) fn new(plan: &'p Plan) -> RecursiveCteOp<'p> {
        let Plan::RecursiveCte {
            name,
            anchor,
            recursive,
            work_table,
            distinct,
            row_limit,
            columns,
        } = plan
        else {
            unreachable!("a RecursiveCteOp runs a RecursiveCte");
        };
        RecursiveCteOp {
            name,
            anchor,
            recursive,
            work_table: *work_table,
            distinct: *distinct,
            plan_row_limit: *row_limit,
            row_limit: None,
            types: columns
                .iter()
                .map(|c| (c.ty.to_column().0, c.name.as_str()))
                .collect(),
            collations: columns.iter().map(|c| c.ty.collation()).collect(),
            running: None,
            started: false,
            done: false,
            runs: 0,
            produced: Vec::new(),
            produced_rows: 0,
            produced_bytes: 0,
            work_rows: 0,
            work_bytes: 0,
            seen: HashSet::default(),
            seen_bytes: 0,
            rows_out: 0,
        }
    }

    /// Converts a produced chunk to the CTE's column types and, with UNION DISTINCT,
    /// drops the rows produced before.
    fn admit(&mut self, chunk: Chunk, cx: &ExecContext) -> Result<Chunk> {
        let len = chunk.len();
        let mut columns = chunk.into_columns();
        for ((column, &(ty, name)), &collation) in
            columns.iter_mut().zip(&self.types).zip(&self.collations)
        {
            for (i, v) in column.iter_mut().enumerate() {
                let row = self.rows_out + i as u64 + 1;
                let value = std::mem::replace(v, Value::Null);
                *v = cast::to_column_at(value, ty, collation, name, row)?;
            }
        }
        let chunk = Chunk::from_columns(columns, len);
        if !self.distinct {
            return Ok(chunk);
        }
        let mut keep = vec![false; len];
        let mut key = Vec::new();
        for (i, slot) in keep.iter_mut().enumerate() {
            key.clear();
            for (c, &collation) in chunk.columns().iter().zip(&self.collations) {
                join_key(&c[i], collation, &mut key);
                key.push(0xFE);
            }
            if !self.seen.contains(&key) {
                let bytes = key.len() + 32;
                cx.memory.charge(bytes)?;
                self.seen_bytes += bytes;
                self.seen.insert(key.clone());
                *slot = true;
            }
        }
        Ok(chunk.filter(&keep))
    }

    /// Keeps `chunk` for the next run's work table.
    fn hold(&mut self, chunk: Chunk, cx: &ExecContext) -> Result<()> {
        let bytes = chunk.memory_bytes();
        cx.memory.charge(bytes)?;
        self.produced_bytes += bytes;
        self.produced_rows += chunk.len();
        let held = self.work_rows + self.produced_rows + self.seen.len();
        if held > RECURSIVE_CTE_HELD_ROWS_MAX {
            return Err(Error::OutOfResources(format!(
                "recursive common table expression '{}' would hold more than \
                 {RECURSIVE_CTE_HELD_ROWS_MAX} rows (its previous run's rows, the running \
                 run's{}); add a condition that ends the recursion sooner",
                self.name,
                if self.distinct {
                    " and, for UNION DISTINCT, one per row produced"
                } else {
                    ""
                }
            )));
        }
        self.produced.push(chunk);
        Ok(())
    }

    /// Starts the next run of the recursive part over the rows the last run
    /// produced; false when it produced none (the recursion is over).
    fn start_run(&mut self, cx: &ExecContext) -> Result<bool> {
        cx.memory.release(self.work_bytes);
        self.work_bytes = std::mem::take(&mut self.produced_bytes);
        self.work_rows = std::mem::take(&mut self.produced_rows);
        let rows = std::mem::take(&mut self.produced);
        if rows.is_empty() {
            return Ok(false);
        }
        self.runs += 1;
        if self.runs > cx.cte_max_recursion_depth {
            return Err(Error::sql(
                3636,
                "HY000",
                format!(
                    "Recursive query aborted after {} iterations. Try increasing \
                     @@cte_max_recursion_depth to a larger value.",
                    self.runs
                ),
            ));
        }
        cx.work_tables
            .borrow_mut()
            .insert(self.work_table, Arc::new(rows));
        self.running = Some(open(self.recursive)?);
        Ok(true)
    }

    /// Ends the recursion and gives back what it held.
    fn finish(&mut self, cx: &ExecContext) {
        self.done = true;
        self.running = None;
        cx.work_tables.borrow_mut().remove(&self.work_table);
        cx.memory
            .release(self.work_bytes + self.produced_bytes + self.seen_bytes);
        (self.work_bytes, self.produced_bytes, self.seen_bytes) = (0, 0, 0);
        self.produced = Vec::new();
        self.seen = HashSet::default();
    }
}

impl Operator for RecursiveCteOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        loop {
            if self.done {
                return Ok(None);
            }
            cx.cancel.check()?;
            let Some(running) = self.running.as_mut() else {
                let more = if !self.started {
                    self.started = true;
                    if let Some((offset, count)) = self.plan_row_limit {
                        let offset = offset.resolve(cx.params)?;
                        self.row_limit = Some(count.resolve(cx.params)?.saturating_add(offset));
                    }
                    self.running = Some(open(self.anchor)?);
                    self.row_limit != Some(0)
                } else {
                    self.start_run(cx)?
                };
                if !more {
                    self.finish(cx);
                }
                continue;
            };
            let Some(chunk) = running.next(cx)? else {
                // Dropping the run drops its reader of the work table.
                self.running = None;
                continue;
            };
            let mut chunk = self.admit(chunk, cx)?;
            if chunk.is_empty() {
                continue;
            }
            if let Some(limit) = self.row_limit {
                let left = limit - self.rows_out;
                if chunk.len() as u64 >= left {
                    chunk = chunk.slice(0, left as usize);
                    self.rows_out = limit;
                    self.finish(cx);
                    return Ok(Some(chunk));
                }
            }
            self.rows_out += chunk.len() as u64;
            self.hold(chunk.clone(), cx)?;
            return Ok(Some(chunk));
        }
    }
}

/// Reads a [`Plan::WorkTable`]: the rows the statement's [`WorkTables`] hold under
/// its id when it starts.
pub(crate) struct WorkTableOp {
    id: u64,
    rows: Option<Arc<Vec<Chunk>>>,
    position: usize,
}

impl WorkTableOp {
    pub(crate) fn new(id: u64) -> WorkTableOp {
        WorkTableOp {
            id,
            rows: None,
            position: 0,
        }
    }
}

impl Operator for WorkTableOp {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        if self.rows.is_none() {
            let rows = cx.work_tables.borrow().get(&self.id).cloned();
            self.rows = Some(rows.ok_or_else(|| {
                Error::sql(
                    1105,
                    "HY000",
                    "a recursive CTE's work table was read outside its recursion",
                )
            })?);
        }
        let rows = self.rows.as_ref().expect("set above");
        let chunk = rows.get(self.position).cloned();
        self.position += 1;
        Ok(chunk)
    }
}
