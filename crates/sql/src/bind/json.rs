//! Binding JSON: the JSON functions, `doc -> path` and `doc ->> path`,
//! `CAST(x AS JSON)`, `JSON_ARRAYAGG` / `JSON_OBJECTAGG`'s arguments, and
//! comparisons with a JSON value.
//!
//! What MySQL decides from an argument's type is decided here, so the functions
//! (`crate::scalar::json`) see only values:
//!
//! - an SQL string or predicate put into a document (JSON_OBJECT's values,
//!   JSON_ARRAY's elements, JSON_SET's new values) is wrapped in a
//!   `JsonCast::Scalar` conversion: a string becomes a JSON string (where a JSON
//!   value, which is text too, is embedded as the document it is), a predicate
//!   (`a = b`, `TRUE`) a JSON boolean; numbers and dates pass as they are;
//! - a comparison with a JSON value on either side compares both sides' JSON
//!   comparison keys (`JsonCast::CompareKey`, bytewise): `j->'$.n' = 1` holds for
//!   `1` and `1.0`, `j->'$.s' = 'x'` for the JSON string `"x"`, as in MySQL. That
//!   covers `=`, `<>`, `<`, `<=`, `>`, `>=`, `<=>` and `IN (...)`; BETWEEN and a
//!   CASE operand compare JSON text bytewise;
//! - ORDER BY a JSON value sorts by its comparison key too (`ORDER BY j->'$.n'` puts
//!   2 before 10). GROUP BY, DISTINCT, MIN and MAX compare JSON text bytewise
//!   (equal documents print alike, but `1` and `1.0` are two groups).

use std::cell::RefCell;

use sqlparser::ast::{self, FunctionArg, FunctionArgExpr};
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::types::Collation;

use super::{AggState, Binder, ExprScope, has_aggregate, wrong_args};
use crate::expr::Expr;
use crate::plan::AggCall;
use crate::scalar::agg::AggFunc;
use crate::scalar::cast::{CastTarget, JsonCast};
use crate::scalar::json as functions;
use crate::subquery::SubqueryKind;
use crate::types::SqlType;

impl Binder<'_> {
    /// `JSON_ARRAYAGG(x)` and `JSON_OBJECTAGG(k, v)`: the accumulator folds the
    /// text of `JSON_ARRAY(x)` / `JSON_OBJECT(k, v)` per row (`crate::scalar::agg`).
    pub(super) fn bind_json_aggregate(
        &mut self,
        list: &ast::FunctionArgumentList,
        func: AggFunc,
        distinct: bool,
        text: &str,
        state: &RefCell<AggState>,
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        let (name, count) = match func {
            AggFunc::JsonArrayAgg => ("JSON_ARRAY", 1),
            _ => ("JSON_OBJECT", 2),
        };
        if distinct {
            return Err(Error::sql(
                1064,
                "42000",
                format!(
                    "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{text}'"
                ),
            ));
        }
        if !list.clauses.is_empty() || list.args.len() != count {
            return Err(wrong_args(text));
        }
        let input = state.borrow().input.clone();
        let inner = ExprScope::plain(&input, es.outer, es.correlated);
        let mut args = Vec::with_capacity(count);
        for (i, a) in list.args.iter().enumerate() {
            let FunctionArg::Unnamed(FunctionArgExpr::Expr(a)) = a else {
                return Err(wrong_args(text));
            };
            if has_aggregate(a) {
                return Err(Error::sql(1111, "HY000", "Invalid use of group function"));
            }
            let (e, t) = self.bind_expr(a, &inner)?;
            args.push(if functions::is_value_argument(name, i) {
                value_argument(a, e, t)
            } else {
                e
            });
        }
        let arg = Expr::Function {
            name: name.into(),
            args,
            collation: Collation::CaseInsensitive,
        };
        let mut s = state.borrow_mut();
        let position = match s.agg_texts.iter().position(|t| t == text) {
            Some(p) => p,
            None => {
                s.aggs.push(AggCall {
                    func,
                    arg: Some(arg),
                    distinct: false,
                    arg_type: SqlType::Json,
                    concat: None,
                });
                s.agg_texts.push(text.to_string());
                s.aggs.len() - 1
            }
        };
        Ok((Expr::Column(s.agg_base() + position), SqlType::Json))
    }

    /// `JSON_...(args)`: a JSON scalar function (`upper` is its uppercase name).
    pub(super) fn bind_json_function(
        &mut self,
        upper: &str,
        args: &[ast::Expr],
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        functions::check_arity(upper, args.len())?;
        let mut exprs = Vec::with_capacity(args.len());
        let mut collation = Collation::CaseInsensitive;
        for (i, a) in args.iter().enumerate() {
            let (e, t) = self.bind_expr(a, es)?;
            // MySQL's ER_INCORRECT_TYPE: JSON_QUOTE quotes strings only.
            if upper == "JSON_QUOTE" && !(t.is_string() || t == SqlType::Null) {
                return Err(Error::sql(
                    3064,
                    "HY000",
                    "Incorrect type for argument 1 in function json_quote.",
                ));
            }
            // JSON_SEARCH matches under its search string's collation.
            if upper == "JSON_SEARCH"
                && i == 2
                && (t.is_binary_string() || t.collation() == Collation::Binary && t.is_string())
            {
                collation = Collation::Binary;
            }
            exprs.push(if functions::is_value_argument(upper, i) {
                value_argument(a, e, t)
            } else {
                e
            });
        }
        Ok((
            Expr::Function {
                name: upper.into(),
                args: exprs,
                collation,
            },
            functions::return_type(upper),
        ))
    }
}

impl Binder<'_> {
    /// `JSON_VALUE(doc, path [RETURNING type])`, or the call the parser makes of one
    /// with ON EMPTY / ON ERROR clauses (`crate::parse::JSON_VALUE_WITH_RESPONSES`,
    /// four more arguments: each response's kind and DEFAULT value). A DEFAULT value
    /// is a constant converted to the RETURNING type here (error 1690 when it does
    /// not convert).
    pub(super) fn bind_json_value(
        &mut self,
        list: &ast::FunctionArgumentList,
        name: &str,
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        let mut returning = None;
        for clause in &list.clauses {
            match clause {
                ast::FunctionArgumentClause::JsonReturningClause(r) if returning.is_none() => {
                    returning = Some(crate::ddl_types::cast_target(&r.data_type)?);
                }
                _ => return Err(wrong_args("JSON_VALUE")),
            }
        }
        let with_responses = name == crate::parse::JSON_VALUE_WITH_RESPONSES;
        let expected = if with_responses { 6 } else { 2 };
        let args: Vec<&ast::Expr> = list
            .args
            .iter()
            .map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
                _ => Err(wrong_args("JSON_VALUE")),
            })
            .collect::<Result<_>>()?;
        if args.len() != expected || list.duplicate_treatment.is_some() {
            return Err(wrong_args("JSON_VALUE"));
        }
        let (returning, ty) = match returning {
            None => (
                CastTarget::Char(Some(functions::JSON_VALUE_TEXT_CHARS)),
                functions::JSON_VALUE_TEXT,
            ),
            Some(CastTarget::Json(_)) => (
                CastTarget::Json(crate::scalar::cast::JsonCast::Parse { boolean: false }),
                SqlType::Json,
            ),
            Some(t) => (t, crate::ddl_types::cast_type(t)),
        };
        let (doc, _) = self.bind_expr(args[0], es)?;
        let (path, _) = self.bind_expr(args[1], es)?;
        let mut responses = [functions::JsonResponse::Null, functions::JsonResponse::Null];
        if with_responses {
            for (slot, pair) in responses.iter_mut().zip(args[2..].chunks(2)) {
                let kind = match self.bind_expr(pair[0], es)?.0 {
                    Expr::Literal(Value::Int(k)) => k,
                    _ => return Err(wrong_args("JSON_VALUE")),
                };
                *slot = match kind {
                    0 => functions::JsonResponse::Null,
                    1 => functions::JsonResponse::Error,
                    _ => {
                        let value = match self.bind_expr(pair[1], es)? {
                            (Expr::Literal(v), _) => v,
                            (Expr::Negate(inner), _) => match *inner {
                                Expr::Literal(v) => crate::scalar::arith::negate(&v)?,
                                _ => return Err(wrong_args("JSON_VALUE")),
                            },
                            _ => return Err(wrong_args("JSON_VALUE")),
                        };
                        let value = if value.is_null() {
                            value
                        } else {
                            functions::convert_exactly(value, returning)
                                .ok_or_else(|| functions::json_value_out_of_range(returning))?
                        };
                        functions::JsonResponse::Default(value)
                    }
                };
            }
        }
        let [on_empty, on_error] = responses;
        Ok((
            Expr::JsonValue {
                doc: Box::new(doc),
                path: Box::new(path),
                spec: Box::new(functions::JsonValueSpec {
                    returning,
                    on_empty,
                    on_error,
                }),
            },
            ty,
        ))
    }
}

/// An argument put into a document (`ast` is the argument as written, for `TRUE` and
/// `FALSE`): a JSON value as it is (JSON text); a number or a date too, which the
/// function makes the JSON scalar it is (a DECIMAL keeps its digits that way, where
/// text would read back as a DOUBLE); a string or a predicate converted to JSON
/// text.
pub(super) fn value_argument(ast: &ast::Expr, e: Expr, t: SqlType) -> Expr {
    let boolean = is_predicate(ast, &e);
    if t == SqlType::Json || (!boolean && (t.is_numeric() || t.is_temporal())) {
        return e;
    }
    Expr::Cast {
        expr: Box::new(e),
        target: CastTarget::Json(JsonCast::Scalar { boolean }),
    }
}

/// `CAST(x AS JSON)`: a JSON value stays as it is.
pub(super) fn cast_to_json(ast: &ast::Expr, x: Expr, t: SqlType) -> (Expr, SqlType) {
    if t == SqlType::Json {
        return (x, SqlType::Json);
    }
    let boolean = is_predicate(ast, &x);
    (
        Expr::Cast {
            expr: Box::new(x),
            target: CastTarget::Json(JsonCast::Parse { boolean }),
        },
        SqlType::Json,
    )
}

/// Whether a bound expression is a predicate (MySQL makes its 1 or 0 a JSON
/// boolean): a comparison, AND / OR / XOR / NOT, IS, LIKE, IN, EXISTS, or the
/// literals TRUE and FALSE.
fn is_predicate(ast: &ast::Expr, e: &Expr) -> bool {
    if matches!(ast, ast::Expr::Value(v) if matches!(v.value, ast::Value::Boolean(_))) {
        return true;
    }
    match e {
        Expr::Compare { .. }
        | Expr::And(..)
        | Expr::Or(..)
        | Expr::Xor(..)
        | Expr::Not(_)
        | Expr::IsNull { .. }
        | Expr::IsBool { .. }
        | Expr::Like { .. }
        | Expr::InList { .. }
        | Expr::RowInList { .. } => true,
        Expr::Subquery { subquery, .. } => !matches!(subquery.kind, SubqueryKind::Scalar),
        _ => false,
    }
}

/// `doc -> path` (JSON_EXTRACT) and `doc ->> path` (JSON_UNQUOTE of it).
pub(super) fn arrow(doc: Expr, path: Expr, unquote: bool) -> (Expr, SqlType) {
    let extract = Expr::Function {
        name: "JSON_EXTRACT".into(),
        args: vec![doc, path],
        collation: Collation::CaseInsensitive,
    };
    if !unquote {
        return (extract, SqlType::Json);
    }
    (
        Expr::Function {
            name: "JSON_UNQUOTE".into(),
            args: vec![extract],
            collation: Collation::CaseInsensitive,
        },
        functions::TEXT,
    )
}

/// Whether a comparison of operands of these types compares JSON (either is JSON).
pub(super) fn compares_json(types: &[SqlType]) -> bool {
    types.contains(&SqlType::Json)
}

/// An operand of a comparison with JSON as its comparison key (`ast` is the operand
/// as written): the operands then compare bytewise.
pub(super) fn compare_key(ast: &ast::Expr, e: Expr, t: SqlType) -> Expr {
    Expr::Cast {
        expr: Box::new(value_argument(ast, e, t)),
        target: CastTarget::Json(JsonCast::CompareKey),
    }
}

/// An ORDER BY key of type `ty`: a JSON value sorts by its comparison key (bytes);
/// anything else as it is, under its type's collation.
pub(super) fn sort_key(expr: Expr, ty: SqlType) -> (Expr, Collation) {
    if ty != SqlType::Json {
        return (expr, ty.collation());
    }
    (
        Expr::Cast {
            expr: Box::new(expr),
            target: CastTarget::Json(JsonCast::CompareKey),
        },
        Collation::Binary,
    )
}
