//! Time zones: the session's `time_zone`, `NOW()` and its family, `UNIX_TIMESTAMP`,
//! `FROM_UNIXTIME` and `CONVERT_TZ`.
//!
//! A [`TimeZone`] is a fixed offset from UTC (`UTC`, `SYSTEM`, `+05:30`) or a named
//! zone of the system's time zone database (`Europe/Berlin`), read from its TZif file
//! (RFC 8536) under `$TZDIR` or `/usr/share/zoneinfo` the first time a statement names
//! it, and kept (at most [`TIME_ZONES_CACHED_MAX`]). MySQL reads the same files, loaded
//! into its `mysql.time_zone*` tables by `mysql_tzinfo_to_sql`; Tarn reads them
//! directly, so every zone of the machine's tzdata is known with no loading step.
//! Names match without regard to case (`europe/berlin` is `Europe/Berlin`), as in
//! MySQL; `@@time_zone` shows a name as it was given, as a fresh MySQL server does. A
//! file with leap seconds (`right/...`) is refused: its conversions would count leap
//! seconds, which Tarn's values do not hold.
//!
//! # Conversions
//! - UTC to local ([`TimeZone::offset_at`]) is a function: each instant has one offset.
//! - Local to UTC ([`TimeZone::local_to_unix_micros`]) follows MySQL where a local
//!   time is not exactly one instant. A time in a spring-forward gap is the instant
//!   the gap ends, its seconds dropped and its fraction kept (`2024-03-31 02:30:15.5`
//!   in Berlin is 01:00:00.5 UTC); a time in a fall-back overlap is the earlier of
//!   its two instants.
//! - Past the file's last transition, the footer's POSIX TZ rule applies
//!   (`CET-1CEST,M3.5.0,M10.5.0/3`). MySQL's tables hold only the transitions (to
//!   2037 in tzdata's usual files) and keep the last offset after them, so for later
//!   years Tarn follows the zone's announced rules where MySQL does not.
//! - `SYSTEM` is UTC, the `system_time_zone` Tarn reports.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use tarn_row::datetime::{DAYS_0000_TO_1970, Date, DateTime, days_from_civil, days_in_month};

use crate::limits::{TIME_ZONE_FILE_MAX_BYTES, TIME_ZONE_NAME_MAX_BYTES, TIME_ZONES_CACHED_MAX};

const SECONDS_PER_DAY: i64 = 86_400;
const MICROS_PER_SECOND: i128 = 1_000_000;
/// Microseconds from 0000-01-01 (`DateTime::to_micros`'s origin) to 1970-01-01.
const EPOCH_MICROS: i128 = DAYS_0000_TO_1970 as i128 * SECONDS_PER_DAY as i128 * MICROS_PER_SECOND;
/// The widest offset a TZif file may give (RFC 8536: -25 to +26 hours).
const OFFSET_SECONDS_MAX: i32 = 26 * 3600;

/// A session's or `CONVERT_TZ` argument's time zone.
#[derive(Clone, Debug, PartialEq)]
pub enum TimeZone {
    /// Seconds east of UTC.
    Fixed(i32),
    Named(Arc<Zone>),
}

/// A named zone read from the time zone database.
#[derive(Debug)]
pub struct Zone {
    /// As the database spells it.
    name: String,
    /// UTC seconds at which each period begins, ascending.
    transitions_s: Vec<i64>,
    /// The offset (seconds east of UTC) from each transition on.
    offsets_s: Vec<i32>,
    /// The offset before the first transition.
    initial_offset_s: i32,
    /// The footer's rule, for instants past the last transition.
    rule: Option<Rule>,
}

impl PartialEq for Zone {
    fn eq(&self, other: &Zone) -> bool {
        self.name == other.name
    }
}

impl Zone {
    pub fn name(&self) -> &str {
        &self.name
    }

    fn offset_at(&self, unix_s: i64) -> i32 {
        let after = self.transitions_s.partition_point(|&t| t <= unix_s);
        if after == self.transitions_s.len()
            && let Some(rule) = &self.rule
        {
            return rule.offset_at(unix_s);
        }
        match after {
            0 => self.initial_offset_s,
            n => self.offsets_s[n - 1],
        }
    }
}

/// `dt` as microseconds since 1970-01-01 00:00:00 (negative before it).
pub fn unix_micros(dt: &DateTime) -> i128 {
    i128::from(dt.to_micros()) - EPOCH_MICROS
}

/// The DATETIME `unix_micros` microseconds after 1970-01-01 00:00:00; None outside
/// the DATETIME range.
pub fn from_unix_micros(unix_micros: i128) -> Option<DateTime> {
    DateTime::from_micros(u64::try_from(unix_micros + EPOCH_MICROS).ok()?).ok()
}

impl TimeZone {
    pub const UTC: TimeZone = TimeZone::Fixed(0);

    /// The zone a `time_zone` value or a `CONVERT_TZ` argument names: `SYSTEM`, `UTC`,
    /// an offset `+HH:MM` (-13:59 to +14:00), or a name in the time zone database;
    /// None for anything else.
    pub fn resolve(text: &str) -> Option<TimeZone> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("SYSTEM") {
            return Some(TimeZone::UTC);
        }
        if let Some(minutes) = crate::sysvars::time_zone_offset_min(text) {
            return Some(TimeZone::Fixed(minutes * 60));
        }
        named(text).map(TimeZone::Named)
    }

    /// Seconds east of UTC in force at the instant `unix_s`.
    pub fn offset_at(&self, unix_s: i64) -> i32 {
        match self {
            TimeZone::Fixed(offset) => *offset,
            TimeZone::Named(zone) => zone.offset_at(unix_s),
        }
    }

    /// The local time of the instant `unix_micros`; None outside the DATETIME range.
    pub fn to_local(&self, unix_micros: i128) -> Option<DateTime> {
        let seconds = i64::try_from(unix_micros.div_euclid(MICROS_PER_SECOND)).ok()?;
        let offset = i128::from(self.offset_at(seconds));
        from_unix_micros(unix_micros + offset * MICROS_PER_SECOND)
    }

    /// The instant the local time `local` names, in microseconds since 1970 UTC (a
    /// gap or an overlap as the module docs say).
    pub fn local_to_unix_micros(&self, local: &DateTime) -> i128 {
        let as_utc = unix_micros(local);
        let fraction = as_utc.rem_euclid(MICROS_PER_SECOND);
        // DATETIME's range keeps these seconds well inside i64.
        let local_s = as_utc.div_euclid(MICROS_PER_SECOND) as i64;
        let at = |seconds: i64| i128::from(seconds) * MICROS_PER_SECOND + fraction;
        let zone = match self {
            TimeZone::Fixed(offset) => return at(local_s - i64::from(*offset)),
            TimeZone::Named(zone) => zone,
        };
        // The offsets in force a day either side: a local time is at most one
        // transition away from both (no zone changes offset twice within two days).
        let before = i64::from(zone.offset_at(local_s - SECONDS_PER_DAY));
        let after = i64::from(zone.offset_at(local_s + SECONDS_PER_DAY));
        // The earlier instant first: with two readings (an overlap), MySQL takes it.
        let (high, low) = (before.max(after), before.min(after));
        for offset in [high, low] {
            let instant = local_s - offset;
            if i64::from(zone.offset_at(instant)) == offset {
                return at(instant);
            }
        }
        // A gap: the first instant in (local - high, local - low] at the new offset.
        let (mut outside, mut inside) = (local_s - high, local_s - low);
        let old = zone.offset_at(outside);
        while inside - outside > 1 {
            let middle = outside + (inside - outside) / 2;
            if zone.offset_at(middle) == old {
                outside = middle;
            } else {
                inside = middle;
            }
        }
        i128::from(inside) * MICROS_PER_SECOND + fraction
    }
}

/// The zone `name` of the time zone database, from the cache or its file.
fn named(name: &str) -> Option<Arc<Zone>> {
    if name.is_empty() || name.len() > TIME_ZONE_NAME_MAX_BYTES {
        return None;
    }
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Zone>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let key = name.to_ascii_lowercase();
    if let Some(zone) = cache.lock().ok()?.get(&key) {
        return Some(zone.clone());
    }
    let zone = Arc::new(load(name)?);
    let mut cache = cache.lock().ok()?;
    if cache.len() < TIME_ZONES_CACHED_MAX {
        cache.insert(key, zone.clone());
    }
    Some(zone)
}

/// The directory of the time zone database: `$TZDIR`, else `/usr/share/zoneinfo`.
fn zone_dir() -> PathBuf {
    std::env::var_os("TZDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/zoneinfo"))
}

/// Reads the zone `name` (components of letters, digits, `_`, `+` and `-`, matched
/// without regard to case); None if there is no such zone or its file is not TZif.
fn load(name: &str) -> Option<Zone> {
    let mut path = zone_dir();
    let mut spelled = Vec::new();
    for component in name.split('/') {
        let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-');
        if component.is_empty() || component.starts_with('-') || !component.bytes().all(allowed) {
            return None;
        }
        let found = if path.join(component).exists() {
            component.to_string()
        } else {
            std::fs::read_dir(&path)
                .ok()?
                .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .find(|entry| entry.eq_ignore_ascii_case(component))?
        };
        path.push(&found);
        spelled.push(found);
    }
    let metadata = std::fs::metadata(&path).ok()?;
    if !metadata.is_file() || metadata.len() > TIME_ZONE_FILE_MAX_BYTES {
        return None;
    }
    let mut zone = parse_tzif(&std::fs::read(&path).ok()?)?;
    zone.name = spelled.join("/");
    Some(zone)
}

/// A cursor over a TZif file's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        if len > self.bytes.len() {
            return None;
        }
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
}

/// The six counts of a TZif header.
struct Counts {
    isut: usize,
    isstd: usize,
    leap: usize,
    time: usize,
    types: usize,
    chars: usize,
}

impl Counts {
    fn read(reader: &mut Reader<'_>) -> Option<(u8, Counts)> {
        let header = reader.take(20)?;
        if &header[..4] != b"TZif" {
            return None;
        }
        let version = header[4];
        let mut next = || reader.u32().and_then(|n| usize::try_from(n).ok());
        let counts = Counts {
            isut: next()?,
            isstd: next()?,
            leap: next()?,
            time: next()?,
            types: next()?,
            chars: next()?,
        };
        Some((version, counts))
    }

    /// Bytes of the data block with `time_bytes`-byte times.
    fn block_bytes(&self, time_bytes: usize) -> Option<usize> {
        let times = self.time.checked_mul(time_bytes + 1)?;
        let leaps = self.leap.checked_mul(time_bytes + 4)?;
        times
            .checked_add(self.types.checked_mul(6)?)?
            .checked_add(self.chars)?
            .checked_add(leaps)?
            .checked_add(self.isstd)?
            .checked_add(self.isut)
    }
}

/// A zone from a TZif file (version 1 to 4); its name is set by the caller. None
/// for a malformed file or one with leap seconds.
fn parse_tzif(bytes: &[u8]) -> Option<Zone> {
    let mut reader = Reader { bytes };
    let (version, mut counts) = Counts::read(&mut reader)?;
    let mut time_bytes = 4;
    if version >= b'2' {
        // Skip the 32-bit block: the 64-bit one after it covers every instant.
        reader.take(counts.block_bytes(4)?)?;
        counts = Counts::read(&mut reader)?.1;
        time_bytes = 8;
    }
    if counts.leap != 0 || counts.types == 0 {
        return None;
    }
    let mut transitions_s = Vec::with_capacity(counts.time);
    for _ in 0..counts.time {
        let raw = reader.take(time_bytes)?;
        let t = match time_bytes {
            4 => i64::from(i32::from_be_bytes(raw.try_into().ok()?)),
            _ => i64::from_be_bytes(raw.try_into().ok()?),
        };
        if transitions_s.last().is_some_and(|&last| t <= last) {
            return None;
        }
        transitions_s.push(t);
    }
    let indices = reader.take(counts.time)?;
    let mut type_offsets = Vec::with_capacity(counts.types);
    for _ in 0..counts.types {
        let info = reader.take(6)?;
        let offset = i32::from_be_bytes(info[..4].try_into().ok()?);
        if offset.unsigned_abs() > OFFSET_SECONDS_MAX.unsigned_abs() {
            return None;
        }
        type_offsets.push(offset);
    }
    let offsets_s = indices
        .iter()
        .map(|&i| type_offsets.get(usize::from(i)).copied())
        .collect::<Option<Vec<i32>>>()?;
    reader.take(counts.chars + counts.isstd + counts.isut)?;
    let rule = if time_bytes == 8 {
        let footer = reader.bytes.strip_prefix(b"\n")?;
        let end = footer.iter().position(|&b| b == b'\n')?;
        let text = std::str::from_utf8(&footer[..end]).ok()?;
        // An empty footer: no rule past the last transition.
        if text.is_empty() {
            None
        } else {
            Some(Rule::parse(text)?)
        }
    } else {
        None
    };
    Some(Zone {
        name: String::new(),
        transitions_s,
        offsets_s,
        initial_offset_s: type_offsets[0],
        rule,
    })
}

/// A POSIX TZ rule (a TZif footer): standard time, and daylight time between two
/// yearly dates.
#[derive(Debug, PartialEq)]
struct Rule {
    /// Seconds east of UTC.
    standard_s: i32,
    daylight: Option<Daylight>,
}

#[derive(Debug, PartialEq)]
struct Daylight {
    offset_s: i32,
    /// When daylight time starts, in local standard time.
    start: (RuleDay, i64),
    /// When it ends, in local daylight time.
    end: (RuleDay, i64),
}

/// A day of the year in a POSIX TZ rule.
#[derive(Clone, Copy, Debug, PartialEq)]
enum RuleDay {
    /// `Jn`: day 1 to 365, February 29 never counted.
    Julian(u16),
    /// `n`: day 0 to 365, February 29 counted.
    Zero(u16),
    /// `Mm.w.d`: weekday `d` (0 is Sunday) of week `w` (5 is the last) of month `m`.
    MonthWeek { month: u8, week: u8, weekday: u8 },
}

impl RuleDay {
    /// Days from 1970-01-01 to this day of `year`.
    fn days(self, year: i64) -> i64 {
        let january_first = days_from_civil(year, 1, 1);
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        match self {
            RuleDay::Julian(n) => january_first + i64::from(n) - 1 + i64::from(leap && n >= 60),
            RuleDay::Zero(n) => january_first + i64::from(n),
            RuleDay::MonthWeek {
                month,
                week,
                weekday,
            } => {
                let first = days_from_civil(year, i64::from(month), 1);
                // 1970-01-01 was a Thursday (weekday 4).
                let first_weekday = (first + 4).rem_euclid(7);
                let mut day =
                    (i64::from(weekday) - first_weekday).rem_euclid(7) + 7 * (i64::from(week) - 1);
                let month_days = i64::from(days_in_month(year.clamp(0, 9999) as u16, month));
                while day >= month_days {
                    day -= 7;
                }
                first + day
            }
        }
    }
}

impl Rule {
    fn offset_at(&self, unix_s: i64) -> i32 {
        let Some(daylight) = &self.daylight else {
            return self.standard_s;
        };
        let local_days = (unix_s + i64::from(self.standard_s)).div_euclid(SECONDS_PER_DAY);
        let Some(year) = u32::try_from(local_days + DAYS_0000_TO_1970)
            .ok()
            .and_then(|days| Date::from_days(days).ok())
            .map(|date| i64::from(date.year))
        else {
            return self.standard_s;
        };
        let instant = |(day, time): (RuleDay, i64), offset: i32| {
            day.days(year) * SECONDS_PER_DAY + time - i64::from(offset)
        };
        let start = instant(daylight.start, self.standard_s);
        let end = instant(daylight.end, daylight.offset_s);
        let in_daylight = if start < end {
            (start..end).contains(&unix_s)
        } else {
            // The southern hemisphere: daylight time spans the new year.
            !(end..start).contains(&unix_s)
        };
        if in_daylight {
            daylight.offset_s
        } else {
            self.standard_s
        }
    }

    /// Parses `std offset [dst [offset] ,start[/time],end[/time]]`.
    fn parse(text: &str) -> Option<Rule> {
        let mut rest = text.as_bytes();
        skip_name(&mut rest)?;
        // POSIX offsets count hours west of UTC.
        let standard_s = -i32::try_from(parse_time(&mut rest, 24)?).ok()?;
        if rest.is_empty() {
            return Some(Rule {
                standard_s,
                daylight: None,
            });
        }
        skip_name(&mut rest)?;
        let offset_s = if rest.first() == Some(&b',') {
            standard_s + 3600
        } else {
            -i32::try_from(parse_time(&mut rest, 24)?).ok()?
        };
        let change = |rest: &mut &[u8]| -> Option<(RuleDay, i64)> {
            *rest = rest.strip_prefix(b",")?;
            let day = parse_rule_day(rest)?;
            let time = match rest.strip_prefix(b"/") {
                Some(after) => {
                    *rest = after;
                    parse_time(rest, 167)?
                }
                None => 7200,
            };
            Some((day, time))
        };
        let start = change(&mut rest)?;
        let end = change(&mut rest)?;
        rest.is_empty().then_some(Rule {
            standard_s,
            daylight: Some(Daylight {
                offset_s,
                start,
                end,
            }),
        })
    }
}

/// Skips a zone abbreviation: `<...>`, or three or more letters.
fn skip_name(rest: &mut &[u8]) -> Option<()> {
    if let Some(quoted) = rest.strip_prefix(b"<") {
        let end = quoted.iter().position(|&b| b == b'>')?;
        *rest = &quoted[end + 1..];
        return Some(());
    }
    let len = rest.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    (len >= 3).then(|| *rest = &rest[len..])
}

/// Reads `[+-]hh[:mm[:ss]]` (hours up to `hours_max`) as seconds.
fn parse_time(rest: &mut &[u8], hours_max: i64) -> Option<i64> {
    let sign = match rest.first() {
        Some(b'-') => -1,
        Some(b'+') => 1,
        _ => 0,
    };
    if sign != 0 {
        *rest = &rest[1..];
    }
    let hours = parse_number(rest)?;
    if hours > hours_max {
        return None;
    }
    let mut seconds = hours * 3600;
    for unit in [60, 1] {
        match rest.strip_prefix(b":") {
            Some(after) => {
                *rest = after;
                let part = parse_number(rest)?;
                if part > 59 {
                    return None;
                }
                seconds += part * unit;
            }
            None => break,
        }
    }
    Some(if sign < 0 { -seconds } else { seconds })
}

fn parse_number(rest: &mut &[u8]) -> Option<i64> {
    let len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if len == 0 || len > 3 {
        return None;
    }
    let number = std::str::from_utf8(&rest[..len]).ok()?.parse().ok()?;
    *rest = &rest[len..];
    Some(number)
}

fn parse_rule_day(rest: &mut &[u8]) -> Option<RuleDay> {
    if let Some(after) = rest.strip_prefix(b"J") {
        *rest = after;
        let n = parse_number(rest)?;
        return (1..=365).contains(&n).then_some(RuleDay::Julian(n as u16));
    }
    if let Some(after) = rest.strip_prefix(b"M") {
        *rest = after;
        let month = parse_number(rest)?;
        *rest = rest.strip_prefix(b".")?;
        let week = parse_number(rest)?;
        *rest = rest.strip_prefix(b".")?;
        let weekday = parse_number(rest)?;
        let valid = (1..=12).contains(&month) && (1..=5).contains(&week) && weekday <= 6;
        return valid.then_some(RuleDay::MonthWeek {
            month: month as u8,
            week: week as u8,
            weekday: weekday as u8,
        });
    }
    let n = parse_number(rest)?;
    (n <= 365).then_some(RuleDay::Zero(n as u16))
}

#[cfg(test)]
mod tests;
