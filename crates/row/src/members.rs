//! The member lists of ENUM and SET columns.
//!
//! An ENUM column stores the 1-based index of its value in the list its type declares
//! (0 is MySQL's `''` error value), a SET column a bitmask with bit `i - 1` for member
//! `i`; the list itself lives in the column's type ([`crate::ColumnType::Enum`],
//! [`crate::ColumnType::Set`]). Above the row format the values are the members' text
//! (`Value::Bytes`): an ENUM value is one member as declared, a SET value its members
//! in declared order joined by commas (`'a,c'`), so every layer that handles strings
//! handles them unchanged; the row format and the key encoding turn the text into the
//! index or bitmask with [`Members::index_of`] and [`Members::set_bits_of`].
//!
//! Column types are `Copy` values the whole engine passes around, so a list is
//! interned: a [`Members`] is a reference to the one process-wide copy of its list,
//! made the first time a definition names it (a CREATE or ALTER TABLE, or reading the
//! catalog) and kept until the process exits. Equal lists share one copy, so the
//! memory grows only with distinct lists, and is bounded by
//! [`MEMBER_LISTS_INTERNED_MAX_BYTES`]: past it a new list is refused
//! (`OutOfResources`) until a restart.
//!
//! Matching follows MySQL: a value's trailing spaces are cut first, then it is compared
//! with each member under the column's collation, exactly (`Binary`) or ignoring case
//! (`CaseInsensitive`) but without PAD SPACE (`'a '` inside a SET value is no member
//! `'a'`). Members are stored with their trailing spaces already cut, as MySQL stores
//! them.

use std::collections::HashMap;
use std::sync::Mutex;

use tarn_common::{Error, Result};

use crate::key::weight;
use crate::limits::{
    ENUM_MEMBERS_MAX, MEMBER_LEN_MAX_CHARS, MEMBER_LIST_MAX_BYTES, MEMBER_LISTS_INTERNED_MAX_BYTES,
};
use crate::types::{Collation, ColumnType};

/// An interned member list (see the module documentation). Two lists are equal when
/// their members are, which for interned lists is when they are the same copy.
#[derive(Clone, Copy)]
pub struct Members(&'static MemberList);

struct MemberList {
    names: Box<[Box<str>]>,
    /// A member's text → its 1-based index.
    exact: HashMap<Box<[u8]>, u32>,
    /// A member's case-insensitive weight → the first index with that weight.
    folded: HashMap<Box<[u8]>, u32>,
}

/// Every interned list by its members, and the bytes they take (an estimate that
/// counts each member's text three times, for the list and its two maps).
struct Interner {
    lists: HashMap<Box<[Box<str>]>, Members>,
    bytes: usize,
}

static INTERNER: Mutex<Option<Interner>> = Mutex::new(None);

/// Bytes an interned list is charged: its members' text, three times, plus an
/// allowance per member for the boxes and map entries.
fn charged_bytes(names: &[Box<str>]) -> usize {
    names.iter().map(|n| 3 * n.len() + 96).sum()
}

impl Members {
    /// The interned copy of `names` (in declared order). Checks the bounds every list
    /// keeps ([`ENUM_MEMBERS_MAX`] members of at most [`MEMBER_LEN_MAX_CHARS`]
    /// characters, [`MEMBER_LIST_MAX_BYTES`] in all): `InvalidDefinition` if broken,
    /// `OutOfResources` past [`MEMBER_LISTS_INTERNED_MAX_BYTES`]. The SQL layer checks
    /// the same bounds first, to answer with MySQL's errors.
    pub fn intern<S: AsRef<str>>(names: &[S]) -> Result<Members> {
        let names: Box<[Box<str>]> = names.iter().map(|n| Box::from(n.as_ref())).collect();
        check_bounds(&names)?;
        let mut guard = INTERNER.lock().unwrap_or_else(|e| e.into_inner());
        let interner = guard.get_or_insert_with(|| Interner {
            lists: HashMap::new(),
            bytes: 0,
        });
        if let Some(members) = interner.lists.get(&names) {
            return Ok(*members);
        }
        let charged = charged_bytes(&names);
        if interner.bytes + charged > MEMBER_LISTS_INTERNED_MAX_BYTES {
            return Err(Error::OutOfResources(format!(
                "ENUM and SET member lists take more than {MEMBER_LISTS_INTERNED_MAX_BYTES} \
                 bytes in this process; restart the server to release lists no longer used"
            )));
        }
        let mut exact = HashMap::with_capacity(names.len());
        let mut folded = HashMap::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let index = i as u32 + 1;
            exact.entry(Box::from(name.as_bytes())).or_insert(index);
            folded
                .entry(Box::from(&*fold(name.as_bytes())))
                .or_insert(index);
        }
        let list: &'static MemberList = Box::leak(Box::new(MemberList {
            names: names.clone(),
            exact,
            folded,
        }));
        let members = Members(list);
        interner.lists.insert(names, members);
        interner.bytes += charged;
        Ok(members)
    }

    /// The members, in declared order.
    pub fn names(&self) -> &'static [Box<str>] {
        &self.0.names
    }

    pub fn len(&self) -> usize {
        self.0.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.names.is_empty()
    }

    /// The text of member `index` (1-based); `''` for 0, MySQL's error value, and for
    /// an index past the list (which [`crate::RowLayout::view`] never lets through).
    pub fn name(&self, index: u32) -> &'static str {
        match index.checked_sub(1) {
            Some(i) => self.0.names.get(i as usize).map_or("", |n| n),
            None => "",
        }
    }

    /// The most characters a member has.
    pub fn len_max_chars(&self) -> u32 {
        self.0
            .names
            .iter()
            .map(|n| n.chars().count() as u32)
            .max()
            .unwrap_or(0)
    }

    /// The characters of every member joined by commas: the longest SET value.
    pub fn joined_len_chars(&self) -> u32 {
        let chars: usize = self.0.names.iter().map(|n| n.chars().count()).sum();
        (chars + self.len().saturating_sub(1)) as u32
    }

    /// The index of the member whose text is exactly `text` (a value as the engine
    /// passes it, see the module documentation); `Some(0)` for `''` when no member is
    /// empty (the error value); None for any other text.
    pub fn index_of(&self, text: &[u8]) -> Option<u32> {
        match self.0.exact.get(text) {
            Some(index) => Some(*index),
            None if text.is_empty() => Some(0),
            None => None,
        }
    }

    /// The bitmask of a SET value in normal form: members joined by commas (any order,
    /// repeats allowed), `''` for none. None if a part is no member.
    pub fn set_bits_of(&self, text: &[u8]) -> Option<u64> {
        if text.is_empty() {
            return Some(0);
        }
        text.split(|b| *b == b',').try_fold(0u64, |bits, part| {
            let index = *self.0.exact.get(part)?;
            Some(bits | 1 << (index - 1))
        })
    }

    /// The member `text` names under `collation` after its trailing spaces are cut
    /// (MySQL's assignment rule, see the module documentation): its 1-based index.
    pub fn find(&self, text: &[u8], collation: Collation) -> Option<u32> {
        self.find_part(strip_trailing_spaces(text), collation)
    }

    /// One member named exactly (no trailing spaces cut) under `collation`.
    fn find_part(&self, part: &[u8], collation: Collation) -> Option<u32> {
        if let Some(index) = self.0.exact.get(part) {
            return Some(*index);
        }
        if collation == Collation::Binary || part.last() == Some(&b' ') {
            return None;
        }
        self.0.folded.get(&*fold(part)).copied()
    }

    /// The bitmask a SET value names under `collation`: its trailing spaces cut, then
    /// comma-separated members, each matched as [`Members::find`] matches (but keeping
    /// its own spaces). `''` is no member. None if a part is no member.
    pub fn find_set(&self, text: &[u8], collation: Collation) -> Option<u64> {
        let text = strip_trailing_spaces(text);
        if text.is_empty() {
            return Some(0);
        }
        text.split(|b| *b == b',').try_fold(0u64, |bits, part| {
            let index = self.find_part(part, collation)?;
            Some(bits | 1 << (index - 1))
        })
    }

    /// The text of a SET bitmask: the members of its bits in declared order, joined by
    /// commas. Bits past the list are ignored.
    pub fn set_text(&self, bits: u64) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, name) in self.0.names.iter().enumerate().take(64) {
            if bits >> i & 1 == 1 {
                if !out.is_empty() {
                    out.push(b',');
                }
                out.extend_from_slice(name.as_bytes());
            }
        }
        out
    }

    /// The mask of every member of a SET of this list.
    pub fn set_mask(&self) -> u64 {
        match self.len() {
            n if n >= 64 => u64::MAX,
            n => (1u64 << n) - 1,
        }
    }

    /// The earlier of the first two members that are the same under `collation`
    /// (what MySQL's 1291 names), or None.
    pub fn duplicate(&self, collation: Collation) -> Option<&'static str> {
        let mut seen: HashMap<Vec<u8>, &'static str> = HashMap::new();
        for name in self.0.names.iter() {
            let key: Vec<u8> = match collation {
                Collation::Binary => name.as_bytes().to_vec(),
                Collation::CaseInsensitive => fold(name.as_bytes()).into_owned(),
            };
            if let Some(first) = seen.get(&key) {
                return Some(first);
            }
            seen.insert(key, name);
        }
        None
    }

    /// Bytes an ENUM of this list takes in a row and a key: 1 up to 255 members, else 2.
    pub fn enum_width_bytes(&self) -> usize {
        if self.len() <= 255 { 1 } else { 2 }
    }

    /// Bytes a SET of this list takes: one per 8 members, 5 to 8 members' bytes
    /// rounded up to 8 (MySQL's 1, 2, 3, 4 or 8).
    pub fn set_width_bytes(&self) -> usize {
        match self.len().div_ceil(8) {
            0 | 1 => 1,
            n @ 2..=4 => n,
            _ => 8,
        }
    }
}

/// The case-insensitive weight of a member (uppercase folds; the text has no
/// trailing spaces to drop).
fn fold(text: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    weight(ColumnType::Text, Collation::CaseInsensitive, text)
}

fn strip_trailing_spaces(text: &[u8]) -> &[u8] {
    let kept = text.iter().rposition(|b| *b != b' ').map_or(0, |i| i + 1);
    &text[..kept]
}

fn check_bounds(names: &[Box<str>]) -> Result<()> {
    let fail = |reason: String| Err(Error::InvalidDefinition(reason));
    if names.len() > ENUM_MEMBERS_MAX {
        return fail(format!("more than {ENUM_MEMBERS_MAX} members"));
    }
    if let Some(long) = names
        .iter()
        .find(|n| n.chars().count() > MEMBER_LEN_MAX_CHARS)
    {
        return fail(format!(
            "member '{long}' is longer than {MEMBER_LEN_MAX_CHARS} characters"
        ));
    }
    let bytes: usize = names.iter().map(|n| n.len()).sum();
    if bytes > MEMBER_LIST_MAX_BYTES {
        return fail(format!(
            "members of {bytes} bytes in all, more than {MEMBER_LIST_MAX_BYTES}"
        ));
    }
    Ok(())
}

impl PartialEq for Members {
    fn eq(&self, other: &Members) -> bool {
        // Interned: one copy per distinct list.
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Members {}

impl std::hash::Hash for Members {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.names.hash(state);
    }
}

impl std::fmt::Debug for Members {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.names.iter()).finish()
    }
}

/// In the catalog a list is its members, a JSON array of strings.
impl serde::Serialize for Members {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.names.iter())
    }
}

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Members, D::Error> {
        let names = Vec::<String>::deserialize(deserializer)?;
        Members::intern(&names).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_lists_are_one_copy() {
        let a = Members::intern(&["x", "y"]).unwrap();
        let b = Members::intern(&[String::from("x"), String::from("y")]).unwrap();
        let c = Members::intern(&["y", "x"]).unwrap();
        assert_eq!(a, b);
        assert!(std::ptr::eq(a.names(), b.names()));
        assert_ne!(a, c);
        let json = serde_json::to_string(&a).unwrap();
        assert_eq!(json, r#"["x","y"]"#);
        assert_eq!(serde_json::from_str::<Members>(&json).unwrap(), a);
    }

    #[test]
    fn matching_ignores_case_and_trailing_spaces_only() {
        let m = Members::intern(&["small", "Large", "é"]).unwrap();
        let ci = Collation::CaseInsensitive;
        assert_eq!(m.find(b"small", ci), Some(1));
        assert_eq!(m.find(b"LARGE  ", ci), Some(2));
        assert_eq!(m.find("É".as_bytes(), ci), Some(3));
        assert_eq!(m.find(b" small", ci), None);
        assert_eq!(m.find(b"large", Collation::Binary), None);
        assert_eq!(m.find(b"Large ", Collation::Binary), Some(2));
        assert_eq!(m.index_of(b"Large"), Some(2));
        assert_eq!(m.index_of(b"large"), None);
        assert_eq!(m.index_of(b""), Some(0));
        assert_eq!((m.name(0), m.name(2), m.name(9)), ("", "Large", ""));
    }

    #[test]
    fn sets_are_bitmasks_in_declared_order() {
        let m = Members::intern(&["a", "b", "c"]).unwrap();
        let ci = Collation::CaseInsensitive;
        assert_eq!(m.find_set(b"C,a,A ", ci), Some(0b101));
        assert_eq!(m.find_set(b"", ci), Some(0));
        assert_eq!(m.find_set(b"a,,b", ci), None);
        assert_eq!(m.find_set(b"a ,b", ci), None);
        assert_eq!(m.find_set(b"a,d", ci), None);
        assert_eq!(m.set_text(0b101), b"a,c");
        assert_eq!(m.set_bits_of(b"c,a"), Some(0b101));
        assert_eq!(m.set_bits_of(b"A"), None);
        assert_eq!(m.set_mask(), 0b111);
    }

    #[test]
    fn widths_and_bounds() {
        let names: Vec<String> = (0..256).map(|i| format!("m{i}")).collect();
        let m = Members::intern(&names).unwrap();
        assert_eq!((m.enum_width_bytes(), m.set_width_bytes()), (2, 8));
        let m = Members::intern(&names[..255]).unwrap();
        assert_eq!(m.enum_width_bytes(), 1);
        for (n, width) in [(1, 1), (8, 1), (9, 2), (24, 3), (32, 4), (33, 8), (64, 8)] {
            let m = Members::intern(&names[..n]).unwrap();
            assert_eq!(m.set_width_bytes(), width, "{n} members");
        }
        assert!(Members::intern(&["x".repeat(256)]).is_err());
        assert_eq!(
            Members::intern(&["a", "A"])
                .unwrap()
                .duplicate(Collation::CaseInsensitive),
            Some("a")
        );
        assert_eq!(
            Members::intern(&["a", "A"])
                .unwrap()
                .duplicate(Collation::Binary),
            None
        );
    }
}
