//! Common table expressions: `WITH [RECURSIVE] name [(column, ...)] AS (query), ...`
//! before a query: a statement's, a subquery's, a derived table's, a view's, or
//! INSERT ... SELECT's source (`INSERT INTO t WITH ... SELECT ...`).
//!
//! Scope, as in MySQL 8:
//! - a WITH clause's CTEs are visible in the query it precedes (its body, and every
//!   subquery and derived table in it) and shadow any table or view of the same
//!   name there; only an unqualified name can name a CTE (`db.c` is a table), and
//!   the innermost WITH that has the name wins;
//! - a CTE sees the CTEs before it in its WITH and those of the enclosing WITHs, not
//!   the ones after it; in a `WITH RECURSIVE` it also sees itself. Its query is bound
//!   in that scope ([`CteDef::visible`]) wherever it is referenced; a view's query
//!   sees no CTE of the statement that uses the view;
//! - two CTEs of one WITH may not share a name (1066).
//!
//! A non-recursive CTE is bound again at each reference, as a derived table is, and
//! so runs once per reference. That fits the planner, which joins a derived table's
//! plan like any relation (pushing filters into it, building a hash table on it, or
//! probing it), and is correct because a CTE's query only reads, from the
//! statement's read view (under READ UNCOMMITTED two runs may see different rows, as
//! two reads of one table in a statement may); materialising it once would save the
//! second run of a CTE referenced twice, at the cost of holding all its rows and of
//! an operator that shares one result between readers.
//!
//! A CTE of a `WITH RECURSIVE` that references itself is recursive: its query must be
//! a UNION whose first query blocks (the anchor) do not reference it and whose others
//! (the recursive part) reference it exactly once, in their own FROM clause, not on
//! the NULL side of an outer join. It becomes a [`Plan::RecursiveCte`] whose recursive
//! part reads a [`Plan::WorkTable`] where it names the CTE. The CTE's columns take
//! the anchor's types (what the recursive part produces is converted to them when it
//! runs). MySQL's errors: 3573 (no UNION), 3574 (a recursive block before an anchor,
//! or no anchor), 3575 (aggregation or GROUP BY in a recursive block), 3576 (the
//! NULL side of a LEFT JOIN), 3577 (two references, or one in a subquery or derived
//! table), 1235 for ORDER BY, LIMIT or DISTINCT in a recursive block, ORDER BY on
//! the whole UNION, or UNION DISTINCT before a UNION ALL of recursive blocks.
//! LIMIT on the whole UNION is allowed and ends the recursion (MySQL 8.0.19).
//! Whether a CTE references itself is found by binding its blocks in order: a block
//! is recursive if binding it met the reference.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlparser::ast;
use tarn_common::{Error, Result};

use super::{Binder, SelectExt, has_aggregate, rename_output, unify, union_of, unsupported};
use crate::limits::NESTING_DEPTH_MAX;
use crate::plan::{OutputColumn, Plan, RowCount};

/// A CTE in the binder's scope.
pub(super) struct CteDef {
    /// The name, normalised as table names are (`lower_case_table_names`).
    name: String,
    /// `name (a, b) AS (...)`: the names of its columns.
    columns: Vec<ast::TableAliasColumnDef>,
    query: ast::Query,
    /// Declared by a `WITH RECURSIVE`: a reference to itself in its query is a
    /// recursive one.
    recursive: bool,
    /// How many of the binder's CTEs its query sees: `Binder::ctes[..visible]` (the
    /// enclosing WITHs' and those before it in its own, and itself if `recursive`).
    visible: usize,
}

/// A recursive CTE whose query blocks are being bound.
pub(super) struct Recursion {
    def: Rc<CteDef>,
    /// The id its work table leaves and its node share.
    work_table: u64,
    /// The work table's columns: the CTE's names with the types of the anchor
    /// blocks bound so far; None while the first block is bound.
    columns: Option<Vec<OutputColumn>>,
    /// The binder depth of the block being bound: a reference must be in that
    /// block's own FROM clause, not in a subquery or derived table below it.
    block_depth: usize,
    /// References to the CTE met in the block being bound.
    references: usize,
    /// The query is a UNION (else a reference is 3573).
    union: bool,
}

/// Work table ids, unique in the process (so also in any statement).
static NEXT_WORK_TABLE: AtomicU64 = AtomicU64::new(1);

fn not_supported_in_recursive_block() -> Error {
    unsupported(
        "ORDER BY / LIMIT / SELECT DISTINCT in recursive query block of Common Table Expression",
    )
}

fn single_reference(name: &str) -> Error {
    Error::sql(
        3577,
        "HY000",
        format!(
            "In recursive query block of Recursive Common Table Expression '{name}', the \
             recursive table must be referenced only once, and not in any subquery"
        ),
    )
}

fn nonrecursive_first(name: &str) -> Error {
    Error::sql(
        3574,
        "HY000",
        format!(
            "Recursive Common Table Expression '{name}' should have one or more \
             non-recursive query blocks followed by one or more recursive ones"
        ),
    )
}

/// The query blocks of a UNION chain in order, and per pair of neighbours whether
/// they are joined by UNION ALL. A parenthesised query is one block.
fn union_blocks(body: &ast::SetExpr) -> (Vec<&ast::SetExpr>, Vec<bool>) {
    let mut blocks = Vec::new();
    let mut all = Vec::new();
    let mut node = body;
    // UNION chains are left-deep: walk down the left operands.
    while let ast::SetExpr::SetOperation {
        left,
        op: ast::SetOperator::Union,
        set_quantifier,
        right,
    } = node
    {
        blocks.push(right.as_ref());
        all.push(matches!(set_quantifier, ast::SetQuantifier::All));
        node = left;
    }
    blocks.push(node);
    blocks.reverse();
    all.reverse();
    (blocks, all)
}

impl Binder<'_> {
    /// Puts a WITH clause's CTEs in scope (the caller truncates `ctes` again).
    pub(super) fn push_with(&mut self, with: &ast::With) -> Result<()> {
        let first = self.ctes.len();
        for cte in &with.cte_tables {
            if cte.materialized.is_some() || cte.from.is_some() {
                return Err(unsupported(
                    "AS [NOT] MATERIALIZED in a common table expression",
                ));
            }
            let name = self.cx.normalize_table_name(&cte.alias.name.value);
            if self.ctes[first..].iter().any(|d| d.name == name) {
                return Err(Error::sql(
                    1066,
                    "42000",
                    format!("Not unique table/alias: '{name}'"),
                ));
            }
            let position = self.ctes.len();
            self.ctes.push(Rc::new(CteDef {
                name,
                columns: cte.alias.columns.clone(),
                query: (*cte.query).clone(),
                recursive: with.recursive,
                visible: position + usize::from(with.recursive),
            }));
        }
        Ok(())
    }

    /// The plan of a FROM reference to a CTE in scope, named `alias`; None if
    /// `name` names no CTE.
    pub(super) fn bind_cte_reference(
        &mut self,
        name: &ast::ObjectName,
        alias: Option<&ast::TableAlias>,
    ) -> Result<Option<Plan>> {
        if self.ctes.is_empty() {
            return Ok(None);
        }
        let parts = super::object_name(name);
        let [table] = parts.as_slice() else {
            return Ok(None);
        };
        let wanted = self.cx.normalize_table_name(table);
        let Some(def) = self.ctes.iter().rev().find(|d| d.name == wanted).cloned() else {
            return Ok(None);
        };
        let alias = alias.map_or_else(|| wanted.clone(), |a| a.name.value.clone());
        if let Some(plan) = self.recursive_reference(&def, &alias)? {
            return Ok(Some(plan));
        }
        // The query is bound in the scope it was defined in, reading without locks
        // as a derived table does.
        let visible = self.ctes[..def.visible].to_vec();
        let saved_ctes = std::mem::replace(&mut self.ctes, visible);
        let saved_lock = (self.lock, self.wait);
        self.lock = tarn_catalog::RowLock::None;
        let result = self.bind_cte_query(&def);
        (self.lock, self.wait) = saved_lock;
        self.ctes = saved_ctes;
        let (mut plan, named) = result?;
        rename_output(&mut plan, &alias, if named { &[] } else { &def.columns })?;
        Ok(Some(plan))
    }

    /// A reference to the recursive CTE whose blocks are being bound: its work table.
    fn recursive_reference(&mut self, def: &Rc<CteDef>, alias: &str) -> Result<Option<Plan>> {
        let depth = self.depth;
        let Some(recursion) = self
            .recursions
            .iter_mut()
            .rev()
            .find(|r| Rc::ptr_eq(&r.def, def))
        else {
            return Ok(None);
        };
        let Some(columns) = &recursion.columns else {
            return Err(if recursion.union {
                nonrecursive_first(&def.name)
            } else {
                Error::sql(
                    3573,
                    "HY000",
                    format!(
                        "Recursive Common Table Expression '{}' should contain a UNION",
                        def.name
                    ),
                )
            });
        };
        if depth != recursion.block_depth || recursion.references > 0 {
            return Err(single_reference(&def.name));
        }
        recursion.references += 1;
        let columns = columns
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.table = Some(alias.to_string());
                c
            })
            .collect();
        Ok(Some(Plan::WorkTable {
            name: def.name.clone(),
            id: recursion.work_table,
            columns,
        }))
    }

    /// References to the recursive CTE being bound met so far in its current block
    /// (for the LEFT JOIN rule, 3576).
    pub(super) fn recursive_references(&self) -> usize {
        self.recursions.last().map_or(0, |r| r.references)
    }

    /// 3576: the recursive CTE on the NULL-padded side of an outer join.
    pub(super) fn recursive_reference_padded(&self) -> Error {
        let name = self.recursions.last().map_or("", |r| r.def.name.as_str());
        Error::sql(
            3576,
            "HY000",
            format!(
                "In recursive query block of Recursive Common Table Expression '{name}', the \
                 recursive table must neither be in the right argument of a LEFT JOIN, nor \
                 be forced to be non-first with join order hints"
            ),
        )
    }

    /// A CTE's query, and whether its output already has the CTE's column names.
    fn bind_cte_query(&mut self, def: &Rc<CteDef>) -> Result<(Plan, bool)> {
        if def.recursive {
            self.depth += 1;
            let result = if self.depth > NESTING_DEPTH_MAX {
                Err(Error::sql(
                    1473,
                    "HY000",
                    format!("Too high level of nesting for select (at most {NESTING_DEPTH_MAX})"),
                ))
            } else {
                let saved = self.ctes.len();
                let result = self.bind_recursive(def);
                self.ctes.truncate(saved);
                result
            };
            self.depth -= 1;
            if let Some(plan) = result? {
                return Ok((plan, true));
            }
            // Declared RECURSIVE but not referencing itself: an ordinary CTE.
        }
        let correlated = Cell::new(false);
        Ok((self.bind_query(&def.query, None, &correlated)?, false))
    }

    /// A `WITH RECURSIVE` CTE's query as a [`Plan::RecursiveCte`]; None if no block
    /// references the CTE.
    fn bind_recursive(&mut self, def: &Rc<CteDef>) -> Result<Option<Plan>> {
        let query = &def.query;
        if let Some(with) = &query.with {
            self.push_with(with)?;
        }
        let (blocks, all) = union_blocks(&query.body);
        self.recursions.push(Recursion {
            def: def.clone(),
            work_table: NEXT_WORK_TABLE.fetch_add(1, Ordering::Relaxed),
            columns: None,
            block_depth: 0,
            references: 0,
            union: blocks.len() > 1,
        });
        let result = self.bind_blocks(def, &blocks);
        let recursion = self.recursions.pop().expect("pushed above");
        let bound = result?;
        let anchors = bound.iter().take_while(|(_, r)| !r).count();
        if anchors == bound.len() {
            return Ok(None);
        }
        if query.order_by.is_some() {
            return Err(unsupported(
                "ORDER BY over UNION in recursive Common Table Expression",
            ));
        }
        // Which blocks UNION DISTINCT deduplicates: every block up to the right operand
        // of the last UNION DISTINCT. If that is the last block, every row is checked
        // against all before it; if it is an anchor, only the anchor (its plan below
        // does that); a recursive block followed by others MySQL refuses.
        let distinct = match all.iter().rposition(|a| !a) {
            None => false,
            Some(k) if k + 1 == bound.len() - 1 => true,
            Some(k) if k + 1 >= anchors => {
                return Err(unsupported(
                    "recursive query blocks with UNION DISTINCT then UNION ALL, in recursive \
                     Common Table Expression",
                ));
            }
            Some(_) => false,
        };
        let columns = recursion.columns.expect("set once the anchor is bound");
        let mut bound = bound.into_iter();
        let mut anchor = bound.next().expect("an anchor block").0;
        for (i, (plan, _)) in bound.by_ref().take(anchors - 1).enumerate() {
            anchor = union_of(anchor, plan, all[i] || distinct)?;
        }
        let mut recursive = bound.next().expect("a recursive block").0;
        for (plan, _) in bound {
            recursive = union_of(recursive, plan, true)?;
        }
        let (offset, count) = self.limit(query)?;
        let mut plan = Plan::RecursiveCte {
            name: def.name.clone(),
            anchor: Box::new(anchor),
            recursive: Box::new(recursive),
            work_table: recursion.work_table,
            distinct,
            row_limit: count.map(|c| (offset, c)),
            columns,
        };
        if offset != RowCount::Literal(0) || count.is_some() {
            plan = Plan::Limit {
                input: Box::new(plan),
                offset,
                count,
                count_all: false,
            };
        }
        Ok(Some(plan))
    }

    /// Binds a recursive CTE's query blocks in order: each plan, and whether the block
    /// references the CTE.
    fn bind_blocks(&mut self, def: &CteDef, blocks: &[&ast::SetExpr]) -> Result<Vec<(Plan, bool)>> {
        let mut bound: Vec<(Plan, bool)> = Vec::with_capacity(blocks.len());
        for block in blocks {
            // A parenthesised block is bound one level down (`bind_query`).
            let block_depth = self.depth + usize::from(matches!(block, ast::SetExpr::Query(_)));
            let recursion = self.recursions.last_mut().expect("pushed by the caller");
            recursion.references = 0;
            recursion.block_depth = block_depth;
            let correlated = Cell::new(false);
            let plan = match self.bind_set_expr(block, None, &correlated) {
                Ok(plan) => plan,
                Err(e) => {
                    // MySQL checks a recursive block's shape before the rest (an
                    // aggregate without GROUP BY is 3575, not ONLY_FULL_GROUP_BY's
                    // 1140): its FROM, bound first, has met the reference by now.
                    if self.recursive_references() > 0 {
                        check_recursive_block(&def.name, block)?;
                    }
                    return Err(e);
                }
            };
            let recursion = self.recursions.last_mut().expect("pushed by the caller");
            let recursive = recursion.references > 0;
            if let Some((first, _)) = bound.first() {
                if first.width() != plan.width() {
                    return Err(Error::sql(
                        1222,
                        "21000",
                        "The used SELECT statements have a different number of columns",
                    ));
                }
            }
            if recursive {
                check_recursive_block(&def.name, block)?;
            } else {
                if bound.iter().any(|(_, r)| *r) {
                    return Err(nonrecursive_first(&def.name));
                }
                let anchors: Vec<&Plan> = bound
                    .iter()
                    .map(|(p, _)| p)
                    .chain(std::iter::once(&plan))
                    .collect();
                recursion.columns = Some(cte_columns(def, &anchors)?);
            }
            bound.push((plan, recursive));
        }
        Ok(bound)
    }
}

/// A recursive CTE's columns: its names (the column list's, else the first anchor
/// block's) with the anchor blocks' unified types, all nullable (as MySQL's
/// temporary table has them).
fn cte_columns(def: &CteDef, anchors: &[&Plan]) -> Result<Vec<OutputColumn>> {
    let first = anchors[0].columns();
    if !def.columns.is_empty() && def.columns.len() != first.len() {
        return Err(Error::sql(
            1353,
            "HY000",
            "In definition of view, derived table or common table expression, SELECT list \
             and column names list have different column counts",
        ));
    }
    Ok(first
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let ty = anchors[1..]
                .iter()
                .fold(c.ty, |ty, p| unify(ty, p.columns()[i].ty));
            let name = def
                .columns
                .get(i)
                .map_or_else(|| c.name.clone(), |n| n.name.value.clone());
            OutputColumn::new(name, ty, true)
        })
        .collect())
}

/// What a recursive query block may not contain.
fn check_recursive_block(name: &str, block: &ast::SetExpr) -> Result<()> {
    let (select, ordered) = match block {
        ast::SetExpr::Select(select) => (Some(select.as_ref()), false),
        ast::SetExpr::Query(q) => (
            match q.body.as_ref() {
                ast::SetExpr::Select(select) => Some(select.as_ref()),
                _ => None,
            },
            q.order_by.is_some() || q.limit_clause.is_some(),
        ),
        _ => (None, false),
    };
    let distinct = select.is_some_and(|s| matches!(s.distinct, Some(ast::Distinct::Distinct)));
    if ordered || distinct {
        return Err(not_supported_in_recursive_block());
    }
    let Some(select) = select else {
        return Ok(());
    };
    let aggregated = !select.group_by_is_empty()
        || select.projection.iter().any(|item| match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                has_aggregate(e)
            }
            _ => false,
        })
        || select.having.as_ref().is_some_and(has_aggregate);
    if aggregated {
        return Err(Error::sql(
            3575,
            "HY000",
            format!(
                "Recursive Common Table Expression '{name}' can contain neither aggregation \
                 nor window functions in recursive query block"
            ),
        ));
    }
    Ok(())
}
