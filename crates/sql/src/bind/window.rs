//! Binding window functions: `f(...) OVER (...)`, `OVER w` and `WINDOW w AS (...)`.
//!
//! A query block's select list and ORDER BY may call window functions; anywhere else
//! (WHERE, GROUP BY, HAVING, ON, an aggregate's or another window function's
//! argument, a window's own specification, UPDATE and DELETE) they are refused with
//! MySQL's errors (3593, 3594, 3595). [`WindowScope`] on the [`Binder`] says which
//! applies while an expression is bound: `bind_query` starts every query block
//! (subqueries, derived tables, views) with none allowed, and `bind_select` allows
//! them while it binds the select list and ORDER BY.
//!
//! While a block is bound its calls cannot have their final column positions: the
//! Window nodes sit above the aggregation, whose width grows as later select items
//! name more aggregates. So a call binds to `Expr::Column(PLACEHOLDER_BASE + k)`, the
//! k-th distinct call of the block (calls written alike share one), and
//! [`plan_windows`] moves those references to the node columns once every call is
//! known. Calls whose windows are equal (after named windows are resolved, and with
//! the frame left out for functions that ignore it) share one node.

use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments};
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::decimal::Decimal;

use super::{Binder, ExprScope, coerced, unify, unsupported, wrong_args};
use crate::expr::Expr;
use crate::plan::{AggCall, OutputColumn, Plan, SortKey};
use crate::scalar::agg::{self, AggFunc};
use crate::scalar::arith::ArithOp;
use crate::types::SqlType;
use crate::window::{Frame, FrameBound, FrameUnits, WindowCall, WindowFunc, WindowSpec};

/// Column positions at and above this stand for window calls while a block is bound
/// (far above any real width).
const PLACEHOLDER_BASE: usize = usize::MAX / 2;

/// MySQL's name for a window written inline.
const UNNAMED: &str = "<unnamed window>";

/// Whether (and why not) a window function may be called where the binder is.
#[derive(Default)]
pub(super) enum WindowScope {
    /// Not here (WHERE, GROUP BY, HAVING, ON, DML): 3593.
    #[default]
    NotAllowed,
    /// In an aggregate's or a window function's argument: 3593.
    InArgument,
    /// In the specification of this window: 3595.
    InSpec(String),
    /// In a select list or ORDER BY: the block's calls so far.
    Allowed(Box<WindowState>),
}

/// A query block's named windows and the calls bound so far.
pub(super) struct WindowState {
    named: Vec<ast::NamedWindowDefinition>,
    /// Per call: its window, the call, and its text (calls written alike are one).
    calls: Vec<(WindowSpec, WindowCall)>,
}

impl WindowState {
    /// The state of a block with the WINDOW clause `named`; 3591 for a name defined
    /// twice.
    pub(super) fn new(named: &[ast::NamedWindowDefinition]) -> Result<WindowState> {
        for (i, def) in named.iter().enumerate() {
            if named[..i]
                .iter()
                .any(|d| d.0.value.eq_ignore_ascii_case(&def.0.value))
            {
                return Err(Error::sql(
                    3591,
                    "HY000",
                    format!("Window '{}' is defined twice.", def.0.value),
                ));
            }
        }
        Ok(WindowState {
            named: named.to_vec(),
            calls: Vec::new(),
        })
    }

    /// Resolves an OVER clause to a window without references: its name (for errors)
    /// and its specification.
    fn resolve(&self, over: &ast::WindowType) -> Result<(String, ast::WindowSpec)> {
        match over {
            ast::WindowType::NamedWindow(name) => {
                Ok((name.value.clone(), self.lookup(&name.value, 0)?))
            }
            ast::WindowType::WindowSpec(spec) => {
                Ok((UNNAMED.into(), self.merge(spec, UNNAMED, 0)?))
            }
        }
    }

    /// The named window `name`, resolved; `depth` counts the references followed
    /// (more than there are windows means a cycle).
    fn lookup(&self, name: &str, depth: usize) -> Result<ast::WindowSpec> {
        if depth > self.named.len() {
            return Err(Error::sql(
                3580,
                "HY000",
                "There is a circularity in the window dependency graph.",
            ));
        }
        let def = self
            .named
            .iter()
            .find(|d| d.0.value.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                Error::sql(
                    3579,
                    "HY000",
                    format!("Window name '{name}' is not defined."),
                )
            })?;
        match &def.1 {
            ast::NamedWindowExpr::NamedWindow(other) => self.lookup(&other.value, depth + 1),
            ast::NamedWindowExpr::WindowSpec(spec) => self.merge(spec, &def.0.value, depth + 1),
        }
    }

    /// `spec` (of the window called `name`) with the window it refines, if any,
    /// merged in: MySQL's rules for `(w ORDER BY ...)`.
    fn merge(&self, spec: &ast::WindowSpec, name: &str, depth: usize) -> Result<ast::WindowSpec> {
        let Some(base_name) = &spec.window_name else {
            return Ok(spec.clone());
        };
        let base = self.lookup(&base_name.value, depth)?;
        if base.window_frame.is_some() {
            return Err(Error::sql(
                3582,
                "HY000",
                format!(
                    "Window '{}' has a frame definition, so cannot be referenced by another window.",
                    base_name.value
                ),
            ));
        }
        if !spec.partition_by.is_empty() {
            return Err(Error::sql(
                3581,
                "HY000",
                "A window which depends on another cannot define partitioning.",
            ));
        }
        if !spec.order_by.is_empty() && !base.order_by.is_empty() {
            return Err(Error::sql(
                3583,
                "HY000",
                format!(
                    "Window '{name}' cannot inherit '{}' since both contain an ORDER BY clause.",
                    base_name.value
                ),
            ));
        }
        Ok(ast::WindowSpec {
            window_name: None,
            partition_by: base.partition_by,
            order_by: if spec.order_by.is_empty() {
                base.order_by
            } else {
                spec.order_by.clone()
            },
            window_frame: spec.window_frame.clone(),
        })
    }
}

/// 3593: a window function where none may be.
fn not_here(name: &str) -> Error {
    Error::sql(
        3593,
        "HY000",
        format!(
            "You cannot use the window function '{}' in this context.'",
            name.to_ascii_lowercase()
        ),
    )
}

/// 3594: the alias of a window function's result where none may be (GROUP BY,
/// HAVING).
pub(super) fn alias_not_here(alias: &str) -> Error {
    Error::sql(
        3594,
        "HY000",
        format!(
            "You cannot use the alias '{alias}' of an expression containing a window function in this context.'"
        ),
    )
}

/// True if `e` reads a window call's result.
pub(super) fn reads_window(e: &Expr) -> bool {
    let mut found = false;
    e.visit(&mut |x| {
        if matches!(x, Expr::Column(c) if *c >= PLACEHOLDER_BASE) {
            found = true;
        }
    });
    found
}

/// 3586: a frame bound that is not a non-negative number.
fn bad_bound(window: &str) -> Error {
    Error::sql(
        3586,
        "HY000",
        format!("Window '{window}': frame start or end is negative, NULL or of non-integral type"),
    )
}

/// A frame bound's offset as written: a number (its text) or an INTERVAL.
enum Offset<'a> {
    Number(String),
    Interval(&'a ast::Interval),
}

fn offset<'a>(e: &'a ast::Expr, window: &str) -> Result<Offset<'a>> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => Ok(Offset::Number(n.clone())),
            ast::Value::Placeholder(_) => Err(unsupported("a parameter as a window frame bound")),
            _ => Err(bad_bound(window)),
        },
        ast::Expr::Interval(i) => Ok(Offset::Interval(i)),
        ast::Expr::Nested(inner) => offset(inner, window),
        _ => Err(bad_bound(window)),
    }
}

impl Binder<'_> {
    /// Binds `f(...) OVER ...` (`name`: the function's name in upper case) where the
    /// binder's [`WindowScope`] allows it.
    pub(super) fn bind_window_call(
        &mut self,
        f: &ast::Function,
        over: &ast::WindowType,
        name: &str,
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        match &self.windows {
            WindowScope::NotAllowed | WindowScope::InArgument => return Err(not_here(name)),
            WindowScope::InSpec(window) => {
                return Err(Error::sql(
                    3595,
                    "HY000",
                    format!(
                        "You cannot nest a window function in the specification of window '{window}'."
                    ),
                ));
            }
            WindowScope::Allowed(state) => {
                let text = f.to_string();
                if let Some(k) = state.calls.iter().position(|(_, c)| c.text == text) {
                    return Ok((Expr::Column(PLACEHOLDER_BASE + k), state.calls[k].1.ty));
                }
            }
        }
        let WindowScope::Allowed(mut state) = std::mem::take(&mut self.windows) else {
            unreachable!("checked above");
        };
        let bound = self.bind_window_parts(f, over, name, es, &state);
        let result = bound.map(|(spec, call)| {
            let ty = call.ty;
            state.calls.push((spec, call));
            (Expr::Column(PLACEHOLDER_BASE + state.calls.len() - 1), ty)
        });
        self.windows = WindowScope::Allowed(state);
        result
    }

    fn bind_window_parts(
        &mut self,
        f: &ast::Function,
        over: &ast::WindowType,
        name: &str,
        es: &ExprScope,
        state: &WindowState,
    ) -> Result<(WindowSpec, WindowCall)> {
        let (window, spec) = state.resolve(over)?;
        self.windows = WindowScope::InSpec(window.clone());
        let spec = self.bind_window_spec(&spec, &window, es)?;
        self.windows = WindowScope::InArgument;
        let func = self.bind_window_function(f, name, es)?;
        let mut spec = spec;
        let (func, ty) = func;
        if !func.uses_frame() {
            // The frame means nothing to this function: let it share a node with
            // the window's other calls.
            spec.frame = Frame::default_frame();
        }
        Ok((
            spec,
            WindowCall {
                func,
                ty,
                text: f.to_string(),
            },
        ))
    }

    /// The function of a window call, with its arguments bound over the block's
    /// input row, and its result type.
    fn bind_window_function(
        &mut self,
        f: &ast::Function,
        name: &str,
        es: &ExprScope,
    ) -> Result<(WindowFunc, SqlType)> {
        if matches!(f.null_treatment, Some(ast::NullTreatment::IgnoreNulls)) {
            return Err(unsupported("IGNORE NULLS"));
        }
        let (args, distinct, star) = match &f.args {
            FunctionArguments::None => (Vec::new(), false, false),
            FunctionArguments::List(list) => {
                if !list.clauses.is_empty() {
                    return Err(wrong_args(name));
                }
                let distinct = matches!(
                    list.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                let mut args = Vec::new();
                let mut star = false;
                for a in &list.args {
                    match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(e),
                        FunctionArg::Unnamed(FunctionArgExpr::Wildcard) if name == "COUNT" => {
                            star = true
                        }
                        _ => return Err(wrong_args(name)),
                    }
                }
                (args, distinct, star)
            }
            FunctionArguments::Subquery(_) => return Err(wrong_args(name)),
        };
        let count = args.len() + usize::from(star);
        let arity = |ok: bool| if ok { Ok(()) } else { Err(wrong_args(name)) };
        if let Some(func) = super::aggregate_function(name) {
            if distinct {
                return Err(unsupported(format!(
                    "{name}(DISTINCT ..) as a window function"
                )));
            }
            if matches!(
                func,
                AggFunc::GroupConcat
                    | AggFunc::AnyValue
                    | AggFunc::JsonArrayAgg
                    | AggFunc::JsonObjectAgg
            ) {
                return Err(unsupported(format!("{name} as a window function")));
            }
            arity(count == 1)?;
            let (func, arg, arg_type) = if star {
                (AggFunc::CountStar, None, SqlType::BIGINT)
            } else {
                let (arg, ty) = self.bind_expr(args[0], es)?;
                (func, Some(arg), ty)
            };
            let ty = agg::agg_return_type(func, arg_type);
            let call = AggCall {
                func,
                arg,
                distinct: false,
                arg_type,
                concat: None,
            };
            return Ok((WindowFunc::Aggregate(call), ty));
        }
        if distinct || star {
            return Err(wrong_args(name));
        }
        // NTILE's, LAG's and NTH_VALUE's counts: constants, checked when the call runs.
        let lower = name.to_ascii_lowercase();
        let constant = |binder: &mut Self, e: &ast::Expr| -> Result<Expr> {
            let (expr, _) = binder.bind_expr(e, es)?;
            if expr.is_constant() || matches!(expr, Expr::Param(_)) {
                Ok(expr)
            } else {
                Err(Error::sql(
                    1210,
                    "HY000",
                    format!("Incorrect arguments to {lower}"),
                ))
            }
        };
        Ok(match name {
            "ROW_NUMBER" | "RANK" | "DENSE_RANK" | "PERCENT_RANK" | "CUME_DIST" => {
                arity(count == 0)?;
                match name {
                    "ROW_NUMBER" => (WindowFunc::RowNumber, SqlType::BIGINT),
                    "RANK" => (WindowFunc::Rank, SqlType::BIGINT),
                    "DENSE_RANK" => (WindowFunc::DenseRank, SqlType::BIGINT),
                    "PERCENT_RANK" => (WindowFunc::PercentRank, SqlType::Double),
                    _ => (WindowFunc::CumeDist, SqlType::Double),
                }
            }
            "NTILE" => {
                arity(count == 1)?;
                let buckets = constant(self, args[0])?;
                (WindowFunc::Ntile { buckets }, SqlType::BIGINT)
            }
            "LAG" | "LEAD" => {
                arity((1..=3).contains(&count))?;
                let (value, value_type) = self.bind_expr(args[0], es)?;
                let offset = match args.get(1) {
                    Some(e) => constant(self, e)?,
                    None => Expr::Literal(Value::Int(1)),
                };
                let (value, default, ty) = match args.get(2) {
                    None => (value, None, value_type),
                    Some(e) => {
                        let (default, default_type) = self.bind_expr(e, es)?;
                        let ty = unify(value_type, default_type);
                        (coerced(value, ty), Some(coerced(default, ty)), ty)
                    }
                };
                let func = WindowFunc::Shift {
                    value,
                    offset,
                    default,
                    lead: name == "LEAD",
                };
                (func, ty)
            }
            "FIRST_VALUE" | "LAST_VALUE" => {
                arity(count == 1)?;
                let (value, ty) = self.bind_expr(args[0], es)?;
                if name == "FIRST_VALUE" {
                    (WindowFunc::FirstValue(value), ty)
                } else {
                    (WindowFunc::LastValue(value), ty)
                }
            }
            "NTH_VALUE" => {
                arity(count == 2)?;
                let (value, ty) = self.bind_expr(args[0], es)?;
                let n = constant(self, args[1])?;
                (WindowFunc::NthValue { value, n }, ty)
            }
            _ => {
                return Err(Error::sql(
                    1064,
                    "42000",
                    format!(
                        "You have an error in your SQL syntax; '{}' is not a window function and cannot take OVER",
                        lower
                    ),
                ));
            }
        })
    }

    /// A resolved window specification (named `window`), bound over the block's input
    /// row.
    fn bind_window_spec(
        &mut self,
        spec: &ast::WindowSpec,
        window: &str,
        es: &ExprScope,
    ) -> Result<WindowSpec> {
        let position = |e: &ast::Expr| matches!(e, ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)));
        let legacy = || {
            Error::sql(
                3592,
                "HY000",
                format!(
                    "Window '{window}': ORDER BY or PARTITION BY uses legacy position indication which is not supported, use expression."
                ),
            )
        };
        let mut partition = Vec::with_capacity(spec.partition_by.len());
        for e in &spec.partition_by {
            if position(e) {
                return Err(legacy());
            }
            let (expr, ty) = self.bind_expr(e, es)?;
            partition.push(SortKey {
                expr,
                descending: false,
                collation: ty.collation(),
            });
        }
        let mut order = Vec::with_capacity(spec.order_by.len());
        let mut order_types = Vec::with_capacity(spec.order_by.len());
        for item in &spec.order_by {
            if position(&item.expr) {
                return Err(legacy());
            }
            if item.options.nulls_first.is_some() {
                return Err(unsupported("NULLS FIRST / NULLS LAST"));
            }
            let (expr, ty) = self.bind_expr(&item.expr, es)?;
            let (expr, ty) = crate::bind::as_number(expr, ty);
            order.push(SortKey {
                expr,
                descending: matches!(item.options.sort, Some(ast::OrderBySort::Desc)),
                collation: ty.collation(),
            });
            order_types.push(ty);
        }
        let frame = match &spec.window_frame {
            None => Frame::default_frame(),
            Some(frame) => self.bind_frame(frame, window, &order, &order_types, es)?,
        };
        Ok(WindowSpec {
            partition,
            order,
            frame,
        })
    }

    fn bind_frame(
        &mut self,
        frame: &ast::WindowFrame,
        window: &str,
        order: &[SortKey],
        order_types: &[SqlType],
        es: &ExprScope,
    ) -> Result<Frame> {
        let units = match frame.units {
            ast::WindowFrameUnits::Rows => FrameUnits::Rows,
            ast::WindowFrameUnits::Range => FrameUnits::Range,
            ast::WindowFrameUnits::Groups => return Err(unsupported("GROUPS as frame unit")),
        };
        let end = frame
            .end_bound
            .clone()
            .unwrap_or(ast::WindowFrameBound::CurrentRow);
        if matches!(frame.start_bound, ast::WindowFrameBound::Following(None)) {
            return Err(Error::sql(
                3584,
                "HY000",
                format!("Window '{window}': frame start cannot be UNBOUNDED FOLLOWING."),
            ));
        }
        if matches!(end, ast::WindowFrameBound::Preceding(None)) {
            return Err(Error::sql(
                3585,
                "HY000",
                format!("Window '{window}': frame end cannot be UNBOUNDED PRECEDING."),
            ));
        }
        let mut bound = |b: &ast::WindowFrameBound| -> Result<FrameBound> {
            let (n, preceding) = match b {
                ast::WindowFrameBound::CurrentRow => return Ok(FrameBound::CurrentRow),
                ast::WindowFrameBound::Preceding(None) => {
                    return Ok(FrameBound::UnboundedPreceding);
                }
                ast::WindowFrameBound::Following(None) => {
                    return Ok(FrameBound::UnboundedFollowing);
                }
                ast::WindowFrameBound::Preceding(Some(n)) => (n, true),
                ast::WindowFrameBound::Following(Some(n)) => (n, false),
            };
            let offset = offset(n, window)?;
            if units == FrameUnits::Rows {
                let Offset::Number(text) = offset else {
                    return Err(Error::sql(
                        3596,
                        "HY000",
                        format!("Window '{window}': INTERVAL can only be used with RANGE frames."),
                    ));
                };
                let rows: u64 = text.parse().map_err(|_| bad_bound(window))?;
                return Ok(if preceding {
                    FrameBound::RowsPreceding(rows)
                } else {
                    FrameBound::RowsFollowing(rows)
                });
            }
            // RANGE n: the current row's only order key moved by n, towards the
            // partition's start for PRECEDING (down for ascending order).
            let ([key], [key_type]) = (order, order_types) else {
                return Err(range_order_type(window));
            };
            let subtract = preceding != key.descending;
            let limit = match (offset, key_type) {
                (Offset::Number(text), t) if t.is_numeric() => {
                    let n = Decimal::parse(&text).map_err(|_| bad_bound(window))?;
                    Expr::Arith {
                        op: if subtract { ArithOp::Sub } else { ArithOp::Add },
                        left: Box::new(key.expr.clone()),
                        right: Box::new(Expr::Literal(Value::Decimal(n))),
                    }
                }
                (Offset::Interval(_), t) if t.is_numeric() => {
                    return Err(Error::sql(
                        3589,
                        "HY000",
                        format!(
                            "Window '{window}' with RANGE frame has ORDER BY expression of numeric type, INTERVAL bound value not allowed."
                        ),
                    ));
                }
                (Offset::Interval(interval), t) if t.is_temporal() => {
                    self.date_add(key.expr.clone(), *t, interval, subtract, es)?
                        .0
                }
                (Offset::Number(_), t) if t.is_temporal() => {
                    return Err(Error::sql(
                        3588,
                        "HY000",
                        format!(
                            "Window '{window}' with RANGE frame has ORDER BY expression of datetime type. Only INTERVAL bound value allowed."
                        ),
                    ));
                }
                _ => return Err(range_order_type(window)),
            };
            Ok(FrameBound::RangeValue { limit })
        };
        Ok(Frame {
            units,
            start: bound(&frame.start_bound)?,
            end: bound(&end)?,
        })
    }
}

/// 3587: RANGE with an offset needs exactly one numeric or temporal order key.
fn range_order_type(window: &str) -> Error {
    Error::sql(
        3587,
        "HY000",
        format!(
            "Window '{window}' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type"
        ),
    )
}

/// Puts the block's window calls above `plan` (its rows after HAVING): one
/// [`Plan::Window`] per distinct window, in the order their first calls were written,
/// and points the placeholders in `exprs` (the select list and ORDER BY's hidden
/// columns, over `plan`'s row) at the calls' columns.
pub(super) fn plan_windows(mut plan: Plan, state: WindowState, exprs: &mut [Expr]) -> Result<Plan> {
    if state.calls.is_empty() {
        return Ok(plan);
    }
    /// The calls of one window (`key`: its bound form's text), by call number.
    struct Node {
        key: String,
        spec: WindowSpec,
        calls: Vec<(usize, WindowCall)>,
    }
    let mut nodes: Vec<Node> = Vec::new();
    for (k, (spec, call)) in state.calls.into_iter().enumerate() {
        let key = format!("{spec:?}");
        match nodes.iter_mut().find(|n| n.key == key) {
            Some(node) => node.calls.push((k, call)),
            None => nodes.push(Node {
                key,
                spec,
                calls: vec![(k, call)],
            }),
        }
    }
    if nodes.len() > crate::limits::WINDOWS_PER_SELECT_MAX {
        return Err(unsupported(format!(
            "more than {} windows in one SELECT",
            crate::limits::WINDOWS_PER_SELECT_MAX
        )));
    }
    let mut position = vec![0; nodes.iter().map(|n| n.calls.len()).sum()];
    for node in nodes {
        let mut columns: Vec<OutputColumn> = plan.columns().to_vec();
        let mut calls = Vec::with_capacity(node.calls.len());
        for (k, call) in node.calls {
            position[k] = columns.len();
            columns.push(OutputColumn::new(call.text.clone(), call.ty, true));
            calls.push(call);
        }
        plan = Plan::Window {
            input: Box::new(plan),
            spec: Box::new(node.spec),
            calls,
            columns,
        };
    }
    for e in exprs {
        e.remap_columns(&|c| {
            if c >= PLACEHOLDER_BASE {
                position[c - PLACEHOLDER_BASE]
            } else {
                c
            }
        });
    }
    Ok(plan)
}
