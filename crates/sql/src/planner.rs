//! The planner: join order, join methods and access paths for one query block.
//!
//! The binder hands over a [`QueryBlock`]: the FROM relations (base tables, derived
//! plans, and parenthesised joins on the padded side of an outer join, which the
//! binder plans on their own so that they are padded whole) laid side by side in one
//! scope, the WHERE and inner-join conjuncts
//! over that scope, and the LEFT JOINs with their ON conjuncts. [`plan_block`]:
//!
//! 1. splits the predicates into conjuncts and pushes each one that reads a single
//!    relation down to it (for a base table, into its scan's filter);
//! 2. picks each base table's access path from its conjuncts ([`choose_access`]):
//!    a primary-key point lookup, a primary-key range, a secondary-index range (with
//!    S2 prefetch when the range is long), or S1's parallel full scan — by estimated
//!    rows from the table's statistics and the index hints;
//! 3. orders the inner joins greedily: the smallest relation first, then always a
//!    relation joined by an equality to those placed, smallest estimate first;
//! 4. joins each with an index nested-loop join when the placed side is small and the
//!    new table has a key on the join columns, else with a hash join that builds on
//!    the smaller side; the keys of an `=` between types that compare by conversion
//!    (a string with a number) are hashed in the form they compare in
//!    ([`KeyForm`]), and such a key on a string column never drives an index
//!    lookup (many strings equal one number);
//! 5. adds the LEFT JOINs in their written order, then the remaining filters, and
//!    restores the scope's column order.
//!
//! Conjuncts that hold correlated subqueries are evaluated last, over the scope's own
//! column order, because their subqueries address the row by its scope positions.
//! Every conjunct used for an access path is also kept in the scan's filter, so an
//! access path only ever narrows what is read, never decides what matches.

use std::ops::Bound;
use std::sync::Arc;

use sqlparser::ast::TableIndexHintType;
use tarn_catalog::{RowLock, Table, WaitPolicy};
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::types::Collation;

use crate::expr::{CmpOp, Expr};
use crate::limits::SMALL_RANGE_ROWS;
use crate::plan::{Access, JoinKind, OutputColumn, Plan};
use crate::scalar::compare::KeyForm;

/// An index hint on a table reference.
#[derive(Clone, Debug)]
pub struct IndexHint {
    pub kind: TableIndexHintType,
    pub indexes: Vec<String>,
}

/// One FROM relation.
pub enum FromRelation {
    Table {
        table: Arc<Table>,
        alias: String,
        columns: Vec<OutputColumn>,
        /// Position of its first column in the block's scope.
        offset: usize,
        hints: Vec<IndexHint>,
        lock: RowLock,
        wait: WaitPolicy,
    },
    Plan {
        plan: Plan,
        offset: usize,
    },
}

impl FromRelation {
    pub fn offset(&self) -> usize {
        match self {
            FromRelation::Table { offset, .. } | FromRelation::Plan { offset, .. } => *offset,
        }
    }

    fn width(&self) -> usize {
        match self {
            FromRelation::Table { columns, .. } => columns.len(),
            FromRelation::Plan { plan, .. } => plan.width(),
        }
    }
}

/// A base table relation as the join step needs it: handle, alias, columns, hints,
/// and the statement's locking clause.
type BaseTable = (
    Arc<Table>,
    String,
    Vec<OutputColumn>,
    Vec<IndexHint>,
    RowLock,
    WaitPolicy,
);

/// A LEFT JOIN of relation `relation` with its ON conjuncts.
pub struct LeftJoin {
    pub relation: usize,
    pub on: Vec<Expr>,
}

/// A query block's FROM and WHERE, as the binder hands them to [`plan_block`].
#[derive(Default)]
pub struct QueryBlock {
    pub relations: Vec<FromRelation>,
    /// WHERE and inner-join conditions over the block's scope.
    pub conjuncts: Vec<Expr>,
    pub left_joins: Vec<LeftJoin>,
    /// ON conditions not yet bound (the binder's; relation None: an inner join).
    pub pending_on: Vec<(Option<usize>, sqlparser::ast::Expr)>,
}

/// Splits AND chains into conjuncts.
pub fn split_conjuncts(expr: Expr, out: &mut Vec<Expr>) {
    match expr {
        Expr::And(a, b) => {
            split_conjuncts(*a, out);
            split_conjuncts(*b, out);
        }
        other => out.push(other),
    }
}

/// Splits an OR into its disjuncts.
fn split_disjuncts(expr: &Expr, out: &mut Vec<Expr>) {
    match expr {
        Expr::Or(a, b) => {
            split_disjuncts(a, out);
            split_disjuncts(b, out);
        }
        other => out.push(other.clone()),
    }
}

/// `(A AND X) OR (A AND Y)` is `A AND (X OR Y)`: the conjuncts every disjunct has are
/// taken out, so a join condition repeated in each branch of an OR (TPC-H Q19) is
/// seen as one and can drive a hash join.
fn factor_disjunction(expr: Expr, out: &mut Vec<Expr>) {
    if !matches!(expr, Expr::Or(..)) {
        out.push(expr);
        return;
    }
    let mut disjuncts = Vec::new();
    split_disjuncts(&expr, &mut disjuncts);
    let branches: Vec<Vec<Expr>> = disjuncts
        .into_iter()
        .map(|d| {
            let mut c = Vec::new();
            split_conjuncts(d, &mut c);
            c
        })
        .collect();
    let key = |e: &Expr| format!("{e:?}");
    let common: Vec<Expr> = branches[0]
        .iter()
        .filter(|c| {
            branches[1..]
                .iter()
                .all(|b| b.iter().any(|x| key(x) == key(c)))
        })
        .cloned()
        .collect();
    if common.is_empty() {
        out.push(expr);
        return;
    }
    let common_keys: Vec<String> = common.iter().map(key).collect();
    let mut rest = Vec::new();
    for branch in branches {
        let remaining: Vec<Expr> = branch
            .into_iter()
            .filter(|c| !common_keys.contains(&key(c)))
            .collect();
        match conjoin(remaining) {
            // A branch that is only the common part makes the OR true.
            None => {
                out.extend(common);
                return;
            }
            Some(e) => rest.push(e),
        }
    }
    out.extend(common);
    let first = rest.remove(0);
    out.push(
        rest.into_iter()
            .fold(first, |acc, e| Expr::Or(Box::new(acc), Box::new(e))),
    );
}

/// ANDs conjuncts together.
pub fn conjoin(mut conjuncts: Vec<Expr>) -> Option<Expr> {
    let first = conjuncts.pop()?;
    Some(
        conjuncts
            .into_iter()
            .rev()
            .fold(first, |acc, c| Expr::And(Box::new(c), Box::new(acc))),
    )
}

/// True if the expression holds a correlated subquery (which must see the scope in
/// its own order).
fn has_correlated_subquery(e: &Expr) -> bool {
    let mut found = false;
    e.visit(&mut |x| {
        if let Expr::Subquery { subquery, .. } = x {
            if subquery.correlated {
                found = true;
            }
        }
    });
    found
}

fn has_outer(e: &Expr) -> bool {
    let mut found = false;
    e.visit(&mut |x| {
        if matches!(x, Expr::Outer(_)) {
            found = true;
        }
    });
    found
}

struct Conjunct {
    expr: Expr,
    /// The relations it reads.
    relations: Vec<usize>,
    applied: bool,
}

/// Plans a query block whose scope is `width` columns wide.
pub fn plan_block(block: QueryBlock, width: usize) -> Result<Plan> {
    let QueryBlock {
        relations,
        conjuncts,
        left_joins,
        ..
    } = block;
    let n = relations.len();
    let owner: Vec<usize> = {
        let mut owner = vec![0; width];
        for (r, rel) in relations.iter().enumerate() {
            for slot in owner.iter_mut().skip(rel.offset()).take(rel.width()) {
                *slot = r;
            }
        }
        owner
    };
    let relations_of = |e: &Expr| -> Vec<usize> {
        let mut cols = Vec::new();
        e.columns(&mut cols);
        let mut rels: Vec<usize> = cols.into_iter().map(|c| owner[c]).collect();
        rels.sort_unstable();
        rels.dedup();
        rels
    };
    let left_joined: Vec<bool> = (0..n)
        .map(|r| left_joins.iter().any(|l| l.relation == r))
        .collect();
    let correlated_block =
        conjuncts.iter().any(has_outer) || left_joins.iter().flat_map(|l| &l.on).any(has_outer);

    let mut split = Vec::new();
    for c in conjuncts {
        let mut parts = Vec::new();
        split_conjuncts(c, &mut parts);
        for p in parts {
            factor_disjunction(p, &mut split);
        }
    }
    let mut conjuncts: Vec<Conjunct> = split
        .into_iter()
        .map(|expr| Conjunct {
            relations: relations_of(&expr),
            expr,
            applied: false,
        })
        .collect();
    let mut last: Vec<Expr> = Vec::new();
    conjuncts.retain(|c| {
        if has_correlated_subquery(&c.expr) {
            last.push(c.expr.clone());
            false
        } else {
            true
        }
    });

    // Local conjuncts per relation (WHERE conjuncts on a left-joined relation wait
    // until after its join; its ON conjuncts that read only it are pushed into it).
    let mut local: Vec<Vec<Expr>> = vec![Vec::new(); n];
    for c in conjuncts.iter_mut() {
        if let [r] = c.relations[..] {
            if !left_joined[r] {
                local[r].push(c.expr.clone());
                c.applied = true;
            }
        }
        if c.relations.is_empty() {
            // Constant conditions (WHERE 1 = 0) filter the first relation.
            local[0].push(c.expr.clone());
            c.applied = true;
        }
    }
    let mut join_on: Vec<Vec<Conjunct>> = (0..n).map(|_| Vec::new()).collect();
    for lj in &left_joins {
        for e in &lj.on {
            let mut parts = Vec::new();
            split_conjuncts(e.clone(), &mut parts);
            for p in parts {
                let rels = relations_of(&p);
                if rels == [lj.relation] {
                    local[lj.relation].push(p);
                } else {
                    join_on[lj.relation].push(Conjunct {
                        expr: p,
                        relations: rels,
                        applied: false,
                    });
                }
            }
        }
    }

    // Base plans with their local filters and access paths.
    let mut bases: Vec<Option<Plan>> = Vec::with_capacity(n);
    let mut offsets = Vec::with_capacity(n);
    let mut table_info: Vec<Option<BaseTable>> = Vec::with_capacity(n);
    for (r, rel) in relations.into_iter().enumerate() {
        let offset = rel.offset();
        offsets.push(offset);
        let filters: Vec<Expr> = local[r]
            .iter()
            .map(|e| {
                let mut e = e.clone();
                e.remap_columns(&|c| c - offset);
                e
            })
            .collect();
        match rel {
            FromRelation::Table {
                table,
                alias,
                columns,
                hints,
                lock,
                wait,
                ..
            } => {
                let scan = scan_plan(&table, &alias, &columns, &hints, lock, wait, &filters)?;
                bases.push(Some(scan));
                table_info.push(Some((table, alias, columns, hints, lock, wait)));
            }
            FromRelation::Plan { plan, .. } => {
                let plan = match conjoin(filters) {
                    Some(predicate) => Plan::Filter {
                        input: Box::new(plan),
                        predicate,
                    },
                    None => plan,
                };
                bases.push(Some(plan));
                table_info.push(None);
            }
        }
    }

    // Greedy inner join order.
    let inner: Vec<usize> = (0..n).filter(|&r| !left_joined[r]).collect();
    let first = *inner
        .iter()
        .min_by(|&&a, &&b| {
            let ea = bases[a].as_ref().map_or(0.0, Plan::estimated_rows);
            let eb = bases[b].as_ref().map_or(0.0, Plan::estimated_rows);
            ea.partial_cmp(&eb).unwrap_or(std::cmp::Ordering::Equal)
        })
        .ok_or_else(|| Error::sql(1096, "HY000", "No tables used"))?;
    let mut plan = bases[first].take().expect("each relation is placed once");
    let mut layout: Vec<usize> = (offsets[first]..offsets[first] + plan.width()).collect();
    let mut placed = vec![first];
    apply_ready(&mut plan, &mut conjuncts, &placed, &layout);

    while placed.len() < inner.len() {
        let candidates: Vec<usize> = inner
            .iter()
            .copied()
            .filter(|r| !placed.contains(r))
            .collect();
        let connected = |r: usize| {
            conjuncts.iter().any(|c| {
                !c.applied
                    && c.relations.contains(&r)
                    && c.relations.iter().all(|x| *x == r || placed.contains(x))
                    && equi_sides(&c.expr, &owner, &placed, r).is_some()
            })
        };
        let estimate = |r: usize| bases[r].as_ref().map_or(f64::MAX, Plan::estimated_rows);
        let next = candidates
            .iter()
            .copied()
            .filter(|&r| connected(r))
            .min_by(|&a, &b| {
                estimate(a)
                    .partial_cmp(&estimate(b))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .or_else(|| {
                candidates.iter().copied().min_by(|&a, &b| {
                    estimate(a)
                        .partial_cmp(&estimate(b))
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
            })
            .expect("candidates remain");
        let right = bases[next].take().expect("each relation is placed once");
        let right_offset = offsets[next];
        let right_width = right.width();
        // Equalities between the placed relations and `next`.
        let mut keys = Vec::new();
        for c in conjuncts.iter_mut() {
            if c.applied
                || !c.relations.contains(&next)
                || !c.relations.iter().all(|x| *x == next || placed.contains(x))
            {
                continue;
            }
            if let Some(key) = equi_sides(&c.expr, &owner, &placed, next) {
                keys.push(key);
                c.applied = true;
            }
        }
        plan = join(
            plan,
            &mut layout,
            right,
            right_offset,
            right_width,
            keys,
            JoinKind::Inner,
            table_info[next].as_ref(),
            &local[next],
            correlated_block,
        )?;
        placed.push(next);
        apply_ready(&mut plan, &mut conjuncts, &placed, &layout);
    }

    // LEFT JOINs in written order.
    for lj in &left_joins {
        let r = lj.relation;
        let right = bases[r].take().expect("each relation is placed once");
        let right_width = right.width();
        let mut keys = Vec::new();
        let mut rest = Vec::new();
        for c in join_on[r].drain(..) {
            match equi_sides(&c.expr, &owner, &placed, r) {
                Some(pair) if c.relations.iter().all(|x| *x == r || placed.contains(x)) => {
                    keys.push(pair)
                }
                _ => rest.push(c.expr),
            }
        }
        let mut joined_layout = layout.clone();
        joined_layout.extend(offsets[r]..offsets[r] + right_width);
        let filter = conjoin(rest).map(|mut f| {
            f.remap_columns(&|c| position(&joined_layout, c));
            f
        });
        plan = hash_join(
            plan,
            &mut layout,
            right,
            offsets[r],
            right_width,
            keys,
            JoinKind::Left,
            filter,
        );
        placed.push(r);
        apply_ready(&mut plan, &mut conjuncts, &placed, &layout);
    }

    // Restore the scope's column order.
    let identity = layout.iter().enumerate().all(|(i, &c)| i == c) && layout.len() == width;
    if !identity {
        let columns: Vec<OutputColumn> = (0..width)
            .map(|c| plan.columns()[position(&layout, c)].clone())
            .collect();
        let exprs = (0..width)
            .map(|c| Expr::Column(position(&layout, c)))
            .collect();
        plan = Plan::Project {
            input: Box::new(plan),
            exprs,
            columns,
        };
    }
    let remaining: Vec<Expr> = conjuncts
        .into_iter()
        .filter(|c| !c.applied)
        .map(|c| c.expr)
        .chain(last)
        .collect();
    if let Some(predicate) = conjoin(remaining) {
        plan = Plan::Filter {
            input: Box::new(plan),
            predicate,
        };
    }
    Ok(plan)
}

fn position(layout: &[usize], column: usize) -> usize {
    layout
        .iter()
        .position(|&c| c == column)
        .expect("every referenced column is in the layout")
}

/// Applies the conjuncts whose relations are all placed.
fn apply_ready(plan: &mut Plan, conjuncts: &mut [Conjunct], placed: &[usize], layout: &[usize]) {
    let mut ready = Vec::new();
    for c in conjuncts.iter_mut() {
        if !c.applied && c.relations.iter().all(|r| placed.contains(r)) {
            let mut e = c.expr.clone();
            e.remap_columns(&|col| position(layout, col));
            ready.push(e);
            c.applied = true;
        }
    }
    if let Some(predicate) = conjoin(ready) {
        let input = std::mem::replace(
            plan,
            Plan::Values {
                rows: vec![],
                columns: vec![],
            },
        );
        *plan = Plan::Filter {
            input: Box::new(input),
            predicate,
        };
    }
}

/// An equality a join keys on: its placed side and its new side (in scope positions
/// until [`remap_keys`]), the collation the `=` compares strings under, and the form
/// both sides are hashed in when their types differ ([`KeyForm`]).
type EquiKey = (Expr, Expr, Collation, Option<KeyForm>);

/// If `e` is `a = b` with one side over the placed relations and the other over
/// `next` alone, that key (placed side first).
fn equi_sides(e: &Expr, owner: &[usize], placed: &[usize], next: usize) -> Option<EquiKey> {
    let Expr::Compare {
        op: CmpOp::Eq,
        left,
        right,
        collation,
        key_form,
    } = e
    else {
        return None;
    };
    let rels = |x: &Expr| {
        let mut cols = Vec::new();
        x.columns(&mut cols);
        let mut r: Vec<usize> = cols.into_iter().map(|c| owner[c]).collect();
        r.sort_unstable();
        r.dedup();
        r
    };
    let (l, r) = (rels(left), rels(right));
    let on_placed = |v: &[usize]| !v.is_empty() && v.iter().all(|x| placed.contains(x));
    if on_placed(&l) && r == [next] {
        Some(((**left).clone(), (**right).clone(), *collation, *key_form))
    } else if on_placed(&r) && l == [next] {
        Some(((**right).clone(), (**left).clone(), *collation, *key_form))
    } else {
        None
    }
}

/// Joins `right` (scope columns `right_offset..+right_width`) to `plan`.
#[allow(clippy::too_many_arguments)]
fn join(
    plan: Plan,
    layout: &mut Vec<usize>,
    right: Plan,
    right_offset: usize,
    right_width: usize,
    keys: Vec<EquiKey>,
    kind: JoinKind,
    table: Option<&BaseTable>,
    right_filters: &[Expr],
    correlated_block: bool,
) -> Result<Plan> {
    // An index nested-loop join when few outer rows meet a keyed table.
    if let (Some((t, alias, columns, hints, lock, wait)), false, false) =
        (table, keys.is_empty(), correlated_block)
    {
        let outer_rows = plan.estimated_rows();
        let table_rows = table_rows(t);
        if outer_rows < table_rows {
            // Inner conjuncts: its local filters plus `inner = outer` for each key, the
            // outer side's columns read as `Expr::Outer`. A key on an inner column
            // whose outer side is a plain column can drive the lookup; one on a string
            // column compared with a number or a date cannot (many strings equal
            // one number: `'1'`, `'01'`, `'1.0'`), so it is a filter of key forms
            // that no access path reads as a bound.
            let mut filters: Vec<Expr> = right_filters
                .iter()
                .map(|e| {
                    let mut e = e.clone();
                    e.remap_columns(&|c| c - right_offset);
                    e
                })
                .collect();
            let mut any_key = false;
            for (l, r, collation, key_form) in &keys {
                let mut r = r.clone();
                r.remap_columns(&|x| x - right_offset);
                let mut outer = l.clone();
                outer.visit_mut(&mut |e| {
                    if let Expr::Column(c) = e {
                        *e = Expr::Outer(position(layout, *c));
                    }
                });
                let string_column = matches!(r, Expr::Column(c) if columns[c].ty.is_string());
                let (left, right) = match key_form {
                    Some(form) if string_column => (key_expr(r, *form), key_expr(outer, *form)),
                    _ => {
                        any_key |= matches!(l, Expr::Column(_));
                        (r, outer)
                    }
                };
                filters.push(Expr::Compare {
                    op: CmpOp::Eq,
                    left: Box::new(left),
                    right: Box::new(right),
                    collation: *collation,
                    key_form: *key_form,
                });
            }
            if any_key {
                let mut inner = scan_plan(t, alias, columns, hints, *lock, *wait, &filters)?;
                let per_lookup = match &mut inner {
                    Plan::Scan { access, .. } => {
                        // Each lookup reads a short range: no prefetch set-up per row.
                        if let Access::IndexRange { prefetch, .. } = access {
                            *prefetch = false;
                        }
                        lookup_rows(t, access)
                    }
                    _ => f64::MAX,
                };
                // A lookup costs about as much as scanning `LOOKUP_COST_ROWS` rows.
                let lookups_cheaper = outer_rows * per_lookup * LOOKUP_COST_ROWS < table_rows;
                if lookups_cheaper
                    && !matches!(
                        inner,
                        Plan::Scan {
                            access: Access::Full,
                            ..
                        }
                    )
                {
                    let mut joined_layout = layout.clone();
                    joined_layout.extend(right_offset..right_offset + right_width);
                    let columns = plan
                        .columns()
                        .iter()
                        .chain(inner.columns())
                        .cloned()
                        .collect();
                    *layout = joined_layout;
                    return Ok(Plan::IndexJoin {
                        outer: Box::new(plan),
                        inner: Box::new(inner),
                        kind,
                        filter: None,
                        columns,
                    });
                }
            }
        }
    }
    let keys = remap_keys(hash_keys(keys), layout, right_offset);
    // Build the hash table on the smaller side (inner joins may swap).
    if kind == JoinKind::Inner
        && right.estimated_rows() > plan.estimated_rows() * 2.0
        && !keys.is_empty()
    {
        let swapped: Vec<(Expr, Expr, Collation)> =
            keys.into_iter().map(|(l, r, c)| (r, l, c)).collect();
        let left_width = plan.width();
        let columns = right
            .columns()
            .iter()
            .chain(plan.columns())
            .cloned()
            .collect();
        let mut new_layout: Vec<usize> = (right_offset..right_offset + right_width).collect();
        new_layout.extend(layout.iter().copied());
        *layout = new_layout;
        let _ = left_width;
        return Ok(Plan::Join {
            left: Box::new(right),
            right: Box::new(plan),
            kind,
            keys: swapped,
            filter: None,
            columns,
        });
    }
    Ok(hash_join_remapped(
        plan,
        layout,
        right,
        right_offset,
        right_width,
        keys,
        kind,
        None,
    ))
}

/// `e` in the key form `form` ([`Expr::KeyForm`]).
fn key_expr(e: Expr, form: KeyForm) -> Expr {
    Expr::KeyForm {
        expr: Box::new(e),
        form,
    }
}

/// A hash join's keys: each side of a key whose `=` compares by conversion is
/// hashed in its key form; other keys hash their values as they are.
fn hash_keys(keys: Vec<EquiKey>) -> Vec<(Expr, Expr, Collation)> {
    keys.into_iter()
        .map(|(l, r, collation, form)| match form {
            Some(form) => (key_expr(l, form), key_expr(r, form), collation),
            None => (l, r, collation),
        })
        .collect()
}

/// Join keys from scope positions to the joined plans' own: the left side's by the
/// current layout, the right side's from its offset.
fn remap_keys(
    keys: Vec<(Expr, Expr, Collation)>,
    layout: &[usize],
    right_offset: usize,
) -> Vec<(Expr, Expr, Collation)> {
    keys.into_iter()
        .map(|(mut l, mut r, collation)| {
            l.remap_columns(&|c| position(layout, c));
            r.remap_columns(&|c| c - right_offset);
            (l, r, collation)
        })
        .collect()
}

/// A hash join with keys still in scope positions.
#[allow(clippy::too_many_arguments)]
fn hash_join(
    plan: Plan,
    layout: &mut Vec<usize>,
    right: Plan,
    right_offset: usize,
    right_width: usize,
    keys: Vec<EquiKey>,
    kind: JoinKind,
    filter: Option<Expr>,
) -> Plan {
    let keys = remap_keys(hash_keys(keys), layout, right_offset);
    hash_join_remapped(
        plan,
        layout,
        right,
        right_offset,
        right_width,
        keys,
        kind,
        filter,
    )
}

#[allow(clippy::too_many_arguments)]
fn hash_join_remapped(
    plan: Plan,
    layout: &mut Vec<usize>,
    right: Plan,
    right_offset: usize,
    right_width: usize,
    keys: Vec<(Expr, Expr, Collation)>,
    kind: JoinKind,
    filter: Option<Expr>,
) -> Plan {
    let columns = plan
        .columns()
        .iter()
        .chain(right.columns())
        .cloned()
        .collect();
    layout.extend(right_offset..right_offset + right_width);
    Plan::Join {
        left: Box::new(plan),
        right: Box::new(right),
        kind,
        keys,
        filter,
        columns,
    }
}

/// What one random index lookup costs in rows a sequential (parallel) scan reads in the
/// same time: the rule that decides between an index nested-loop join and a hash join.
const LOOKUP_COST_ROWS: f64 = 20.0;

/// The rows one lookup of an index nested-loop join's inner `access` returns: from the
/// statistics' rows per key when ANALYZE ran, else 1 for a full unique key and 10 for
/// a prefix.
fn lookup_rows(table: &Table, access: &Access) -> f64 {
    let prefix = |b: &Bound<Vec<Expr>>| match b {
        Bound::Included(v) | Bound::Excluded(v) => v.len(),
        Bound::Unbounded => 0,
    };
    let def = table.def();
    let stats = table.stats();
    match access {
        Access::PrimaryKey(_) => 1.0,
        Access::PrimaryKeyList(keys) => keys.len() as f64,
        Access::Full => table_rows(table),
        Access::PrimaryRange { lower, .. } => {
            let k = prefix(lower);
            match &stats {
                Some(s) if k > 0 => s.rows_per_key(None, k).max(1.0),
                _ if k + 1 == def.primary_key.len() => 4.0,
                _ => 10.0,
            }
        }
        Access::IndexRange { index, lower, .. } => {
            let k = prefix(lower);
            let position = def.indexes.iter().position(|i| &i.name == index);
            let unique = position
                .is_some_and(|i| def.indexes[i].unique && k == def.indexes[i].columns.len());
            match (&stats, position) {
                _ if unique => 1.0,
                (Some(s), Some(i)) if k > 0 => s.rows_per_key(Some(i), k).max(1.0),
                _ => 10.0,
            }
        }
    }
}

/// The number of rows the planner assumes a table has.
pub fn table_rows(table: &Table) -> f64 {
    (table.estimated_rows() as f64).max(1.0)
}

/// The fraction of rows an equality on `column` keeps: from ANALYZE TABLE's
/// statistics, else `DEFAULT_EQ_SELECTIVITY`.
fn eq_selectivity(table: &Table, column: usize) -> f64 {
    match table.stats() {
        Some(stats) => stats.selectivity_eq(column).max(1.0 / table_rows(table)),
        None => tarn_catalog::stats::DEFAULT_EQ_SELECTIVITY,
    }
}

/// A scan of `table` with `filters` (over its columns) and the best access path.
#[allow(clippy::too_many_arguments)]
pub fn scan_plan(
    table: &Arc<Table>,
    alias: &str,
    columns: &[OutputColumn],
    hints: &[IndexHint],
    lock: RowLock,
    wait: WaitPolicy,
    filters: &[Expr],
) -> Result<Plan> {
    let (access, estimated_rows) = choose_access(table, filters, hints);
    Ok(Plan::Scan {
        table: table.clone(),
        alias: alias.to_string(),
        access,
        filter: conjoin(filters.to_vec()),
        lock,
        wait,
        estimated_rows,
        columns: columns.to_vec(),
    })
}

/// Per-column conditions usable as key bounds.
#[derive(Clone, Default)]
struct ColumnBounds {
    eq: Option<Expr>,
    /// `column IN (values)`.
    list: Option<Vec<Expr>>,
    lower: Option<(Expr, bool)>,
    upper: Option<(Expr, bool)>,
}

/// True for expressions whose value is known when a scan opens: literals,
/// parameters, correlated references and functions of them, but not volatile ones
/// (`id = FLOOR(RAND() * 10)` compares each row with its own number).
fn is_key_value(e: &Expr) -> bool {
    let mut ok = true;
    e.visit(&mut |x| {
        if x.is_volatile_node() || matches!(x, Expr::Column(_) | Expr::Subquery { .. }) {
            ok = false;
        }
    });
    ok
}

fn column_bounds(filters: &[Expr], width: usize) -> Vec<ColumnBounds> {
    let mut bounds = vec![ColumnBounds::default(); width];
    for f in filters {
        if let Expr::InList {
            expr,
            list,
            negated: false,
            ..
        } = f
        {
            if let Expr::Column(c) = **expr {
                if list.iter().all(is_key_value) && !list.is_empty() {
                    bounds[c].list = Some(list.clone());
                }
            }
            continue;
        }
        let Expr::Compare {
            op, left, right, ..
        } = f
        else {
            continue;
        };
        let (column, op, value) = match (&**left, &**right) {
            (Expr::Column(c), v) if is_key_value(v) => (*c, *op, v.clone()),
            (v, Expr::Column(c)) if is_key_value(v) => (*c, op.flip(), v.clone()),
            _ => continue,
        };
        let b = &mut bounds[column];
        match op {
            CmpOp::Eq => b.eq = Some(value),
            CmpOp::Gt => b.lower = Some((value, false)),
            CmpOp::GtEq => b.lower = Some((value, true)),
            CmpOp::Lt => b.upper = Some((value, false)),
            CmpOp::LtEq => b.upper = Some((value, true)),
            _ => {}
        }
    }
    bounds
}

/// Bounds on a key with columns `key`: equalities on a prefix, then a range on the
/// next column. Returns (lower, upper, equality prefix length, has range).
fn key_range(
    key: &[usize],
    bounds: &[ColumnBounds],
) -> (Bound<Vec<Expr>>, Bound<Vec<Expr>>, usize, bool) {
    let mut prefix = Vec::new();
    for &c in key {
        match &bounds[c].eq {
            Some(v) => prefix.push(v.clone()),
            None => break,
        }
    }
    let k = prefix.len();
    let mut lower = if k > 0 {
        Bound::Included(prefix.clone())
    } else {
        Bound::Unbounded
    };
    let mut upper = lower.clone();
    let mut ranged = false;
    if let Some(&c) = key.get(k) {
        if let Some((v, inclusive)) = &bounds[c].lower {
            let mut values = prefix.clone();
            values.push(v.clone());
            lower = if *inclusive {
                Bound::Included(values)
            } else {
                Bound::Excluded(values)
            };
            ranged = true;
        }
        if let Some((v, inclusive)) = &bounds[c].upper {
            let mut values = prefix.clone();
            values.push(v.clone());
            upper = if *inclusive {
                Bound::Included(values)
            } else {
                Bound::Excluded(values)
            };
            ranged = true;
        }
    }
    (lower, upper, k, ranged)
}

/// Picks the access path for a table scan with `filters` (over its columns) and
/// estimates the rows it returns.
pub fn choose_access(table: &Table, filters: &[Expr], hints: &[IndexHint]) -> (Access, f64) {
    let def = table.def();
    let rows = table_rows(table);
    let mut bounds = column_bounds(filters, def.columns.len());
    // ENUM and SET keys are in index (bitmask) order, but `<` on them compares their
    // text: only equalities can use their keys.
    for (b, column) in bounds.iter_mut().zip(&def.columns) {
        if column.ty.members().is_some() {
            b.lower = None;
            b.upper = None;
        }
        // A string column compared with a number or a date compares as one (`'01'`
        // and `'1.0'` both equal 1, and order as numbers): such a constant bounds no
        // key. (A value known only at execution is checked there: `key_values`.)
        if column.ty.is_text() || column.ty.is_binary_string() {
            let other_kind = |e: &Expr| matches!(e, Expr::Literal(v) if !matches!(v, Value::Bytes(_) | Value::Null));
            if b.eq.as_ref().is_some_and(other_kind) {
                b.eq = None;
            }
            if b.list.as_ref().is_some_and(|l| l.iter().any(other_kind)) {
                b.list = None;
            }
            if b.lower.as_ref().is_some_and(|(e, _)| other_kind(e)) {
                b.lower = None;
            }
            if b.upper.as_ref().is_some_and(|(e, _)| other_kind(e)) {
                b.upper = None;
            }
        }
    }
    let eq_selectivity = |c: usize| eq_selectivity(table, c);
    const RANGE_SELECTIVITY: f64 = tarn_catalog::stats::DEFAULT_RANGE_SELECTIVITY;
    let filtered = {
        let mut s = 1.0;
        for (c, b) in bounds.iter().enumerate() {
            if b.eq.is_some() {
                s *= eq_selectivity(c);
            } else if b.lower.is_some() || b.upper.is_some() {
                s *= RANGE_SELECTIVITY;
            }
        }
        (rows * s).max(1.0)
    };
    let allowed = |name: &str| -> bool {
        let mut ok = true;
        for h in hints {
            let listed = h.indexes.iter().any(|i| i.eq_ignore_ascii_case(name));
            match h.kind {
                TableIndexHintType::Ignore if listed => ok = false,
                TableIndexHintType::Use | TableIndexHintType::Force
                    if !listed && !h.indexes.is_empty() =>
                {
                    ok = false
                }
                _ => {}
            }
        }
        ok
    };
    let forced = hints.iter().any(|h| h.kind == TableIndexHintType::Force);
    let mut best: Option<(Access, f64, f64)> = None; // access, rows, cost
    let mut consider = |access: Access, est: f64, cost: f64| {
        if best.as_ref().is_none_or(|(_, _, c)| cost < *c) {
            best = Some((access, est, cost));
        }
    };
    // The primary key.
    if !def.primary_key.is_empty() && allowed("PRIMARY") {
        let (lower, upper, k, ranged) = key_range(&def.primary_key, &bounds);
        if k == def.primary_key.len() {
            if let Bound::Included(values) = lower {
                return (Access::PrimaryKey(values), 1.0);
            }
        }
        if k + 1 == def.primary_key.len() {
            if let Some(list) = &bounds[def.primary_key[k]].list {
                let prefix: Vec<Expr> = def.primary_key[..k]
                    .iter()
                    .map(|&c| {
                        bounds[c]
                            .eq
                            .clone()
                            .expect("an equality on each prefix column")
                    })
                    .collect();
                let keys: Vec<Vec<Expr>> = list
                    .iter()
                    .map(|v| {
                        let mut key = prefix.clone();
                        key.push(v.clone());
                        key
                    })
                    .collect();
                let n = keys.len() as f64;
                return (Access::PrimaryKeyList(keys), n);
            }
        }
        if k > 0 || ranged {
            let mut s = 1.0;
            for &c in &def.primary_key[..k] {
                s *= eq_selectivity(c);
            }
            if ranged {
                s *= RANGE_SELECTIVITY;
            }
            let est = (rows * s).max(1.0);
            consider(
                Access::PrimaryRange { lower, upper },
                est.min(filtered.max(est)),
                est,
            );
        }
    }
    // Secondary indexes.
    for index in table.indexes() {
        if !allowed(&index.def.name) {
            continue;
        }
        let (lower, upper, k, ranged) = key_range(&index.def.columns, &bounds);
        if k == 0 && !ranged {
            continue;
        }
        let mut s = 1.0;
        for &c in &index.def.columns[..k] {
            s *= eq_selectivity(c);
        }
        if index.def.unique && k == index.def.columns.len() {
            s = 1.0 / rows;
        }
        if ranged {
            s *= RANGE_SELECTIVITY;
        }
        let est = (rows * s).max(1.0);
        // Each row costs a random read of the clustered index; prefetch (S2) when
        // the range is long.
        let cost = est * if forced { 0.0 } else { 3.0 };
        consider(
            Access::IndexRange {
                index: index.def.name.clone(),
                lower,
                upper,
                prefetch: est > SMALL_RANGE_ROWS as f64 / 16.0,
            },
            est,
            cost,
        );
    }
    match best {
        Some((access, est, cost)) if cost < rows || forced => {
            (access, est.min(rows).max(filtered.min(est)))
        }
        _ => (Access::Full, filtered),
    }
}
