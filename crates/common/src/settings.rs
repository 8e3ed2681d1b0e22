//! User-visible settings: names, defaults, domains and validation.
//!
//! Every engine setting is listed once in [`SETTINGS`] with its help text, and parsed
//! and checked in [`Settings::set`]. The TOML file, the command line (`--set
//! name=value`) and `SET GLOBAL` all go through `set`, so a value is validated the
//! same way wherever it comes from (the order in which they apply is in
//! [`crate::config`]). A bad value is an [`Error::InvalidSetting`] naming the
//! setting, the value and the allowed domain, and leaves the settings unchanged.
//! Settings marked [`SettingSpec::live`] may also change while the engine runs.
//!
//! Values that hold sizes accept a suffix: `16K`, `128M`, `4G` (powers of 1024).

use std::fmt;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::limits;

/// How page I/O reaches the device (technique S5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IoMethod {
    /// io_uring if the kernel allows it, else O_DIRECT, else buffered; logged at start.
    Auto,
    /// `pread`/`pwrite` through the OS page cache.
    Buffered,
    /// `O_DIRECT` with aligned buffers: no double buffering in the page cache.
    Direct,
    /// io_uring on an `O_DIRECT` file: batched, truly asynchronous submission.
    Uring,
}

impl IoMethod {
    pub const CONCRETE: [IoMethod; 3] = [IoMethod::Buffered, IoMethod::Direct, IoMethod::Uring];

    pub fn name(self) -> &'static str {
        match self {
            IoMethod::Auto => "auto",
            IoMethod::Buffered => "buffered",
            IoMethod::Direct => "direct",
            IoMethod::Uring => "uring",
        }
    }

    pub fn parse(value: &str) -> Option<IoMethod> {
        match value.to_ascii_lowercase().as_str() {
            "auto" => Some(IoMethod::Auto),
            "buffered" => Some(IoMethod::Buffered),
            "direct" => Some(IoMethod::Direct),
            "uring" | "io_uring" => Some(IoMethod::Uring),
            _ => None,
        }
    }
}

impl fmt::Display for IoMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the redo log lives and how a commit becomes durable (technique S3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogDevice {
    /// A log file made durable with `fdatasync` (the SSD case).
    Fsync,
    /// A log file opened with `O_DSYNC` (plus `O_DIRECT` where the file system allows
    /// it): every write is durable when it returns.
    Dsync,
    /// A memory-mapped log on a DAX or tmpfs path: a record is durable once stored and
    /// its cache lines flushed, with no fsync. tmpfs only emulates persistent memory.
    Pmem,
    /// No durability at all. For measurement only: unsafe.
    None,
}

impl LogDevice {
    pub const ALL: [LogDevice; 4] = [
        LogDevice::Fsync,
        LogDevice::Dsync,
        LogDevice::Pmem,
        LogDevice::None,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LogDevice::Fsync => "fsync",
            LogDevice::Dsync => "dsync",
            LogDevice::Pmem => "pmem",
            LogDevice::None => "none",
        }
    }

    pub fn parse(value: &str) -> Option<LogDevice> {
        LogDevice::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(value))
    }
}

impl fmt::Display for LogDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the lock manager picks which waiter to grant next (technique S3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LockScheduling {
    /// Arrival order.
    Fifo,
    /// Contention-aware: the waiter the most transactions depend on goes first.
    Cats,
}

impl LockScheduling {
    pub const ALL: [LockScheduling; 2] = [LockScheduling::Fifo, LockScheduling::Cats];

    pub fn name(self) -> &'static str {
        match self {
            LockScheduling::Fifo => "fifo",
            LockScheduling::Cats => "cats",
        }
    }

    pub fn parse(value: &str) -> Option<LockScheduling> {
        LockScheduling::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(value))
    }
}

impl fmt::Display for LockScheduling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// SQL isolation levels, with InnoDB's semantics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum IsolationLevel {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl IsolationLevel {
    pub const ALL: [IsolationLevel; 4] = [
        IsolationLevel::ReadUncommitted,
        IsolationLevel::ReadCommitted,
        IsolationLevel::RepeatableRead,
        IsolationLevel::Serializable,
    ];

    /// MySQL's spelling, as `@@transaction_isolation` shows it.
    pub fn name(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "READ-UNCOMMITTED",
            IsolationLevel::ReadCommitted => "READ-COMMITTED",
            IsolationLevel::RepeatableRead => "REPEATABLE-READ",
            IsolationLevel::Serializable => "SERIALIZABLE",
        }
    }

    /// Accepts `REPEATABLE-READ`, `repeatable read` or `REPEATABLE_READ`.
    pub fn parse(value: &str) -> Option<IsolationLevel> {
        let norm: String = value
            .trim()
            .chars()
            .map(|c| {
                if c == ' ' || c == '_' {
                    '-'
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect();
        IsolationLevel::ALL.into_iter().find(|l| l.name() == norm)
    }
}

impl fmt::Display for IsolationLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One setting's name and documentation.
pub struct SettingSpec {
    pub name: &'static str,
    pub help: &'static str,
    /// `SET GLOBAL` may change it while the engine runs (`Storage::set_live_setting`);
    /// the others take effect at start only.
    pub live: bool,
}

/// Every setting, in the order `tarn settings` prints them.
pub const SETTINGS: &[SettingSpec] = &[
    SettingSpec {
        name: "data_dir",
        live: false,
        help: "Directory holding the data files; created on first use.",
    },
    SettingSpec {
        name: "page_size",
        live: false,
        help: "Page size: 4K, 8K, 16K, 32K or 64K. Fixed when the data directory is created.",
    },
    SettingSpec {
        name: "io_method",
        live: false,
        help: "Page I/O path: auto, buffered, direct or uring (S5).",
    },
    SettingSpec {
        name: "io_uring_queue_depth",
        live: false,
        help: "Entries in each asynchronous io_uring ring (1 to 4096).",
    },
    SettingSpec {
        name: "io_threads",
        live: false,
        help: "Threads serving asynchronous reads and writes on the buffered and direct paths (1 to 64).",
    },
    SettingSpec {
        name: "buffer_pool_size",
        live: false,
        help: "Bytes of page frames in the buffer pool.",
    },
    SettingSpec {
        name: "buffer_pool_instances",
        live: false,
        help: "Buffer pool instances, each with its own latches and lists (1 to 64) (S4).",
    },
    SettingSpec {
        name: "buffer_pool_old_pct",
        live: true,
        help: "Share of the LRU list kept as the old sublist where new pages enter (5 to 95).",
    },
    SettingSpec {
        name: "buffer_pool_old_blocks_time",
        live: true,
        help: "Milliseconds a page must stay in the old sublist before an access promotes it.",
    },
    SettingSpec {
        name: "buffer_pool_free_target_pct",
        live: false,
        help: "Share of each instance's frames the background flusher keeps free (0 to 50).",
    },
    SettingSpec {
        name: "buffer_pool_optimistic_reads",
        live: false,
        help: "Read hot pages under an optimistic version latch instead of a shared latch (on/off).",
    },
    SettingSpec {
        name: "prefetch_in_flight_max",
        live: false,
        help: "Prefetch reads in flight at once across the buffer pool (1 to 4096).",
    },
    SettingSpec {
        name: "scan_threads",
        live: true,
        help: "Workers of a parallel full scan; 0 means one per core (S1).",
    },
    SettingSpec {
        name: "scan_readahead_pages",
        live: true,
        help: "Leaves each scan worker keeps in flight ahead of itself (0 to 1024) (S1).",
    },
    SettingSpec {
        name: "secondary_prefetch",
        live: true,
        help: "Secondary-index range scans prefetch the rows of this many entries ahead: 0 (off) to 1024, or adaptive (S2).",
    },
    SettingSpec {
        name: "bulk_fill_factor",
        live: true,
        help: "Percent of each B+tree node a bulk load or index build fills (50 to 100).",
    },
    SettingSpec {
        name: "log_device",
        live: false,
        help: "Redo log device: fsync (fdatasync per group commit), dsync (O_DSYNC writes), \
               pmem (memory-mapped file on DAX or /dev/shm; tmpfs only emulates persistent \
               memory) or none (UNSAFE: no durability, for measurement only) (S3).",
    },
    SettingSpec {
        name: "log_dir",
        live: false,
        help: "Directory of the redo log files; empty means the data directory. Point it at \
               /dev/shm or a DAX mount for log_device = pmem.",
    },
    SettingSpec {
        name: "log_file_size",
        live: false,
        help: "Size of each redo log file (1M to 64G).",
    },
    SettingSpec {
        name: "log_files",
        live: false,
        help: "Redo log files in the ring (1 to 64). Fixed when the log is created.",
    },
    SettingSpec {
        name: "log_buffer_size",
        live: false,
        help: "In-memory log buffer that committers copy records into (256K to 1G).",
    },
    SettingSpec {
        name: "flush_log_at_commit",
        live: true,
        help: "1: a commit waits until its log is durable. 2: written to the OS at commit, \
               made durable about once a second. 0: written and made durable about once a \
               second (InnoDB's innodb_flush_log_at_trx_commit).",
    },
    SettingSpec {
        name: "doublewrite",
        live: false,
        help: "Write each page to the doublewrite file and sync it before writing it in \
               place, so recovery can repair torn pages (on or off).",
    },
    SettingSpec {
        name: "lock_scheduling",
        live: true,
        help: "Which lock waiter is granted first: fifo (arrival order) or cats \
               (contention-aware: the waiter most transactions depend on) (S3).",
    },
    SettingSpec {
        name: "lock_wait_timeout",
        live: true,
        help: "Seconds a row lock request waits before error 1205.",
    },
    SettingSpec {
        name: "transaction_isolation",
        live: false,
        help: "Default isolation level: READ-UNCOMMITTED, READ-COMMITTED, REPEATABLE-READ \
               or SERIALIZABLE.",
    },
    SettingSpec {
        name: "latch_accounting",
        live: true,
        help: "Count acquisitions, contended acquisitions and wait time per latch (on/off) (S4).",
    },
];

/// MySQL's names for engine settings: (MySQL variable, setting). The TOML file and
/// the command line accept either name; `SET GLOBAL` of either changes the setting.
pub const SETTING_ALIASES: &[(&str, &str)] = &[
    ("datadir", "data_dir"),
    ("innodb_buffer_pool_instances", "buffer_pool_instances"),
    ("innodb_buffer_pool_size", "buffer_pool_size"),
    ("innodb_doublewrite", "doublewrite"),
    ("innodb_flush_log_at_trx_commit", "flush_log_at_commit"),
    ("innodb_lock_wait_timeout", "lock_wait_timeout"),
    ("tx_isolation", "transaction_isolation"),
];

/// The canonical setting `name` stands for (a setting's own name or an alias of
/// [`SETTING_ALIASES`], any case); None if it names no setting.
pub fn setting_name(name: &str) -> Option<&'static str> {
    let lower = name.trim().to_ascii_lowercase();
    SETTINGS
        .iter()
        .map(|s| s.name)
        .find(|n| *n == lower)
        .or_else(|| {
            SETTING_ALIASES
                .iter()
                .find(|(alias, _)| *alias == lower)
                .map(|(_, setting)| *setting)
        })
}

/// The spec of setting `name` (canonical name).
pub fn setting_spec(name: &str) -> Option<&'static SettingSpec> {
    SETTINGS.iter().find(|s| s.name == name)
}

/// The engine's settings. Fields carry their units; names match [`SETTINGS`].
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Settings {
    pub data_dir: PathBuf,
    pub page_size_bytes: u32,
    pub io_method: IoMethod,
    pub io_uring_queue_depth: u32,
    pub io_threads: u32,
    pub buffer_pool_size_bytes: u64,
    pub buffer_pool_instances: u32,
    pub buffer_pool_old_pct: u32,
    pub buffer_pool_old_blocks_time_ms: u32,
    pub buffer_pool_free_target_pct: u32,
    pub buffer_pool_optimistic_reads: bool,
    pub prefetch_in_flight_max: u32,
    pub scan_threads: u32,
    pub scan_readahead_pages: u32,
    pub secondary_prefetch: PrefetchUnit,
    pub bulk_fill_factor_pct: u32,
    pub latch_accounting: bool,
    pub log_device: LogDevice,
    /// Empty: the data directory.
    pub log_dir: PathBuf,
    pub log_file_size_bytes: u64,
    pub log_files: u32,
    pub log_buffer_size_bytes: u64,
    pub flush_log_at_commit: u32,
    pub doublewrite: bool,
    pub lock_scheduling: LockScheduling,
    pub lock_wait_timeout_s: u32,
    pub transaction_isolation: IsolationLevel,
}

/// How far ahead a secondary-index range scan prefetches (S2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum PrefetchUnit {
    /// A fixed number of entries; 0 turns prefetch off.
    Fixed(u32),
    /// Starts small and grows while the consumer still waits for reads.
    Adaptive,
}

impl PrefetchUnit {
    pub fn parse(value: &str) -> std::result::Result<PrefetchUnit, String> {
        if value.eq_ignore_ascii_case("adaptive") {
            return Ok(PrefetchUnit::Adaptive);
        }
        parse_in_range(value, 0, limits::PREFETCH_UNIT_MAX)
            .map(PrefetchUnit::Fixed)
            .map_err(|_| format!("must be adaptive or 0 to {}", limits::PREFETCH_UNIT_MAX))
    }
}

impl fmt::Display for PrefetchUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PrefetchUnit::Fixed(n) => write!(f, "{n}"),
            PrefetchUnit::Adaptive => f.write_str("adaptive"),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            data_dir: PathBuf::from("tarn-data"),
            page_size_bytes: limits::PAGE_SIZE_DEFAULT_BYTES,
            io_method: IoMethod::Auto,
            io_uring_queue_depth: limits::IO_URING_QUEUE_DEPTH_DEFAULT,
            io_threads: limits::IO_THREADS_DEFAULT,
            buffer_pool_size_bytes: limits::BUFFER_POOL_SIZE_DEFAULT_BYTES,
            buffer_pool_instances: limits::BUFFER_POOL_INSTANCES_DEFAULT,
            buffer_pool_old_pct: limits::LRU_OLD_PCT_DEFAULT,
            buffer_pool_old_blocks_time_ms: limits::LRU_OLD_BLOCKS_TIME_MS_DEFAULT,
            buffer_pool_free_target_pct: limits::FREE_TARGET_PCT_DEFAULT,
            buffer_pool_optimistic_reads: true,
            prefetch_in_flight_max: limits::PREFETCH_IN_FLIGHT_DEFAULT,
            scan_threads: 0,
            scan_readahead_pages: limits::SCAN_READAHEAD_PAGES_DEFAULT,
            secondary_prefetch: PrefetchUnit::Adaptive,
            bulk_fill_factor_pct: limits::BULK_FILL_FACTOR_PCT_DEFAULT,
            latch_accounting: true,
            log_device: LogDevice::Fsync,
            log_dir: PathBuf::new(),
            log_file_size_bytes: limits::LOG_FILE_SIZE_DEFAULT_BYTES,
            log_files: limits::LOG_FILES_DEFAULT,
            log_buffer_size_bytes: limits::LOG_BUFFER_SIZE_DEFAULT_BYTES,
            flush_log_at_commit: 1,
            doublewrite: true,
            lock_scheduling: LockScheduling::Cats,
            lock_wait_timeout_s: limits::LOCK_WAIT_TIMEOUT_S_DEFAULT,
            transaction_isolation: IsolationLevel::RepeatableRead,
        }
    }
}

impl Settings {
    /// Sets one setting from its text form. On error nothing changes.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let value = value.trim();
        let bad = |reason: String| Error::InvalidSetting {
            name: name.to_string(),
            value: value.to_string(),
            reason,
        };
        match name {
            "data_dir" => {
                if value.is_empty() {
                    return Err(bad("must not be empty".into()));
                }
                self.data_dir = PathBuf::from(value);
            }
            "page_size" => {
                let bytes = parse_size_bytes(value).map_err(&bad)?;
                self.page_size_bytes = u32::try_from(bytes)
                    .ok()
                    .filter(|b| limits::PAGE_SIZES_BYTES.contains(b))
                    .ok_or_else(|| bad("must be one of 4K, 8K, 16K, 32K or 64K".into()))?;
            }
            "io_method" => {
                self.io_method = IoMethod::parse(value)
                    .ok_or_else(|| bad("must be auto, buffered, direct or uring".into()))?;
            }
            "io_uring_queue_depth" => {
                self.io_uring_queue_depth = parse_in_range(
                    value,
                    limits::IO_URING_QUEUE_DEPTH_MIN,
                    limits::IO_URING_QUEUE_DEPTH_MAX,
                )
                .map_err(&bad)?;
            }
            "io_threads" => {
                self.io_threads =
                    parse_in_range(value, limits::IO_THREADS_MIN, limits::IO_THREADS_MAX)
                        .map_err(&bad)?;
            }
            "buffer_pool_size" => {
                let bytes = parse_size_bytes(value).map_err(&bad)?;
                if bytes > limits::BUFFER_POOL_SIZE_MAX_BYTES {
                    return Err(bad(format!(
                        "must be at most {} bytes",
                        limits::BUFFER_POOL_SIZE_MAX_BYTES
                    )));
                }
                self.buffer_pool_size_bytes = bytes;
            }
            "buffer_pool_instances" => {
                self.buffer_pool_instances = parse_in_range(
                    value,
                    limits::BUFFER_POOL_INSTANCES_MIN,
                    limits::BUFFER_POOL_INSTANCES_MAX,
                )
                .map_err(&bad)?;
            }
            "buffer_pool_old_pct" => {
                self.buffer_pool_old_pct =
                    parse_in_range(value, limits::LRU_OLD_PCT_MIN, limits::LRU_OLD_PCT_MAX)
                        .map_err(&bad)?;
            }
            "buffer_pool_old_blocks_time" => {
                self.buffer_pool_old_blocks_time_ms =
                    parse_in_range(value, 0, limits::LRU_OLD_BLOCKS_TIME_MS_MAX).map_err(&bad)?;
            }
            "buffer_pool_free_target_pct" => {
                self.buffer_pool_free_target_pct =
                    parse_in_range(value, 0, limits::FREE_TARGET_PCT_MAX).map_err(&bad)?;
            }
            "buffer_pool_optimistic_reads" => {
                self.buffer_pool_optimistic_reads = parse_bool(value).map_err(&bad)?;
            }
            "prefetch_in_flight_max" => {
                self.prefetch_in_flight_max = parse_in_range(
                    value,
                    limits::PREFETCH_IN_FLIGHT_MIN,
                    limits::PREFETCH_IN_FLIGHT_MAX,
                )
                .map_err(&bad)?;
            }
            "scan_threads" => {
                self.scan_threads =
                    parse_in_range(value, 0, limits::SCAN_THREADS_MAX).map_err(&bad)?;
            }
            "scan_readahead_pages" => {
                self.scan_readahead_pages =
                    parse_in_range(value, 0, limits::SCAN_READAHEAD_PAGES_MAX).map_err(&bad)?;
            }
            "secondary_prefetch" => {
                self.secondary_prefetch = PrefetchUnit::parse(value).map_err(&bad)?;
            }
            "bulk_fill_factor" => {
                self.bulk_fill_factor_pct = parse_in_range(
                    value,
                    limits::BULK_FILL_FACTOR_PCT_MIN,
                    limits::BULK_FILL_FACTOR_PCT_MAX,
                )
                .map_err(&bad)?;
            }
            "latch_accounting" => {
                self.latch_accounting = parse_bool(value).map_err(&bad)?;
            }
            "log_device" => {
                self.log_device = LogDevice::parse(value)
                    .ok_or_else(|| bad("must be fsync, dsync, pmem or none".into()))?;
            }
            "log_dir" => self.log_dir = PathBuf::from(value),
            "log_file_size" => {
                self.log_file_size_bytes = parse_size_in_range(
                    value,
                    limits::LOG_FILE_SIZE_MIN_BYTES,
                    limits::LOG_FILE_SIZE_MAX_BYTES,
                )
                .map_err(&bad)?;
            }
            "log_files" => {
                self.log_files =
                    parse_in_range(value, limits::LOG_FILES_MIN, limits::LOG_FILES_MAX)
                        .map_err(&bad)?;
            }
            "log_buffer_size" => {
                self.log_buffer_size_bytes = parse_size_in_range(
                    value,
                    limits::LOG_BUFFER_SIZE_MIN_BYTES,
                    limits::LOG_BUFFER_SIZE_MAX_BYTES,
                )
                .map_err(&bad)?;
            }
            "flush_log_at_commit" => {
                self.flush_log_at_commit = parse_in_range(value, 0, 2).map_err(&bad)?;
            }
            "doublewrite" => self.doublewrite = parse_bool(value).map_err(&bad)?,
            "lock_scheduling" => {
                self.lock_scheduling = LockScheduling::parse(value)
                    .ok_or_else(|| bad("must be fifo or cats".into()))?;
            }
            "lock_wait_timeout" => {
                self.lock_wait_timeout_s = parse_in_range(
                    value,
                    limits::LOCK_WAIT_TIMEOUT_S_MIN,
                    limits::LOCK_WAIT_TIMEOUT_S_MAX,
                )
                .map_err(&bad)?;
            }
            "transaction_isolation" | "tx_isolation" => {
                self.transaction_isolation = IsolationLevel::parse(value).ok_or_else(|| {
                    bad(
                        "must be READ-UNCOMMITTED, READ-COMMITTED, REPEATABLE-READ or \
                         SERIALIZABLE"
                            .into(),
                    )
                })?;
            }
            _ => {
                return Err(Error::UnknownSetting {
                    name: name.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Applies `name=value` assignments in order; stops at the first bad one.
    pub fn apply_assignments<'a>(
        &mut self,
        assignments: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        for assignment in assignments {
            let (name, value) = split_assignment(assignment)?;
            self.set(name.trim(), value)?;
        }
        Ok(())
    }

    /// The current value of a setting in the text form `set` accepts.
    pub fn get(&self, name: &str) -> Result<String> {
        let on_off = |b: bool| if b { "on" } else { "off" }.to_string();
        Ok(match name {
            "data_dir" => self.data_dir.display().to_string(),
            "page_size" => self.page_size_bytes.to_string(),
            "io_method" => self.io_method.to_string(),
            "io_uring_queue_depth" => self.io_uring_queue_depth.to_string(),
            "io_threads" => self.io_threads.to_string(),
            "buffer_pool_size" => self.buffer_pool_size_bytes.to_string(),
            "buffer_pool_instances" => self.buffer_pool_instances.to_string(),
            "buffer_pool_old_pct" => self.buffer_pool_old_pct.to_string(),
            "buffer_pool_old_blocks_time" => self.buffer_pool_old_blocks_time_ms.to_string(),
            "buffer_pool_free_target_pct" => self.buffer_pool_free_target_pct.to_string(),
            "buffer_pool_optimistic_reads" => on_off(self.buffer_pool_optimistic_reads),
            "prefetch_in_flight_max" => self.prefetch_in_flight_max.to_string(),
            "scan_threads" => self.scan_threads.to_string(),
            "scan_readahead_pages" => self.scan_readahead_pages.to_string(),
            "secondary_prefetch" => self.secondary_prefetch.to_string(),
            "bulk_fill_factor" => self.bulk_fill_factor_pct.to_string(),
            "latch_accounting" => on_off(self.latch_accounting),
            "log_device" => self.log_device.to_string(),
            "log_dir" => self.log_dir.display().to_string(),
            "log_file_size" => self.log_file_size_bytes.to_string(),
            "log_files" => self.log_files.to_string(),
            "log_buffer_size" => self.log_buffer_size_bytes.to_string(),
            "flush_log_at_commit" => self.flush_log_at_commit.to_string(),
            "doublewrite" => on_off(self.doublewrite),
            "lock_scheduling" => self.lock_scheduling.to_string(),
            "lock_wait_timeout" => self.lock_wait_timeout_s.to_string(),
            "transaction_isolation" | "tx_isolation" => self.transaction_isolation.to_string(),
            _ => {
                return Err(Error::UnknownSetting {
                    name: name.to_string(),
                });
            }
        })
    }

    /// Checks what no single setting can check alone. Call before starting the engine.
    pub fn validate(&self) -> Result<()> {
        buffer_pool_frames_per_instance(
            self.buffer_pool_size_bytes,
            self.page_size_bytes,
            self.buffer_pool_instances,
        )
        .map(|_| ())
    }
}

/// Frames per buffer-pool instance for a pool of `size_bytes` split into `instances`,
/// or an error naming the smallest valid `buffer_pool_size`.
pub fn buffer_pool_frames_per_instance(
    size_bytes: u64,
    page_size_bytes: u32,
    instances: u32,
) -> Result<usize> {
    let frames = size_bytes / u64::from(page_size_bytes) / u64::from(instances);
    let min = limits::BUFFER_POOL_FRAMES_PER_INSTANCE_MIN as u64;
    let bad = |reason: String| Error::InvalidSetting {
        name: "buffer_pool_size".into(),
        value: size_bytes.to_string(),
        reason,
    };
    if frames < min {
        let min_bytes = min * u64::from(page_size_bytes) * u64::from(instances);
        return Err(bad(format!(
            "gives {frames} frames per instance; with page_size {page_size_bytes} and \
             {instances} instances the minimum is {min} frames, i.e. buffer_pool_size >= {min_bytes}"
        )));
    }
    if frames > limits::BUFFER_POOL_FRAMES_PER_INSTANCE_MAX as u64 {
        return Err(bad(
            "too many frames per instance; raise buffer_pool_instances".into(),
        ));
    }
    Ok(frames as usize)
}

/// The directory of the redo log files.
impl Settings {
    pub fn log_dir_path(&self) -> PathBuf {
        if self.log_dir.as_os_str().is_empty() {
            self.data_dir.clone()
        } else {
            self.log_dir.clone()
        }
    }
}

/// `name=value` as its two halves (not trimmed); an error naming the text without `=`.
pub fn split_assignment(assignment: &str) -> Result<(&str, &str)> {
    assignment
        .split_once('=')
        .ok_or_else(|| Error::InvalidSetting {
            name: assignment.to_string(),
            value: String::new(),
            reason: "expected name=value".into(),
        })
}

fn parse_size_in_range(value: &str, min: u64, max: u64) -> std::result::Result<u64, String> {
    let bytes = parse_size_bytes(value)?;
    if (min..=max).contains(&bytes) {
        Ok(bytes)
    } else {
        Err(format!("must be a size from {min} to {max} bytes"))
    }
}

/// Parses `16384`, `16K`, `128M`, `4G` or `1T` (powers of 1024).
pub fn parse_size_bytes(value: &str) -> std::result::Result<u64, String> {
    let value = value.trim();
    let (digits, shift) = match value.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&value[..value.len() - 1], 10),
        Some('M') => (&value[..value.len() - 1], 20),
        Some('G') => (&value[..value.len() - 1], 30),
        Some('T') => (&value[..value.len() - 1], 40),
        _ => (value, 0),
    };
    let number: u64 = digits
        .trim()
        .parse()
        .map_err(|_| "expected a size such as 16384, 16K, 128M or 4G".to_string())?;
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| "size overflows 64 bits".to_string())
}

fn parse_in_range(value: &str, min: u32, max: u32) -> std::result::Result<u32, String> {
    value
        .parse::<u32>()
        .ok()
        .filter(|v| (min..=max).contains(v))
        .ok_or_else(|| format!("must be an integer from {min} to {max}"))
}

fn parse_bool(value: &str) -> std::result::Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        _ => Err("must be on or off".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_setting_round_trips_through_get_and_set() {
        let mut settings = Settings::default();
        for spec in SETTINGS {
            let text = settings.get(spec.name).unwrap();
            settings.set(spec.name, &text).unwrap();
        }
        assert_eq!(settings, Settings::default());
    }

    #[test]
    fn bad_values_are_rejected_with_the_setting_named_and_nothing_changed() {
        let mut settings = Settings::default();
        for (name, value) in [
            ("page_size", "3000"),
            ("page_size", "128K"),
            ("buffer_pool_instances", "0"),
            ("buffer_pool_instances", "65"),
            ("io_method", "mmap"),
            ("buffer_pool_size", "lots"),
            ("io_uring_queue_depth", "0"),
            ("latch_accounting", "maybe"),
            ("log_device", "nvme"),
            ("log_file_size", "1K"),
            ("flush_log_at_commit", "3"),
            ("lock_scheduling", "random"),
            ("lock_wait_timeout", "0"),
            ("transaction_isolation", "SNAPSHOT"),
        ] {
            let err = settings.set(name, value).unwrap_err();
            assert!(
                matches!(err, Error::InvalidSetting { .. }),
                "{name}={value}: {err}"
            );
            let msg = err.to_string();
            assert!(msg.contains(name) && msg.contains(value), "{msg}");
            assert_eq!(settings, Settings::default());
        }
        assert!(matches!(
            settings.set("page_sise", "16K"),
            Err(Error::UnknownSetting { .. })
        ));
    }

    #[test]
    fn a_pool_below_the_minimum_is_rejected_with_the_minimum_named() {
        let mut settings = Settings::default();
        settings
            .apply_assignments(["buffer_pool_size=1M", "buffer_pool_instances=8"])
            .unwrap();
        let err = settings.validate().unwrap_err().to_string();
        assert!(err.contains("buffer_pool_size >= 2097152"), "{err}");
    }

    #[test]
    fn aliases_name_settings_and_every_alias_target_exists() {
        assert_eq!(
            setting_name("INNODB_FLUSH_LOG_AT_TRX_COMMIT"),
            Some("flush_log_at_commit")
        );
        assert_eq!(setting_name("scan_threads"), Some("scan_threads"));
        assert_eq!(setting_name("max_connections"), None);
        for (_, target) in SETTING_ALIASES {
            assert!(setting_spec(target).is_some(), "{target}");
        }
    }

    #[test]
    fn sizes_accept_binary_suffixes() {
        assert_eq!(parse_size_bytes("16K"), Ok(16384));
        assert_eq!(parse_size_bytes("128m"), Ok(128 << 20));
        assert_eq!(parse_size_bytes("4096"), Ok(4096));
        assert!(parse_size_bytes("12Q").is_err());
        assert!(parse_size_bytes("99999999999T").is_err());
    }
}
