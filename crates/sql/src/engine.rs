//! The SQL engine: the storage engine plus what all sessions share (global system
//! variables, the process list, connection ids).
//!
//! One [`Engine`] serves every session of a server (or of `tarn sql`). Sessions
//! register in the process list when they start and leave it when dropped; `KILL`
//! reaches another session through its entry.
//!
//! # Global variables and settings
//!
//! The engine owns the global level of the system variables. [`Engine::set_global`]
//! applies one from text at start (the configuration file's and the command line's
//! variables, [`tarn_common::config::StartupSettings`]); it may set read-only ones
//! such as `port` and `ssl_cert`, which `SET GLOBAL` from SQL may not (1238).
//! `SET GLOBAL` of a variable that is an engine setting (`lock_scheduling`,
//! `scan_threads`, `innodb_flush_log_at_trx_commit`, ...) goes to
//! `Storage::set_live_setting` if the setting can change while running, and fails
//! with 1238 otherwise. Nothing is persisted: a restart starts again from the
//! defaults, the file and the flags. The server reads what it needs when it needs it
//! ([`Engine::global`], [`Engine::global_u64`], [`Engine::global_str`]).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use parking_lot::{Mutex, RwLock};
use tarn_catalog::Storage;
use tarn_common::settings::Settings;
use tarn_common::{Error, Result};
use tarn_row::Value;

use crate::accounts::AccountCache;
use crate::exec::Cancel;
use crate::session::Session;
use crate::sysvars::{self, SystemVariables};
use crate::sysviews::ProcessInfo;

/// What a session shows in the process list, and how to stop it.
pub struct SessionEntry {
    pub id: u64,
    pub user: String,
    pub host: String,
    pub state: Mutex<EntryState>,
    /// The running statement's stop switch: KILL QUERY kills it; the session arms it
    /// with the statement's `max_execution_time` deadline (a SELECT's). Also the
    /// session transaction's interrupt, so it ends lock waits too, and it carries the
    /// session's `innodb_lock_wait_timeout` to them.
    pub cancel: Arc<Cancel>,
    /// Set by KILL CONNECTION: the session ends after its current statement.
    pub killed: AtomicBool,
}

#[derive(Clone, Default)]
pub struct EntryState {
    pub database: Option<String>,
    pub command: &'static str,
    pub info: Option<String>,
    pub since: Option<Instant>,
}

/// Reads the server's runner figures (see [`Engine::set_runner_report`]).
pub type RunnerReport = Box<dyn Fn() -> crate::sysviews::RunnerStatus + Send + Sync>;

pub struct Engine {
    storage: Arc<Storage>,
    pub(crate) globals: RwLock<SystemVariables>,
    /// Every variable's default (SET x = DEFAULT).
    pub(crate) defaults: SystemVariables,
    sessions: Mutex<BTreeMap<u64, Arc<SessionEntry>>>,
    next_connection_id: AtomicU64,
    started: Instant,
    /// Statements run (SHOW STATUS Questions).
    pub(crate) questions: AtomicU64,
    /// The most sessions open at once (SHOW STATUS Max_used_connections).
    max_used_connections: AtomicU64,
    /// Connections that failed before becoming a session (Aborted_connects).
    aborted_connects: AtomicU64,
    /// Sessions whose client went away without quitting (Aborted_clients).
    aborted_clients: AtomicU64,
    /// The server's runners, for SHOW STATUS (`Threadpool_*`).
    runner_report: std::sync::OnceLock<RunnerReport>,
    /// Tables whose statistics a background ANALYZE is refreshing.
    analyzing: Arc<Mutex<std::collections::HashSet<(String, String)>>>,
    /// The account cache (see `accounts.rs`): replaced whole, never changed in place.
    pub(crate) accounts: RwLock<Arc<AccountCache>>,
    /// Bumped after each replacement of `accounts`; sessions compare it per statement.
    pub(crate) accounts_generation: AtomicU64,
    /// Serialises cache rebuilds (invariant 1 of `accounts.rs`).
    pub(crate) accounts_reload: Mutex<()>,
    /// Prepared statements held by all sessions (bounded by the global
    /// `max_prepared_stmt_count`, as in MySQL).
    pub(crate) prepared_statements: AtomicUsize,
    /// The next number for a session's hidden databases of temporary tables
    /// (`temporary.rs`).
    next_temporary_namespace: AtomicU64,
    /// What `SHUTDOWN` calls: the server sets it (`Engine::on_shutdown_request`).
    shutdown_hook: Mutex<Option<Box<dyn Fn() + Send + Sync>>>,
    /// `GET_LOCK`'s locks, held by connection id (`user_locks.rs`).
    pub(crate) user_locks: Arc<crate::user_locks::UserLocks>,
    /// What keeps DDL off tables under LOCK TABLES and everything under FLUSH
    /// TABLES WITH READ LOCK, held by connection id (`metadata_locks.rs`).
    pub(crate) metadata_locks: Arc<crate::metadata_locks::MetadataLocks>,
}

impl Engine {
    /// Opens (or creates) the data directory `settings` name and recovers it.
    /// Creates the account tables on first open (with `root`@`localhost`) and loads
    /// them, and MySQL's (empty) log tables (`log_tables.rs`).
    pub fn open(settings: &Settings) -> Result<Arc<Engine>> {
        let storage = Arc::new(Storage::open(settings)?);
        let engine = Engine::new(storage);
        crate::accounts::bootstrap(engine.storage())?;
        crate::log_tables::bootstrap(engine.storage())?;
        engine.reload_accounts()?;
        Ok(engine)
    }

    /// An engine over an open storage engine. If the account tables cannot be created
    /// or read, the engine starts with no accounts (only [`Engine::session`] works)
    /// and logs why.
    pub fn with_storage(storage: Arc<Storage>) -> Arc<Engine> {
        let engine = Engine::new(storage);
        if let Err(e) =
            crate::accounts::bootstrap(engine.storage()).and_then(|()| engine.reload_accounts())
        {
            tracing::error!("the account tables could not be opened: {e}");
        }
        if let Err(e) = crate::log_tables::bootstrap(engine.storage()) {
            tracing::error!("mysql.general_log and mysql.slow_log could not be created: {e}");
        }
        engine
    }

    fn new(storage: Arc<Storage>) -> Arc<Engine> {
        // Temporary tables a crash left behind (no session owns them any more).
        crate::temporary::drop_leftovers(&storage);
        let defaults = SystemVariables::new_global(&storage.settings());
        Arc::new(Engine {
            globals: RwLock::new(defaults.clone()),
            defaults,
            storage,
            sessions: Mutex::new(BTreeMap::new()),
            next_connection_id: AtomicU64::new(1),
            started: Instant::now(),
            questions: AtomicU64::new(0),
            max_used_connections: AtomicU64::new(0),
            aborted_connects: AtomicU64::new(0),
            aborted_clients: AtomicU64::new(0),
            runner_report: std::sync::OnceLock::new(),
            analyzing: Arc::new(Mutex::new(std::collections::HashSet::new())),
            accounts: RwLock::new(Arc::new(AccountCache::default())),
            accounts_generation: AtomicU64::new(0),
            accounts_reload: Mutex::new(()),
            prepared_statements: AtomicUsize::new(0),
            next_temporary_namespace: AtomicU64::new(1),
            user_locks: Arc::new(crate::user_locks::UserLocks::new()),
            metadata_locks: Arc::new(crate::metadata_locks::MetadataLocks::new()),
            shutdown_hook: Mutex::new(None),
        })
    }

    pub fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }

    /// A number no other session of this engine has for its temporary tables'
    /// hidden databases (`temporary.rs`).
    /// Makes `SHUTDOWN` call `hook` (the server stops as on SIGTERM).
    pub fn on_shutdown_request(&self, hook: Box<dyn Fn() + Send + Sync>) {
        *self.shutdown_hook.lock() = Some(hook);
    }

    /// `SHUTDOWN`: asks the server to stop; 1235 where no server runs the engine.
    pub(crate) fn request_shutdown(&self) -> Result<()> {
        match &*self.shutdown_hook.lock() {
            Some(hook) => {
                tracing::info!("SHUTDOWN requested by a client");
                hook();
                Ok(())
            }
            None => Err(Error::sql(
                1235,
                "42000",
                "This version of MySQL doesn't yet support 'SHUTDOWN without a server'",
            )),
        }
    }

    pub(crate) fn next_temporary_namespace(&self) -> u64 {
        self.next_temporary_namespace
            .fetch_add(1, Ordering::Relaxed)
    }

    /// Seconds since the engine started (SHOW STATUS Uptime).
    pub fn uptime_s(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// Keeps the planner's statistics current, as InnoDB's automatic recalculation
    /// does: when a table of at least `AUTO_ANALYZE_ROWS_MIN` rows has no statistics,
    /// or more than a tenth of its rows changed since they were taken
    /// (`Table::stats_stale`), a statement that uses it schedules ANALYZE TABLE on the
    /// executor's pool and goes on with the old figures. The check is two atomic
    /// reads; at most one ANALYZE per table is in flight.
    pub fn refresh_statistics(&self, table: &tarn_catalog::Table) {
        if table.estimated_rows() < crate::limits::AUTO_ANALYZE_ROWS_MIN || !table.stats_stale() {
            return;
        }
        let key = (table.database().to_string(), table.def().name.clone());
        if !self.analyzing.lock().insert(key.clone()) {
            return;
        }
        let (storage, analyzing) = (self.storage.clone(), self.analyzing.clone());
        crate::workers::pool().spawn(move || {
            if let Err(e) = storage.analyze_table(&key.0, &key.1) {
                tracing::debug!("automatic ANALYZE of {}.{} failed: {e}", key.0, key.1);
            }
            analyzing.lock().remove(&key);
        });
    }

    /// The server-wide counters SHOW STATUS reports.
    pub fn server_status(&self) -> crate::sysviews::ServerStatus {
        let aborted_connects = self.aborted_connects.load(Ordering::Relaxed);
        crate::sysviews::ServerStatus {
            uptime_s: self.uptime_s(),
            questions: self.questions.load(Ordering::Relaxed),
            connections: self.next_connection_id.load(Ordering::Relaxed) - 1 + aborted_connects,
            max_used_connections: self.max_used_connections.load(Ordering::Relaxed),
            aborted_connects,
            aborted_clients: self.aborted_clients.load(Ordering::Relaxed),
            runners: self.runner_report.get().map(|report| report()),
        }
    }

    /// Lets SHOW STATUS report the server's runners (set once, by the server).
    pub fn set_runner_report(&self, report: RunnerReport) {
        if self.runner_report.set(report).is_err() {
            tracing::warn!("a second runner report was ignored");
        }
    }

    /// Notes a connection that failed before it became a session (a bad handshake,
    /// failed authentication, too many connections): SHOW STATUS Aborted_connects.
    pub fn note_connect_aborted(&self) {
        self.aborted_connects.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a session whose client went away without `COM_QUIT` (or was timed out by
    /// `wait_timeout`): SHOW STATUS Aborted_clients.
    pub fn note_client_aborted(&self) {
        self.aborted_clients.fetch_add(1, Ordering::Relaxed);
    }

    /// Sessions open now (SHOW STATUS Threads_connected).
    pub fn sessions_open(&self) -> usize {
        self.sessions.lock().len()
    }

    /// Starts a session for `user` connected from `host`, as an internal superuser
    /// that skips privilege checks (the embedded `tarn sql` shell and tests; the
    /// server authenticates and uses [`Engine::session_for`]).
    pub fn session(self: &Arc<Self>, user: &str, host: &str) -> Session {
        let id = self.reserve_connection_id();
        self.session_with_id(user, host, id)
    }

    /// A fresh connection id (the server announces it in the handshake, before the
    /// session exists).
    pub fn reserve_connection_id(&self) -> u64 {
        self.next_connection_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Starts a session under an id from [`Engine::reserve_connection_id`].
    /// (`max_connections` is the server's to enforce: it counts connections from
    /// accept, before they have a session.)
    pub fn session_with_id(self: &Arc<Self>, user: &str, host: &str, id: u64) -> Session {
        let mut sessions = self.sessions.lock();
        let entry = Arc::new(SessionEntry {
            id,
            user: user.to_string(),
            host: host.to_string(),
            state: Mutex::new(EntryState {
                command: "Sleep",
                since: Some(Instant::now()),
                ..Default::default()
            }),
            cancel: Arc::new(Cancel::default()),
            killed: AtomicBool::new(false),
        });
        sessions.insert(id, entry.clone());
        self.max_used_connections
            .fetch_max(sessions.len() as u64, Ordering::Relaxed);
        drop(sessions);
        Session::new(self.clone(), entry)
    }

    /// A global variable's value (any case, aliases included); None if unknown or
    /// session-only. The server reads `max_connections`, `wait_timeout`,
    /// `interactive_timeout`, `max_allowed_packet`, `port`, `bind_address`,
    /// `ssl_cert`, `ssl_key`, ... through this each time it needs them, so `SET
    /// GLOBAL` takes effect for the next use.
    pub fn global(&self, name: &str) -> Option<Value> {
        self.globals.read().get(name)
    }

    /// An unsigned (or boolean) global variable's value; 0 if unknown.
    pub fn global_u64(&self, name: &str) -> u64 {
        self.globals.read().get_u64(name)
    }

    /// A string global variable's value; empty if unknown or NULL.
    pub fn global_str(&self, name: &str) -> String {
        self.globals.read().get_str(name)
    }

    /// A boolean global variable's value; false if unknown.
    pub fn global_bool(&self, name: &str) -> bool {
        self.globals.read().get_bool(name)
    }

    /// Sets global variable `name` from text at start: the configuration file's and
    /// the command line's variables. Checked as `SET GLOBAL` checks (an unknown name
    /// is 1193, a bad value 1231 or 1232), except that read-only variables such as
    /// `port`, `bind_address` and `ssl_cert` may be set. A live engine setting goes to
    /// the storage engine as `SET GLOBAL` does; any other engine setting belongs in
    /// `Settings` before the engine opens and is 1238 here.
    pub fn set_global(&self, name: &str, value: &str) -> Result<()> {
        let lower = name.trim().to_ascii_lowercase().replace('-', "_");
        let spec = sysvars::spec(&lower).ok_or_else(|| sysvars::unknown(&lower))?;
        let value = sysvars::text_value(spec.kind, value);
        self.set_global_value(&lower, Some(&value), true)
            .map(|_| ())
    }

    /// Applies every `(name, value)` with [`Engine::set_global`], in order; the
    /// error of the first that fails names it.
    pub fn set_globals<'a>(
        &self,
        variables: impl IntoIterator<Item = &'a (String, String)>,
    ) -> Result<()> {
        for (name, value) in variables {
            self.set_global(name, value)?;
        }
        Ok(())
    }

    /// `SET GLOBAL name = value` (`value` None: `DEFAULT`); `at_start` allows
    /// read-only variables ([`Engine::set_global`]). Returns the stored value.
    pub(crate) fn set_global_value(
        &self,
        name: &str,
        value: Option<&Value>,
        at_start: bool,
    ) -> Result<Value> {
        let lower = name.to_ascii_lowercase();
        let mut globals = self.globals.write();
        if let Some(setting) = sysvars::engine_setting_spec(&lower) {
            if !setting.live {
                return Err(sysvars::read_only(&lower));
            }
            let text = match value {
                None => self
                    .defaults
                    .display(&lower)
                    .expect("an engine setting has a default"),
                Some(Value::Null) => return Err(sysvars::wrong_value(&lower, &Value::Null)),
                Some(v) => v.to_string(),
            };
            self.storage.set_live_setting(setting.name, &text)?;
            return Ok(self.mirror_setting(&mut globals, setting.name));
        }
        match value {
            Some(value) if at_start => globals.set_at_start(&lower, value),
            _ => globals.set(&lower, value, true, &self.defaults),
        }
    }

    /// Copies engine setting `setting`'s value now into every variable that shows it;
    /// returns the value of the last.
    fn mirror_setting(&self, globals: &mut SystemVariables, setting: &str) -> Value {
        let shown = self
            .storage
            .settings()
            .get(setting)
            .expect("a live setting has a value");
        let mut stored = Value::Null;
        for spec in sysvars::all_specs() {
            if sysvars::engine_setting(spec.name) == Some(setting) {
                stored = sysvars::setting_value(spec.kind, &shown);
                globals.set_internal(spec.name, stored.clone());
            }
        }
        stored
    }

    /// Removes a session's entry; a newer session under the same id (the server's
    /// COM_CHANGE_USER) keeps its own.
    pub(crate) fn unregister(&self, entry: &Arc<SessionEntry>) {
        let mut sessions = self.sessions.lock();
        if sessions
            .get(&entry.id)
            .is_some_and(|e| Arc::ptr_eq(e, entry))
        {
            sessions.remove(&entry.id);
        }
    }

    /// The process list (SHOW PROCESSLIST, information_schema.PROCESSLIST).
    pub fn processes(&self) -> Vec<ProcessInfo> {
        self.sessions
            .lock()
            .values()
            .map(|e| {
                let s = e.state.lock().clone();
                ProcessInfo {
                    id: e.id,
                    user: e.user.clone(),
                    host: e.host.clone(),
                    db: s.database,
                    command: s.command.to_string(),
                    time_s: s.since.map_or(0, |t| t.elapsed().as_secs()),
                    state: if s.command == "Query" {
                        "executing".into()
                    } else {
                        String::new()
                    },
                    info: s.info,
                }
            })
            .collect()
    }

    /// KILL [QUERY] id: stops the session's running statement, and with `connection`
    /// also ends the session.
    pub fn kill(&self, id: u64, connection: bool) -> Result<()> {
        let sessions = self.sessions.lock();
        let entry = sessions
            .get(&id)
            .ok_or_else(|| Error::sql(1094, "HY000", format!("Unknown thread id: {id}")))?;
        entry.cancel.kill();
        if connection {
            entry.killed.store(true, Ordering::Relaxed);
        }
        Ok(())
    }
}
