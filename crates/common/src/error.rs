//! The error type shared by every layer.
//!
//! Operating errors (a bad setting, a full disk, a corrupt page) are values of
//! [`Error`] and are returned, never panicked on. Programmer errors (a broken
//! invariant) are assertions. Every variant carries what a user needs to act: the file,
//! the page, the setting, the expected and found values. Each maps to the MySQL error
//! number and SQLSTATE a MySQL client will be shown once the server exists.

use std::path::PathBuf;

use crate::ids::PageId;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting has a value outside its domain.
    #[error("invalid value '{value}' for setting '{name}': {reason}")]
    InvalidSetting {
        name: String,
        value: String,
        reason: String,
    },

    /// A configuration file that cannot be read as one (syntax, a value of the wrong
    /// type, an unknown table, a key set twice). The message has the line and key.
    #[error("configuration file '{}'{message}", path.display())]
    Config { path: PathBuf, message: String },

    /// A setting name nobody defined.
    #[error("unknown setting '{name}'")]
    UnknownSetting { name: String },

    /// An I/O path (buffered, direct, uring) cannot work on this machine or file.
    #[error("I/O path '{path}' is unavailable: {reason}")]
    IoPathUnavailable { path: &'static str, reason: String },

    /// A system call on a file failed.
    #[error("{operation} of '{}' failed: {source}", file.display())]
    Io {
        operation: &'static str,
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A page's stored checksum does not match its contents.
    #[error(
        "page {page_id} in '{}' is corrupt: crc32c stored in the page is {expected:#010x}, \
         computed from its contents {found:#010x}",
        file.display()
    )]
    PageChecksumMismatch {
        file: PathBuf,
        page_id: PageId,
        expected: u32,
        found: u32,
    },

    /// A page's checksum is valid but its header names another page: a misdirected
    /// write or a read from the wrong offset.
    #[error(
        "page {expected} in '{}' is corrupt: its header says it is page {found}",
        file.display()
    )]
    PageMisplaced {
        file: PathBuf,
        expected: PageId,
        found: PageId,
    },

    /// A page that was allocated but never written (all zero) was read as if it held data.
    #[error("page {page_id} in '{}' was never written", file.display())]
    PageNeverWritten { file: PathBuf, page_id: PageId },

    /// A read past the end of a file's allocated extents.
    #[error("page {page_id} is beyond the end of '{}' ({page_count} pages)", file.display())]
    PageOutOfRange {
        file: PathBuf,
        page_id: PageId,
        page_count: u64,
    },

    /// The data directory is missing, unreadable, of another format, or unusable.
    #[error("data directory '{}': {reason}", path.display())]
    DataDir { path: PathBuf, reason: String },

    /// A bounded resource is exhausted (every buffer pool frame pinned, a queue full).
    #[error("out of resources: {0}")]
    OutOfResources(String),

    /// The component was shut down while the request was in flight.
    #[error("{0} is shut down")]
    ShutDown(&'static str),

    /// A page's checksum is valid but its contents break the structure its type
    /// promises (a slot pointing outside the page, keys out of order, a bad link).
    #[error("page {page_id} in '{}' is corrupt: {reason}", file.display())]
    PageCorrupt {
        file: PathBuf,
        page_id: PageId,
        reason: String,
    },

    /// Stored data that is not on one page, or whose page is intact, is inconsistent:
    /// a row whose bytes do not decode, a secondary entry without its row.
    #[error("corrupt data: {0}")]
    CorruptData(String),

    /// A table handle was used after its definition changed (an index added or
    /// dropped) or the table was dropped; the caller opens the table again.
    #[error("Table definition has changed, please retry transaction: {0}")]
    TableDefinitionChanged(String),

    /// An insert would give a unique index two entries with the same key.
    #[error("Duplicate entry '{key}' for key '{index}'")]
    DuplicateKey { index: String, key: String },

    /// A value does not fit its column's type (a number out of range, a bad date).
    #[error("Out of range value for column '{column}': {reason}")]
    ValueOutOfRange { column: String, reason: String },

    /// A string or binary value is longer than its column allows.
    #[error("Data too long for column '{column}'")]
    DataTooLong { column: String },

    /// A value cannot be converted to its column's type.
    #[error("Incorrect value for column '{column}': {reason}")]
    IncorrectValue { column: String, reason: String },

    /// NULL given for a NOT NULL column.
    #[error("Column '{column}' cannot be null")]
    NullNotAllowed { column: String },

    /// A row or key exceeds what the storage format can hold.
    #[error("Row size too large: {0}")]
    RowTooLarge(String),

    /// A key is longer than an index may hold.
    #[error("Specified key was too long; max key length is {max_bytes} bytes")]
    KeyTooLong { max_bytes: usize },

    /// Catalog objects: a name that does not exist or already exists.
    #[error("Unknown database '{0}'")]
    UnknownDatabase(String),
    #[error("Can't create database '{0}'; database exists")]
    DatabaseExists(String),
    #[error("Table '{0}' doesn't exist")]
    UnknownTable(String),
    #[error("Table '{0}' already exists")]
    TableExists(String),
    #[error("Unknown column '{0}'")]
    UnknownColumn(String),
    #[error("Key '{0}' doesn't exist")]
    UnknownIndex(String),
    #[error("Duplicate key name '{0}'")]
    IndexExists(String),
    /// A definition the storage layer rejects (a bad type, no columns, …).
    #[error("Invalid definition: {0}")]
    InvalidDefinition(String),

    /// A lock request waited `lock_wait_timeout` seconds. Only the statement is rolled
    /// back (as InnoDB does by default).
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,

    /// The statement was stopped (KILL QUERY, or its client disconnected) while it
    /// ran or waited for a lock. Only the statement is rolled back.
    #[error("Query execution was interrupted")]
    QueryInterrupted,

    /// The statement ran past its `max_execution_time` deadline, while it ran or
    /// waited for a lock. Only the statement is rolled back.
    #[error("Query execution was interrupted, maximum statement execution time exceeded")]
    MaxExecutionTimeExceeded,

    /// The transaction was chosen as a deadlock victim and has been rolled back.
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,

    /// A NOWAIT locking read found a row locked by another transaction.
    #[error(
        "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set."
    )]
    LockNowait,

    /// The engine stopped accepting writes after a failure that a retry could turn
    /// into silent data loss (a failed fsync of the redo log or a data file).
    #[error("writes are stopped: {0}")]
    WritesStopped(String),

    /// A write in a transaction started READ ONLY.
    #[error("Cannot execute statement in a READ ONLY transaction.")]
    ReadOnlyTransaction,

    /// ROLLBACK TO or RELEASE of a savepoint that does not exist.
    #[error("SAVEPOINT {0} does not exist")]
    UnknownSavepoint(String),

    /// An error of the SQL layer (a syntax error, an unknown function, a subquery that
    /// returned two rows, ...) with the MySQL number and SQLSTATE it reports.
    #[error("{message}")]
    Sql {
        code: u16,
        sqlstate: &'static str,
        message: String,
    },
}

impl Error {
    /// Wraps an `std::io::Error` from an operation on `file`.
    pub fn io(operation: &'static str, file: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            operation,
            file: file.into(),
            source,
        }
    }

    /// The MySQL error number a client will see.
    pub fn mysql_code(&self) -> u16 {
        match self {
            Error::InvalidSetting { .. } => 1231, // ER_WRONG_VALUE_FOR_VAR
            Error::UnknownSetting { .. } => 1193, // ER_UNKNOWN_SYSTEM_VARIABLE
            Error::IoPathUnavailable { .. } | Error::Config { .. } => 1231,
            Error::Io { source, .. } if source.raw_os_error() == Some(libc_enospc()) => 1021, // ER_DISK_FULL
            Error::Io { operation, .. } if operation.contains("write") => 1026, // ER_ERROR_ON_WRITE
            Error::Io { .. } => 1024,                                           // ER_ERROR_ON_READ
            Error::PageChecksumMismatch { .. }
            | Error::PageMisplaced { .. }
            | Error::PageNeverWritten { .. }
            | Error::PageOutOfRange { .. } => 3000, // ER_FILE_CORRUPT
            Error::DataDir { .. } => 1004,    // ER_CANT_CREATE_FILE
            Error::OutOfResources(_) => 1041, // ER_OUT_OF_RESOURCES
            Error::ShutDown(_) => 1053,       // ER_SERVER_SHUTDOWN
            Error::PageCorrupt { .. } | Error::CorruptData(_) => 3000, // ER_FILE_CORRUPT
            Error::TableDefinitionChanged(_) => 1412, // ER_TABLE_DEF_CHANGED
            Error::DuplicateKey { .. } => 1062, // ER_DUP_ENTRY
            Error::ValueOutOfRange { .. } => 1264, // ER_WARN_DATA_OUT_OF_RANGE
            Error::DataTooLong { .. } => 1406, // ER_DATA_TOO_LONG
            Error::IncorrectValue { .. } => 1366, // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
            Error::NullNotAllowed { .. } => 1048, // ER_BAD_NULL_ERROR
            Error::RowTooLarge(_) => 1118,    // ER_TOO_BIG_ROWSIZE
            Error::KeyTooLong { .. } => 1071, // ER_TOO_LONG_KEY
            Error::UnknownDatabase(_) => 1049, // ER_BAD_DB_ERROR
            Error::DatabaseExists(_) => 1007, // ER_DB_CREATE_EXISTS
            Error::UnknownTable(_) => 1146,   // ER_NO_SUCH_TABLE
            Error::TableExists(_) => 1050,    // ER_TABLE_EXISTS_ERROR
            Error::UnknownColumn(_) => 1054,  // ER_BAD_FIELD_ERROR
            Error::UnknownIndex(_) => 1091,   // ER_CANT_DROP_FIELD_OR_KEY
            Error::IndexExists(_) => 1061,    // ER_DUP_KEYNAME
            Error::InvalidDefinition(_) => 1064, // ER_PARSE_ERROR
            Error::LockWaitTimeout => 1205,   // ER_LOCK_WAIT_TIMEOUT
            Error::QueryInterrupted => 1317,  // ER_QUERY_INTERRUPTED
            Error::MaxExecutionTimeExceeded => 3024, // ER_QUERY_TIMEOUT
            Error::Deadlock => 1213,          // ER_LOCK_DEADLOCK
            Error::LockNowait => 3572,        // ER_LOCK_NOWAIT
            Error::WritesStopped(_) => 1030,  // ER_GET_ERRNO
            Error::ReadOnlyTransaction => 1792, // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
            Error::UnknownSavepoint(_) => 1305, // ER_SP_DOES_NOT_EXIST
            Error::Sql { code, .. } => *code,
        }
    }

    /// The SQLSTATE a client will see.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            Error::InvalidSetting { .. }
            | Error::IoPathUnavailable { .. }
            | Error::Config { .. } => "42000",
            Error::ShutDown(_) => "08S01",
            Error::DuplicateKey { .. } | Error::NullNotAllowed { .. } => "23000",
            Error::ValueOutOfRange { .. } => "22003",
            Error::DataTooLong { .. } => "22001",
            Error::RowTooLarge(_)
            | Error::KeyTooLong { .. }
            | Error::UnknownDatabase(_)
            | Error::UnknownIndex(_)
            | Error::IndexExists(_)
            | Error::InvalidDefinition(_) => "42000",
            Error::UnknownTable(_) => "42S02",
            Error::TableExists(_) => "42S01",
            Error::UnknownColumn(_) => "42S22",
            Error::Deadlock => "40001",
            Error::QueryInterrupted => "70100",
            Error::MaxExecutionTimeExceeded => "HY000",
            Error::ReadOnlyTransaction => "25006",
            Error::UnknownSavepoint(_) => "42000",
            Error::Sql { sqlstate, .. } => sqlstate,
            _ => "HY000",
        }
    }

    /// An SQL-layer error with its MySQL number, SQLSTATE and message.
    pub fn sql(code: u16, sqlstate: &'static str, message: impl Into<String>) -> Self {
        Error::Sql {
            code,
            sqlstate,
            message: message.into(),
        }
    }

    /// True for errors that mean stored data is damaged.
    pub fn is_corruption(&self) -> bool {
        self.mysql_code() == 3000
    }
}

/// ENOSPC without a libc dependency in this crate: the value is the same on every
/// Linux architecture Tarn builds for.
const fn libc_enospc() -> i32 {
    28
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FileId, PageNo};

    #[test]
    fn errors_map_to_mysql_codes_and_name_what_went_wrong() {
        let e = Error::PageChecksumMismatch {
            file: "/d/000001.tdf".into(),
            page_id: PageId::new(FileId(1), PageNo(9)),
            expected: 0xdead_beef,
            found: 0x1234_5678,
        };
        assert_eq!((e.mysql_code(), e.sqlstate()), (3000, "HY000"));
        let msg = e.to_string();
        assert!(
            msg.contains("/d/000001.tdf") && msg.contains("1:9"),
            "{msg}"
        );
        assert!(
            msg.contains("0xdeadbeef") && msg.contains("0x12345678"),
            "{msg}"
        );

        let full = Error::io(
            "write",
            "/d/x",
            std::io::Error::from_raw_os_error(libc_enospc()),
        );
        assert_eq!(full.mysql_code(), 1021);
        let e = Error::InvalidSetting {
            name: "page_size".into(),
            value: "3000".into(),
            reason: "x".into(),
        };
        assert_eq!((e.mysql_code(), e.sqlstate()), (1231, "42000"));
    }
}
