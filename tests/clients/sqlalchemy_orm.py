"""SQLAlchemy 2 (with PyMySQL) against a server: the probes its engine runs on
connect, metadata.create_all with the common column types, a foreign key, indexes,
a unique constraint, comments and an ON UPDATE CURRENT_TIMESTAMP column, inspect()
of all of it, ORM sessions (add, commit, query, update, delete, explicit keys),
joined and selectin relationship loading, executemany, server defaults and
onupdate, rollback and savepoints, reflection of an existing table, drop_all.

    sqlalchemy_orm.py

Environment: TARN_HOST, TARN_PORT, TARN_USER, TARN_PASSWORD (an administrator that can
create databases).
"""

import datetime
import decimal
import enum
import time
from urllib.parse import quote_plus

from clientlib import check, check_eq, env, fail, main, server_flavor

import sqlalchemy as sa
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.dialects import mysql
from sqlalchemy.orm import DeclarativeBase, Session, joinedload, relationship, selectinload

DB = "tarn_sqlalchemy"


class Color(enum.Enum):
    red = 1
    green = 2


class Base(DeclarativeBase):
    pass


book_tags = Table(
    "book_tag",
    Base.metadata,
    Column("book_id", ForeignKey("book.id", ondelete="CASCADE"), primary_key=True),
    Column("tag_id", ForeignKey("tag.id"), primary_key=True),
)


class Author(Base):
    __tablename__ = "author"
    __table_args__ = {"comment": "people who write"}
    id = Column(Integer, primary_key=True)
    name = Column(String(100), nullable=False, unique=True, comment="display name")
    bio = Column(Text)
    created = Column(DateTime, server_default=func.now())
    updated = Column(DateTime, server_default=func.now(), onupdate=func.now())
    touched = Column(
        mysql.TIMESTAMP(fsp=6),
        server_default=text("CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)"),
    )
    balance = Column(Numeric(10, 2), default=decimal.Decimal("0.00"))
    active = Column(Boolean, default=True, nullable=False)
    color = Column(Enum(Color))
    meta = Column(JSON)
    blob = Column(LargeBinary)
    # The server deletes the books (ON DELETE CASCADE).
    books = relationship("Book", back_populates="author", order_by="Book.id", passive_deletes=True)


class Tag(Base):
    __tablename__ = "tag"
    id = Column(Integer, primary_key=True)
    name = Column(String(20), nullable=False)


class Book(Base):
    __tablename__ = "book"
    __table_args__ = (
        Index("ix_book_title", "title"),
        UniqueConstraint("author_id", "title", name="uq_author_title"),
    )
    id = Column(Integer, primary_key=True)
    title = Column(String(200), nullable=False)
    author_id = Column(Integer, ForeignKey("author.id", ondelete="CASCADE"), nullable=False)
    pages = Column(Integer, server_default="100")
    author = relationship("Author", back_populates="books")
    tags = relationship("Tag", secondary=book_tags, order_by="Tag.id", passive_deletes=True)


def url(database=""):
    e = env()
    return (
        f"mysql+pymysql://{quote_plus(e['user'])}:{quote_plus(e['password'])}"
        f"@{e['host']}:{e['port']}/{database}?charset=utf8mb4"
    )


def run():
    with sa.create_engine(url()).connect() as c:
        version = c.execute(text("SELECT VERSION()")).scalar()
        flavor = server_flavor(version)
        c.execute(text(f"DROP DATABASE IF EXISTS {DB}"))
        c.execute(text(f"CREATE DATABASE {DB}"))
    print(f"sqlalchemy_orm: SQLAlchemy {sa.__version__}, server {version} ({flavor})")
    engine = sa.create_engine(url(DB))
    # The probes of the first connect: version, sql_mode, lower_case_table_names,
    # the character set. Tarn says it is MySQL 8.
    with engine.connect() as c:
        check_eq("dialect is MariaDB", engine.dialect._is_mariadb, flavor == "mariadb")
        if flavor == "tarn":
            check("server_version_info >= 8.0", engine.dialect.server_version_info >= (8, 0))
        check_eq("database", c.execute(text("SELECT DATABASE()")).scalar(), DB)
    try:
        Base.metadata.create_all(engine)
        check_inspection(engine, flavor)
        check_orm(engine)
        check_bulk_and_rollback(engine)
        check_reflection(engine, flavor)
        Base.metadata.drop_all(engine)
        check_eq("tables after drop_all", inspect(engine).get_table_names(), [])
    finally:
        engine.dispose()
        with sa.create_engine(url()).connect() as c:
            c.execute(text(f"DROP DATABASE IF EXISTS {DB}"))


def type_name(t):
    return type(t).__name__


def check_inspection(engine, flavor):
    insp = inspect(engine)
    check_eq("tables", insp.get_table_names(), ["author", "book", "book_tag", "tag"])
    columns = {c["name"]: c for c in insp.get_columns("author")}
    check_eq("author columns", list(columns), [
        "id", "name", "bio", "created", "updated", "touched", "balance", "active", "color", "meta", "blob"])
    json_type = "LONGTEXT" if flavor == "mariadb" else "JSON"  # MariaDB's JSON is LONGTEXT
    check_eq("author column types", [type_name(c["type"]) for c in columns.values()], [
        "INTEGER", "VARCHAR", "TEXT", "DATETIME", "DATETIME", "TIMESTAMP", "DECIMAL", "TINYINT", "ENUM",
        json_type, "BLOB"])
    check_eq("name length", columns["name"]["type"].length, 100)
    check_eq("balance precision", (columns["balance"]["type"].precision, columns["balance"]["type"].scale), (10, 2))
    check_eq("color members", columns["color"]["type"].enums, ["red", "green"])
    check_eq("id autoincrement", columns["id"]["autoincrement"], True)
    check_eq("nullable", [c["nullable"] for c in columns.values()], [
        False, False, True, True, True, True, True, False, True, True, True])
    # SQLAlchemy writes func.now() as MySQL 8's expression default `(now())`, and
    # as plain `now()` for MariaDB, which keeps `current_timestamp()`.
    now = "current_timestamp()" if flavor == "mariadb" else "(now())"
    check_eq("created default", columns["created"]["default"], now)
    touched = "current_timestamp(6)" if flavor == "mariadb" else "CURRENT_TIMESTAMP(6)"
    check_eq("touched default", columns["touched"]["default"], f"{touched} ON UPDATE {touched}")
    check_eq("touched fsp", columns["touched"]["type"].fsp, 6)
    check_eq("column comment", columns["name"]["comment"], "display name")
    check_eq("table comment", insp.get_table_comment("author"), {"text": "people who write"})
    check_eq("author pk", insp.get_pk_constraint("author")["constrained_columns"], ["id"])
    check_eq("author unique", [(u["name"], u["column_names"]) for u in insp.get_unique_constraints("author")],
             [("name", ["name"])])

    book = {c["name"]: c for c in insp.get_columns("book")}
    pages_default = "100" if flavor == "mariadb" else "'100'"  # MySQL 8 quotes it
    check_eq("pages default", book["pages"]["default"], pages_default)
    fks = insp.get_foreign_keys("book")
    check_eq("book foreign keys", [(f["constrained_columns"], f["referred_table"], f["referred_columns"],
                                     f["options"].get("ondelete")) for f in fks],
             [(["author_id"], "author", ["id"], "CASCADE")])
    check("foreign key named", bool(fks[0]["name"]))
    indexes = sorted((i["name"], i["column_names"], bool(i["unique"])) for i in insp.get_indexes("book"))
    check_eq("book indexes", indexes, [
        ("ix_book_title", ["title"], False), ("uq_author_title", ["author_id", "title"], True)])
    check_eq("book unique constraints", [(u["name"], u["column_names"]) for u in insp.get_unique_constraints("book")],
             [("uq_author_title", ["author_id", "title"])])
    check_eq("book_tag pk", insp.get_pk_constraint("book_tag")["constrained_columns"], ["book_id", "tag_id"])
    check_eq("book_tag foreign keys", sorted((f["referred_table"], f["options"].get("ondelete"))
                                             for f in insp.get_foreign_keys("book_tag")),
             [("book", "CASCADE"), ("tag", None)])


def check_orm(engine):
    with Session(engine) as s:
        ann = Author(name="ann", bio="x" * 5000, balance=decimal.Decimal("12.34"), color=Color.red,
                     meta={"a": [1, 2], "b": None}, blob=b"\x00\xff\xfe")
        bob = Author(name="bob", active=False, color=Color.green)
        s.add_all([ann, bob])
        s.flush()
        check_eq("generated keys", (ann.id, bob.id), (1, 2))
        # An explicit key: the object keeps it (the insert id of the OK packet).
        cid = Author(id=10, name="cid")
        s.add(cid)
        s.flush()
        check_eq("explicit key", cid.id, 10)
        new, sale = Tag(name="new"), Tag(name="sale")
        s.add_all([
            Book(title="t1", author=ann, tags=[new, sale]),
            Book(title="t2", author=ann, pages=250, tags=[sale]),
            Book(title="t3", author=bob),
        ])
        s.commit()

    with Session(engine) as s:
        got = s.scalars(select(Author).where(Author.name == "ann")).one()
        check_eq("ann's values", (got.bio, got.balance, got.color, got.meta, got.blob, got.active),
                 ("x" * 5000, decimal.Decimal("12.34"), Color.red, {"a": [1, 2], "b": None}, b"\x00\xff\xfe", True))
        check("server defaults filled", got.created is not None and got.updated is not None and got.touched is not None)
        check_eq("bob's defaults", (s.get(Author, 2).balance, s.get(Author, 2).active, s.get(Author, 10).active),
                 (decimal.Decimal("0.00"), False, True))
        created, touched = got.created, got.touched
        time.sleep(0.02)
        got.bio = "changed"
        s.commit()
        s.refresh(got)
        check("onupdate moved updated", got.updated >= created)
        check("ON UPDATE CURRENT_TIMESTAMP moved touched", got.touched > touched)
        check_eq("created kept", got.created, created)
        # An UPDATE that changes nothing leaves the ON UPDATE column alone.
        touched = got.touched
        with engine.begin() as c:
            r = c.execute(sa.update(Author).where(Author.id == got.id).values(bio="changed"))
            # SQLAlchemy connects with CLIENT_FOUND_ROWS: matched rows.
            check_eq("no-op update rowcount", r.rowcount, 1)
        s.refresh(got)
        check_eq("touched after a no-op update", got.touched, touched)

        check_eq("server_default pages", [b.pages for b in s.scalars(select(Book).order_by(Book.id))], [100, 250, 100])
        counts = s.execute(select(Author.name, func.count(Book.id)).outerjoin(Book)
                           .group_by(Author.name).order_by(Author.name)).all()
        check_eq("books per author", [tuple(r) for r in counts], [("ann", 2), ("bob", 1), ("cid", 0)])
        s.delete(s.scalars(select(Book).where(Book.title == "t3")).one())
        s.commit()
        check_eq("after delete", s.scalar(select(func.count()).select_from(Book)), 2)

    for option in (joinedload(Author.books).joinedload(Book.tags), selectinload(Author.books).selectinload(Book.tags)):
        with Session(engine) as s:
            stmt = select(Author).options(option).order_by(Author.id)
            authors = s.scalars(stmt).unique().all()
            loaded = [(a.name, [(b.title, [t.name for t in b.tags]) for b in a.books]) for a in authors]
            check_eq(f"relationships by {option}", loaded,
                     [("ann", [("t1", ["new", "sale"]), ("t2", ["sale"])]), ("bob", []), ("cid", [])])

    with Session(engine) as s:
        r = s.execute(sa.update(Book).where(Book.author_id == 1).values(pages=Book.pages + 1))
        check_eq("bulk update rowcount", r.rowcount, 2)
        s.commit()
        check_eq("pages", s.scalars(select(Book.pages).order_by(Book.id)).all(), [101, 251])
        # Deleting an author cascades to its books (ON DELETE CASCADE) and their tags.
        s.delete(s.get(Author, 1))
        s.commit()
        check_eq("books after the cascade", s.scalar(select(func.count()).select_from(Book)), 0)
        check_eq("book_tag after the cascade", s.scalar(select(func.count()).select_from(book_tags)), 0)


def check_bulk_and_rollback(engine):
    with engine.begin() as c:
        r = c.execute(Book.__table__.insert(), [{"title": f"bulk{i}", "author_id": 2} for i in range(50)])
        check_eq("executemany rowcount", r.rowcount, 50)
        check_eq("bulk rows", c.execute(select(func.count(), func.min(Book.pages)).select_from(Book)).one(), (50, 100))
    with Session(engine) as s:
        s.add(Author(name="temp"))
        s.flush()
        check_eq("inside the transaction", s.scalar(select(func.count()).select_from(Author)), 3)
        s.rollback()
        check_eq("after rollback", s.scalar(select(func.count()).select_from(Author)), 2)
    with Session(engine) as s:
        s.add(Tag(name="kept"))
        nested = s.begin_nested()
        s.add(Tag(name="undone"))
        s.flush()
        nested.rollback()
        s.commit()
        check_eq("savepoint", s.scalars(select(Tag.name).order_by(Tag.id)).all(), ["new", "sale", "kept"])
    with engine.connect() as c:
        try:
            c.execute(Author.__table__.insert().values(name="bob"))
            fail("a duplicate name was inserted")
        except sa.exc.IntegrityError as e:
            check_eq("duplicate error", e.orig.args[0], 1062)


def check_reflection(engine, flavor):
    md = MetaData()
    book = Table("book", md, autoload_with=engine)
    check_eq("reflected columns", [c.name for c in book.columns], ["id", "title", "author_id", "pages"])
    check_eq("reflected key", [c.name for c in book.primary_key], ["id"])
    check_eq("reflected foreign key", [fk.target_fullname for fk in book.c.author_id.foreign_keys], ["author.id"])
    check_eq("reflected indexes", sorted(i.name for i in book.indexes), ["ix_book_title", "uq_author_title"])
    author = md.tables["author"]  # reflected through the foreign key
    check_eq("reflected comment", (author.comment, author.c.name.comment), ("people who write", "display name"))
    check_eq("reflected enum", author.c.color.type.enums, ["red", "green"])
    with engine.begin() as c:
        r = c.execute(book.insert().values(title="reflected", author_id=2))
        check_eq("insert through the reflected table", r.inserted_primary_key[0], 54)
        rows = c.execute(select(book.c.title, book.c.pages).where(book.c.id == 54)).all()
        check_eq("select through the reflected table", [tuple(r) for r in rows], [("reflected", 100)])
        rows = c.execute(select(author.c.name).join(book).where(book.c.title == "bulk7")).all()
        check_eq("join of reflected tables", [tuple(r) for r in rows], [("bob",)])
    # A table made outside SQLAlchemy, reflected whole.
    with engine.begin() as c:
        c.execute(text("CREATE TABLE legacy (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, "
                       "code CHAR(3) NOT NULL DEFAULT 'abc', at DATETIME(3) NULL, KEY k_code (code))"))
    legacy = Table("legacy", MetaData(), autoload_with=engine)
    check_eq("legacy types", [type_name(c.type) for c in legacy.columns], ["BIGINT", "CHAR", "DATETIME"])
    check_eq("legacy unsigned", legacy.c.id.type.unsigned, True)
    check_eq("legacy default", legacy.c.code.server_default.arg.text, "'abc'")
    check_eq("legacy fsp", legacy.c.at.type.fsp, 3)
    with engine.begin() as c:
        c.execute(legacy.insert().values(at=datetime.datetime(2024, 1, 2, 3, 4, 5, 678000)))
        c.execute(legacy.insert().values(code="xyz"))
        rows = c.execute(select(legacy).order_by(legacy.c.id)).all()
        check_eq("legacy rows", [tuple(r) for r in rows],
                 [(1, "abc", datetime.datetime(2024, 1, 2, 3, 4, 5, 678000)), (2, "xyz", None)])
        legacy.drop(c)


if __name__ == "__main__":
    main("sqlalchemy_orm", run)
