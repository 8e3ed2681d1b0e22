//! Bound expressions and their vectorized evaluation.
//!
//! The binder turns `sqlparser` expressions into [`Expr`]s whose column references
//! are positions in the input [`Chunk`] and whose types are fixed ([`SqlType`]). The
//! executor evaluates an expression a whole chunk at a time ([`Expr::eval`]): each
//! node turns its children's column vectors into one output vector, so the dispatch
//! on the node kind happens once per batch, not once per row.
//!
//! Invariants:
//! - a vector produced by [`Expr::eval`] has exactly `chunk.len()` values;
//! - evaluation reads only the chunk, the statement's parameters and its context, so
//!   two workers may evaluate one expression on different chunks at once (the one
//!   state an expression keeps, a `RAND(N)` call site's sequence, is behind a lock);
//! - `RAND()`, `UUID()` and `UUID_SHORT()` are volatile ([`Expr::is_volatile`]): a new
//!   value per row, so they are never constants nor index keys;
//! - `AND`, `OR`, `CASE`, `IF`, `IFNULL` and `COALESCE` evaluate a branch only for the
//!   rows that need it, so an error in a branch not taken (1/0 in strict mode, a
//!   subquery with two rows) is not raised, as in MySQL.

use std::cmp::Ordering;
use std::sync::Arc;

use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::types::Collation;

use crate::chunk::Chunk;
use crate::scalar::arith::{self, ArithOp};
use crate::scalar::cast::{self, CastTarget};
use crate::scalar::compare;
use crate::scalar::date::{self, IntervalUnit};
use crate::scalar::func;
use crate::scalar::like::LikePattern;
use crate::scalar::rand::{self, MyRnd, SeededRand};
use crate::subquery::SubqueryExpr;
use crate::types::SqlType;

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    /// `<=>`: NULL-safe equality (never NULL).
    NullSafeEq,
}

impl CmpOp {
    fn holds(self, ordering: Ordering) -> bool {
        match self {
            CmpOp::Eq | CmpOp::NullSafeEq => ordering == Ordering::Equal,
            CmpOp::NotEq => ordering != Ordering::Equal,
            CmpOp::Lt => ordering == Ordering::Less,
            CmpOp::LtEq => ordering != Ordering::Greater,
            CmpOp::Gt => ordering == Ordering::Greater,
            CmpOp::GtEq => ordering != Ordering::Less,
        }
    }

    /// The operator with its operands swapped (`a < b` is `b > a`).
    pub fn flip(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::LtEq => CmpOp::GtEq,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::GtEq => CmpOp::LtEq,
            other => other,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::NotEq => "<>",
            CmpOp::Lt => "<",
            CmpOp::LtEq => "<=",
            CmpOp::Gt => ">",
            CmpOp::GtEq => ">=",
            CmpOp::NullSafeEq => "<=>",
        }
    }
}

/// A bound expression.
#[derive(Clone, Debug)]
pub enum Expr {
    /// The input chunk's column at this position.
    Column(usize),
    /// A column of the enclosing query's current row (a correlated reference).
    Outer(usize),
    Literal(Value),
    /// Parameter `n` (0-based) of a prepared statement.
    Param(usize),
    Arith {
        op: ArithOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    Negate(Box<Expr>),
    Compare {
        op: CmpOp,
        left: Box<Expr>,
        right: Box<Expr>,
        collation: Collation,
        /// For an `=` whose operands' types compare by converting one (a string with
        /// a number, a date with a string, ...): the form a hash join or an IN
        /// subquery's set keys both sides in (see [`compare::KeyForm`]). Evaluation
        /// ignores it: `compare` converts by itself.
        key_form: Option<compare::KeyForm>,
    },
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Xor(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// `IS [NOT] TRUE` / `IS [NOT] FALSE`.
    IsBool {
        expr: Box<Expr>,
        value: bool,
        negated: bool,
    },
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        escape: u8,
        negated: bool,
        collation: Collation,
    },
    /// `expr [NOT] IN (list)`: NULL when no element matches and one is NULL.
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
        collation: Collation,
    },
    /// `(a, b) [NOT] IN ((1, 2), ...)` and row comparisons `(a, b) = (1, 2)`.
    RowInList {
        row: Vec<Expr>,
        list: Vec<Vec<Expr>>,
        negated: bool,
    },
    /// `CASE [operand] WHEN .. THEN .. ELSE .. END` (with an operand, each WHEN is
    /// already a comparison with it).
    Case {
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    /// IF, IFNULL, COALESCE, NULLIF: lazily evaluated built-ins.
    Coalesce(Vec<Expr>),
    NullIf(Box<Expr>, Box<Expr>, Collation),
    /// Any other built-in function, evaluated by [`func::call_with_collation`];
    /// `collation` is the arguments' (binary if a string argument is binary), for the
    /// functions that compare or search strings.
    Function {
        name: Arc<str>,
        args: Vec<Expr>,
        collation: Collation,
    },
    /// `RAND()` and `RAND(seed)`: a seed constant for the statement seeds `state`
    /// once per execution, a seed that varies by row seeds each row
    /// ([`crate::scalar::rand`]).
    Rand {
        seed: Option<Box<Expr>>,
        state: Arc<SeededRand>,
    },
    Cast {
        expr: Box<Expr>,
        target: CastTarget,
    },
    /// `expr ± INTERVAL amount unit`, DATE_ADD and DATE_SUB.
    DateAdd {
        expr: Box<Expr>,
        amount: Box<Expr>,
        unit: IntervalUnit,
        subtract: bool,
    },
    Extract {
        unit: IntervalUnit,
        expr: Box<Expr>,
    },
    /// `JSON_VALUE(doc, path [RETURNING t] [.. ON EMPTY] [.. ON ERROR])`
    /// ([`crate::scalar::json::json_value`]).
    JsonValue {
        doc: Box<Expr>,
        path: Box<Expr>,
        spec: Box<crate::scalar::json::JsonValueSpec>,
    },
    /// A subquery: scalar, IN, EXISTS. `operand`: IN's left side, over the
    /// enclosing row.
    Subquery {
        subquery: Arc<SubqueryExpr>,
        operand: Option<Box<Expr>>,
    },
    /// Converts a value to the type a CASE, IF or COALESCE declares (its branches may
    /// return values of other types).
    Coerce {
        expr: Box<Expr>,
        ty: SqlType,
    },
    /// A hash key's value in the form its `=` compares it in
    /// ([`compare::to_key_form`]); the planner wraps both sides of a hash join's key
    /// in it when their types differ ([`Expr::Compare`]'s `key_form`).
    KeyForm {
        expr: Box<Expr>,
        form: compare::KeyForm,
    },
}

/// What evaluation may read besides the chunk.
pub struct EvalContext<'a> {
    pub params: &'a [Value],
    /// The current row of the enclosing query, for correlated references.
    pub outer: &'a [Value],
    pub functions: &'a crate::scalar::FnContext,
    /// Runs subqueries (the executor implements it).
    pub subqueries: &'a dyn crate::subquery::SubqueryRunner,
}

fn truth(v: &Value) -> Option<bool> {
    cast::to_bool(v)
}

fn bool_value(b: Option<bool>) -> Value {
    match b {
        None => Value::Null,
        Some(b) => Value::Int(b as i64),
    }
}

impl Expr {
    pub fn literal_bool(b: bool) -> Expr {
        Expr::Literal(Value::Int(b as i64))
    }

    /// True if the expression reads no input column, parameter or subquery and calls
    /// no volatile function: it can be folded once.
    pub fn is_constant(&self) -> bool {
        let mut constant = true;
        self.visit(&mut |e| {
            if e.is_volatile_node()
                || matches!(
                    e,
                    Expr::Column(_) | Expr::Outer(_) | Expr::Param(_) | Expr::Subquery { .. }
                )
            {
                constant = false;
            }
        });
        constant
    }

    /// True if the expression has one value for a whole statement execution: it reads
    /// no column, enclosing row or subquery and calls no volatile function
    /// (parameters are fixed for an execution).
    pub fn is_constant_for_execution(&self) -> bool {
        let mut constant = true;
        self.visit(&mut |e| {
            if e.is_volatile_node()
                || matches!(e, Expr::Column(_) | Expr::Outer(_) | Expr::Subquery { .. })
            {
                constant = false;
            }
        });
        constant
    }

    /// True if this node (not its children) gives a new value each time it is
    /// evaluated: `RAND()`, `UUID()`, `UUID_SHORT()`.
    pub fn is_volatile_node(&self) -> bool {
        match self {
            Expr::Rand { .. } => true,
            Expr::Function { name, .. } => func::is_volatile(name),
            _ => false,
        }
    }

    /// True if the expression or one below it is volatile ([`Expr::is_volatile_node`]).
    pub fn is_volatile(&self) -> bool {
        let mut volatile = false;
        self.visit(&mut |e| volatile |= e.is_volatile_node());
        volatile
    }

    /// True if the expression reads an enclosing query's row.
    pub fn is_correlated(&self) -> bool {
        let mut correlated = false;
        self.visit(&mut |e| match e {
            Expr::Outer(_) => correlated = true,
            Expr::Subquery { subquery, .. } if subquery.correlated => correlated = true,
            _ => {}
        });
        correlated
    }

    /// The input columns the expression reads.
    pub fn columns(&self, out: &mut Vec<usize>) {
        self.visit(&mut |e| {
            if let Expr::Column(c) = e {
                if !out.contains(c) {
                    out.push(*c);
                }
            }
        });
    }

    /// Calls `f` on this node and every node below it (not into subqueries).
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        self.children().into_iter().for_each(|c| c.visit(f));
    }

    fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Column(_)
            | Expr::Outer(_)
            | Expr::Literal(_)
            | Expr::Param(_)
            | Expr::Subquery { operand: None, .. } => vec![],
            Expr::Subquery {
                operand: Some(e), ..
            } => vec![e],
            Expr::Rand { seed, .. } => seed.as_deref().into_iter().collect(),
            Expr::Arith { left, right, .. }
            | Expr::Compare { left, right, .. }
            | Expr::And(left, right)
            | Expr::Or(left, right)
            | Expr::Xor(left, right)
            | Expr::NullIf(left, right, _) => vec![left, right],
            Expr::Negate(e)
            | Expr::Not(e)
            | Expr::IsNull { expr: e, .. }
            | Expr::IsBool { expr: e, .. }
            | Expr::Cast { expr: e, .. }
            | Expr::Coerce { expr: e, .. }
            | Expr::KeyForm { expr: e, .. }
            | Expr::Extract { expr: e, .. } => vec![e],
            Expr::Like { expr, pattern, .. } => vec![expr, pattern],
            Expr::InList { expr, list, .. } => std::iter::once(&**expr).chain(list).collect(),
            Expr::RowInList { row, list, .. } => row.iter().chain(list.iter().flatten()).collect(),
            Expr::Case { whens, otherwise } => whens
                .iter()
                .flat_map(|(a, b)| [a, b])
                .chain(otherwise.as_deref())
                .collect(),
            Expr::Coalesce(args) | Expr::Function { args, .. } => args.iter().collect(),
            Expr::DateAdd { expr, amount, .. } => vec![expr, amount],
            Expr::JsonValue { doc, path, .. } => vec![doc, path],
        }
    }

    /// Rewrites every column reference through `map` (after a projection moved them).
    pub fn remap_columns(&mut self, map: &dyn Fn(usize) -> usize) {
        self.visit_mut(&mut |e| {
            if let Expr::Column(c) = e {
                *c = map(*c);
            }
        });
    }

    pub fn visit_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        f(self);
        match self {
            Expr::Column(_)
            | Expr::Outer(_)
            | Expr::Literal(_)
            | Expr::Param(_)
            | Expr::Subquery { operand: None, .. } => {}
            Expr::Subquery {
                operand: Some(e), ..
            } => e.visit_mut(f),
            Expr::Rand { seed, .. } => {
                if let Some(e) = seed {
                    e.visit_mut(f);
                }
            }
            Expr::Arith { left, right, .. }
            | Expr::Compare { left, right, .. }
            | Expr::And(left, right)
            | Expr::Or(left, right)
            | Expr::Xor(left, right)
            | Expr::NullIf(left, right, _) => {
                left.visit_mut(f);
                right.visit_mut(f);
            }
            Expr::Negate(e)
            | Expr::Not(e)
            | Expr::IsNull { expr: e, .. }
            | Expr::IsBool { expr: e, .. }
            | Expr::Cast { expr: e, .. }
            | Expr::Coerce { expr: e, .. }
            | Expr::KeyForm { expr: e, .. }
            | Expr::Extract { expr: e, .. } => e.visit_mut(f),
            Expr::Like { expr, pattern, .. } => {
                expr.visit_mut(f);
                pattern.visit_mut(f);
            }
            Expr::InList { expr, list, .. } => {
                expr.visit_mut(f);
                list.iter_mut().for_each(|e| e.visit_mut(f));
            }
            Expr::RowInList { row, list, .. } => {
                row.iter_mut().for_each(|e| e.visit_mut(f));
                list.iter_mut().flatten().for_each(|e| e.visit_mut(f));
            }
            Expr::Case { whens, otherwise } => {
                for (a, b) in whens {
                    a.visit_mut(f);
                    b.visit_mut(f);
                }
                if let Some(e) = otherwise {
                    e.visit_mut(f);
                }
            }
            Expr::Coalesce(args) | Expr::Function { args, .. } => {
                args.iter_mut().for_each(|e| e.visit_mut(f))
            }
            Expr::DateAdd { expr, amount, .. } => {
                expr.visit_mut(f);
                amount.visit_mut(f);
            }
            Expr::JsonValue { doc, path, .. } => {
                doc.visit_mut(f);
                path.visit_mut(f);
            }
        }
    }

    /// Evaluates on a single row (constant folding, VALUES lists, point lookups).
    pub fn eval_row(&self, row: &[Value], cx: &EvalContext) -> Result<Value> {
        let chunk = Chunk::from_row(row);
        let mut out = self.eval(&chunk, cx)?;
        Ok(out.pop().unwrap_or(Value::Null))
    }

    /// Evaluates the expression for every row of `chunk`.
    pub fn eval(&self, chunk: &Chunk, cx: &EvalContext) -> Result<Vec<Value>> {
        let n = chunk.len();
        Ok(match self {
            Expr::Column(c) => chunk.column(*c).to_vec(),
            Expr::Outer(c) => vec![cx.outer.get(*c).cloned().unwrap_or(Value::Null); n],
            Expr::Literal(v) => vec![v.clone(); n],
            Expr::Param(i) => {
                let v = cx.params.get(*i).cloned().ok_or_else(|| {
                    Error::sql(
                        1210,
                        "HY000",
                        "Incorrect arguments to EXECUTE: a parameter has no value",
                    )
                })?;
                vec![v; n]
            }
            Expr::Arith { op, left, right } => {
                let (a, b) = (left.eval(chunk, cx)?, right.eval(chunk, cx)?);
                let f = cx.functions;
                a.iter()
                    .zip(&b)
                    .map(|(a, b)| arith::binary(*op, a, b, f))
                    .collect::<Result<_>>()?
            }
            Expr::Negate(e) => e
                .eval(chunk, cx)?
                .iter()
                .map(arith::negate)
                .collect::<Result<_>>()?,
            Expr::Compare {
                op,
                left,
                right,
                collation,
                ..
            } => {
                let (a, b) = (left.eval(chunk, cx)?, right.eval(chunk, cx)?);
                a.iter()
                    .zip(&b)
                    .map(|(a, b)| compare_values(*op, a, b, *collation))
                    .collect()
            }
            Expr::And(l, r) => {
                let a = l.eval(chunk, cx)?;
                // Rows where the left side is false need no right side.
                let need: Vec<bool> = a.iter().map(|v| truth(v) != Some(false)).collect();
                let b = eval_where(r, chunk, cx, &need)?;
                a.iter()
                    .zip(&b)
                    .map(|(a, b)| match (truth(a), truth(b)) {
                        (Some(false), _) | (_, Some(false)) => Value::Int(0),
                        (Some(true), Some(true)) => Value::Int(1),
                        _ => Value::Null,
                    })
                    .collect()
            }
            Expr::Or(l, r) => {
                let a = l.eval(chunk, cx)?;
                let need: Vec<bool> = a.iter().map(|v| truth(v) != Some(true)).collect();
                let b = eval_where(r, chunk, cx, &need)?;
                a.iter()
                    .zip(&b)
                    .map(|(a, b)| match (truth(a), truth(b)) {
                        (Some(true), _) | (_, Some(true)) => Value::Int(1),
                        (Some(false), Some(false)) => Value::Int(0),
                        _ => Value::Null,
                    })
                    .collect()
            }
            Expr::Xor(l, r) => {
                let (a, b) = (l.eval(chunk, cx)?, r.eval(chunk, cx)?);
                a.iter()
                    .zip(&b)
                    .map(|(a, b)| match (truth(a), truth(b)) {
                        (Some(a), Some(b)) => Value::Int((a != b) as i64),
                        _ => Value::Null,
                    })
                    .collect()
            }
            Expr::Not(e) => e
                .eval(chunk, cx)?
                .iter()
                .map(|v| bool_value(truth(v).map(|b| !b)))
                .collect(),
            Expr::IsNull { expr, negated } => expr
                .eval(chunk, cx)?
                .iter()
                .map(|v| Value::Int((v.is_null() != *negated) as i64))
                .collect(),
            Expr::IsBool {
                expr,
                value,
                negated,
            } => expr
                .eval(chunk, cx)?
                .iter()
                .map(|v| Value::Int(((truth(v) == Some(*value)) != *negated) as i64))
                .collect(),
            Expr::Like {
                expr,
                pattern,
                escape,
                negated,
                collation,
            } => {
                let values = expr.eval(chunk, cx)?;
                if let Expr::Literal(p) = &**pattern {
                    let Some(p) = cast::to_text(p) else {
                        return Ok(vec![Value::Null; n]);
                    };
                    let compiled = LikePattern::new(&p, *escape, *collation);
                    values
                        .iter()
                        .map(|v| match cast::to_text(v) {
                            None => Value::Null,
                            Some(t) => Value::Int((compiled.matches(&t) != *negated) as i64),
                        })
                        .collect()
                } else {
                    let patterns = pattern.eval(chunk, cx)?;
                    values
                        .iter()
                        .zip(&patterns)
                        .map(|(v, p)| match (cast::to_text(v), cast::to_text(p)) {
                            (Some(t), Some(p)) => {
                                let m = crate::scalar::like::like(&t, &p, *escape, *collation);
                                Value::Int((m != *negated) as i64)
                            }
                            _ => Value::Null,
                        })
                        .collect()
                }
            }
            Expr::InList {
                expr,
                list,
                negated,
                collation,
            } => {
                let values = expr.eval(chunk, cx)?;
                let lists = list
                    .iter()
                    .map(|e| e.eval(chunk, cx))
                    .collect::<Result<Vec<_>>>()?;
                (0..n)
                    .map(|row| {
                        let v = &values[row];
                        if v.is_null() {
                            return Value::Null;
                        }
                        let mut saw_null = false;
                        for l in &lists {
                            match compare::compare(v, &l[row], *collation) {
                                Some(Ordering::Equal) => return Value::Int(!*negated as i64),
                                None => saw_null = true,
                                _ => {}
                            }
                        }
                        if saw_null {
                            Value::Null
                        } else {
                            Value::Int(*negated as i64)
                        }
                    })
                    .collect()
            }
            Expr::RowInList { row, list, negated } => {
                let row_values = row
                    .iter()
                    .map(|e| e.eval(chunk, cx))
                    .collect::<Result<Vec<_>>>()?;
                let list_values = list
                    .iter()
                    .map(|r| r.iter().map(|e| e.eval(chunk, cx)).collect())
                    .collect::<Result<Vec<Vec<_>>>>()?;
                (0..n)
                    .map(|i| {
                        let mut saw_null = false;
                        for candidate in &list_values {
                            let mut all = Some(true);
                            for (a, b) in row_values.iter().zip(candidate) {
                                match compare::compare(&a[i], &b[i], Collation::CaseInsensitive) {
                                    Some(Ordering::Equal) => {}
                                    Some(_) => {
                                        all = Some(false);
                                        break;
                                    }
                                    None => all = None,
                                }
                            }
                            match all {
                                Some(true) => return Value::Int(!*negated as i64),
                                None => saw_null = true,
                                Some(false) => {}
                            }
                        }
                        if saw_null {
                            Value::Null
                        } else {
                            Value::Int(*negated as i64)
                        }
                    })
                    .collect()
            }
            Expr::Case { whens, otherwise } => {
                let mut out = vec![Value::Null; n];
                let mut pending: Vec<bool> = vec![true; n];
                for (when, then) in whens {
                    let conditions = eval_where(when, chunk, cx, &pending)?;
                    let hit: Vec<bool> = (0..n)
                        .map(|i| pending[i] && truth(&conditions[i]) == Some(true))
                        .collect();
                    if hit.iter().any(|&h| h) {
                        let values = eval_where(then, chunk, cx, &hit)?;
                        for i in 0..n {
                            if hit[i] {
                                out[i] = values[i].clone();
                                pending[i] = false;
                            }
                        }
                    }
                }
                if let Some(otherwise) = otherwise {
                    if pending.iter().any(|&p| p) {
                        let values = eval_where(otherwise, chunk, cx, &pending)?;
                        for i in 0..n {
                            if pending[i] {
                                out[i] = values[i].clone();
                            }
                        }
                    }
                }
                out
            }
            Expr::Coalesce(args) => {
                let mut out = vec![Value::Null; n];
                let mut pending = vec![true; n];
                for arg in args {
                    if !pending.iter().any(|&p| p) {
                        break;
                    }
                    let values = eval_where(arg, chunk, cx, &pending)?;
                    for i in 0..n {
                        if pending[i] && !values[i].is_null() {
                            out[i] = values[i].clone();
                            pending[i] = false;
                        }
                    }
                }
                out
            }
            Expr::NullIf(a, b, collation) => {
                let (a, b) = (a.eval(chunk, cx)?, b.eval(chunk, cx)?);
                a.into_iter()
                    .zip(&b)
                    .map(|(a, b)| {
                        if compare::compare(&a, b, *collation) == Some(Ordering::Equal) {
                            Value::Null
                        } else {
                            a
                        }
                    })
                    .collect()
            }
            Expr::Function {
                name,
                args,
                collation,
            } => {
                let columns = args
                    .iter()
                    .map(|e| e.eval(chunk, cx))
                    .collect::<Result<Vec<_>>>()?;
                let f = cx.functions;
                let mut row_args = Vec::with_capacity(args.len());
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    row_args.clear();
                    row_args.extend(columns.iter().map(|c| c[i].clone()));
                    out.push(func::call_with_collation(name, &row_args, f, *collation)?);
                }
                out
            }
            Expr::Rand { seed: None, .. } => {
                (0..n).map(|_| Value::Double(rand::unseeded())).collect()
            }
            Expr::Rand {
                seed: Some(seed),
                state,
            } => {
                let seed_of = |v: &Value| cast::to_i64(v).unwrap_or(0);
                if seed.is_constant_for_execution() {
                    let seed_value = seed_of(&seed.eval_row(&[], cx)?);
                    state
                        .take(cx.functions.statement, n, || seed_value)
                        .into_iter()
                        .map(Value::Double)
                        .collect()
                } else {
                    seed.eval(chunk, cx)?
                        .iter()
                        .map(|v| Value::Double(MyRnd::from_seed(seed_of(v)).next_f64()))
                        .collect()
                }
            }
            Expr::Cast { expr, target } => expr
                .eval(chunk, cx)?
                .iter()
                .map(|v| cast::cast(v, *target))
                .collect::<Result<_>>()?,
            Expr::DateAdd {
                expr,
                amount,
                unit,
                subtract,
            } => {
                let (a, b) = (expr.eval(chunk, cx)?, amount.eval(chunk, cx)?);
                a.iter()
                    .zip(&b)
                    .map(|(a, b)| date::add_interval(a, b, *unit, *subtract))
                    .collect::<Result<_>>()?
            }
            Expr::JsonValue { doc, path, spec } => {
                let (docs, paths) = (doc.eval(chunk, cx)?, path.eval(chunk, cx)?);
                docs.iter()
                    .zip(&paths)
                    .map(|(d, p)| crate::scalar::json::json_value(d, p, spec))
                    .collect::<Result<_>>()?
            }
            Expr::Extract { unit, expr } => expr
                .eval(chunk, cx)?
                .iter()
                .map(|v| date::extract(*unit, v))
                .collect::<Result<_>>()?,
            Expr::Subquery { subquery, operand } => {
                let probes = operand.as_ref().map(|e| e.eval(chunk, cx)).transpose()?;
                cx.subqueries.eval(subquery, probes.as_deref(), chunk, cx)?
            }
            Expr::Coerce { expr, ty } => expr
                .eval(chunk, cx)?
                .into_iter()
                .map(|v| cast::coerce(v, *ty))
                .collect(),
            Expr::KeyForm { expr, form } => expr
                .eval(chunk, cx)?
                .iter()
                .map(|v| compare::to_key_form(v, *form))
                .collect(),
        })
    }
}

/// Evaluates `expr` only on the rows where `need` is set (the others get NULL): the
/// lazy branches of AND, OR, CASE and COALESCE.
fn eval_where(expr: &Expr, chunk: &Chunk, cx: &EvalContext, need: &[bool]) -> Result<Vec<Value>> {
    let wanted = need.iter().filter(|&&b| b).count();
    if wanted == need.len() {
        return expr.eval(chunk, cx);
    }
    let mut out = vec![Value::Null; need.len()];
    if wanted == 0 {
        return Ok(out);
    }
    let rows: Vec<usize> = (0..need.len()).filter(|&i| need[i]).collect();
    let sub = chunk.take(&rows);
    for (value, &row) in expr.eval(&sub, cx)?.into_iter().zip(&rows) {
        out[row] = value;
    }
    Ok(out)
}

/// The result of `a op b` as a SQL boolean.
pub fn compare_values(op: CmpOp, a: &Value, b: &Value, collation: Collation) -> Value {
    if op == CmpOp::NullSafeEq {
        return Value::Int(match (a.is_null(), b.is_null()) {
            (true, true) => 1,
            (true, false) | (false, true) => 0,
            _ => (compare::compare(a, b, collation) == Some(Ordering::Equal)) as i64,
        });
    }
    match compare::compare(a, b, collation) {
        None => Value::Null,
        Some(ordering) => Value::Int(op.holds(ordering) as i64),
    }
}

/// The type a bound expression has, given the types of the input columns. Kept with
/// the expression by the binder ([`crate::bind`]) rather than recomputed.
pub type Typed = (Expr, SqlType);
