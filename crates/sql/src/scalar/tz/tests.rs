use super::*;

fn dt(text: &str) -> DateTime {
    DateTime::parse(text).unwrap()
}

fn seconds(text: &str) -> i64 {
    (unix_micros(&dt(text)) / MICROS_PER_SECOND) as i64
}

/// The local time `text` in `zone`, read back as UTC text.
fn utc_of(zone: &TimeZone, text: &str) -> String {
    let micros = zone.local_to_unix_micros(&dt(text));
    from_unix_micros(micros).unwrap().display_fsp(6)
}

/// A TZif version 2 file: `transitions` (UTC seconds, type index), `types` (offset,
/// is-DST), and the footer.
fn tzif(transitions: &[(i64, u8)], types: &[(i32, bool)], footer: &str) -> Vec<u8> {
    let header = |out: &mut Vec<u8>, times: usize| {
        out.extend_from_slice(b"TZif2");
        out.extend_from_slice(&[0; 15]);
        for count in [0, 0, 0, times, types.len(), 4] {
            out.extend_from_slice(&(count as u32).to_be_bytes());
        }
    };
    let mut out = Vec::new();
    // An empty version-1 block (no transitions), as `zic -b slim` writes.
    header(&mut out, 0);
    for (offset, dst) in types {
        out.extend_from_slice(&offset.to_be_bytes());
        out.extend_from_slice(&[u8::from(*dst), 0]);
    }
    out.extend_from_slice(b"ABC\0");
    header(&mut out, transitions.len());
    for (t, _) in transitions {
        out.extend_from_slice(&t.to_be_bytes());
    }
    out.extend(transitions.iter().map(|(_, i)| *i));
    for (offset, dst) in types {
        out.extend_from_slice(&offset.to_be_bytes());
        out.extend_from_slice(&[u8::from(*dst), 0]);
    }
    out.extend_from_slice(b"ABC\0");
    out.push(b'\n');
    out.extend_from_slice(footer.as_bytes());
    out.push(b'\n');
    out
}

#[test]
fn a_tzif_file_gives_its_offsets_then_its_rule() {
    // Standard +1 until 2024-03-31 01:00 UTC, then +2 until 2024-10-27 01:00 UTC, then
    // the footer's rule (Central European Time).
    let bytes = tzif(
        &[
            (seconds("2024-03-31 01:00:00"), 1),
            (seconds("2024-10-27 01:00:00"), 0),
        ],
        &[(3600, false), (7200, true)],
        "CET-1CEST,M3.5.0,M10.5.0/3",
    );
    let zone = parse_tzif(&bytes).unwrap();
    let zone = TimeZone::Named(Arc::new(zone));
    for (at, offset) in [
        ("2000-06-01 00:00:00", 3600), // before the first transition: type 0
        ("2024-03-31 00:59:59", 3600),
        ("2024-03-31 01:00:00", 7200),
        ("2024-10-27 00:59:59", 7200),
        ("2024-10-27 01:00:00", 3600),
        ("2040-07-01 12:00:00", 7200), // the rule: summer
        ("2040-12-01 12:00:00", 3600), // the rule: winter
        ("2040-03-25 00:59:59", 3600), // last Sunday of March 2040 is the 25th
        ("2040-03-25 01:00:00", 7200),
        ("2040-10-28 00:59:59", 7200), // last Sunday of October 2040 is the 28th
        ("2040-10-28 01:00:00", 3600),
    ] {
        assert_eq!(zone.offset_at(seconds(at)), offset, "at {at} UTC");
    }
}

#[test]
fn malformed_tzif_files_are_refused() {
    let good = tzif(&[(0, 0)], &[(3600, false)], "CET-1");
    assert!(parse_tzif(&good).is_some());
    for cut in 0..good.len() - 1 {
        assert!(parse_tzif(&good[..cut]).is_none(), "cut at {cut}");
    }
    let mut bad_magic = good.clone();
    bad_magic[0] = b'X';
    assert!(parse_tzif(&bad_magic).is_none());
    // A type index past the types.
    let bad_index = tzif(&[(0, 5)], &[(3600, false)], "CET-1");
    assert!(parse_tzif(&bad_index).is_none());
    // Transitions out of order.
    let unordered = tzif(&[(10, 0), (5, 0)], &[(3600, false)], "CET-1");
    assert!(parse_tzif(&unordered).is_none());
    // An offset past 26 hours.
    let wide = tzif(&[(0, 0)], &[(30 * 3600, false)], "CET-1");
    assert!(parse_tzif(&wide).is_none());
    // A footer that is not a rule.
    let footer = tzif(&[(0, 0)], &[(3600, false)], "1CET");
    assert!(parse_tzif(&footer).is_none());
}

#[test]
fn posix_rules_parse_and_place_their_changes() {
    let rule = |text: &str| Rule::parse(text).unwrap_or_else(|| panic!("{text}"));
    // Fixed zones, with quoted names and minutes.
    assert_eq!(rule("<+0530>-5:30").offset_at(0), 5 * 3600 + 1800);
    assert_eq!(rule("EST5").offset_at(0), -5 * 3600);
    // New York: second Sunday of March 02:00 EST to first Sunday of November 02:00 EDT.
    let new_york = rule("EST5EDT,M3.2.0,M11.1.0");
    assert_eq!(
        new_york.offset_at(seconds("2041-03-10 06:59:59")),
        -5 * 3600
    );
    assert_eq!(
        new_york.offset_at(seconds("2041-03-10 07:00:00")),
        -4 * 3600
    );
    assert_eq!(
        new_york.offset_at(seconds("2041-11-03 05:59:59")),
        -4 * 3600
    );
    assert_eq!(
        new_york.offset_at(seconds("2041-11-03 06:00:00")),
        -5 * 3600
    );
    // Sydney: daylight time spans the new year.
    let sydney = rule("AEST-10AEDT,M10.1.0,M4.1.0/3");
    assert_eq!(sydney.offset_at(seconds("2041-01-15 00:00:00")), 11 * 3600);
    assert_eq!(sydney.offset_at(seconds("2041-06-15 00:00:00")), 10 * 3600);
    assert_eq!(sydney.offset_at(seconds("2041-12-15 00:00:00")), 11 * 3600);
    // Julian days, with and without February 29, and a negative time.
    let julian = rule("AAA0BBB,J60/0,300/-1");
    assert_eq!(julian.offset_at(seconds("2040-02-29 23:59:59")), 0);
    assert_eq!(julian.offset_at(seconds("2040-03-01 00:00:00")), 3600);
    assert_eq!(
        julian.daylight.as_ref().unwrap().end,
        (RuleDay::Zero(300), -3600)
    );
    for bad in [
        "",
        "X5",
        "EST",
        "EST5EDT,M13.1.0,M11.1.0",
        "EST5EDT,M3.6.0,M11.1.0",
        "EST5EDT,M3.2.7,M11.1.0",
        "EST5EDT,J0,J10",
        "EST5EDT,M3.2.0",
        "EST5EDT,M3.2.0,M11.1.0,",
        "EST25",
        "<EST5",
    ] {
        assert_eq!(Rule::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn fixed_offsets_convert_both_ways() {
    let india = TimeZone::resolve("+05:30").unwrap();
    assert_eq!(india, TimeZone::Fixed(5 * 3600 + 1800));
    assert_eq!(
        utc_of(&india, "2024-01-01 05:30:00.25"),
        "2024-01-01 00:00:00.250000"
    );
    let local = india
        .to_local(unix_micros(&dt("2024-01-01 00:00:00")))
        .unwrap();
    assert_eq!(local, dt("2024-01-01 05:30:00"));
    assert_eq!(TimeZone::resolve("SYSTEM"), Some(TimeZone::UTC));
    assert_eq!(TimeZone::resolve("utc"), Some(TimeZone::UTC));
    assert_eq!(TimeZone::resolve("+14:01"), None);
}

/// The machine's tzdata (`scripts/test` installs Debian's `tzdata`).
fn berlin() -> TimeZone {
    TimeZone::resolve("Europe/Berlin").expect("tzdata has Europe/Berlin")
}

#[test]
fn named_zones_convert_through_gaps_and_overlaps_as_mysql_does() {
    let zone = berlin();
    // MariaDB 10.11 with its time zone tables loaded from the same tzdata gives these.
    for (local, utc) in [
        // A spring-forward gap: the instant the gap ends, seconds dropped, fraction kept.
        ("2024-03-31 02:30:15.5", "2024-03-31 01:00:00.500000"),
        ("2024-03-31 02:00:00", "2024-03-31 01:00:00.000000"),
        ("2024-03-31 03:00:00", "2024-03-31 01:00:00.000000"),
        ("2024-03-31 01:59:59", "2024-03-31 00:59:59.000000"),
        // A fall-back overlap: the earlier instant (summer time).
        ("2024-10-27 02:30:00", "2024-10-27 00:30:00.000000"),
        ("2024-10-27 03:00:00", "2024-10-27 02:00:00.000000"),
    ] {
        assert_eq!(utc_of(&zone, local), utc, "{local} in Berlin");
    }
    // UTC to local is one-to-one across the overlap.
    let local = |utc: &str| zone.to_local(unix_micros(&dt(utc))).unwrap().display_fsp(0);
    assert_eq!(local("2024-10-27 00:30:00"), "2024-10-27 02:30:00");
    assert_eq!(local("2024-10-27 01:30:00"), "2024-10-27 02:30:00");
    assert_eq!(local("2024-01-01 00:00:00"), "2024-01-01 01:00:00");
    assert_eq!(local("1970-01-01 00:00:00"), "1970-01-01 01:00:00");
}

#[test]
fn the_footer_rule_agrees_with_the_transitions_it_continues() {
    // Europe/Berlin's file lists transitions to 2037; its rule must place every one of
    // the years it covers where the file does.
    let TimeZone::Named(zone) = berlin() else {
        panic!("a named zone")
    };
    let rule = zone.rule.as_ref().expect("Berlin's file has a footer");
    let from = seconds("2000-01-01 00:00:00");
    let listed = zone.transitions_s.partition_point(|&t| t < from);
    assert!(
        zone.transitions_s.len() - listed > 60,
        "transitions to 2037"
    );
    for (&t, &offset) in zone.transitions_s[listed..]
        .iter()
        .zip(&zone.offsets_s[listed..])
    {
        assert_eq!(rule.offset_at(t), offset, "at the transition {t}");
        assert_ne!(
            rule.offset_at(t - 1),
            offset,
            "just before the transition {t}"
        );
    }
}

#[test]
fn names_match_without_case_and_read_only_zone_files() {
    for (given, spelled) in [
        ("europe/BERLIN", "Europe/Berlin"),
        (
            "America/Argentina/Buenos_Aires",
            "America/Argentina/Buenos_Aires",
        ),
    ] {
        match TimeZone::resolve(given) {
            Some(TimeZone::Named(zone)) => assert_eq!(zone.name(), spelled),
            other => panic!("{given}: {other:?}"),
        }
    }
    for bad in [
        "Nope/Zone",
        "Europe",
        "../../etc/passwd",
        "/etc/passwd",
        "Europe//Berlin",
        "Europe/./Berlin",
        "zone.tab",
        "tzdata.zi",
        "Europe/Berlin\0",
        "-Europe",
        "",
    ] {
        assert_eq!(TimeZone::resolve(bad), None, "{bad:?}");
    }
    let long = "A".repeat(TIME_ZONE_NAME_MAX_BYTES + 1);
    assert_eq!(TimeZone::resolve(&long), None);
}
