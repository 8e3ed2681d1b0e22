//! Column pruning for parallel pipelines: the scan decodes only what the steps and
//! the sink read.
//!
//! A pipeline's expressions name columns by their position in the rows the plan
//! describes (the table's columns, then a projection's, then a probe's left columns
//! followed by its build side's). [`prune`] works out which of those each step and
//! the sink read, walking from the sink back to the scan, asks the scan for only the
//! table columns someone reads (an empty projection when none is read: `COUNT(*)`
//! needs only the rows' count), and rewrites every expression to read the position
//! its column has in the chunks the workers actually pass: the projected columns in
//! table order, a projection's outputs, a probe's surviving left columns followed by
//! all of its build side's.
//!
//! Invariants:
//!
//! 1. Every column an expression of a step or of the sink reads is decoded, and after
//!    [`prune`] the expression reads it at its position in the pruned chunk (the
//!    forward walk asserts this when it rewrites).
//! 2. Each pruned chunk position holds at most one plan column, so a collecting sink
//!    can move columns back to their plan positions without copying.
//! 3. A pipeline whose steps and sink read every column is left exactly as it was
//!    (no projection, no rewrite): `SELECT *` and the encoder's direct paths keep
//!    their shape.
//! 4. Projections evaluate every output even when no one above reads it, as the
//!    serial operators do, so warnings and errors do not depend on the plan's shape.

use crate::expr::Expr;
use crate::plan::JoinKind;

use super::{PendingStep, SinkSpec, Step};

/// Marks in `flags` the columns `expr` reads; false if it reads one past the flags
/// or something outside the row (then the caller keeps every column).
fn mark(expr: &Expr, flags: &mut [bool]) -> bool {
    let mut ok = true;
    expr.visit(&mut |e| match e {
        Expr::Column(c) => match flags.get_mut(*c) {
            Some(flag) => *flag = true,
            None => ok = false,
        },
        Expr::Subquery { .. } | Expr::Outer(_) => ok = false,
        _ => {}
    });
    ok
}

/// Rewrites `expr` to read each column at `map[column]`.
fn remap(expr: &mut Expr, map: &[Option<usize>]) {
    expr.remap_columns(&|c| {
        map.get(c)
            .copied()
            .flatten()
            .expect("a pipeline expression reads only columns the scan decodes")
    });
}

/// Whether a probe of this kind appends its build side's columns to the row.
fn appends_build_side(kind: JoinKind) -> bool {
    matches!(kind, JoinKind::Inner | JoinKind::Left)
}

/// The width of the rows a step outputs, given its input's.
fn output_width(step: &PendingStep<'_>, input: usize) -> usize {
    match step {
        PendingStep::Ready(Step::Filter(_)) => input,
        PendingStep::Ready(Step::Project(exprs)) => exprs.len(),
        PendingStep::Ready(Step::Probe(probe)) => {
            input + appends_build_side(probe.kind) as usize * probe.right_width
        }
        PendingStep::Build { right, kind, .. } => {
            input + appends_build_side(*kind) as usize * right.width()
        }
    }
}

/// Prunes the columns of a pipeline over a table of `table_width` columns: returns
/// the table columns its scan must decode (ascending; `None`: all of them, and then
/// nothing was rewritten), having rewritten `steps` and `sink` to read the pruned
/// chunks. `needed` flags the output columns a collecting sink's consumer reads
/// (`None`: all); the others it returns NULL. Each probe's build side is told which
/// of its columns are read (`right_needed`).
pub(super) fn prune(
    steps: &mut [PendingStep<'_>],
    sink: &mut SinkSpec,
    table_width: usize,
    needed: Option<&[bool]>,
) -> Option<Vec<usize>> {
    let mut widths = Vec::with_capacity(steps.len() + 1);
    widths.push(table_width);
    for step in steps.iter() {
        // A probe built elsewhere has no plan to tell its build side's columns.
        if matches!(step, PendingStep::Ready(Step::Probe(_))) {
            return None;
        }
        widths.push(output_width(
            step,
            *widths.last().expect("the table's width"),
        ));
    }
    let sink_width = *widths.last().expect("the table's width");
    // Backwards from the sink: what each step's input must hold.
    let mut read = match &*sink {
        SinkSpec::Aggregate { group, aggs, .. } => {
            let mut flags = vec![false; sink_width];
            let exprs = group.iter().chain(aggs.iter().flat_map(|a| a.exprs()));
            for expr in exprs {
                if !mark(expr, &mut flags) {
                    return None;
                }
            }
            flags
        }
        SinkSpec::Collect { .. } => match needed {
            Some(flags) if flags.len() == sink_width => flags.to_vec(),
            _ => vec![true; sink_width],
        },
        SinkSpec::Encode(_) => vec![true; sink_width],
    };
    for (step, &input_width) in steps.iter_mut().zip(&widths).rev() {
        read = match step {
            PendingStep::Ready(Step::Filter(predicate)) => {
                if !mark(predicate, &mut read) {
                    return None;
                }
                read
            }
            PendingStep::Ready(Step::Project(exprs)) => {
                let mut input = vec![false; input_width];
                for expr in exprs.iter() {
                    if !mark(expr, &mut input) {
                        return None;
                    }
                }
                input
            }
            PendingStep::Ready(Step::Probe(_)) => unreachable!("refused above"),
            PendingStep::Build {
                right,
                right_keys,
                left_keys,
                filter,
                right_needed,
                ..
            } => {
                // The filter reads the joined row: the left columns, then the build
                // side's, whether or not the probe outputs them.
                let mut joined = vec![false; input_width + right.width()];
                joined[..read.len()].copy_from_slice(&read);
                if let Some(filter) = filter
                    && !mark(filter, &mut joined)
                {
                    return None;
                }
                let mut right_read = joined.split_off(input_width);
                for key in right_keys.iter() {
                    if !mark(key, &mut right_read) {
                        return None;
                    }
                }
                *right_needed = right_read.contains(&false).then_some(right_read);
                for key in left_keys.iter() {
                    if !mark(key, &mut joined) {
                        return None;
                    }
                }
                joined
            }
        };
    }
    if !read.contains(&false) {
        return None;
    }
    let projection: Vec<usize> = (0..table_width).filter(|&c| read[c]).collect();
    // Forwards from the scan: where each column is in the pruned chunks.
    let mut map: Vec<Option<usize>> = vec![None; table_width];
    for (position, &c) in projection.iter().enumerate() {
        map[c] = Some(position);
    }
    let mut width = projection.len();
    for step in steps.iter_mut() {
        match step {
            PendingStep::Ready(Step::Filter(predicate)) => remap(predicate, &map),
            PendingStep::Ready(Step::Project(exprs)) => {
                exprs.iter_mut().for_each(|e| remap(e, &map));
                map = (0..exprs.len()).map(Some).collect();
                width = exprs.len();
            }
            PendingStep::Ready(Step::Probe(_)) => unreachable!("refused above"),
            PendingStep::Build {
                right,
                left_keys,
                filter,
                kind,
                ..
            } => {
                left_keys.iter_mut().for_each(|e| remap(e, &map));
                let right_width = right.width();
                let mut joined = map.clone();
                joined.extend((width..width + right_width).map(Some));
                if let Some(filter) = filter {
                    remap(filter, &joined);
                }
                if appends_build_side(*kind) {
                    map = joined;
                    width += right_width;
                }
            }
        }
    }
    match sink {
        SinkSpec::Aggregate { group, aggs, .. } => {
            group.iter_mut().for_each(|e| remap(e, &map));
            for agg in aggs.iter_mut() {
                agg.exprs_mut().for_each(|e| remap(e, &map));
            }
        }
        SinkSpec::Collect { layout } => {
            let identity = map.len() == width && map.iter().enumerate().all(|(i, p)| *p == Some(i));
            if !identity {
                *layout = Some(map);
            }
        }
        SinkSpec::Encode(_) => {
            assert!(
                map.iter().enumerate().all(|(i, p)| *p == Some(i)),
                "an encoding pipeline outputs every column it computes"
            );
        }
    }
    Some(projection)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{OutputColumn, Plan};
    use crate::types::SqlType;
    use tarn_row::types::Collation;

    fn col(c: usize) -> Expr {
        Expr::Column(c)
    }

    fn both(a: Expr, b: Expr) -> Expr {
        Expr::And(Box::new(a), Box::new(b))
    }

    fn columns_of(e: &Expr) -> Vec<usize> {
        let mut out = Vec::new();
        e.columns(&mut out);
        out
    }

    /// A build side of `width` columns (its rows do not matter here).
    fn build_side(width: usize) -> Plan {
        Plan::Values {
            rows: Vec::new(),
            columns: (0..width)
                .map(|i| OutputColumn::new(format!("r{i}"), SqlType::Int { bits: 64 }, true))
                .collect(),
        }
    }

    fn probe(right: &Plan, kind: JoinKind, left_key: usize, filter: Expr) -> PendingStep<'_> {
        PendingStep::Build {
            right,
            right_keys: vec![col(0)],
            left_keys: vec![col(left_key)],
            collations: vec![Collation::CaseInsensitive],
            filter: Some(filter),
            kind,
            right_needed: None,
        }
    }

    #[test]
    fn probes_number_the_build_side_after_the_surviving_left_columns() {
        // Table of 6 columns; an inner probe (key: left column 1) of a 3-column
        // build side whose filter reads left column 4 and build column 2 (plan
        // column 8); the sink groups by left column 4. No one reads build column 1.
        let right = build_side(3);
        let mut steps = vec![probe(&right, JoinKind::Inner, 1, both(col(4), col(8)))];
        let mut sink = SinkSpec::Aggregate {
            group: vec![col(4)],
            collations: vec![Collation::CaseInsensitive],
            aggs: Vec::new(),
        };
        let projection = prune(&mut steps, &mut sink, 6, None);
        assert_eq!(projection, Some(vec![1, 4]));
        let PendingStep::Build {
            left_keys,
            filter,
            right_needed,
            ..
        } = &steps[0]
        else {
            unreachable!()
        };
        // Left: 1 -> 0, 4 -> 1; the build side from position 2: 8 -> 4.
        assert_eq!(columns_of(&left_keys[0]), vec![0]);
        assert_eq!(columns_of(filter.as_ref().unwrap()), vec![1, 4]);
        assert_eq!(right_needed.as_deref(), Some(&[true, false, true][..]));
        let SinkSpec::Aggregate { group, .. } = &sink else {
            unreachable!()
        };
        assert_eq!(columns_of(&group[0]), vec![1]);
    }

    #[test]
    fn semi_and_anti_probes_keep_only_left_columns() {
        for kind in [JoinKind::Semi, JoinKind::Anti] {
            // The filter reads build column 1 (plan column 5 over 4 left columns);
            // after the probe the row is the left columns only, and a projection
            // reads left column 3.
            let right = build_side(2);
            let mut steps = vec![
                probe(&right, kind, 2, col(5)),
                PendingStep::Ready(Step::Project(vec![col(3)])),
            ];
            let mut sink = SinkSpec::Collect { layout: None };
            let projection = prune(&mut steps, &mut sink, 4, None);
            assert_eq!(projection, Some(vec![2, 3]), "{kind:?}");
            let PendingStep::Build {
                left_keys,
                filter,
                right_needed,
                ..
            } = &steps[0]
            else {
                unreachable!()
            };
            assert_eq!(columns_of(&left_keys[0]), vec![0]);
            assert_eq!(columns_of(filter.as_ref().unwrap()), vec![3]);
            // The build side's key (column 0) and the filter's column 1.
            assert_eq!(right_needed, &None, "{kind:?}");
            let PendingStep::Ready(Step::Project(exprs)) = &steps[1] else {
                unreachable!()
            };
            assert_eq!(columns_of(&exprs[0]), vec![1]);
            assert!(matches!(sink, SinkSpec::Collect { layout: None }));
        }
    }

    #[test]
    fn a_collecting_sink_gets_unread_columns_back_as_nulls() {
        // A filter on column 2 of 5; the consumer reads columns 0 and 2.
        let mut steps = vec![PendingStep::Ready(Step::Filter(col(2)))];
        let mut sink = SinkSpec::Collect { layout: None };
        let needed = [true, false, true, false, false];
        let projection = prune(&mut steps, &mut sink, 5, Some(&needed));
        assert_eq!(projection, Some(vec![0, 2]));
        let SinkSpec::Collect { layout } = &sink else {
            unreachable!()
        };
        assert_eq!(
            layout.as_deref(),
            Some(&[Some(0), None, Some(1), None, None][..])
        );
        // Every column read: nothing changes.
        let mut steps = vec![PendingStep::Ready(Step::Filter(col(2)))];
        let mut sink = SinkSpec::Collect { layout: None };
        assert_eq!(prune(&mut steps, &mut sink, 5, None), None);
        let PendingStep::Ready(Step::Filter(predicate)) = &steps[0] else {
            unreachable!()
        };
        assert_eq!(columns_of(predicate), vec![2]);
    }

    #[test]
    fn count_star_decodes_no_column() {
        let mut steps = Vec::new();
        let mut sink = SinkSpec::Aggregate {
            group: Vec::new(),
            collations: Vec::new(),
            aggs: Vec::new(),
        };
        assert_eq!(prune(&mut steps, &mut sink, 16, None), Some(Vec::new()));
    }
}
