//! MySQL accounts and privileges: who may log in, and what each statement may touch.
//!
//! ## Where accounts live
//!
//! Accounts and grants are rows of two ordinary Tarn tables in the system database
//! `mysql`, so they are transactional, logged and recovered like any other rows:
//!
//! - `mysql.user (Host, User, plugin, authentication_string)`, primary key
//!   `(Host, User)`: one row per account.
//! - `mysql.grants (Host, User, Db, Table_name, Privileges, Grant_option)`, primary key
//!   `(Host, User, Db, Table_name)`: one row per account and level. A global grant has
//!   `Db = ''` and `Table_name = ''`, a database grant `Table_name = ''` (MySQL
//!   identifiers are never empty). `Privileges` is a comma-separated list as SHOW
//!   GRANTS spells it (`SELECT,INSERT`).
//!
//! `bootstrap` creates both tables the first time an engine opens a data directory
//! without them, with the one account `root`@`localhost` (empty password, ALL
//! PRIVILEGES WITH GRANT OPTION). Existing tables are never refilled: a server whose
//! accounts were all dropped stays so. A session with global CREATE USER may drop
//! the tables and create them again with their own definition
//! ([`check_account_table_def`]), as a restore of `mysqldump --all-databases` does.
//! If the server starts while `mysql.user` is missing, `bootstrap` creates it with
//! `root`@`localhost` and makes sure of root's global grant, as on a fresh start; a
//! missing `mysql.grants` alone comes back empty (no one is made a superuser
//! silently; `tarn sql` on the data directory can grant). Nothing alters, truncates,
//! renames or re-indexes them, and no view or renamed table takes their names
//! (MySQL's 3554).
//!
//! ## Password hashes
//!
//! `authentication_string` never holds a password. For `mysql_native_password` it is
//! MySQL's own format, `*` and the upper-case hex of SHA1(SHA1(password)). For
//! `caching_sha2_password` it is the upper-case hex of SHA256(SHA256(password)): an
//! unsalted double hash, which is what lets the protocol's fast path (the client
//! sends SHA256(pw) XOR SHA256(SHA256(SHA256(pw)), nonce)) verify a login without a
//! cache of plain hashes and without the RSA/TLS full exchange. It is weaker than
//! MySQL's salted, iterated `$A$005$` crypt against someone who reads the table (a
//! precomputed dictionary applies to every account with the same password); only
//! accounts with global privileges can read `mysql.*`. An empty password is stored as
//! the empty string.
//!
//! ## The cache and the checks
//!
//! Every statement checks privileges, so checks must not read tables. [`AccountCache`]
//! is an immutable snapshot of both tables built by [`Engine::reload_accounts`] after
//! every committed account statement (and by FLUSH PRIVILEGES, for rows changed by
//! hand), published behind a lock with a generation counter. A session keeps an
//! `Arc` of its own account's [`Grants`] and compares the generation (one relaxed
//! atomic load) at the start of each statement, taking a new snapshot only when it
//! changed. A check is then a bit test of the global privileges, and on a miss at
//! most two hash lookups (database, then table).
//!
//! Invariants:
//!
//! 1. The cache reflects committed rows only: it is rebuilt after the commit, under
//!    `Engine::accounts_reload`, from a fresh read view, so the last rebuild to run
//!    saw every commit before it.
//! 2. A statement that fails changes no account row (it runs in one transaction,
//!    taken back on error) and leaves the cache as it was.
//! 3. Sessions from [`Engine::session`] (the embedded shell, tests) are internal
//!    superusers and skip every check; sessions from [`Engine::session_for`] are
//!    checked against their account's grants as of their statement's start.
//! 4. Writes to `mysql.*` (DML and DDL) need the privilege globally: a database or
//!    table grant on `mysql` never lets a user edit accounts.

use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use sha1::Digest;
use tarn_catalog::{Storage, Table, TableDef, Transaction, WaitPolicy};
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::types::{Collation, Column, ColumnType};

use crate::engine::Engine;
use crate::plan::OutputColumn;
use crate::session::{QueryResult, Session};
use crate::types::SqlType;

/// The system database that holds accounts.
pub const SYSTEM_DATABASE: &str = "mysql";
/// The accounts table.
pub const USER_TABLE: &str = "user";
/// The grants table.
pub const GRANTS_TABLE: &str = "grants";

// ------------------------------------------------------------------ public API

/// An authentication plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AuthPlugin {
    NativePassword,
    CachingSha2Password,
}

impl AuthPlugin {
    pub fn name(self) -> &'static str {
        match self {
            AuthPlugin::NativePassword => "mysql_native_password",
            AuthPlugin::CachingSha2Password => "caching_sha2_password",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "mysql_native_password" => Some(AuthPlugin::NativePassword),
            "caching_sha2_password" => Some(AuthPlugin::CachingSha2Password),
            _ => None,
        }
    }

    /// The stored hash of `password` for this plugin (empty password: none).
    pub fn hash(self, password: &[u8]) -> Option<Vec<u8>> {
        if password.is_empty() {
            return None;
        }
        Some(match self {
            AuthPlugin::NativePassword => native_password_hash(password).to_vec(),
            AuthPlugin::CachingSha2Password => sha2_password_hash(password).to_vec(),
        })
    }

    /// The length of this plugin's stored hash, in bytes.
    fn hash_len_bytes(self) -> usize {
        match self {
            AuthPlugin::NativePassword => 20,
            AuthPlugin::CachingSha2Password => 32,
        }
    }
}

/// An account as the server authenticates it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub user: String,
    /// The account's host pattern (`localhost`, `%`, `192.168.1.%`).
    pub host: String,
    pub plugin: AuthPlugin,
    /// SHA1(SHA1(pw)) for native, SHA256(SHA256(pw)) for caching_sha2; None = empty
    /// password.
    pub stored_hash: Option<Vec<u8>>,
}

/// SHA1(SHA1(password)): what `mysql_native_password` stores.
pub fn native_password_hash(password: &[u8]) -> [u8; 20] {
    let once = sha1::Sha1::digest(password);
    sha1::Sha1::digest(once).into()
}

/// SHA256(SHA256(password)): what `caching_sha2_password` stores in Tarn.
pub fn sha2_password_hash(password: &[u8]) -> [u8; 32] {
    let once = sha2::Sha256::digest(password);
    sha2::Sha256::digest(once).into()
}

impl Engine {
    /// The account a client `user` connecting from `client_host` (an IP text like
    /// "127.0.0.1", or "localhost") logs in as: the most specific host match. None if
    /// no such user.
    pub fn find_account(&self, user: &str, client_host: &str) -> Option<Account> {
        let cache = self.accounts.read().clone();
        cache.find(user, client_host).cloned()
    }

    /// Starts a session authenticated as `account` (user and matched host recorded
    /// for CURRENT_USER(), privilege checks).
    pub fn session_for(self: &Arc<Self>, account: &Account, client_host: &str) -> Session {
        self.session_for_id(account, client_host, self.reserve_connection_id())
    }

    /// [`Engine::session_for`] under an id from [`Engine::reserve_connection_id`]
    /// (the server announces it in the handshake, before authenticating).
    pub fn session_for_id(
        self: &Arc<Self>,
        account: &Account,
        client_host: &str,
        id: u64,
    ) -> Session {
        let mut session = self.session_with_id(&account.user, client_host, id);
        session.authenticate(Identity {
            user: account.user.clone(),
            host: account.host.clone(),
            internal: false,
        });
        session
    }

    /// Rebuilds the account cache from the committed rows of `mysql.user` and
    /// `mysql.grants` (after an account statement commits, and FLUSH PRIVILEGES).
    pub fn reload_accounts(&self) -> Result<()> {
        let _serial = self.accounts_reload.lock();
        let cache = load(self.storage())?;
        *self.accounts.write() = Arc::new(cache);
        self.accounts_generation.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// The current snapshot's generation (sessions compare it per statement).
    pub(crate) fn accounts_generation(&self) -> u64 {
        self.accounts_generation.load(Ordering::Acquire)
    }

    /// The grants of `user`@`host` in the current snapshot (empty if it has none).
    pub(crate) fn grants_of(&self, user: &str, host: &str) -> Arc<Grants> {
        let cache = self.accounts.read();
        cache
            .grants
            .get(&(user.to_string(), host.to_string()))
            .cloned()
            .unwrap_or_default()
    }
}

// ------------------------------------------------------------------ privileges

/// A set of privileges (a bit set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Privileges(u16);

impl Privileges {
    pub const NONE: Privileges = Privileges(0);
    pub const SELECT: Privileges = Privileges(1);
    pub const INSERT: Privileges = Privileges(1 << 1);
    pub const UPDATE: Privileges = Privileges(1 << 2);
    pub const DELETE: Privileges = Privileges(1 << 3);
    pub const CREATE: Privileges = Privileges(1 << 4);
    pub const DROP: Privileges = Privileges(1 << 5);
    pub const INDEX: Privileges = Privileges(1 << 6);
    pub const ALTER: Privileges = Privileges(1 << 7);
    /// CREATE USER: account statements (global only).
    pub const CREATE_USER: Privileges = Privileges(1 << 8);
    /// GRANT OPTION: may grant what it holds at that level.
    pub const GRANT_OPTION: Privileges = Privileges(1 << 9);

    /// What ALL PRIVILEGES means at database and table level.
    pub const ALL_OBJECT: Privileges = Privileges(0xff);
    /// What ALL PRIVILEGES means at global level.
    pub const ALL_GLOBAL: Privileges = Privileges(0x1ff);

    /// Each privilege (GRANT OPTION aside), in MySQL's order.
    pub const EACH: [Privileges; 9] = [
        Privileges::SELECT,
        Privileges::INSERT,
        Privileges::UPDATE,
        Privileges::DELETE,
        Privileges::CREATE,
        Privileges::DROP,
        Privileges::INDEX,
        Privileges::ALTER,
        Privileges::CREATE_USER,
    ];

    /// Each privilege with its SHOW GRANTS name, in MySQL's order.
    const NAMES: [(Privileges, &'static str); 9] = [
        (Privileges::SELECT, "SELECT"),
        (Privileges::INSERT, "INSERT"),
        (Privileges::UPDATE, "UPDATE"),
        (Privileges::DELETE, "DELETE"),
        (Privileges::CREATE, "CREATE"),
        (Privileges::DROP, "DROP"),
        (Privileges::INDEX, "INDEX"),
        (Privileges::ALTER, "ALTER"),
        (Privileges::CREATE_USER, "CREATE USER"),
    ];

    pub fn contains(self, other: Privileges) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn intersects(self, other: Privileges) -> bool {
        self.0 & other.0 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn union(self, other: Privileges) -> Privileges {
        Privileges(self.0 | other.0)
    }

    pub fn without(self, other: Privileges) -> Privileges {
        Privileges(self.0 & !other.0)
    }

    /// A privilege by its SQL name (`SELECT`, `CREATE USER`).
    pub fn parse(name: &str) -> Option<Privileges> {
        let name = name.to_ascii_uppercase();
        Privileges::NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(p, _)| *p)
    }

    /// The names of the privileges held (GRANT OPTION not included).
    pub fn names(self) -> Vec<&'static str> {
        Privileges::NAMES
            .iter()
            .filter(|(p, _)| self.contains(*p))
            .map(|(_, n)| *n)
            .collect()
    }

    /// The name of the first privilege of `self` (for "X command denied").
    fn first_name(self) -> &'static str {
        Privileges::NAMES
            .iter()
            .find(|(p, _)| self.intersects(*p))
            .map_or("GRANT", |(_, n)| *n)
    }

    /// The stored text (`SELECT,INSERT`).
    fn to_text(self) -> String {
        self.names().join(",")
    }

    fn from_text(text: &str) -> Privileges {
        text.split(',')
            .filter_map(|n| Privileges::parse(n.trim()))
            .fold(Privileges::NONE, Privileges::union)
    }
}

/// One account's grants.
#[derive(Clone, Debug, Default)]
pub struct Grants {
    /// Privileges on `*.*` (with GRANT_OPTION if granted so).
    pub global: Privileges,
    /// Privileges on `db.*`.
    pub databases: HashMap<String, Privileges>,
    /// Privileges on `db.table`, by database then table.
    pub tables: HashMap<String, HashMap<String, Privileges>>,
}

impl Grants {
    /// What the account holds on `db.table` from all three levels.
    pub fn on_table(&self, db: &str, table: &str) -> Privileges {
        let mut held = self.global;
        if let Some(p) = self.databases.get(db) {
            held = held.union(*p);
        }
        if let Some(p) = self.tables.get(db).and_then(|t| t.get(table)) {
            held = held.union(*p);
        }
        held
    }

    /// What the account holds on `db.*` (global and database levels).
    pub fn on_database(&self, db: &str) -> Privileges {
        self.global
            .union(self.databases.get(db).copied().unwrap_or_default())
    }

    /// True if the account holds anything on `db` or one of its tables (USE db).
    pub fn any_in_database(&self, db: &str) -> bool {
        !self
            .on_database(db)
            .without(Privileges::GRANT_OPTION)
            .is_empty()
            || self
                .tables
                .get(db)
                .is_some_and(|t| t.values().any(|p| !p.is_empty()))
    }
}

// ------------------------------------------------------------------ the cache

/// A snapshot of `mysql.user` and `mysql.grants`.
#[derive(Default)]
pub struct AccountCache {
    /// Accounts by user name, most specific host first.
    by_user: HashMap<String, Vec<Account>>,
    /// Grants by (user, host).
    grants: HashMap<(String, String), Arc<Grants>>,
}

impl AccountCache {
    fn find(&self, user: &str, client_host: &str) -> Option<&Account> {
        self.by_user
            .get(user)?
            .iter()
            .find(|a| host_matches(&a.host, client_host))
    }

    fn exists(&self, user: &str, host: &str) -> bool {
        self.by_user
            .get(user)
            .is_some_and(|v| v.iter().any(|a| a.host == host))
    }
}

/// Orders host patterns as MySQL does: literal hosts first, then patterns by the
/// length of their literal prefix (longer first); `%` last.
fn host_order(host: &str) -> (bool, std::cmp::Reverse<usize>, std::cmp::Reverse<usize>) {
    let wildcard = host.find(['%', '_']);
    (
        wildcard.is_some(),
        std::cmp::Reverse(wildcard.unwrap_or(host.len())),
        std::cmp::Reverse(host.len()),
    )
}

/// True if a client at `client` (an address or `localhost`) matches the account host
/// `pattern`. `localhost` stands for 127.0.0.1 and ::1 and they for it.
pub fn host_matches(pattern: &str, client: &str) -> bool {
    let loopback = ["localhost", "127.0.0.1", "::1"];
    let client = client.to_ascii_lowercase();
    let pattern = pattern.to_ascii_lowercase();
    if loopback.contains(&client.as_str()) {
        return loopback.iter().any(|c| wildcard_match(&pattern, c));
    }
    wildcard_match(&pattern, &client)
}

/// SQL LIKE without escapes: `%` any run, `_` one character.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point (the last `%`): linear in practice
    // and never recursive.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '_' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '%' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '%' {
        pi += 1;
    }
    pi == p.len()
}

// ------------------------------------------------------------------ storage

fn varchar(name: &str, len: u32) -> Column {
    Column::new(name, ColumnType::VarChar { len }, false).with_collation(Collation::Binary)
}

fn user_table_def() -> TableDef {
    TableDef::new(
        USER_TABLE,
        vec![
            varchar("Host", 255),
            varchar("User", 32),
            varchar("plugin", 64),
            varchar("authentication_string", 255),
        ],
        &[0, 1],
    )
}

fn grants_table_def() -> TableDef {
    TableDef::new(
        GRANTS_TABLE,
        vec![
            varchar("Host", 255),
            varchar("User", 32),
            varchar("Db", 64),
            varchar("Table_name", 64),
            varchar("Privileges", 255),
            varchar("Grant_option", 1),
        ],
        &[0, 1, 2, 3],
    )
}

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        _ => String::new(),
    }
}

fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// `authentication_string` for a stored hash.
fn authentication_string(plugin: AuthPlugin, hash: Option<&[u8]>) -> String {
    match (plugin, hash) {
        (_, None) => String::new(),
        (AuthPlugin::NativePassword, Some(h)) => format!("*{}", hex_upper(h)),
        (AuthPlugin::CachingSha2Password, Some(h)) => hex_upper(h),
    }
}

/// The stored hash of an `authentication_string`; Err for a malformed one.
fn parse_authentication_string(plugin: AuthPlugin, text: &str) -> Option<Option<Vec<u8>>> {
    if text.is_empty() {
        return Some(None);
    }
    let hex = match plugin {
        AuthPlugin::NativePassword => text.strip_prefix('*')?,
        AuthPlugin::CachingSha2Password => text,
    };
    let bytes = unhex(hex)?;
    (bytes.len() == plugin.hash_len_bytes()).then_some(Some(bytes))
}

fn user_row(account: &Account) -> Vec<Value> {
    vec![
        text(&account.host),
        text(&account.user),
        text(account.plugin.name()),
        text(&authentication_string(
            account.plugin,
            account.stored_hash.as_deref(),
        )),
    ]
}

/// Creates `mysql`, `mysql.user` and `mysql.grants` if missing; a new `mysql.user`
/// gets `root`@`localhost`.
pub(crate) fn bootstrap(storage: &Storage) -> Result<()> {
    if !storage.databases().iter().any(|d| d == SYSTEM_DATABASE) {
        match storage.create_database(SYSTEM_DATABASE) {
            Ok(()) | Err(Error::DatabaseExists(_)) => {}
            Err(e) => return Err(e),
        }
    }
    let tables = storage.tables(SYSTEM_DATABASE)?;
    let mut created_user = false;
    for def in [user_table_def(), grants_table_def()] {
        if !tables.contains(&def.name) {
            if def.name == GRANTS_TABLE && tables.iter().any(|t| t == USER_TABLE) {
                tracing::error!(
                    "mysql.grants was missing and is created empty: no account has a privilege \
                     now. Grant them offline with `tarn sql --data-dir <dir> -e \"GRANT ...\"`."
                );
            }
            created_user |= def.name == USER_TABLE;
            storage.create_table(SYSTEM_DATABASE, def)?;
        }
    }
    if !created_user {
        return Ok(());
    }
    // A fresh data directory, or one whose accounts table was dropped (by a restore
    // that did not finish): root@localhost is there, with every privilege.
    let user = storage.table(SYSTEM_DATABASE, USER_TABLE)?;
    let grants = storage.table(SYSTEM_DATABASE, GRANTS_TABLE)?;
    let mut tx = storage.begin(None, false);
    let root = Account {
        user: "root".into(),
        host: "localhost".into(),
        plugin: AuthPlugin::NativePassword,
        stored_hash: None,
    };
    let root_grant = grant_row(&root.user, &root.host, "", "", Privileges::ALL_GLOBAL, true);
    let mut written = Ok(());
    for (table, row) in [(&user, user_row(&root)), (&grants, root_grant)] {
        let key: Vec<Value> = table
            .def()
            .primary_key
            .iter()
            .map(|&c| row[c].clone())
            .collect();
        written = match table.get_tx(&mut tx, &key, tarn_catalog::RowLock::None) {
            Ok(Some(_)) => Ok(()),
            Ok(None) => table.insert_tx(&mut tx, row),
            Err(e) => Err(e),
        };
        if written.is_err() {
            break;
        }
    }
    match written {
        Ok(()) => storage.commit(tx),
        Err(e) => {
            storage.rollback(tx)?;
            Err(e)
        }
    }
}

/// Whether `db`.`table` is one of the two account tables.
pub(crate) fn is_account_table(db: &str, table: &str) -> bool {
    db == SYSTEM_DATABASE && (table == USER_TABLE || table == GRANTS_TABLE)
}

/// A CREATE TABLE of an account table (a restore of `mysqldump --all-databases`
/// drops and creates both) must give it exactly its built-in columns and primary
/// key, and nothing that could refuse an account statement's rows (indexes aside):
/// the cache reads the rows by position. Anything else is MySQL's 3554.
pub(crate) fn check_account_table_def(db: &str, def: &TableDef) -> Result<()> {
    if !is_account_table(db, &def.name) {
        return Ok(());
    }
    let expected = if def.name == USER_TABLE {
        user_table_def()
    } else {
        grants_table_def()
    };
    let same_columns = def.columns.len() == expected.columns.len()
        && def.columns.iter().zip(&expected.columns).all(|(a, b)| {
            a.name.eq_ignore_ascii_case(&b.name)
                && a.ty == b.ty
                && a.nullable == b.nullable
                && a.collation == b.collation
        });
    if same_columns
        && def.primary_key == expected.primary_key
        && def.checks.is_empty()
        && def.foreign_keys.is_empty()
        && def.column_generated.iter().all(Option::is_none)
    {
        return Ok(());
    }
    Err(Error::sql(
        3554,
        "HY000",
        format!(
            "Access to system table '{db}.{}' is rejected: it can only be created as SHOW CREATE TABLE shows it",
            def.name
        ),
    ))
}

fn grant_row(
    user: &str,
    host: &str,
    db: &str,
    table: &str,
    privileges: Privileges,
    grant_option: bool,
) -> Vec<Value> {
    vec![
        text(host),
        text(user),
        text(db),
        text(table),
        text(&privileges.without(Privileges::GRANT_OPTION).to_text()),
        text(if grant_option { "Y" } else { "N" }),
    ]
}

fn scan_all(table: &Table, tx: &mut Transaction) -> Result<Vec<Vec<Value>>> {
    table.scan_tx(
        tx,
        Bound::Unbounded,
        Bound::Unbounded,
        tarn_catalog::RowLock::None,
        WaitPolicy::Wait,
        usize::MAX,
    )
}

/// Reads both tables into a new cache (rows that do not parse are skipped with a
/// log line: a hand-edited row must not lock everyone out).
fn load(storage: &Storage) -> Result<AccountCache> {
    let user = storage.table(SYSTEM_DATABASE, USER_TABLE)?;
    let grants = storage.table(SYSTEM_DATABASE, GRANTS_TABLE)?;
    let mut tx = storage.begin(None, true);
    let read = scan_all(&user, &mut tx).and_then(|u| Ok((u, scan_all(&grants, &mut tx)?)));
    storage.commit(tx)?;
    let (user_rows, grant_rows) = read?;
    let mut cache = AccountCache::default();
    for row in user_rows {
        let [host, user, plugin, auth] = &row[..] else {
            continue;
        };
        let (host, user) = (value_text(host), value_text(user));
        let Some(plugin) = AuthPlugin::parse(&value_text(plugin)) else {
            tracing::warn!("mysql.user: account '{user}'@'{host}' has an unknown plugin");
            continue;
        };
        let Some(stored_hash) = parse_authentication_string(plugin, &value_text(auth)) else {
            tracing::warn!("mysql.user: account '{user}'@'{host}' has a malformed hash");
            continue;
        };
        cache
            .by_user
            .entry(user.clone())
            .or_default()
            .push(Account {
                user,
                host,
                plugin,
                stored_hash,
            });
    }
    for accounts in cache.by_user.values_mut() {
        accounts.sort_by_key(|a| host_order(&a.host));
    }
    let mut grants: HashMap<(String, String), Grants> = HashMap::new();
    for row in grant_rows {
        let [host, user, db, table, privileges, option] = &row[..] else {
            continue;
        };
        let mut held = Privileges::from_text(&value_text(privileges));
        if value_text(option) == "Y" {
            held = held.union(Privileges::GRANT_OPTION);
        }
        let entry = grants
            .entry((value_text(user), value_text(host)))
            .or_default();
        let (db, table) = (value_text(db), value_text(table));
        match (db.is_empty(), table.is_empty()) {
            (true, _) => entry.global = held,
            (false, true) => {
                entry.databases.insert(db, held);
            }
            (false, false) => {
                entry.tables.entry(db).or_default().insert(table, held);
            }
        }
    }
    cache.grants = grants.into_iter().map(|(k, v)| (k, Arc::new(v))).collect();
    Ok(cache)
}

// ------------------------------------------------------------------ sessions

/// Who a session runs as.
#[derive(Clone, Debug)]
pub struct Identity {
    pub user: String,
    /// The matched account's host pattern (CURRENT_USER()).
    pub host: String,
    /// An internal superuser session ([`Engine::session`]): no checks.
    pub internal: bool,
}

/// A privilege a statement needs on a table (recorded at PREPARE, checked again at
/// each EXECUTE).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableAccess {
    pub privileges: Privileges,
    pub db: String,
    pub table: String,
}

/// `'user'@'host'` quoted as MySQL's messages quote it.
pub fn quoted_account(user: &str, host: &str) -> String {
    format!("'{user}'@'{host}'")
}

/// `` `user`@`host` `` as SHOW GRANTS prints it.
fn backquoted_account(user: &str, host: &str) -> String {
    format!(
        "`{}`@`{}`",
        user.replace('`', "``"),
        host.replace('`', "``")
    )
}

pub(crate) fn is_open_schema(db: &str) -> bool {
    db.eq_ignore_ascii_case("information_schema") || db.eq_ignore_ascii_case("performance_schema")
}

/// The error for a missing table privilege (1142).
pub(crate) fn table_denied(identity: &Identity, missing: Privileges, table: &str) -> Error {
    Error::sql(
        1142,
        "42000",
        format!(
            "{} command denied to user {} for table '{table}'",
            missing.first_name(),
            quoted_account(&identity.user, &identity.host)
        ),
    )
}

/// The error for a missing database privilege (1044).
pub(crate) fn database_denied(identity: &Identity, db: &str) -> Error {
    Error::sql(
        1044,
        "42000",
        format!(
            "Access denied for user {} to database '{db}'",
            quoted_account(&identity.user, &identity.host)
        ),
    )
}

/// The error for a missing global privilege (1227).
pub(crate) fn global_denied(what: &str) -> Error {
    Error::sql(
        1227,
        "42000",
        format!(
            "Access denied; you need (at least one of) the {what} privilege(s) for this operation"
        ),
    )
}

/// Whether `grants` allow `needed` on `db.table`. Writes to `mysql.*` need the
/// privilege globally (invariant 4); information_schema and performance_schema are
/// readable by all and writable by none.
pub(crate) fn table_allowed(grants: &Grants, needed: Privileges, db: &str, table: &str) -> bool {
    if grants.global.contains(needed) {
        return true;
    }
    if is_open_schema(db) {
        return needed == Privileges::SELECT;
    }
    if db == SYSTEM_DATABASE && needed != Privileges::SELECT {
        return false;
    }
    grants.on_table(db, table).contains(needed)
}

/// Whether `grants` allow `needed` on `db.*`.
pub(crate) fn database_allowed(grants: &Grants, needed: Privileges, db: &str) -> bool {
    if grants.global.contains(needed) {
        return true;
    }
    if is_open_schema(db) || db == SYSTEM_DATABASE {
        return false;
    }
    grants.on_database(db).contains(needed)
}

// ------------------------------------------------------------------ statements

/// `'user'@'host'` in a statement (host `%` when not given).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserName {
    pub user: String,
    pub host: String,
}

/// `user [IDENTIFIED [WITH plugin] [BY 'password']]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserSpec {
    pub name: UserName,
    pub plugin: Option<AuthPlugin>,
    /// The password given with BY (None: IDENTIFIED not given or without BY).
    pub password: Option<String>,
}

/// The level of a GRANT or REVOKE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GrantLevel {
    /// `*.*`
    Global,
    /// `db.*`, or `*` (the current database) when None.
    Database(Option<String>),
    /// `db.t`, or `t` in the current database.
    Table(Option<String>, String),
}

/// The account statements (parsed by the pre-pass).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccountStatement {
    CreateUser {
        if_not_exists: bool,
        users: Vec<UserSpec>,
    },
    DropUser {
        if_exists: bool,
        users: Vec<UserName>,
    },
    AlterUser {
        if_exists: bool,
        users: Vec<UserSpec>,
    },
    /// `SET PASSWORD [FOR user] = 'pw'`
    SetPassword {
        user: Option<UserName>,
        password: String,
    },
    Grant {
        privileges: Privileges,
        level: GrantLevel,
        users: Vec<UserName>,
        grant_option: bool,
    },
    /// `REVOKE privileges ON level FROM users` (GRANT OPTION among the privileges
    /// revokes it).
    Revoke {
        privileges: Privileges,
        level: GrantLevel,
        users: Vec<UserName>,
    },
    /// `SHOW GRANTS [FOR user]` (None: the current user).
    ShowGrants { user: Option<UserName> },
    /// `FLUSH PRIVILEGES`: reloads the cache from the tables.
    FlushPrivileges,
}

/// Runs an account statement: checks the session's privileges, commits the open
/// transaction (account statements commit implicitly, as in MySQL), changes the rows
/// in one transaction and reloads the cache.
pub(crate) fn execute(session: &mut Session, statement: &AccountStatement) -> Result<QueryResult> {
    match statement {
        AccountStatement::ShowGrants { user } => return show_grants(session, user.as_ref()),
        AccountStatement::FlushPrivileges => {
            session.require_global(Privileges::CREATE_USER, "RELOAD")?;
            session.engine().reload_accounts()?;
            return Ok(QueryResult::ok(0));
        }
        _ => {}
    }
    // The statement writes mysql.*: refused under the global read lock (1223), and
    // under LOCK TABLES unless the account tables are locked (1100).
    if let Some(locks) = &session.table_locks {
        for table in [USER_TABLE, GRANTS_TABLE] {
            locks.check_listed(SYSTEM_DATABASE, table)?;
            locks.check_access(Privileges::INSERT, SYSTEM_DATABASE, table)?;
        }
    }
    check_statement(session, statement)?;
    session.commit_implicitly()?;
    let engine = session.engine().clone();
    let result = session.transact(false, |session, tx| {
        let storage = session.engine().storage().clone();
        let tables = Tables {
            user: storage.table(SYSTEM_DATABASE, USER_TABLE)?,
            grants: storage.table(SYSTEM_DATABASE, GRANTS_TABLE)?,
        };
        let mut tx = tx.borrow_mut();
        apply(session, &tables, &mut tx, statement)
    })?;
    // Account statements end their transaction even with autocommit off.
    session.commit()?;
    engine.reload_accounts()?;
    Ok(result)
}

/// The privilege check of a changing account statement.
fn check_statement(session: &Session, statement: &AccountStatement) -> Result<()> {
    match statement {
        AccountStatement::CreateUser { .. }
        | AccountStatement::DropUser { .. }
        | AccountStatement::AlterUser { .. } => {
            session.require_global(Privileges::CREATE_USER, "CREATE USER")
        }
        AccountStatement::SetPassword { user: Some(u), .. } => {
            let me = session.identity();
            if me.user == u.user && me.host == u.host {
                Ok(())
            } else {
                session.require_global(Privileges::CREATE_USER, "CREATE USER")
            }
        }
        AccountStatement::SetPassword { user: None, .. } => Ok(()),
        AccountStatement::Grant {
            privileges, level, ..
        }
        | AccountStatement::Revoke {
            privileges, level, ..
        } => {
            let needed = privileges.union(Privileges::GRANT_OPTION);
            session.require_grantable(needed, &resolve_level(session, level)?)
        }
        AccountStatement::ShowGrants { .. } | AccountStatement::FlushPrivileges => Ok(()),
    }
}

/// A grant level with the current database filled in, names normalised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    Global,
    Database(String),
    Table(String, String),
}

fn resolve_level(session: &Session, level: &GrantLevel) -> Result<Level> {
    use crate::bind::BindContext;
    let current = || {
        session
            .database()
            .map(str::to_string)
            .ok_or_else(|| Error::sql(1046, "3D000", "No database selected"))
    };
    Ok(match level {
        GrantLevel::Global => Level::Global,
        GrantLevel::Database(db) => Level::Database(match db {
            Some(db) => session.normalize_table_name(db),
            None => current()?,
        }),
        GrantLevel::Table(db, table) => {
            let db = match db {
                Some(db) => session.normalize_table_name(db),
                None => current()?,
            };
            let table = session.normalize_table_name(table);
            Level::Table(db, table)
        }
    })
}

struct Tables {
    user: Arc<Table>,
    grants: Arc<Table>,
}

fn operation_failed(operation: &str, failed: &[&UserName]) -> Error {
    let names: Vec<String> = failed
        .iter()
        .map(|u| quoted_account(&u.user, &u.host))
        .collect();
    Error::sql(
        1396,
        "HY000",
        format!("Operation {operation} failed for {}", names.join(",")),
    )
}

fn user_exists(tables: &Tables, tx: &mut Transaction, name: &UserName) -> Result<bool> {
    Ok(tables
        .user
        .get_tx(
            tx,
            &[text(&name.host), text(&name.user)],
            tarn_catalog::RowLock::Exclusive,
        )?
        .is_some())
}

fn new_account(spec: &UserSpec, default_plugin: AuthPlugin) -> Account {
    let plugin = spec.plugin.unwrap_or(default_plugin);
    Account {
        user: spec.name.user.clone(),
        host: spec.name.host.clone(),
        plugin,
        stored_hash: plugin.hash(spec.password.as_deref().unwrap_or("").as_bytes()),
    }
}

fn apply(
    session: &mut Session,
    tables: &Tables,
    tx: &mut Transaction,
    statement: &AccountStatement,
) -> Result<QueryResult> {
    match statement {
        AccountStatement::CreateUser {
            if_not_exists,
            users,
        } => {
            let mut failed = Vec::new();
            for spec in users {
                if user_exists(tables, tx, &spec.name)? {
                    if *if_not_exists {
                        session.add_warning(
                            "Note",
                            3163,
                            format!(
                                "Authorization ID {} already exists.",
                                quoted_account(&spec.name.user, &spec.name.host)
                            ),
                        );
                    } else {
                        failed.push(&spec.name);
                    }
                    continue;
                }
                let default_plugin = AuthPlugin::parse(
                    &session.engine().global_str("default_authentication_plugin"),
                )
                .unwrap_or(AuthPlugin::NativePassword);
                let account = new_account(spec, default_plugin);
                tables.user.insert_tx(tx, user_row(&account))?;
            }
            if !failed.is_empty() {
                return Err(operation_failed("CREATE USER", &failed));
            }
        }
        AccountStatement::DropUser { if_exists, users } => {
            let mut failed = Vec::new();
            for name in users {
                if !user_exists(tables, tx, name)? {
                    if *if_exists {
                        session.add_warning(
                            "Note",
                            3162,
                            format!(
                                "Authorization ID {} does not exist.",
                                quoted_account(&name.user, &name.host)
                            ),
                        );
                    } else {
                        failed.push(name);
                    }
                    continue;
                }
                tables
                    .user
                    .delete_tx(tx, &[text(&name.host), text(&name.user)])?;
                for row in grant_rows_of(tables, tx, name)? {
                    tables.grants.delete_tx(tx, &row[..4])?;
                }
            }
            if !failed.is_empty() {
                return Err(operation_failed("DROP USER", &failed));
            }
        }
        AccountStatement::AlterUser { if_exists, users } => {
            let mut failed = Vec::new();
            for spec in users {
                let key = [text(&spec.name.host), text(&spec.name.user)];
                let Some(row) = tables
                    .user
                    .get_tx(tx, &key, tarn_catalog::RowLock::Exclusive)?
                else {
                    if *if_exists {
                        session.add_warning(
                            "Note",
                            3162,
                            format!(
                                "Authorization ID {} does not exist.",
                                quoted_account(&spec.name.user, &spec.name.host)
                            ),
                        );
                    } else {
                        failed.push(&spec.name);
                    }
                    continue;
                };
                let current = AuthPlugin::parse(&value_text(&row[2]))
                    .unwrap_or(AuthPlugin::CachingSha2Password);
                if spec.plugin.is_none() && spec.password.is_none() {
                    continue;
                }
                let account = new_account(spec, current);
                tables.user.update_tx(tx, &key, user_row(&account))?;
            }
            if !failed.is_empty() {
                return Err(operation_failed("ALTER USER", &failed));
            }
        }
        AccountStatement::SetPassword { user, password } => {
            let name = match user {
                Some(u) => u.clone(),
                None => {
                    let me = session.identity();
                    UserName {
                        user: me.user.clone(),
                        host: me.host.clone(),
                    }
                }
            };
            let key = [text(&name.host), text(&name.user)];
            let row = tables
                .user
                .get_tx(tx, &key, tarn_catalog::RowLock::Exclusive)?
                .ok_or_else(no_matching_row)?;
            let plugin =
                AuthPlugin::parse(&value_text(&row[2])).unwrap_or(AuthPlugin::CachingSha2Password);
            let account = Account {
                user: name.user,
                host: name.host,
                plugin,
                stored_hash: plugin.hash(password.as_bytes()),
            };
            tables.user.update_tx(tx, &key, user_row(&account))?;
        }
        AccountStatement::Grant {
            privileges,
            level,
            users,
            grant_option,
        } => {
            let level = resolve_level(session, level)?;
            check_level_exists(session, &level)?;
            for name in users {
                if !user_exists(tables, tx, name)? {
                    return Err(Error::sql(
                        1410,
                        "42000",
                        "You are not allowed to create a user with GRANT",
                    ));
                }
                let (db, table) = level_columns(&level);
                let key = grant_key(name, db, table);
                let old = tables
                    .grants
                    .get_tx(tx, &key, tarn_catalog::RowLock::Exclusive)?;
                let mut held = old.as_ref().map_or(Privileges::NONE, |r| {
                    Privileges::from_text(&value_text(&r[4]))
                });
                let mut option = old.as_ref().is_some_and(|r| value_text(&r[5]) == "Y");
                held = held.union(*privileges);
                option |= *grant_option || privileges.contains(Privileges::GRANT_OPTION);
                let row = grant_row(&name.user, &name.host, db, table, held, option);
                if old.is_some() {
                    tables.grants.update_tx(tx, &key, row)?;
                } else {
                    tables.grants.insert_tx(tx, row)?;
                }
            }
        }
        AccountStatement::Revoke {
            privileges,
            level,
            users,
        } => {
            let level = resolve_level(session, level)?;
            for name in users {
                if !user_exists(tables, tx, name)? {
                    return Err(no_such_grant(name));
                }
                let (db, table) = level_columns(&level);
                let key = grant_key(name, db, table);
                let Some(old) = tables
                    .grants
                    .get_tx(tx, &key, tarn_catalog::RowLock::Exclusive)?
                else {
                    return Err(no_such_grant(name));
                };
                let held = Privileges::from_text(&value_text(&old[4])).without(*privileges);
                let option =
                    value_text(&old[5]) == "Y" && !privileges.contains(Privileges::GRANT_OPTION);
                if held.is_empty() && !option {
                    tables.grants.delete_tx(tx, &key)?;
                } else {
                    let row = grant_row(&name.user, &name.host, db, table, held, option);
                    tables.grants.update_tx(tx, &key, row)?;
                }
            }
        }
        AccountStatement::ShowGrants { .. } | AccountStatement::FlushPrivileges => {
            unreachable!("handled before the transaction")
        }
    }
    Ok(QueryResult::ok(0))
}

/// GRANT on a database or table that does not exist: MySQL accepts a database grant
/// for a future database, but a table grant needs the table (1146).
fn check_level_exists(session: &Session, level: &Level) -> Result<()> {
    if let Level::Table(db, table) = level {
        let storage = session.engine().storage();
        let exists =
            storage.table(db, table).is_ok() || matches!(storage.view(db, table), Ok(Some(_)));
        if !exists {
            return Err(Error::UnknownTable(format!("{db}.{table}")));
        }
    }
    Ok(())
}

fn no_matching_row() -> Error {
    Error::sql(
        1133,
        "42000",
        "Can't find any matching row in the user table",
    )
}

fn no_such_grant(name: &UserName) -> Error {
    Error::sql(
        1141,
        "42000",
        format!(
            "There is no such grant defined for user '{}' on host '{}'",
            name.user, name.host
        ),
    )
}

fn level_columns(level: &Level) -> (&str, &str) {
    match level {
        Level::Global => ("", ""),
        Level::Database(db) => (db, ""),
        Level::Table(db, table) => (db, table),
    }
}

fn grant_key(name: &UserName, db: &str, table: &str) -> [Value; 4] {
    [text(&name.host), text(&name.user), text(db), text(table)]
}

fn grant_rows_of(
    tables: &Tables,
    tx: &mut Transaction,
    name: &UserName,
) -> Result<Vec<Vec<Value>>> {
    let prefix = [text(&name.host), text(&name.user)];
    let rows = tables.grants.scan_tx(
        tx,
        Bound::Unbounded,
        Bound::Unbounded,
        tarn_catalog::RowLock::Exclusive,
        WaitPolicy::Wait,
        usize::MAX,
    )?;
    Ok(rows.into_iter().filter(|r| r[..2] == prefix[..]).collect())
}

/// `SHOW GRANTS [FOR user]`: MySQL 8's lines, global first, then databases and
/// tables in name order.
fn show_grants(session: &mut Session, user: Option<&UserName>) -> Result<QueryResult> {
    let me = session.identity().clone();
    let name = match user {
        Some(u) => u.clone(),
        None => UserName {
            user: me.user.clone(),
            host: me.host.clone(),
        },
    };
    let own = name.user == me.user && name.host == me.host;
    if !own && !session.table_privileges_held(Privileges::SELECT, SYSTEM_DATABASE, USER_TABLE) {
        return Err(database_denied(&me, SYSTEM_DATABASE));
    }
    let engine = session.engine().clone();
    let exists = engine.accounts.read().exists(&name.user, &name.host);
    if !(exists || own && me.internal) {
        return Err(no_such_grant(&name));
    }
    let grants = engine.grants_of(&name.user, &name.host);
    let grants = if own && me.internal && !exists {
        Arc::new(Grants {
            global: Privileges::ALL_GLOBAL.union(Privileges::GRANT_OPTION),
            ..Default::default()
        })
    } else {
        grants
    };
    let account = backquoted_account(&name.user, &name.host);
    let line = |privileges: Privileges, on: String, all: Privileges| {
        let option = privileges.contains(Privileges::GRANT_OPTION);
        let privileges = privileges.without(Privileges::GRANT_OPTION);
        let list = if privileges == all {
            "ALL PRIVILEGES".to_string()
        } else if privileges.is_empty() {
            "USAGE".to_string()
        } else {
            privileges.names().join(", ")
        };
        let option = if option { " WITH GRANT OPTION" } else { "" };
        vec![text(&format!("GRANT {list} ON {on} TO {account}{option}"))]
    };
    let quote = crate::sysviews::quote_identifier;
    let mut rows = vec![line(grants.global, "*.*".into(), Privileges::ALL_GLOBAL)];
    let mut databases: Vec<_> = grants.databases.iter().collect();
    databases.sort();
    for (db, p) in databases {
        rows.push(line(*p, format!("{}.*", quote(db)), Privileges::ALL_OBJECT));
    }
    let mut tables: Vec<_> = grants
        .tables
        .iter()
        .flat_map(|(db, t)| t.iter().map(move |(t, p)| (db, t, p)))
        .collect();
    tables.sort();
    for (db, table, p) in tables {
        rows.push(line(
            *p,
            format!("{}.{}", quote(db), quote(table)),
            Privileges::ALL_OBJECT,
        ));
    }
    let column = format!("Grants for {}@{}", name.user, name.host);
    Ok(QueryResult::rows(
        vec![OutputColumn::new(&column, SqlType::TEXT, false)],
        rows,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_mysqls() {
        // MySQL: SELECT PASSWORD('password') (5.7) = *2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19
        assert_eq!(
            authentication_string(
                AuthPlugin::NativePassword,
                Some(&native_password_hash(b"password"))
            ),
            "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"
        );
        assert_eq!(AuthPlugin::NativePassword.hash(b""), None);
        let h = sha2_password_hash(b"pw");
        assert_eq!(
            parse_authentication_string(
                AuthPlugin::CachingSha2Password,
                &authentication_string(AuthPlugin::CachingSha2Password, Some(&h))
            ),
            Some(Some(h.to_vec()))
        );
    }

    #[test]
    fn host_patterns() {
        assert!(host_matches("%", "10.0.0.1"));
        assert!(host_matches("localhost", "127.0.0.1"));
        assert!(host_matches("localhost", "::1"));
        assert!(host_matches("LOCALHOST", "localhost"));
        assert!(host_matches("127.0.0.1", "localhost"));
        assert!(host_matches("10.0.%", "10.0.3.4"));
        assert!(!host_matches("10.0.%", "10.1.3.4"));
        assert!(host_matches("10.0.0._", "10.0.0.7"));
        assert!(!host_matches("10.0.0._", "10.0.0.17"));
        assert!(!host_matches("localhost", "10.0.0.1"));
        let mut hosts = vec!["%", "10.%", "10.0.%", "localhost", "h_st"];
        hosts.sort_by_key(|h| host_order(h));
        assert_eq!(hosts, ["localhost", "10.0.%", "10.%", "h_st", "%"]);
    }

    #[test]
    fn privilege_text_round_trips() {
        let p = Privileges::SELECT.union(Privileges::ALTER);
        assert_eq!(p.to_text(), "SELECT,ALTER");
        assert_eq!(Privileges::from_text("SELECT,ALTER"), p);
        assert_eq!(Privileges::ALL_GLOBAL.names().len(), 9);
    }
}
