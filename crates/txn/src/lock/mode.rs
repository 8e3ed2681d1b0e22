//! Lock modes as bit sets, and the compatibility rules between them.
//!
//! A record lock is made of up to three parts, each one bit: the record part (`S` or
//! `X`), the gap part (the gap before the record; S and X gap locks behave the same, so
//! one bit), and the insert-intention part. A table lock is one or more of `IS`, `IX`,
//! `S`, `X`. A trx's granted locks on one key are kept as the union of their bits, so
//! one entry per (trx, key) suffices.
//!
//! [`Mode::conflicts`] is "a request for `self` must wait for a lock holding `held`
//! (of another trx)". It is an OR over the bits of the request of "`held` contains a
//! bit this one conflicts with", so it distributes over unions on both sides: a request
//! conflicts with a set of locks exactly when it conflicts with their union.

use std::fmt;

/// The four table lock modes, with SQL's and InnoDB's names.
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TableMode {
    /// Intention shared: the trx will take S locks on some rows.
    IS,
    /// Intention exclusive: the trx will take X locks on some rows.
    IX,
    /// The whole table, shared.
    S,
    /// The whole table, exclusive.
    X,
}

/// What part of an index record (and the gap before it) a record lock covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordLockKind {
    /// The record and the gap before it (InnoDB's default in REPEATABLE READ).
    NextKey,
    /// The record only (`LOCK_REC_NOT_GAP`).
    RecordOnly,
    /// The gap before the record only (`LOCK_GAP`). Never waits.
    GapOnly,
    /// The intention to insert into the gap before the record
    /// (`LOCK_INSERT_INTENTION`). `shared` is ignored: it is always an X gap request.
    InsertIntention,
}

/// A record lock request: shared (S) or exclusive (X), and which part it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecordMode {
    pub shared: bool,
    pub kind: RecordLockKind,
}

impl RecordMode {
    pub const fn new(shared: bool, kind: RecordLockKind) -> RecordMode {
        RecordMode { shared, kind }
    }

    pub const fn shared(kind: RecordLockKind) -> RecordMode {
        RecordMode::new(true, kind)
    }

    pub const fn exclusive(kind: RecordLockKind) -> RecordMode {
        RecordMode::new(false, kind)
    }

    pub const INSERT_INTENTION: RecordMode = RecordMode::exclusive(RecordLockKind::InsertIntention);
}

/// A set of lock mode bits (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct Mode(u8);

const RECORD_S: u8 = 1 << 0;
const RECORD_X: u8 = 1 << 1;
const GAP: u8 = 1 << 2;
const INSERT_INTENTION: u8 = 1 << 3;
const TABLE_IS: u8 = 1 << 4;
const TABLE_IX: u8 = 1 << 5;
const TABLE_S: u8 = 1 << 6;
const TABLE_X: u8 = 1 << 7;
const TABLE_ALL: u8 = TABLE_IS | TABLE_IX | TABLE_S | TABLE_X;

/// For each bit (by position), the held bits it conflicts with.
const CONFLICTS_WITH: [u8; 8] = [
    RECORD_X,            // record S waits for record X
    RECORD_S | RECORD_X, // record X waits for record S and X
    0,                   // a gap lock never waits
    GAP,                 // insert intention waits for gap locks (S or X, gap or next-key)
    TABLE_X,             // IS
    TABLE_S | TABLE_X,   // IX
    TABLE_IX | TABLE_X,  // S
    TABLE_ALL,           // X
];

impl Mode {
    pub(crate) const EMPTY: Mode = Mode(0);

    pub(crate) fn table(mode: TableMode) -> Mode {
        Mode(match mode {
            TableMode::IS => TABLE_IS,
            TableMode::IX => TABLE_IX,
            TableMode::S => TABLE_S,
            TableMode::X => TABLE_X,
        })
    }

    pub(crate) fn record(mode: RecordMode) -> Mode {
        let record_part = if mode.shared { RECORD_S } else { RECORD_X };
        Mode(match mode.kind {
            RecordLockKind::NextKey => record_part | GAP,
            RecordLockKind::RecordOnly => record_part,
            RecordLockKind::GapOnly => GAP,
            RecordLockKind::InsertIntention => INSERT_INTENTION,
        })
    }

    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub(crate) fn union(self, other: Mode) -> Mode {
        Mode(self.0 | other.0)
    }

    /// True when a request for `self` must wait for a lock of another trx holding
    /// `held`.
    pub(crate) fn conflicts(self, held: Mode) -> bool {
        let mut bits = self.0;
        while bits != 0 {
            let bit = bits.trailing_zeros() as usize;
            if held.0 & CONFLICTS_WITH[bit] != 0 {
                return true;
            }
            bits &= bits - 1;
        }
        false
    }

    /// True when neither of two locks of different trxs would wait for the other.
    pub(crate) fn compatible(self, other: Mode) -> bool {
        !self.conflicts(other) && !other.conflicts(self)
    }

    /// Everything holding `self` implies: X covers S, and table X covers every table
    /// mode, S and IX cover IS.
    fn closure(self) -> Mode {
        let mut bits = self.0;
        if bits & RECORD_X != 0 {
            bits |= RECORD_S;
        }
        if bits & TABLE_X != 0 {
            bits |= TABLE_ALL;
        }
        if bits & (TABLE_S | TABLE_IX) != 0 {
            bits |= TABLE_IS;
        }
        Mode(bits)
    }

    /// The part of the request `self` that a trx already holding `held` still needs.
    /// Insert intention is never held (a granted one blocks nothing and is not kept),
    /// so it is always still needed.
    pub(crate) fn missing_from(self, held: Mode) -> Mode {
        Mode(self.0 & !held.closure().0)
    }

    /// The bits kept in a granted entry: insert intention is dropped once granted.
    pub(crate) fn stored(self) -> Mode {
        Mode(self.0 & !INSERT_INTENTION)
    }

    pub(crate) fn has_insert_intention(self) -> bool {
        self.0 & INSERT_INTENTION != 0
    }

    /// True for a mode that is only an insert intention (nothing to store once granted).
    pub(crate) fn is_insert_intention_only(self) -> bool {
        self.0 == INSERT_INTENTION
    }
}

/// Names as `performance_schema.data_locks.LOCK_MODE` shows them ("X,REC_NOT_GAP",
/// "S,GAP", "X,GAP,INSERT_INTENTION", "IX", "S,IX").
impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = self.0;
        let mut parts: Vec<&str> = Vec::new();
        if bits & TABLE_ALL != 0 {
            for (bit, name) in [
                (TABLE_X, "X"),
                (TABLE_S, "S"),
                (TABLE_IX, "IX"),
                (TABLE_IS, "IS"),
            ] {
                if bits & bit != 0 {
                    parts.push(name);
                }
            }
        } else if bits & INSERT_INTENTION != 0 {
            parts.extend(["X", "GAP", "INSERT_INTENTION"]);
        } else {
            if bits & RECORD_X != 0 {
                parts.push("X");
            } else if bits & RECORD_S != 0 {
                parts.push("S");
            }
            match (bits & (RECORD_S | RECORD_X) != 0, bits & GAP != 0) {
                (true, false) => parts.push("REC_NOT_GAP"),
                (false, true) => parts.push("GAP"),
                _ => {}
            }
        }
        f.write_str(&parts.join(","))
    }
}

impl fmt::Debug for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Mode({self})")
    }
}
