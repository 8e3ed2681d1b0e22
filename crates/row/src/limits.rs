//! Every bound this crate enforces, in one place.
//!
//! These belong with `tarn_common::limits` in spirit; they live here because they are
//! properties of the column types, the row format and the key encoding, which this
//! crate owns. Each is checked where data enters (definitions in
//! [`crate::types::ColumnType::validate`], values in [`crate::check_value`], rows in
//! [`crate::row::RowLayout::encode`], keys in [`crate::key::encode_key`]) and again where
//! bytes are read back.

// --- Column definitions -------------------------------------------------------------

/// DECIMAL precision (total digits), as in MySQL.
pub const DECIMAL_PRECISION_MAX: u8 = 65;
/// DECIMAL scale (digits after the point), as in MySQL.
pub const DECIMAL_SCALE_MAX: u8 = 30;
/// Fractional-second digits of DATETIME, TIMESTAMP and TIME.
pub const FSP_MAX: u8 = 6;
/// CHAR(n): n in characters.
pub const CHAR_LEN_MAX_CHARS: u32 = 255;
/// VARCHAR(n): n in characters.
pub const VARCHAR_LEN_MAX_CHARS: u32 = 65_535;
/// BINARY(n): n in bytes.
pub const BINARY_LEN_MAX_BYTES: u32 = 255;
/// VARBINARY(n): n in bytes.
pub const VARBINARY_LEN_MAX_BYTES: u32 = 65_535;
/// Columns in one table (InnoDB's limit).
pub const COLUMNS_MAX: usize = 1017;
/// Members of an ENUM, as in MySQL (an index of 2 bytes, 0 being the error value).
pub const ENUM_MEMBERS_MAX: usize = 65_535;
/// Members of a SET, as in MySQL (one bit each in at most 8 bytes).
pub const SET_MEMBERS_MAX: usize = 64;
/// Characters of one ENUM or SET member, as in MySQL.
pub const MEMBER_LEN_MAX_CHARS: usize = 255;
/// Bytes of the text of one ENUM or SET member list in all. MySQL's own bound is in
/// its data dictionary's column sizes; this one keeps a list (held in memory for the
/// process, see [`crate::members`]) and the catalog file that stores it small.
pub const MEMBER_LIST_MAX_BYTES: usize = 1 << 20;
/// Bytes the process-wide copies of ENUM and SET member lists may take
/// ([`crate::members`]); each distinct list is kept until the process exits.
pub const MEMBER_LISTS_INTERNED_MAX_BYTES: usize = 256 << 20;
/// BIT(n): n in bits, as in MySQL.
pub const BIT_LEN_MAX_BITS: u8 = 64;

// --- Values -------------------------------------------------------------------------

/// TEXT holds at most this many bytes. MySQL's TEXT stops at 65535, but catalogs
/// written before MEDIUMTEXT and LONGTEXT existed here hold those columns as TEXT, so
/// TEXT keeps standing in for them up to 1 GiB, as BLOB does.
pub const TEXT_LEN_MAX_BYTES: u64 = 1 << 30;
/// BLOB holds at most this many bytes. MySQL's BLOB stops at 65535; as with TEXT,
/// older catalogs hold MEDIUMBLOB and LONGBLOB columns as BLOB, so it holds up to
/// 1 GiB (MySQL's `max_allowed_packet` ceiling).
pub const BLOB_LEN_MAX_BYTES: u64 = 1 << 30;
/// TINYTEXT and TINYBLOB hold at most this many bytes, as in MySQL.
pub const TINY_LOB_LEN_MAX_BYTES: u64 = 255;
/// MEDIUMTEXT and MEDIUMBLOB hold at most this many bytes, as in MySQL.
pub const MEDIUM_LOB_LEN_MAX_BYTES: u64 = (1 << 24) - 1;
/// LONGTEXT and LONGBLOB hold at most this many bytes: MySQL's 4 GiB bound cut to
/// the largest value Tarn stores.
pub const LONG_LOB_LEN_MAX_BYTES: u64 = VALUE_LEN_MAX_BYTES;
/// Any variable-length value the row format stores, inline or external.
pub const VALUE_LEN_MAX_BYTES: u64 = BLOB_LEN_MAX_BYTES;
/// Year range of DATE and DATETIME (MySQL documents 1000..=9999 and accepts 0..=9999).
pub const YEAR_MAX: u16 = 9999;
/// The years a YEAR column holds besides 0 (`0000`), as in MySQL: 1901..=2155.
pub const YEAR_TYPE_MIN: u16 = 1901;
pub const YEAR_TYPE_MAX: u16 = 2155;

// --- Row format ---------------------------------------------------------------------

/// The fixed header at the start of every row: flags, reserved, trx id, roll pointer.
pub const ROW_HEADER_BYTES: usize = 16;
/// Transaction ids are stored in 6 bytes.
pub const TRX_ID_MAX: u64 = (1 << 48) - 1;
/// Variable-length data of one row is addressed by u16 end offsets.
pub const ROW_VAR_AREA_MAX_BYTES: usize = u16::MAX as usize;
/// An external (overflow) value is stored inline as a 12-byte reference.
pub const OVERFLOW_REF_BYTES: usize = 12;

// --- Keys ---------------------------------------------------------------------------

/// Longest encoded key (InnoDB's 3072-byte index key limit, applied to the encoded
/// form, which includes one marker byte per column and string escaping).
pub const KEY_LEN_MAX_BYTES: usize = 3072;

// --- Batches ------------------------------------------------------------------------

/// Rows a [`crate::batch::Batch`] may be created for.
pub const BATCH_ROWS_MAX: usize = 1 << 20;
/// Bytes one variable-length column of a batch may hold (offsets are u32).
pub const BATCH_COLUMN_BYTES_MAX: usize = u32::MAX as usize;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_consistent() {
        const {
            assert!(DECIMAL_SCALE_MAX <= DECIMAL_PRECISION_MAX);
            assert!(TEXT_LEN_MAX_BYTES <= VALUE_LEN_MAX_BYTES);
            assert!(BLOB_LEN_MAX_BYTES <= VALUE_LEN_MAX_BYTES);
            assert!(TINY_LOB_LEN_MAX_BYTES < MEDIUM_LOB_LEN_MAX_BYTES);
            assert!(MEDIUM_LOB_LEN_MAX_BYTES <= LONG_LOB_LEN_MAX_BYTES);
            assert!(LONG_LOB_LEN_MAX_BYTES <= VALUE_LEN_MAX_BYTES);
            assert!(VALUE_LEN_MAX_BYTES <= BATCH_COLUMN_BYTES_MAX as u64);
            assert!(OVERFLOW_REF_BYTES <= ROW_VAR_AREA_MAX_BYTES);
            assert!(SET_MEMBERS_MAX <= ENUM_MEMBERS_MAX && ENUM_MEMBERS_MAX <= u16::MAX as usize);
            assert!(MEMBER_LIST_MAX_BYTES * 4 <= MEMBER_LISTS_INTERNED_MAX_BYTES);
            assert!(BIT_LEN_MAX_BITS as u32 <= u64::BITS);
        }
    }
}
