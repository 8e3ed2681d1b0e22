//! The storage engine handle: a data directory, its buffer pool, redo log, catalog,
//! open tables and transactions. This is the embedded API the SQL layer calls.
//!
//! Opening runs recovery ([`crate::recovery`]): torn pages are repaired from the
//! doublewrite file, the log is replayed from the last checkpoint, and transactions
//! that never committed are rolled back. Two background threads then run: purge
//! (removing row versions no view needs) and the checkpointer (writing dirty pages so
//! that the log can be recycled and recovery stays short).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use tarn_btree::{Redo, Tree};
use tarn_buffer::{BufferPool, PoolConfig};
use tarn_common::StatementInterrupt;
use tarn_common::latch::LatchRegistry;
use tarn_common::limits::{self, DATABASES_MAX, TABLES_PER_DATABASE_MAX};
use tarn_common::settings::{IsolationLevel, Settings, setting_name, setting_spec};
use tarn_common::{Error, FileId, Lsn, Result};
use tarn_io::DataDir;
use tarn_row::Value;
use tarn_txn::TrxSys;
use tarn_txn::lock::{LockManager, TableMode};
use tarn_wal::Wal;

use crate::catalog::{
    CatalogData, FIRST_INDEX_FILE_ID, ForeignKeyDef, IndexDef, TableDef, ViewDef,
};
use crate::recovery::{self, RecoveryReport, WalLog, WalRedo};
use crate::stats::{AnalyzeOptions, TableActivity, TableStats};
use crate::table::{ScanConfig, SharedScanConfig, Table};
use crate::txn::{Transaction, TxnContext, log_kind};

pub(crate) struct State {
    pub(crate) catalog: CatalogData,
    pub(crate) tables: HashMap<(String, String), Arc<Table>>,
}

impl State {
    /// The open table whose clustered index is file `file_id`.
    pub(crate) fn table_by_file_id(&self, file_id: u32) -> Option<Arc<Table>> {
        self.tables
            .values()
            .find(|t| t.table_id() == file_id)
            .cloned()
    }
}

/// What [`Storage::check_table`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    /// Every tree is sound; `rows`: the rows whose index entries were compared.
    Checked { rows: Option<u64> },
    /// Purge did not catch up in time; nothing was checked.
    PurgeBehind,
}

/// An open data directory with its tables.
pub struct Storage {
    /// The settings as they are now: those opened with, then every change by
    /// [`Storage::set_live_setting`].
    settings: RwLock<Settings>,
    /// The scan knobs every open table reads.
    scan_config: Arc<SharedScanConfig>,
    datadir: Arc<DataDir>,
    pool: Arc<BufferPool>,
    redo: Arc<dyn Redo>,
    /// Serialises DDL; table handles are looked up under it too (briefly).
    state: Arc<Mutex<State>>,
    ctx: Arc<TxnContext>,
    recovery: RecoveryReport,
    stop: Arc<AtomicBool>,
    background: Vec<JoinHandle<()>>,
    /// Purge rounds run by committers (each takes its own lock-manager id from it).
    purge_helpers: AtomicU64,
    /// Table lock holders made so far (each takes its own lock-manager id from it).
    table_lock_holders: AtomicU64,
    /// Every foreign key by the table it references, rebuilt from the catalog by each
    /// DDL that can change a foreign key or a table's name
    /// ([`Storage::refresh_foreign_keys`]).
    referenced_by: RwLock<Arc<ReferencedBy>>,
    /// Whether any table has a foreign key: DML on a database without any does no
    /// foreign-key work beyond this one load.
    any_foreign_keys: AtomicBool,
}

/// A foreign key as its parent table sees it: the child table and the constraint.
#[derive(Clone, Debug)]
pub struct ChildForeignKey {
    pub db: String,
    pub table: String,
    pub fk: ForeignKeyDef,
}

/// Foreign keys by the database, then the table, they reference (nested so that a
/// lookup by `&str` allocates nothing).
pub type ReferencedBy = HashMap<String, HashMap<String, Arc<[ChildForeignKey]>>>;

impl Storage {
    /// Opens (or creates) the data directory of `settings`, recovers it, and opens
    /// every table in it.
    pub fn open(settings: &Settings) -> Result<Storage> {
        settings.validate()?;
        let latches = LatchRegistry::new(settings.latch_accounting);
        let datadir = DataDir::open(settings, None, latches.clone())?;
        let repair = tarn_buffer::doublewrite::repair_torn_pages(&datadir)?;
        let wal = Arc::new(Wal::open(settings)?);
        let pool = Arc::new(BufferPool::open(
            PoolConfig::from_settings(settings),
            datadir.clone(),
            Arc::new(WalLog(wal.clone())),
        )?);
        let catalog = CatalogData::load(datadir.path())?;
        let redo_pass = recovery::redo(&wal, &pool, &catalog)?;
        let ctx = Arc::new(TxnContext {
            wal: wal.clone(),
            sys: TrxSys::new(redo_pass.next_trx_id, redo_pass.next_roll_ptr),
            locks: LockManager::new(
                settings.lock_scheduling,
                Duration::from_secs(u64::from(settings.lock_wait_timeout_s)),
                &latches,
            ),
        });
        let mut storage = Storage {
            settings: RwLock::new(settings.clone()),
            scan_config: Arc::new(SharedScanConfig::new(ScanConfig::from_settings(settings))),
            datadir,
            pool,
            redo: Arc::new(WalRedo(wal)),
            state: Arc::new(Mutex::new(State {
                catalog: catalog.clone(),
                tables: HashMap::new(),
            })),
            ctx,
            recovery: RecoveryReport::default(),
            stop: Arc::new(AtomicBool::new(false)),
            background: Vec::new(),
            purge_helpers: AtomicU64::new(0),
            table_lock_holders: AtomicU64::new(0),
            referenced_by: RwLock::new(Arc::default()),
            any_foreign_keys: AtomicBool::new(false),
        };
        storage.refresh_foreign_keys(&catalog);
        let mut tables = HashMap::new();
        for (db, db_tables) in &catalog.databases {
            for (name, def) in db_tables {
                let mut table = storage.open_table(db, def.clone(), None)?;
                table.activity = Arc::new(TableActivity::with_stats(catalog.table_stats(db, name)));
                tables.insert((db.clone(), name.clone()), Arc::new(table));
            }
        }
        storage.state.lock().tables = tables;
        storage.recovery = recovery::rollback_incomplete(
            &storage.ctx,
            &storage.pool,
            &storage.state,
            redo_pass,
            repair,
        )?;
        storage.remove_orphan_files()?;
        storage.checkpoint()?;
        storage.start_background();
        Ok(storage)
    }

    /// Removes data files the catalog does not name: a crash between a DDL's creation
    /// of files and its catalog write leaves the new ones, and a crash between the
    /// catalog write and the removal of replaced files (drop, truncate, rebuild) the
    /// old ones. Only ids the catalog has handed out are considered (the engine's own
    /// files have ids below them).
    fn remove_orphan_files(&self) -> Result<()> {
        let (named, next_file_id) = {
            let state = self.state.lock();
            let named: std::collections::HashSet<u32> = state
                .catalog
                .databases
                .values()
                .flat_map(|tables| tables.values())
                .flat_map(Self::files_of)
                .collect();
            (named, state.catalog.next_file_id)
        };
        let dir = self.datadir.path();
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io("list", dir, e))?;
        let mut orphans = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io("list", dir, e))?;
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.split('.').next())
                .and_then(|stem| stem.parse::<u32>().ok())
            else {
                continue;
            };
            let is_data_file = self.datadir.file_path(FileId(id)).file_name() == Some(&name);
            if is_data_file
                && (FIRST_INDEX_FILE_ID..next_file_id).contains(&id)
                && !named.contains(&id)
            {
                orphans.push(id);
            }
        }
        for id in orphans {
            tracing::info!("removing data file {id}, which no table names (left by a crash)");
            self.remove_file(id)?;
        }
        Ok(())
    }

    /// Rebuilds [`Storage::referenced_by`] from `catalog` (called under the DDL latch
    /// by every DDL that can add, drop or move a foreign key or a table).
    fn refresh_foreign_keys(&self, catalog: &CatalogData) {
        let mut lists: HashMap<String, HashMap<String, Vec<ChildForeignKey>>> = HashMap::new();
        for (db, tables) in &catalog.databases {
            for (name, def) in tables {
                for fk in &def.foreign_keys {
                    lists
                        .entry(fk.ref_db.clone())
                        .or_default()
                        .entry(fk.ref_table.clone())
                        .or_default()
                        .push(ChildForeignKey {
                            db: db.clone(),
                            table: name.clone(),
                            fk: fk.clone(),
                        });
                }
            }
        }
        let map: ReferencedBy = lists
            .into_iter()
            .map(|(db, tables)| {
                let tables = tables.into_iter().map(|(t, l)| (t, l.into())).collect();
                (db, tables)
            })
            .collect();
        let any = catalog
            .databases
            .values()
            .flat_map(|t| t.values())
            .any(|def| !def.foreign_keys.is_empty());
        *self.referenced_by.write() = Arc::new(map);
        self.any_foreign_keys.store(any, Ordering::Release);
    }

    /// Whether any table has a FOREIGN KEY (one atomic load: what DML tests first).
    pub fn any_foreign_keys(&self) -> bool {
        self.any_foreign_keys.load(Ordering::Acquire)
    }

    /// Every foreign key, by the table it references.
    pub fn referenced_by(&self) -> Arc<ReferencedBy> {
        self.referenced_by.read().clone()
    }

    /// The foreign keys that reference `db.table` (empty if none): a shared list,
    /// so that DML asks per row without copying.
    pub fn foreign_keys_referencing(&self, db: &str, table: &str) -> Arc<[ChildForeignKey]> {
        if !self.any_foreign_keys() {
            return Arc::new([]);
        }
        self.referenced_by
            .read()
            .get(db)
            .and_then(|tables| tables.get(table))
            .cloned()
            .unwrap_or_else(|| Arc::new([]))
    }

    /// What recovery found and did when this storage was opened.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.recovery
    }

    /// The engine's shared transaction state (log, transaction table, locks).
    pub fn txn_context(&self) -> &Arc<TxnContext> {
        &self.ctx
    }

    /// Waits until purge has processed every committed change it may process now (no
    /// view older than them is open); false if `timeout` passed first.
    pub fn wait_for_purge(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let stats = self.ctx.sys.stats();
            if stats.purge_backlog_trx == 0 {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Starts a transaction (`isolation`: the setting's default if `None`).
    pub fn begin(&self, isolation: Option<IsolationLevel>, read_only: bool) -> Transaction {
        Transaction::new(
            self.ctx.clone(),
            isolation.unwrap_or(self.settings.read().transaction_isolation),
            read_only,
        )
    }

    /// Commits `tx`: its changes become visible, its locks are released, and (with
    /// `flush_log_at_commit = 1`) this returns once its commit record is durable.
    ///
    /// While more than `PURGE_HELP_BACKLOG_TRX` committed transactions wait for purge,
    /// the committing thread also runs a small purge round before it waits (and waits
    /// for that round's log records too). With many
    /// more client threads than cores the purge thread gets a sliver of the CPU, the
    /// backlog grows without end and every read walks longer version chains and more
    /// stale index entries (the LinkBench-like bench at 256 clients on pmem: 50k
    /// transactions behind). Writers that help keep purge in step with writing.
    pub fn commit(&self, tx: Transaction) -> Result<()> {
        self.commit_deferred(tx)?.wait()
    }

    /// [`Storage::commit`] up to its wait for the log: the changes are visible, the
    /// locks released and purge helped, and the ticket says when the client may be
    /// told. The server holds a commit's answer back on it without holding a thread
    /// (`tarn_server::runners`).
    pub fn commit_deferred(&self, tx: Transaction) -> Result<CommitTicket> {
        let ticket = self.commit_nowait(tx)?;
        if self.ctx.sys.purge_queued() > limits::PURGE_HELP_BACKLOG_TRX {
            self.help_purge();
        }
        Ok(ticket)
    }

    /// Calls `hook` each time the redo log's written or durable frontier moves (see
    /// `Wal::set_progress_hook`); `None` removes it.
    pub fn set_log_progress_hook(&self, hook: Option<tarn_wal::ProgressHook>) {
        self.ctx.wal.set_progress_hook(hook);
    }

    /// Purge rounds committing threads have run to help the purge thread.
    pub fn purge_rounds_helped(&self) -> u64 {
        self.purge_helpers.load(Ordering::Relaxed)
    }

    /// One purge round of at most `PURGE_HELP_ITEMS` transactions by this thread.
    fn help_purge(&self) {
        let id = recovery::PURGER_TRX_ID + 1 + self.purge_helpers.fetch_add(1, Ordering::Relaxed);
        let purger = self.ctx.locks.register_brief(id);
        if let Err(error) =
            recovery::purge_round(&self.ctx, &self.state, &purger, limits::PURGE_HELP_ITEMS)
        {
            // The purge thread reports and stops on the same failure.
            tracing::debug!("a committer's purge round failed: {error}");
        }
    }

    /// Commits `tx` as [`Storage::commit`] does, but returns before the log has made
    /// the commit durable: the changes are visible and the locks released, and the
    /// returned ticket says when the client may be told (as `flush_log_at_commit`
    /// asks). A thread that serves many sessions runs other sessions meanwhile instead
    /// of sleeping once per commit.
    pub fn commit_nowait(&self, mut tx: Transaction) -> Result<CommitTicket> {
        let lock = tx.take_lock_handle();
        let lsn = tx.trx.has_changes().then(|| {
            self.ctx
                .wal
                .append(log_kind::COMMIT, &tx.id().to_le_bytes())
        });
        self.ctx.sys.commit(tx.into_trx());
        if let Some(lock) = lock {
            self.ctx.locks.release_all(&lock);
        }
        Ok(CommitTicket {
            wal: lsn.map(|lsn| (self.ctx.wal.clone(), lsn)),
        })
    }

    /// Rolls `tx` back entirely and releases its locks.
    pub fn rollback(&self, mut tx: Transaction) -> Result<()> {
        let mut result = self.undo_after(&mut tx, 0, true);
        if tx.id() != 0 && result.is_ok() {
            let lsn = self
                .ctx
                .wal
                .append(log_kind::ROLLBACK, &tx.id().to_le_bytes());
            // Durable before the transaction leaves the active set: from then on a
            // checkpoint may pass its undo, which recovery would need to roll it back.
            result = self.ctx.wal.flush_to(lsn);
        }
        let lock = tx.take_lock_handle();
        let trx = tx.into_trx();
        if result.is_ok() {
            self.ctx.sys.end_rolled_back(trx);
        } else {
            // The changes stay in the log without a rollback record: recovery takes
            // them back. The transaction stays active so no view treats them as
            // committed.
            std::mem::forget(trx);
        }
        if let Some(lock) = lock {
            self.ctx.locks.release_all(&lock);
        }
        result
    }

    /// Takes back the changes of the current statement (after a statement failed).
    pub fn rollback_statement(&self, tx: &mut Transaction) -> Result<()> {
        let position = tx.trx.statement_start();
        self.undo_after(tx, position, false)
    }

    /// Where the changes of `tx` end now: a point [`Storage::rollback_to_position`]
    /// takes them back to (the start of one row's change, which UPDATE IGNORE and
    /// DELETE IGNORE take back when the row fails a check).
    pub fn undo_position(&self, tx: &Transaction) -> usize {
        tx.trx.undo_len()
    }

    /// Takes back the changes of `tx` made after `position` (from
    /// [`Storage::undo_position`] in the current statement); the transaction goes on.
    pub fn rollback_to_position(&self, tx: &mut Transaction, position: usize) -> Result<()> {
        self.undo_after(tx, position, false)
    }

    /// ROLLBACK TO SAVEPOINT `name`.
    pub fn rollback_to_savepoint(&self, tx: &mut Transaction, name: &str) -> Result<()> {
        let position = tx.trx.savepoint_position(name)?;
        self.undo_after(tx, position, false)
    }

    fn undo_after(
        &self,
        tx: &mut Transaction,
        position: usize,
        ends_transaction: bool,
    ) -> Result<()> {
        let state = self.state.lock();
        crate::txn::undo_after(tx, position, ends_transaction, |id| {
            state.table_by_file_id(id)
        })
    }

    fn start_background(&mut self) {
        let (ctx, state, stop) = (self.ctx.clone(), self.state.clone(), self.stop.clone());
        self.background.push(
            std::thread::Builder::new()
                .name("tarn-purge".into())
                .spawn(move || recovery::purge_loop(&ctx, &state, &stop))
                .expect("spawning the purge thread"),
        );
        let (ctx, pool, stop) = (self.ctx.clone(), self.pool.clone(), self.stop.clone());
        self.background.push(
            std::thread::Builder::new()
                .name("tarn-checkpoint".into())
                .spawn(move || recovery::checkpoint_loop(&ctx, &pool, &stop))
                .expect("spawning the checkpoint thread"),
        );
    }

    /// The settings as they are now (a copy: a live setting may change meanwhile).
    pub fn settings(&self) -> Settings {
        self.settings.read().clone()
    }

    /// Changes a live setting ([`tarn_common::settings::SettingSpec::live`]) while the
    /// engine runs: `name` is a setting or a MySQL alias of one, `value` its text.
    /// The value is checked by `Settings::set` on a copy first, so a bad one changes
    /// nothing; then the component that uses it is told (the lock manager, the log,
    /// the buffer pool, the latch registry, the scans of every table), and
    /// [`Storage::settings`] shows it. A setting that is not live fails with
    /// `InvalidSetting` saying it needs a restart. Nothing is written to disk: the
    /// change lasts until the engine stops.
    pub fn set_live_setting(&self, name: &str, value: &str) -> Result<()> {
        let name = setting_name(name).ok_or_else(|| Error::UnknownSetting {
            name: name.to_string(),
        })?;
        let spec = setting_spec(name).expect("setting_name returns listed settings");
        if !spec.live {
            return Err(Error::InvalidSetting {
                name: name.to_string(),
                value: value.to_string(),
                reason: "it cannot change while the engine runs: set it in the \
                         configuration file or with --set, and restart"
                    .into(),
            });
        }
        let mut settings = self.settings.write();
        let mut next = settings.clone();
        next.set(name, value)?;
        self.apply_live_setting(name, &next);
        *settings = next;
        Ok(())
    }

    /// Tells the component that uses live setting `name` its value in `settings`.
    fn apply_live_setting(&self, name: &str, settings: &Settings) {
        match name {
            "lock_scheduling" => self.ctx.locks.set_scheduling(settings.lock_scheduling),
            "lock_wait_timeout" => self
                .ctx
                .locks
                .set_wait_timeout(Duration::from_secs(u64::from(settings.lock_wait_timeout_s))),
            "flush_log_at_commit" => self
                .ctx
                .wal
                .set_flush_log_at_commit(settings.flush_log_at_commit),
            "latch_accounting" => self
                .datadir
                .latches()
                .set_enabled(settings.latch_accounting),
            "buffer_pool_old_pct" => self.pool.set_old_pct(settings.buffer_pool_old_pct),
            "buffer_pool_old_blocks_time" => self
                .pool
                .set_old_blocks_time_ms(settings.buffer_pool_old_blocks_time_ms),
            "scan_threads" | "scan_readahead_pages" | "secondary_prefetch" | "bulk_fill_factor" => {
                self.scan_config.set(ScanConfig::from_settings(settings))
            }
            other => unreachable!("setting '{other}' is marked live but nothing applies it"),
        }
    }

    pub fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    pub fn datadir(&self) -> &Arc<DataDir> {
        &self.datadir
    }

    /// The scan knobs as they are now.
    pub fn scan_config(&self) -> ScanConfig {
        self.scan_config.get()
    }

    fn tree_name(db: &str, table: &str, index: &str) -> String {
        format!("{db}.{table}.{index}")
    }

    /// Opens the trees of `def`, reusing already open ones from `previous` (a handle
    /// over the same rows, whose counters the new one shares).
    fn open_table(&self, db: &str, def: TableDef, previous: Option<&Table>) -> Result<Table> {
        let open = |file_id: u32, index: &str| -> Result<Arc<Tree>> {
            if let Some(previous) = previous {
                if previous.clustered().file_id().0 == file_id {
                    return Ok(previous.clustered().clone());
                }
                if let Some(i) = previous
                    .indexes()
                    .iter()
                    .find(|i| i.tree.file_id().0 == file_id)
                {
                    return Ok(i.tree.clone());
                }
            }
            Ok(Arc::new(Tree::open(
                self.pool.clone(),
                FileId(file_id),
                self.redo.clone(),
                &Self::tree_name(db, &def.name, index),
            )?))
        };
        let clustered = open(def.file_id, "PRIMARY")?;
        let indexes = def
            .indexes
            .iter()
            .map(|i| open(i.file_id, &i.name))
            .collect::<Result<Vec<_>>>()?;
        let mut table = Table::open(db, def, clustered, indexes, self.scan_config.clone())?;
        if let Some(previous) = previous {
            table.inherit_counters(previous);
        }
        Ok(table)
    }

    fn create_tree(&self, file_id: u32, name: &str) -> Result<Arc<Tree>> {
        Ok(Arc::new(Tree::create(
            self.pool.clone(),
            FileId(file_id),
            self.redo.clone(),
            name,
        )?))
    }

    /// Writes new pages, then the catalog: the catalog never names a file whose tree
    /// is not on disk.
    fn persist(&self, state: &State) -> Result<()> {
        self.pool.flush_all()?;
        state.catalog.store(self.datadir.path())
    }

    pub fn create_database(&self, name: &str) -> Result<()> {
        let mut state = self.state.lock();
        if state.catalog.databases.contains_key(name) {
            return Err(Error::DatabaseExists(name.to_string()));
        }
        if state.catalog.databases.len() >= DATABASES_MAX {
            return Err(Error::OutOfResources(format!(
                "more than {DATABASES_MAX} databases"
            )));
        }
        state
            .catalog
            .databases
            .insert(name.to_string(), Default::default());
        self.persist(&state)
    }

    /// Drops a database with all its tables and views.
    pub fn drop_database(&self, name: &str) -> Result<()> {
        let tables = self.tables(name)?;
        for table in tables {
            self.drop_table(name, &table)?;
        }
        let mut state = self.state.lock();
        state.catalog.databases.remove(name);
        state.catalog.views.remove(name);
        state.catalog.stats.remove(name);
        self.persist(&state)
    }

    /// Checks that `db` exists and has room for a new table or view called `name`.
    fn check_new_name(state: &State, db: &str, name: &str) -> Result<()> {
        if !state.catalog.databases.contains_key(db) {
            return Err(Error::UnknownDatabase(db.to_string()));
        }
        if state.catalog.name_taken(db, name) {
            return Err(Error::TableExists(name.to_string()));
        }
        if state.catalog.object_count(db) >= TABLES_PER_DATABASE_MAX {
            return Err(Error::OutOfResources(format!(
                "more than {TABLES_PER_DATABASE_MAX} tables and views in database '{db}'"
            )));
        }
        Ok(())
    }

    /// `CREATE [OR REPLACE] VIEW db.name`. A table of that name is an error: 1050, or
    /// with OR REPLACE 1347 (it is not a view), as in MySQL; so is an existing view
    /// without OR REPLACE (1050).
    pub fn create_view(&self, db: &str, view: ViewDef, or_replace: bool) -> Result<()> {
        view.validate()?;
        let mut state = self.state.lock();
        let replacing = or_replace && state.catalog.view(db, &view.name).is_some();
        if !replacing {
            let is_table = state
                .catalog
                .databases
                .get(db)
                .is_some_and(|tables| tables.contains_key(&view.name));
            if or_replace && is_table {
                return Err(not_a_view(db, &view.name));
            }
            Self::check_new_name(&state, db, &view.name)?;
        }
        let mut catalog = state.catalog.clone();
        catalog
            .views
            .entry(db.to_string())
            .or_default()
            .insert(view.name.clone(), view);
        catalog.store(self.datadir.path())?;
        state.catalog = catalog;
        Ok(())
    }

    /// `DROP VIEW [IF EXISTS] db.name`. Returns false if there was no such view and
    /// `if_exists` was given (MySQL then notes a warning); without it that is 1051.
    /// A table of that name is 1347 (it is not a view).
    pub fn drop_view(&self, db: &str, name: &str, if_exists: bool) -> Result<bool> {
        let mut state = self.state.lock();
        if state.catalog.view(db, name).is_none() {
            let is_table = state
                .catalog
                .databases
                .get(db)
                .is_some_and(|tables| tables.contains_key(name));
            return match (is_table, if_exists) {
                (true, _) => Err(not_a_view(db, name)),
                (false, true) => Ok(false),
                (false, false) => Err(Error::sql(
                    1051, // ER_BAD_TABLE_ERROR
                    "42S02",
                    format!("Unknown table '{db}.{name}'"),
                )),
            };
        }
        let mut catalog = state.catalog.clone();
        let views = catalog.views.get_mut(db).expect("the view exists");
        views.remove(name);
        if views.is_empty() {
            catalog.views.remove(db);
        }
        catalog.store(self.datadir.path())?;
        state.catalog = catalog;
        Ok(true)
    }

    /// The names of the views in `db`.
    pub fn views(&self, db: &str) -> Result<Vec<String>> {
        let state = self.state.lock();
        if !state.catalog.databases.contains_key(db) {
            return Err(Error::UnknownDatabase(db.to_string()));
        }
        Ok(state
            .catalog
            .views
            .get(db)
            .map(|views| views.keys().cloned().collect())
            .unwrap_or_default())
    }

    /// The view `db.name`, or `None` if `db` has no view of that name.
    pub fn view(&self, db: &str, name: &str) -> Result<Option<ViewDef>> {
        let state = self.state.lock();
        if !state.catalog.databases.contains_key(db) {
            return Err(Error::UnknownDatabase(db.to_string()));
        }
        Ok(state.catalog.view(db, name).cloned())
    }

    pub fn databases(&self) -> Vec<String> {
        self.state
            .lock()
            .catalog
            .databases
            .keys()
            .cloned()
            .collect()
    }

    pub fn tables(&self, db: &str) -> Result<Vec<String>> {
        let state = self.state.lock();
        let tables = state
            .catalog
            .databases
            .get(db)
            .ok_or_else(|| Error::UnknownDatabase(db.to_string()))?;
        Ok(tables.keys().cloned().collect())
    }

    /// The open table `db.name`.
    pub fn table(&self, db: &str, name: &str) -> Result<Arc<Table>> {
        Self::table_in(&self.state.lock(), db, name)
    }

    fn table_in(state: &State, db: &str, name: &str) -> Result<Arc<Table>> {
        if !state.catalog.databases.contains_key(db) {
            return Err(Error::UnknownDatabase(db.to_string()));
        }
        state
            .tables
            .get(&(db.to_string(), name.to_string()))
            .cloned()
            .ok_or_else(|| Error::UnknownTable(format!("{db}.{name}")))
    }

    /// Creates a table with its indexes (empty).
    pub fn create_table(&self, db: &str, mut def: TableDef) -> Result<Arc<Table>> {
        def.validate()?;
        let mut state = self.state.lock();
        Self::check_new_name(&state, db, &def.name)?;
        let (table, mut catalog) = self.create_files(&mut state, db, &mut def)?;
        let table = Arc::new(table);
        catalog
            .databases
            .get_mut(db)
            .expect("checked above")
            .insert(def.name.clone(), def.clone());
        self.install_catalog(&mut state, catalog, &def)?;
        state
            .tables
            .insert((db.to_string(), def.name.clone()), table.clone());
        self.refresh_foreign_keys(&state.catalog);
        Ok(table)
    }

    /// Gives `def` and its indexes new data files, creates their empty trees and opens
    /// the table over them. Returns it with a copy of the catalog whose file id
    /// counter has moved past the new files (the caller adds `def` and installs it).
    /// On failure the files are removed and the moved counter stored: file ids are
    /// never reused, even those of a failed create.
    fn create_files(
        &self,
        state: &mut State,
        db: &str,
        def: &mut TableDef,
    ) -> Result<(Table, CatalogData)> {
        let mut catalog = state.catalog.clone();
        def.file_id = catalog.allocate_file_id()?;
        for index in &mut def.indexes {
            index.file_id = catalog.allocate_file_id()?;
        }
        let files: Vec<(u32, String)> = std::iter::once((def.file_id, "PRIMARY".to_string()))
            .chain(def.indexes.iter().map(|i| (i.file_id, i.name.clone())))
            .collect();
        let created = files
            .iter()
            .try_for_each(|(file_id, index)| {
                self.create_tree(*file_id, &Self::tree_name(db, &def.name, index))
                    .map(drop)
            })
            .and_then(|()| self.open_table(db, def.clone(), None));
        match created {
            Ok(table) => Ok((table, catalog)),
            Err(error) => {
                self.abandon_files(state, def, catalog.next_file_id)?;
                Err(error)
            }
        }
    }

    /// Removes the files of `def`, which no catalog names, and records in the stored
    /// catalog that ids below `next_file_id` are taken.
    fn abandon_files(&self, state: &mut State, def: &TableDef, next_file_id: u32) -> Result<()> {
        for file_id in Self::files_of(def) {
            self.remove_file(file_id)?;
        }
        state.catalog.next_file_id = state.catalog.next_file_id.max(next_file_id);
        state.catalog.store(self.datadir.path())
    }

    /// The data files of a table: its clustered index's, then its indexes'.
    fn files_of(def: &TableDef) -> impl Iterator<Item = u32> + '_ {
        std::iter::once(def.file_id).chain(def.indexes.iter().map(|i| i.file_id))
    }

    /// Makes `catalog`, which names the new files of `def`, the catalog: the new
    /// files' pages are written first, then catalog.json. If that fails, the new files
    /// are removed again and the catalog in memory stays as it was (but for its file
    /// id counter).
    fn install_catalog(
        &self,
        state: &mut State,
        catalog: CatalogData,
        def: &TableDef,
    ) -> Result<()> {
        let stored = self
            .pool
            .flush_all()
            .and_then(|()| catalog.store(self.datadir.path()));
        if let Err(error) = stored {
            if let Err(cleanup) = self.abandon_files(state, def, catalog.next_file_id) {
                tracing::error!("removing the files of table '{}': {cleanup}", def.name);
            }
            return Err(error);
        }
        state.catalog = catalog;
        Ok(())
    }

    /// Drops a table and deletes its files.
    pub fn drop_table(&self, db: &str, name: &str) -> Result<()> {
        let mut state = self.state.lock();
        let def = state
            .catalog
            .databases
            .get_mut(db)
            .ok_or_else(|| Error::UnknownDatabase(db.to_string()))?
            .remove(name)
            .ok_or_else(|| Error::UnknownTable(format!("{db}.{name}")))?;
        state.catalog.set_table_stats(db, name, None);
        if let Some(table) = state.tables.remove(&(db.to_string(), name.to_string())) {
            table.retire();
        }
        self.refresh_foreign_keys(&state.catalog);
        state.catalog.store(self.datadir.path())?;
        for file_id in Self::files_of(&def) {
            self.remove_file(file_id)?;
        }
        Ok(())
    }

    /// `RENAME TABLE db.name TO new_db.new_name` (also `ALTER TABLE ... RENAME`). The
    /// table keeps its files, so its row locks, undo records and AUTO_INCREMENT counter
    /// carry over; the old handle is retired (1412). The target must not exist as a
    /// table or view (1050). A view can be renamed too, within its database (moving
    /// it to another is 1450, as in MySQL). Returns the new handle, or `None` for a
    /// view.
    pub fn rename_table(
        &self,
        db: &str,
        name: &str,
        new_db: &str,
        new_name: &str,
    ) -> Result<Option<Arc<Table>>> {
        let mut state = self.state.lock();
        if state.catalog.view(db, name).is_some() {
            self.rename_view(&mut state, db, name, new_db, new_name)?;
            return Ok(None);
        }
        let old = Self::table_in(&state, db, name)?;
        Self::check_new_name(&state, new_db, new_name)?;
        let mut def = old.def().clone();
        def.name = new_name.to_string();
        // Generated foreign-key names follow the table, as InnoDB's do:
        // `name_ibfk_3` becomes `new_name_ibfk_3`.
        let generated = format!("{}_ibfk_", name.to_lowercase());
        for fk in &mut def.foreign_keys {
            let lower = fk.name.to_lowercase();
            if let Some(n) = lower.strip_prefix(&generated)
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
            {
                fk.name = format!("{new_name}_ibfk_{n}");
            }
        }
        // So do generated CHECK constraint names (`name_chk_2`), as in MySQL.
        def.rename_generated_checks(name, new_name);
        // Trees opened afresh, so that their names (in errors) are the new ones.
        let mut new = self.open_table(new_db, def.clone(), None)?;
        new.inherit_counters(&old);
        let new = Arc::new(new);
        let mut catalog = state.catalog.clone();
        catalog
            .databases
            .get_mut(db)
            .expect("the table exists")
            .remove(name);
        catalog
            .databases
            .get_mut(new_db)
            .expect("checked above")
            .insert(new_name.to_string(), def);
        let stats = catalog.table_stats(db, name).cloned();
        catalog.set_table_stats(db, name, None);
        catalog.set_table_stats(new_db, new_name, stats);
        // Foreign keys that reference the table follow it (InnoDB's rename does so).
        let mut referencing = Vec::new();
        for (child_db, tables) in catalog.databases.iter_mut() {
            for (child, child_def) in tables.iter_mut() {
                let mut changed = false;
                for fk in &mut child_def.foreign_keys {
                    if fk.references(db, name) {
                        fk.ref_db = new_db.to_string();
                        fk.ref_table = new_name.to_string();
                        changed = true;
                    }
                }
                if changed {
                    referencing.push((child_db.clone(), child.clone(), child_def.clone()));
                }
            }
        }
        let mut reopened = Vec::new();
        for (child_db, child, child_def) in referencing {
            if child_db == new_db && child == new_name {
                continue; // the table itself (a self-reference): `new` below
            }
            let old_child = Self::table_in(&state, &child_db, &child)?;
            let handle = self.open_table(&child_db, child_def, Some(&old_child))?;
            reopened.push((child_db, child, Arc::new(handle), old_child));
        }
        let new = match catalog
            .databases
            .get(new_db)
            .and_then(|t| t.get(new_name))
            .filter(|d| d.foreign_keys != new.def().foreign_keys)
        {
            Some(def) => {
                let mut handle = self.open_table(new_db, def.clone(), None)?;
                handle.inherit_counters(&old);
                Arc::new(handle)
            }
            None => new,
        };
        catalog.store(self.datadir.path())?;
        state.catalog = catalog;
        state.tables.remove(&(db.to_string(), name.to_string()));
        state
            .tables
            .insert((new_db.to_string(), new_name.to_string()), new.clone());
        for (child_db, child, handle, old_child) in reopened {
            state.tables.insert((child_db, child), handle);
            old_child.retire();
        }
        self.refresh_foreign_keys(&state.catalog);
        old.retire();
        Ok(Some(new))
    }

    fn rename_view(
        &self,
        state: &mut State,
        db: &str,
        name: &str,
        new_db: &str,
        new_name: &str,
    ) -> Result<()> {
        if new_db != db {
            return Err(Error::sql(
                1450, // ER_FORBID_SCHEMA_CHANGE
                "HY000",
                format!("Changing schema from '{db}' to '{new_db}' is not allowed."),
            ));
        }
        Self::check_new_name(state, new_db, new_name)?;
        let mut catalog = state.catalog.clone();
        let views = catalog.views.get_mut(db).expect("the view exists");
        let mut view = views.remove(name).expect("the view exists");
        view.name = new_name.to_string();
        views.insert(new_name.to_string(), view);
        catalog.store(self.datadir.path())?;
        state.catalog = catalog;
        Ok(())
    }

    /// Takes the exclusive table lock of `db.name` for DDL that replaces the table's
    /// files, in a transaction of its own, waiting up to `lock_wait_timeout` (then
    /// 1205) for transactions that hold any lock on the table (every writer holds an
    /// intention lock to its end). Taken before the state latch, which a transaction
    /// rolling back needs. The SQL layer commits the session's own transaction first,
    /// as MySQL's implicit commit before DDL does, or this would wait for it.
    fn lock_for_ddl(&self, db: &str, name: &str) -> Result<(Transaction, u32)> {
        let table_id = self.table(db, name)?.table_id();
        let mut tx = self.begin(None, false);
        match tx.lock_table(table_id, TableMode::X) {
            Ok(()) => Ok((tx, table_id)),
            Err(error) => {
                self.end_ddl(tx);
                Err(error)
            }
        }
    }

    /// Ends the transaction of [`Storage::lock_for_ddl`], releasing its lock. It
    /// changed nothing, so it writes nothing to the log.
    fn end_ddl(&self, tx: Transaction) {
        debug_assert!(!tx.trx.has_changes());
        if let Ok(ticket) = self.commit_nowait(tx) {
            let _ready = ticket.ready();
        }
    }

    /// The handle of `db.name` if its files are still those `table_id` names (another
    /// truncate or rebuild may have replaced them while this one waited for its lock).
    fn locked_table(state: &State, db: &str, name: &str, table_id: u32) -> Result<Arc<Table>> {
        let table = Self::table_in(state, db, name)?;
        if table.table_id() != table_id {
            return Err(Error::TableDefinitionChanged(format!("{db}.{name}")));
        }
        Ok(table)
    }

    /// `TRUNCATE TABLE db.name`: the same definition and indexes over new, empty
    /// files; the AUTO_INCREMENT counter starts again at 1, as MySQL's does (a start
    /// set by `CREATE TABLE .. AUTO_INCREMENT = n` or `ALTER TABLE` is forgotten).
    ///
    /// Not online: it takes the table's exclusive lock first ([`Storage::lock_for_ddl`]),
    /// so it waits for (or, after `lock_wait_timeout`, fails with 1205 because of)
    /// transactions with changes or locks in the table. Crash safety is that of
    /// [`Storage::create_table`] and [`Storage::drop_table`]: the new files are
    /// written before catalog.json names them, and the old ones removed only after; a
    /// crash in between leaves files no catalog names, which the next open removes.
    /// Returns the new handle; the old one is retired (1412).
    pub fn truncate_table(&self, db: &str, name: &str) -> Result<Arc<Table>> {
        let (tx, table_id) = self.lock_for_ddl(db, name)?;
        // A truncate copies no rows: `map` is never called.
        let result = self.replace_files(db, name, table_id, None, &mut |_, row| Ok(row));
        self.end_ddl(tx);
        result
    }

    /// `ALTER TABLE` that changes columns (ADD/DROP COLUMN, a type change): builds
    /// files for `new_def` (its name is taken as `name`) from the newest committed
    /// version of every row of the old table, each passed through `map` (its 1-based
    /// number in the old table's key order and the old row in, the new row out; an
    /// error ends the rebuild and changes nothing), then makes the
    /// catalog name the new files, retires the old handle (1412) and removes the old
    /// files. The rows stream from an ordered parallel scan into a bulk load; only if
    /// the new primary key does not come out in order are they read again (calling
    /// `map` a second time for each) and sorted in memory (at most
    /// `REBUILD_SORT_ROWS_MAX`). The AUTO_INCREMENT counter keeps its value if both
    /// definitions have one, and never ends below 1 + the largest value loaded.
    ///
    /// Not online: as [`Storage::truncate_table`], it first takes the table's
    /// exclusive lock, so no other transaction has uncommitted changes in the table
    /// while it copies (the newest versions are the committed ones) or can make any;
    /// it waits for them up to `lock_wait_timeout` (then 1205). It also holds the
    /// catalog's latch throughout, as index builds do, so other DDL, table lookups and
    /// rollbacks wait for it. Readers with old snapshots get 1412 from the retired
    /// handle (MySQL: ER_TABLE_DEF_CHANGED) rather than reading the new files.
    pub fn rebuild_table(
        &self,
        db: &str,
        name: &str,
        new_def: TableDef,
        map: &mut dyn FnMut(u64, Vec<Value>) -> Result<Vec<Value>>,
    ) -> Result<Arc<Table>> {
        let (tx, table_id) = self.lock_for_ddl(db, name)?;
        let result = self.replace_files(db, name, table_id, Some(new_def), map);
        self.end_ddl(tx);
        result
    }

    /// Truncate (`new_def` None) or rebuild, with the table's exclusive lock held.
    fn replace_files(
        &self,
        db: &str,
        name: &str,
        table_id: u32,
        new_def: Option<TableDef>,
        map: &mut dyn FnMut(u64, Vec<Value>) -> Result<Vec<Value>>,
    ) -> Result<Arc<Table>> {
        let mut state = self.state.lock();
        let old = Self::locked_table(&state, db, name, table_id)?;
        let copy_rows = new_def.is_some();
        let mut def = new_def.unwrap_or_else(|| {
            let mut def = old.def().clone();
            if let Some(auto) = &mut def.auto_increment {
                auto.start = 1;
            }
            def
        });
        def.name = name.to_string();
        def.validate()?;
        let (new, mut catalog) = self.create_files(&mut state, db, &mut def)?;
        let new = Arc::new(new);
        if copy_rows {
            let copied = crate::rebuild::copy_rows(&old, &new, map).and_then(|_| {
                let counter = new.auto_increment.as_ref();
                let floor = new.auto_increment_floor()?;
                if let (Some(counter), Some(old_next)) = (counter, old.auto_increment_next()) {
                    counter.observe(old_next.saturating_sub(1));
                }
                if let Some(counter) = counter {
                    counter.observe(floor.saturating_sub(1));
                }
                Ok(())
            });
            if let Err(error) = copied {
                drop(new);
                self.abandon_files(&mut state, &def, catalog.next_file_id)?;
                return Err(error);
            }
        }
        catalog
            .databases
            .get_mut(db)
            .expect("the table exists")
            .insert(name.to_string(), def.clone());
        // New files, new rows: the old statistics describe neither.
        catalog.set_table_stats(db, name, None);
        self.install_catalog(&mut state, catalog, &def)?;
        state
            .tables
            .insert((db.to_string(), name.to_string()), new.clone());
        self.refresh_foreign_keys(&state.catalog);
        old.retire();
        let old_def = old.def().clone();
        drop(old);
        for file_id in Self::files_of(&old_def) {
            self.remove_file(file_id)?;
        }
        Ok(new)
    }

    fn remove_file(&self, file_id: u32) -> Result<()> {
        self.pool.discard_file(FileId(file_id))?;
        self.datadir.remove_file(FileId(file_id))
    }

    /// Adds a secondary index to a table and builds it from the table's rows (a sorted
    /// scan and a bottom-up build). Returns the new table handle.
    pub fn create_index(&self, db: &str, table: &str, mut index: IndexDef) -> Result<Arc<Table>> {
        // The whole change runs under the state latch, so two DDL statements on one
        // table cannot both start from the same definition.
        let mut state = self.state.lock();
        let old = Self::table_in(&state, db, table)?;
        let mut def = old.def().clone();
        let mut catalog = state.catalog.clone();
        index.file_id = catalog.allocate_file_id()?;
        def.indexes.push(index.clone());
        def.validate()?;
        self.create_tree(index.file_id, &Self::tree_name(db, table, &index.name))?;
        let built = self
            .open_table(db, def.clone(), Some(&old))
            .and_then(|new| {
                let secondary = new.index(&index.name)?;
                new.build_index(secondary)?;
                Ok(new)
            });
        let new = match built {
            Ok(new) => Arc::new(new),
            Err(error) => {
                self.remove_file(index.file_id)?;
                // File ids are never reused, even that of a failed build.
                state.catalog.next_file_id = catalog.next_file_id;
                state.catalog.store(self.datadir.path())?;
                return Err(error);
            }
        };
        catalog
            .databases
            .get_mut(db)
            .expect("the table exists")
            .insert(table.to_string(), def);
        // The new index has no statistics: the table is analyzed again as a whole.
        catalog.set_table_stats(db, table, None);
        state.catalog = catalog;
        self.persist(&state)?;
        new.activity.adjust(|_| None);
        state
            .tables
            .insert((db.to_string(), table.to_string()), new.clone());
        old.retire();
        Ok(new)
    }

    /// Drops a secondary index. Returns the new table handle.
    pub fn drop_index(&self, db: &str, table: &str, name: &str) -> Result<Arc<Table>> {
        let mut state = self.state.lock();
        let old = Self::table_in(&state, db, table)?;
        let mut def = old.def().clone();
        let position = def
            .indexes
            .iter()
            .position(|i| i.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::UnknownIndex(name.to_string()))?;
        let removed = def.indexes.remove(position);
        // The AUTO_INCREMENT column may have led only this index (1075).
        def.validate()?;
        let new = Arc::new(self.open_table(db, def.clone(), Some(&old))?);
        let without_index = |stats: &TableStats| {
            let mut stats = stats.clone();
            (position < stats.indexes.len()).then(|| {
                stats.indexes.remove(position);
                stats
            })
        };
        let stats = state.catalog.table_stats(db, table).and_then(without_index);
        state.catalog.set_table_stats(db, table, stats);
        state
            .catalog
            .databases
            .get_mut(db)
            .expect("the table exists")
            .insert(table.to_string(), def);
        state.catalog.store(self.datadir.path())?;
        new.activity.adjust(without_index);
        state
            .tables
            .insert((db.to_string(), table.to_string()), new.clone());
        old.retire();
        drop(old);
        self.remove_file(removed.file_id)?;
        Ok(new)
    }

    /// `ALTER TABLE` that leaves every stored row as it is, in one catalog change:
    /// columns renamed, DEFAULTs set or dropped, secondary indexes renamed, dropped or
    /// added. `new_def` (its name is taken as `name`) must have the old definition's
    /// columns with the same types (or ENUM and SET types with members appended, see
    /// `ColumnType::stores_like`), nullability and collations in the same order, and
    /// the same primary key; each of its indexes either keeps the file id of an old
    /// index with the same columns and uniqueness (the same tree, maybe under a new
    /// name) or has file id 0 and is built here from the rows, as
    /// [`Storage::create_index`] builds one. Old indexes it does not keep are dropped.
    /// Anything else is `InvalidDefinition` (the caller rebuilds instead).
    ///
    /// All or nothing: a failed build (a duplicate in a new unique index) removes the
    /// new files and leaves the table as it was. Crash safety is that of
    /// `create_index` and `drop_index`: the new trees' pages are flushed before
    /// catalog.json names them, and dropped files are removed only after it no longer
    /// does; files a crash leaves unnamed are removed at the next open. Like those two
    /// it runs under the catalog's latch without the table's exclusive lock. Returns
    /// the new handle; the old one is retired (1412).
    pub fn alter_in_place(
        &self,
        db: &str,
        name: &str,
        mut new_def: TableDef,
    ) -> Result<Arc<Table>> {
        let mut state = self.state.lock();
        let old = Self::table_in(&state, db, name)?;
        let old_def = old.def();
        new_def.name = name.to_string();
        new_def.file_id = old_def.file_id;
        // An ENUM or SET that only gained members stores its rows as before.
        let same_column = |(a, b): (&tarn_row::Column, &tarn_row::Column)| {
            a.ty.stores_like(&b.ty) && a.nullable == b.nullable && a.collation == b.collation
        };
        let needs_rebuild = |what: &str| {
            Err(Error::InvalidDefinition(format!(
                "ALTER TABLE '{name}' in place cannot change {what}"
            )))
        };
        if new_def.columns.len() != old_def.columns.len()
            || !new_def
                .columns
                .iter()
                .zip(&old_def.columns)
                .all(same_column)
        {
            return needs_rebuild("the columns' types or order");
        }
        if new_def.primary_key != old_def.primary_key {
            return needs_rebuild("the primary key");
        }
        for index in new_def.indexes.iter().filter(|i| i.file_id != 0) {
            let kept = old_def.indexes.iter().any(|o| {
                o.file_id == index.file_id
                    && o.columns == index.columns
                    && o.unique == index.unique
                    && o.prefix_lens == index.prefix_lens
            });
            if !kept
                || new_def
                    .indexes
                    .iter()
                    .filter(|i| i.file_id == index.file_id)
                    .count()
                    > 1
            {
                return needs_rebuild(&format!("index '{}' but by building it", index.name));
            }
        }
        new_def.validate()?;
        let indexes_of = |def: &TableDef| def.indexes.iter().map(|i| i.file_id).collect::<Vec<_>>();
        let old_indexes = indexes_of(old_def);
        let mut catalog = state.catalog.clone();
        let mut created = Vec::new();
        let mut built = Vec::new();
        let result = (|| {
            for index in new_def.indexes.iter_mut().filter(|i| i.file_id == 0) {
                index.file_id = catalog.allocate_file_id()?;
                self.create_tree(index.file_id, &Self::tree_name(db, name, &index.name))?;
                created.push(index.file_id);
                built.push(index.name.clone());
            }
            let new = self.open_table(db, new_def.clone(), Some(&old))?;
            for index in &built {
                new.build_index(new.index(index)?)?;
            }
            self.pool.flush_all()?;
            catalog
                .databases
                .get_mut(db)
                .expect("the table exists")
                .insert(name.to_string(), new_def.clone());
            if indexes_of(&new_def) != old_indexes {
                // Statistics are per index: the table is analyzed again as a whole.
                catalog.set_table_stats(db, name, None);
            }
            catalog.store(self.datadir.path())?;
            Ok(new)
        })();
        let new = match result {
            Ok(new) => Arc::new(new),
            Err(error) => {
                for &file_id in &created {
                    self.remove_file(file_id)?;
                }
                // File ids are never reused, even those of a failed build.
                state.catalog.next_file_id = catalog.next_file_id;
                state.catalog.store(self.datadir.path())?;
                return Err(error);
            }
        };
        let new_indexes = indexes_of(&new_def);
        if new_indexes != old_indexes {
            new.activity.adjust(|_| None);
        }
        let dropped: Vec<u32> = old_indexes
            .into_iter()
            .filter(|f| !new_indexes.contains(f))
            .collect();
        state.catalog = catalog;
        state
            .tables
            .insert((db.to_string(), name.to_string()), new.clone());
        self.refresh_foreign_keys(&state.catalog);
        old.retire();
        drop(old);
        for file_id in dropped {
            self.remove_file(file_id)?;
        }
        Ok(new)
    }

    /// `ALTER TABLE db.name AUTO_INCREMENT = value`: the table's `start` becomes
    /// `value` (persisted), and its counter the larger of `value` and 1 + the largest
    /// value in the column, as in MySQL 8 (which may lower the counter this way, but
    /// never to a value in use). A table without an AUTO_INCREMENT column is left as it
    /// is (MySQL keeps the option and ignores it). Returns the new table handle.
    pub fn set_auto_increment(&self, db: &str, name: &str, value: u64) -> Result<Arc<Table>> {
        let mut state = self.state.lock();
        let old = Self::table_in(&state, db, name)?;
        let mut def = old.def().clone();
        let Some(auto) = &mut def.auto_increment else {
            return Ok(old);
        };
        auto.start = value;
        let first = auto.first_value();
        let new = self.open_table(db, def.clone(), Some(&old))?;
        let floor = new.auto_increment_floor()?;
        self.replace_handle(&mut state, db, name, def, new, &old)
            .inspect(|new| {
                if let Some(counter) = &new.auto_increment {
                    counter.set(first.max(floor));
                }
            })
    }

    /// Makes `new` (over the same files as `old`, with definition `def`) the table
    /// `db.name`: the catalog first (stored), then the handle; `old` is retired.
    fn replace_handle(
        &self,
        state: &mut State,
        db: &str,
        name: &str,
        def: TableDef,
        new: Table,
        old: &Table,
    ) -> Result<Arc<Table>> {
        let new = Arc::new(new);
        let mut catalog = state.catalog.clone();
        catalog
            .databases
            .get_mut(db)
            .expect("the table exists")
            .insert(name.to_string(), def);
        catalog.store(self.datadir.path())?;
        state.catalog = catalog;
        state
            .tables
            .insert((db.to_string(), name.to_string()), new.clone());
        old.retire();
        Ok(new)
    }

    /// `CHECK TABLE db.name`: walks the clustered index and every secondary index and
    /// checks their B+tree invariants (`Tree::check_invariants`) and, with `verify`,
    /// that each secondary index holds exactly the entries of the table's rows
    /// ([`Table::verify_consistency`], which keeps every entry in memory: the caller
    /// bounds the tables it asks this for). Returns the rows checked (`None` without
    /// `verify`), or [`CheckOutcome::PurgeBehind`] if purge did not remove what
    /// committed changes left behind within `purge_wait` (nothing is checked then:
    /// delete-marked rows and stale entries would read as damage).
    ///
    /// Takes the table's exclusive lock first, as [`Storage::truncate_table`] does
    /// (waiting up to `lock_wait_timeout` for transactions with changes or locks in
    /// it, then 1205), so no change runs during the walk; reads go on.
    pub fn check_table(
        &self,
        db: &str,
        name: &str,
        verify: bool,
        purge_wait: Duration,
    ) -> Result<CheckOutcome> {
        let (tx, table_id) = self.lock_for_ddl(db, name)?;
        let result = (|| {
            if !self.wait_for_purge(purge_wait) {
                return Ok(CheckOutcome::PurgeBehind);
            }
            let table = Self::locked_table(&self.state.lock(), db, name, table_id)?;
            if verify {
                return Ok(CheckOutcome::Checked {
                    rows: Some(table.verify_consistency()?),
                });
            }
            table
                .clustered()
                .check_invariants()
                .map_err(Error::CorruptData)?;
            for index in table.indexes() {
                index.tree.check_invariants().map_err(Error::CorruptData)?;
            }
            Ok(CheckOutcome::Checked { rows: None })
        })();
        self.end_ddl(tx);
        result
    }

    /// `ANALYZE TABLE db.name` with the default options: see [`crate::stats`].
    pub fn analyze_table(&self, db: &str, name: &str) -> Result<TableStats> {
        self.analyze_table_with(db, name, AnalyzeOptions::default())
    }

    /// `ANALYZE TABLE db.name`: computes the table's statistics (reading it whole or
    /// a sample of it, without the catalog's latch), installs them in the table's
    /// handle and persists them in catalog.json. Fails with 1412 if DDL changed the
    /// table meanwhile.
    pub fn analyze_table_with(
        &self,
        db: &str,
        name: &str,
        options: AnalyzeOptions,
    ) -> Result<TableStats> {
        let table = self.table(db, name)?;
        let analyzed = crate::stats::analyze(&table, options)?;
        let mut state = self.state.lock();
        let current = Self::table_in(&state, db, name)?;
        if !Arc::ptr_eq(&current, &table) {
            return Err(Error::TableDefinitionChanged(format!("{db}.{name}")));
        }
        let mut catalog = state.catalog.clone();
        catalog.set_table_stats(db, name, Some(analyzed.stats.clone()));
        catalog.store(self.datadir.path())?;
        state.catalog = catalog;
        analyzed.install(&table);
        Ok(analyzed.stats)
    }

    /// Writes every dirty page, syncs the data files, and records a checkpoint in the
    /// log: recovery will start here (or at the oldest active transaction).
    pub fn checkpoint(&self) -> Result<()> {
        recovery::checkpoint(&self.ctx, &self.pool, true)
    }

    /// A holder of whole-table locks for LOCK TABLES and FLUSH TABLES WITH READ LOCK,
    /// for the session whose statements `interrupt` stops (a kill ends its waits).
    /// It is no transaction: it changes nothing and holds no log back, so a session
    /// may keep its tables locked for as long as it likes.
    pub fn table_lock_holder(&self, interrupt: Arc<StatementInterrupt>) -> TableLockHolder {
        let id = TABLE_LOCK_HOLDER_ID_MIN + self.table_lock_holders.fetch_add(1, Ordering::Relaxed);
        TableLockHolder {
            lock: self.ctx.locks.register_interruptible(id, interrupt),
            ctx: self.ctx.clone(),
        }
    }

    /// `holder` takes a whole-table lock on each table (S for READ, X for WRITE), in
    /// table id order so that two holders cannot deadlock each other. Each waits as
    /// any lock request does: for the transactions that hold an intention lock on the
    /// table (every writer and locking reader, to its end), up to the lock wait
    /// timeout (1205). While held, other transactions' writes and locking reads of
    /// the table wait (with WRITE, their S locks too); consistent reads never wait, as
    /// in InnoDB. The session's own statements share the holder's locks
    /// ([`Transaction::share_locks_of`]). Dropping `holder` releases them all.
    pub fn lock_whole_tables(
        &self,
        holder: &TableLockHolder,
        tables: &[(Arc<Table>, bool)],
    ) -> Result<()> {
        let mut order: Vec<(u32, bool)> = tables
            .iter()
            .map(|(table, write)| (table.table_id(), *write))
            .collect();
        order.sort_unstable();
        // One request per table: WRITE wins over READ of the same table.
        order.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                earlier.1 |= later.1;
            }
            same
        });
        for (table_id, write) in order {
            let mode = if write { TableMode::X } else { TableMode::S };
            self.ctx
                .locks
                .lock_table(&holder.lock, table_id, mode, crate::WaitPolicy::Wait)?;
        }
        // DDL that replaced a table's files (a rebuild, TRUNCATE) while this waited
        // left its handle stale, and the lock on a table id no one uses (1412).
        for (table, _) in tables {
            table.check_current()?;
        }
        Ok(())
    }

    /// Forces everything logged so far to disk (FLUSH LOGS): afterwards every
    /// committed transaction survives a crash, whatever `flush_log_at_commit` says.
    pub fn flush_log(&self) -> Result<()> {
        self.ctx.wal.flush_to(self.ctx.wal.current_lsn())
    }
}

/// The lock-manager ids of table lock holders start here: far above any real
/// transaction id and below the purge threads' ([`recovery::PURGER_TRX_ID`]).
const TABLE_LOCK_HOLDER_ID_MIN: u64 = u64::MAX >> 20;

/// A session's whole-table locks (LOCK TABLES, FLUSH TABLES WITH READ LOCK; see
/// [`Storage::lock_whole_tables`]), released when it is dropped.
pub struct TableLockHolder {
    pub(crate) lock: Arc<tarn_txn::lock::LockTrx>,
    ctx: Arc<TxnContext>,
}

impl Drop for TableLockHolder {
    fn drop(&mut self) {
        self.ctx.locks.release_all(&self.lock);
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        for handle in self.background.drain(..) {
            let _ = handle.join();
        }
        if let Err(error) = self.checkpoint() {
            tracing::error!("the checkpoint at shutdown failed: {error}");
        }
    }
}

/// ER_WRONG_OBJECT (1347): `db.name` is a table where a view was expected.
fn not_a_view(db: &str, name: &str) -> Error {
    Error::sql(1347, "HY000", format!("'{db}.{name}' is not VIEW"))
}

/// A commit whose changes are visible but whose acknowledgement may still wait for
/// the log (see [`Storage::commit_nowait`]). Dropping it loses nothing: the commit
/// stands either way, and becomes durable with the log.
#[must_use = "a commit must not be acknowledged before its ticket is ready"]
pub struct CommitTicket {
    /// The log and the end of the commit record; `None` for a transaction that
    /// changed nothing (ready at once).
    wal: Option<(Arc<Wal>, Lsn)>,
}

impl CommitTicket {
    /// True once the commit may be acknowledged; otherwise asks the log to get there
    /// and returns false at once.
    pub fn ready(&self) -> Result<bool> {
        match &self.wal {
            Some((wal, lsn)) => wal.commit_ready(*lsn),
            None => Ok(true),
        }
    }

    /// True if the commit changed nothing: it needs no wait at all.
    pub fn is_empty(&self) -> bool {
        self.wal.is_none()
    }

    /// Blocks until the commit may be acknowledged.
    pub fn wait(&self) -> Result<()> {
        match &self.wal {
            Some((wal, lsn)) => wal.commit_wait(*lsn),
            None => Ok(()),
        }
    }
}
