//! The eight TPC-H tables as Tarn column definitions.
//!
//! Types follow the TPC-H specification (section 1.4) mapped to MySQL: identifiers are
//! `INT` except `o_orderkey` and `l_orderkey`, which are `BIGINT` because orders keys are
//! sparse (four times the order count: 2.4 billion at SF 100); money and the other
//! spec "decimal" columns are `DECIMAL(15,2)`; fixed text is `CHAR(n)`, variable text
//! `VARCHAR(n)`, all with the binary collation; every column is `NOT NULL`. Column order
//! is the specification's, which is also the field order of tpchgen's row structs.

use tarn_row::types::{Collation, Column, ColumnType};

/// One TPC-H table: its columns in order, its primary key and its secondary indexes.
#[derive(Clone, Debug, PartialEq)]
pub struct TpchTable {
    /// The table name as the TPC-H queries spell it (`lineitem`, `partsupp`, ...).
    pub name: &'static str,
    pub columns: Vec<Column>,
    /// Positions in `columns` of the primary key's columns, most significant first.
    pub primary_key: Vec<usize>,
    pub indexes: Vec<TpchIndex>,
}

/// A secondary index on a TPC-H table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TpchIndex {
    pub name: &'static str,
    /// Positions in the table's `columns`, most significant first.
    pub columns: Vec<usize>,
    pub unique: bool,
}

/// The eight TPC-H tables, smallest first: region, nation, supplier, customer, part,
/// partsupp, orders, lineitem.
pub fn tables() -> Vec<TpchTable> {
    vec![
        region(),
        nation(),
        supplier(),
        customer(),
        part(),
        partsupp(),
        orders(),
        lineitem(),
    ]
}

fn region() -> TpchTable {
    TpchTable {
        name: "region",
        columns: vec![
            int("r_regionkey"),
            char("r_name", 25),
            varchar("r_comment", 152),
        ],
        primary_key: vec![0],
        indexes: Vec::new(),
    }
}

fn nation() -> TpchTable {
    TpchTable {
        name: "nation",
        columns: vec![
            int("n_nationkey"),
            char("n_name", 25),
            int("n_regionkey"),
            varchar("n_comment", 152),
        ],
        primary_key: vec![0],
        indexes: Vec::new(),
    }
}

fn supplier() -> TpchTable {
    TpchTable {
        name: "supplier",
        columns: vec![
            int("s_suppkey"),
            char("s_name", 25),
            varchar("s_address", 40),
            int("s_nationkey"),
            char("s_phone", 15),
            money("s_acctbal"),
            varchar("s_comment", 101),
        ],
        primary_key: vec![0],
        indexes: Vec::new(),
    }
}

fn customer() -> TpchTable {
    TpchTable {
        name: "customer",
        columns: vec![
            int("c_custkey"),
            varchar("c_name", 25),
            varchar("c_address", 40),
            int("c_nationkey"),
            char("c_phone", 15),
            money("c_acctbal"),
            char("c_mktsegment", 10),
            varchar("c_comment", 117),
        ],
        primary_key: vec![0],
        indexes: Vec::new(),
    }
}

fn part() -> TpchTable {
    TpchTable {
        name: "part",
        columns: vec![
            int("p_partkey"),
            varchar("p_name", 55),
            char("p_mfgr", 25),
            char("p_brand", 10),
            varchar("p_type", 25),
            int("p_size"),
            char("p_container", 10),
            money("p_retailprice"),
            varchar("p_comment", 23),
        ],
        primary_key: vec![0],
        indexes: Vec::new(),
    }
}

fn partsupp() -> TpchTable {
    TpchTable {
        name: "partsupp",
        columns: vec![
            int("ps_partkey"),
            int("ps_suppkey"),
            int("ps_availqty"),
            money("ps_supplycost"),
            varchar("ps_comment", 199),
        ],
        primary_key: vec![0, 1],
        indexes: Vec::new(),
    }
}

fn orders() -> TpchTable {
    TpchTable {
        name: "orders",
        columns: vec![
            bigint("o_orderkey"),
            int("o_custkey"),
            char("o_orderstatus", 1),
            money("o_totalprice"),
            date("o_orderdate"),
            char("o_orderpriority", 15),
            char("o_clerk", 15),
            int("o_shippriority"),
            varchar("o_comment", 79),
        ],
        primary_key: vec![0],
        indexes: vec![
            TpchIndex {
                name: "o_custkey",
                columns: vec![1],
                unique: false,
            },
            TpchIndex {
                name: "o_orderdate",
                columns: vec![4],
                unique: false,
            },
        ],
    }
}

fn lineitem() -> TpchTable {
    TpchTable {
        name: "lineitem",
        columns: vec![
            bigint("l_orderkey"),
            int("l_partkey"),
            int("l_suppkey"),
            int("l_linenumber"),
            money("l_quantity"),
            money("l_extendedprice"),
            money("l_discount"),
            money("l_tax"),
            char("l_returnflag", 1),
            char("l_linestatus", 1),
            date("l_shipdate"),
            date("l_commitdate"),
            date("l_receiptdate"),
            char("l_shipinstruct", 25),
            char("l_shipmode", 10),
            varchar("l_comment", 44),
        ],
        primary_key: vec![0, 3],
        indexes: vec![TpchIndex {
            name: "l_shipdate",
            columns: vec![10],
            unique: false,
        }],
    }
}

fn column(name: &str, ty: ColumnType) -> Column {
    Column {
        name: name.to_string(),
        ty,
        nullable: false,
        collation: Collation::Binary,
    }
}

fn int(name: &str) -> Column {
    column(name, ColumnType::Int { unsigned: false })
}

fn bigint(name: &str) -> Column {
    column(name, ColumnType::BigInt { unsigned: false })
}

/// `DECIMAL(15,2)`, the specification's "decimal" (money, quantities, rates).
fn money(name: &str) -> Column {
    column(
        name,
        ColumnType::Decimal {
            precision: 15,
            scale: 2,
        },
    )
}

fn date(name: &str) -> Column {
    column(name, ColumnType::Date)
}

fn char(name: &str, len: u32) -> Column {
    column(name, ColumnType::Char { len })
}

fn varchar(name: &str, len: u32) -> Column {
    column(name, ColumnType::VarChar { len })
}
