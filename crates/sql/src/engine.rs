//! The SQL engine: the storage engine plus what all sessions share (global system
//! variables, the process list, connection ids).
//!
//! One [`Engine`] serves every session of a server (or of `tarn sql`). Sessions
//! register in the process list when they start and leave it when dropped; `KILL`
//! reaches another session through its entry.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::{Mutex, RwLock};
use tarn_catalog::Storage;
use tarn_common::settings::Settings;
use tarn_common::{Error, Result};

use crate::accounts::AccountCache;
use crate::exec::Cancel;
use crate::session::Session;
use crate::sysvars::SystemVariables;
use crate::sysviews::ProcessInfo;

/// What a session shows in the process list, and how to stop it.
pub struct SessionEntry {
    pub id: u64,
    pub user: String,
    pub host: String,
    pub state: Mutex<EntryState>,
    /// The running statement's cancel flag (KILL QUERY).
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
    /// Tables whose statistics a background ANALYZE is refreshing.
    analyzing: Arc<Mutex<std::collections::HashSet<(String, String)>>>,
    /// The account cache (see `accounts.rs`): replaced whole, never changed in place.
    pub(crate) accounts: RwLock<Arc<AccountCache>>,
    /// Bumped after each replacement of `accounts`; sessions compare it per statement.
    pub(crate) accounts_generation: AtomicU64,
    /// Serialises cache rebuilds (invariant 1 of `accounts.rs`).
    pub(crate) accounts_reload: Mutex<()>,
}

impl Engine {
    /// Opens (or creates) the data directory `settings` name and recovers it.
    /// Creates the account tables on first open (with `root`@`localhost`) and loads
    /// them.
    pub fn open(settings: &Settings) -> Result<Arc<Engine>> {
        let storage = Arc::new(Storage::open(settings)?);
        let engine = Engine::new(storage);
        crate::accounts::bootstrap(engine.storage())?;
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
        engine
    }

    fn new(storage: Arc<Storage>) -> Arc<Engine> {
        let defaults = SystemVariables::new_global(storage.settings());
        Arc::new(Engine {
            globals: RwLock::new(defaults.clone()),
            defaults,
            storage,
            sessions: Mutex::new(BTreeMap::new()),
            next_connection_id: AtomicU64::new(1),
            started: Instant::now(),
            questions: AtomicU64::new(0),
            analyzing: Arc::new(Mutex::new(std::collections::HashSet::new())),
            accounts: RwLock::new(Arc::new(AccountCache::default())),
            accounts_generation: AtomicU64::new(0),
            accounts_reload: Mutex::new(()),
        })
    }

    pub fn storage(&self) -> &Arc<Storage> {
        &self.storage
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
        crate::sysviews::ServerStatus {
            uptime_s: self.uptime_s(),
            questions: self.questions.load(Ordering::Relaxed),
            connections: self.next_connection_id.load(Ordering::Relaxed) - 1,
        }
    }

    /// Starts a session for `user` connected from `host`, as an internal superuser
    /// that skips privilege checks (the embedded `tarn sql` shell and tests; the
    /// server authenticates and uses [`Engine::session_for`]).
    pub fn session(self: &Arc<Self>, user: &str, host: &str) -> Session {
        let id = self.next_connection_id.fetch_add(1, Ordering::Relaxed);
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
        self.sessions.lock().insert(id, entry.clone());
        Session::new(self.clone(), entry)
    }

    pub(crate) fn unregister(&self, id: u64) {
        self.sessions.lock().remove(&id);
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
        entry.cancel.killed.store(true, Ordering::Relaxed);
        if connection {
            entry.killed.store(true, Ordering::Relaxed);
        }
        Ok(())
    }
}
