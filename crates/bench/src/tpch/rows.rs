//! Converting tpchgen's row structs into [`Value`] rows, field by field.
//!
//! Each function returns the values in the column order of [`super::schema`]. Numbers
//! and dates come from the structs' typed fields: tpchgen's decimals are integers in
//! hundredths ([`TPCHDecimal`]), so money converts exactly. Only the text fields that
//! tpchgen keeps as small formatting types (names such as `Supplier#000000001`,
//! addresses, phone numbers) go through their `Display`; no row is formatted as text.

use std::fmt::Display;

use tarn_row::datetime::Date;
use tarn_row::decimal::Decimal;
use tarn_row::value::Value;
use tpchgen::dates::TPCHDate;
use tpchgen::decimal::TPCHDecimal;
use tpchgen::generators::{Customer, LineItem, Nation, Order, Part, PartSupp, Region, Supplier};

/// The scale of every DECIMAL column in TPC-H, and of [`TPCHDecimal`].
const MONEY_SCALE: u8 = 2;

/// tpchgen's dates count years from 1900 (`TPCHDate::to_ymd` gives 92 for 1992).
const TPCHGEN_YEAR_BASE: i32 = 1900;

pub(super) fn region(row: &Region<'_>) -> Vec<Value> {
    vec![int(row.r_regionkey), text(row.r_name), text(row.r_comment)]
}

pub(super) fn nation(row: &Nation<'_>) -> Vec<Value> {
    vec![
        int(row.n_nationkey),
        text(row.n_name),
        int(row.n_regionkey),
        text(row.n_comment),
    ]
}

pub(super) fn supplier(row: &Supplier) -> Vec<Value> {
    vec![
        int(row.s_suppkey),
        displayed(&row.s_name),
        displayed(&row.s_address),
        int(row.s_nationkey),
        displayed(&row.s_phone),
        money(row.s_acctbal),
        text(&row.s_comment),
    ]
}

pub(super) fn customer(row: &Customer<'_>) -> Vec<Value> {
    vec![
        int(row.c_custkey),
        displayed(&row.c_name),
        displayed(&row.c_address),
        int(row.c_nationkey),
        displayed(&row.c_phone),
        money(row.c_acctbal),
        text(row.c_mktsegment),
        text(row.c_comment),
    ]
}

pub(super) fn part(row: &Part<'_>) -> Vec<Value> {
    vec![
        int(row.p_partkey),
        displayed(&row.p_name),
        displayed(&row.p_mfgr),
        displayed(&row.p_brand),
        text(row.p_type),
        int(row.p_size),
        text(row.p_container),
        money(row.p_retailprice),
        text(row.p_comment),
    ]
}

pub(super) fn partsupp(row: &PartSupp<'_>) -> Vec<Value> {
    vec![
        int(row.ps_partkey),
        int(row.ps_suppkey),
        int(row.ps_availqty),
        money(row.ps_supplycost),
        text(row.ps_comment),
    ]
}

pub(super) fn orders(row: &Order<'_>) -> Vec<Value> {
    vec![
        int(row.o_orderkey),
        int(row.o_custkey),
        text(row.o_orderstatus.as_str()),
        money(row.o_totalprice),
        date(row.o_orderdate),
        text(row.o_orderpriority),
        displayed(&row.o_clerk),
        int(row.o_shippriority),
        text(row.o_comment),
    ]
}

pub(super) fn lineitem(row: &LineItem<'_>) -> Vec<Value> {
    vec![
        int(row.l_orderkey),
        int(row.l_partkey),
        int(row.l_suppkey),
        int(row.l_linenumber),
        whole_money(row.l_quantity),
        money(row.l_extendedprice),
        money(row.l_discount),
        money(row.l_tax),
        text(row.l_returnflag),
        text(row.l_linestatus),
        date(row.l_shipdate),
        date(row.l_commitdate),
        date(row.l_receiptdate),
        text(row.l_shipinstruct),
        text(row.l_shipmode),
        text(row.l_comment),
    ]
}

fn int(value: impl Into<i64>) -> Value {
    Value::Int(value.into())
}

fn text(value: &str) -> Value {
    Value::Bytes(value.as_bytes().to_vec())
}

fn displayed(value: &impl Display) -> Value {
    Value::Bytes(value.to_string().into_bytes())
}

/// A [`TPCHDecimal`] holds hundredths in an `i64`: the mantissa of a scale-2 decimal.
fn money(value: TPCHDecimal) -> Value {
    scale_2_decimal(i128::from(value.into_inner()))
}

/// tpchgen keeps `l_quantity` as a whole number; the column is `DECIMAL(15,2)`.
fn whole_money(value: i64) -> Value {
    scale_2_decimal(i128::from(value) * 100)
}

fn scale_2_decimal(mantissa: i128) -> Value {
    // from_i128 fails only for a scale above DECIMAL_SCALE_MAX (30).
    Value::Decimal(Decimal::from_i128(mantissa, MONEY_SCALE).expect("scale 2 is valid"))
}

fn date(value: TPCHDate) -> Value {
    let (year, month, day) = value.to_ymd();
    let field = |number: i32| u8::try_from(number).expect("tpchgen month and day fit u8");
    let year = u16::try_from(TPCHGEN_YEAR_BASE + year).expect("tpchgen years are 1992..=1998");
    // tpchgen's dates are real days of 1992..=1998, so Date::new cannot fail.
    Value::Date(Date::new(year, field(month), field(day)).expect("tpchgen dates are valid"))
}
