"""PyMySQL or mysqlclient against a server: both auth plugins, DDL and DML with
affected rows and insert ids, errors by number, parameter escaping (text and binary),
BINARY/VARBINARY columns holding bytes that are not UTF-8, JSON columns read back
as text, transactions with autocommit off, multi-statements, value types.

    python_client.py pymysql|mysqlclient

Environment: TARN_HOST, TARN_PORT, TARN_USER, TARN_PASSWORD (an administrator that can
create databases and users), TARN_SEED (replays the random payloads).
"""

import datetime
import decimal
import json
import ssl
import sys

from clientlib import check, check_eq, env, expect_error, fail, main, seeded_rng, server_flavor


class Driver:
    """The differences between the two drivers."""

    def __init__(self, name):
        self.name = name
        if name == "pymysql":
            import pymysql
            from pymysql.constants import CLIENT

            self.mod = pymysql
            self.multi_flag = CLIENT.MULTI_STATEMENTS
            self.found_rows_flag = CLIENT.FOUND_ROWS
        elif name == "mysqlclient":
            import MySQLdb
            from MySQLdb.constants import CLIENT

            self.mod = MySQLdb
            self.multi_flag = CLIENT.MULTI_STATEMENTS
            self.found_rows_flag = CLIENT.FOUND_ROWS
        else:
            fail(f"unknown driver {name!r}: pymysql or mysqlclient")
        self.error = self.mod.MySQLError

    def connect(self, user, password, database=None, tls=False, multi=False, found_rows=False, autocommit=None):
        e = env()
        args = dict(host=e["host"], port=e["port"], user=user, password=password, charset="utf8mb4")
        if database:
            args["database"] = database
        flags = 0
        if found_rows:
            flags |= self.found_rows_flag
        if self.name == "pymysql":
            if multi:
                flags |= self.multi_flag
            if tls:
                # Required TLS without verification: the server's certificate is
                # self-signed. (PyMySQL's default is preferred TLS.)
                ctx = ssl.create_default_context()
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                args["ssl"] = ctx
            else:
                args["ssl_disabled"] = True
        else:
            # mysqlclient always sets CLIENT_MULTI_STATEMENTS; leave it as it is.
            if tls:
                args["ssl_mode"] = "REQUIRED"
            else:
                args["ssl_mode"] = "DISABLED"
        if flags:
            args["client_flag"] = flags
        if autocommit is not None:
            args["autocommit"] = autocommit
        return self.mod.connect(**args)

    def uses_tls(self, conn):
        if self.name == "pymysql":
            return isinstance(conn._sock, ssl.SSLSocket)
        # mysqlclient does not expose it: ask the C library, mysql_get_ssl_cipher().
        import ctypes

        capsule = conn._get_native_connection()
        get_name = ctypes.pythonapi.PyCapsule_GetName
        get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        lib = ctypes.CDLL(self.mod._mysql.__file__)
        cipher = lib.mysql_get_ssl_cipher
        cipher.restype, cipher.argtypes = ctypes.c_char_p, [ctypes.c_void_p]
        return cipher(get_pointer(capsule, get_name(capsule))) is not None


def run(driver_name):
    drv = Driver(driver_name)
    rng = seeded_rng(f"python_client {driver_name}")
    e = env()
    admin = drv.connect(e["user"], e["password"], autocommit=True)
    acur = admin.cursor()
    acur.execute("SELECT VERSION()")
    version = acur.fetchone()[0]
    flavor = server_flavor(version)
    print(f"python_client {driver_name}: server {version} ({flavor})")

    db = f"tarn_py_{driver_name}"
    private_db = f"tarn_py_{driver_name}_private"
    native_user, sha2_user = f"tarn_{driver_name}_native", f"tarn_{driver_name}_sha2"
    native_pw, sha2_pw = "N4tive'pw\\x", "Sha2-pw\"%"
    for d in (db, private_db):
        acur.execute(f"DROP DATABASE IF EXISTS {d}")
        acur.execute(f"CREATE DATABASE {d}")
    acur.execute(f"CREATE TABLE {private_db}.secret (x INT)")
    users = [(native_user, native_pw, "mysql_native_password")]
    if flavor != "mariadb":  # MariaDB has no caching_sha2_password
        users.append((sha2_user, sha2_pw, "caching_sha2_password"))
    else:
        print(f"python_client {driver_name}: MariaDB: caching_sha2_password not checked")
    for user, pw, plugin in users:
        acur.execute(f"DROP USER IF EXISTS '{user}'@'%'")
        if flavor == "mariadb":
            acur.execute(f"CREATE USER '{user}'@'%%' IDENTIFIED BY %s", (pw,))
        else:
            acur.execute(f"CREATE USER '{user}'@'%%' IDENTIFIED WITH {plugin} BY %s", (pw,))
        acur.execute(f"GRANT ALL PRIVILEGES ON {db}.* TO '{user}'@'%'")

    check_auth(drv, flavor, db, private_db, users)
    conn = drv.connect(native_user, native_pw, db, autocommit=True)
    check_ddl_dml(drv, conn, db, native_user, native_pw)
    check_escaping(drv, conn, rng)
    check_binary_columns(drv, conn)
    check_json_columns(conn, flavor)
    check_time_and_year(drv, conn)
    check_enum_set_bit(drv, conn)
    check_transactions(drv, conn, db, native_user, native_pw)
    check_multi_statements(drv, db, native_user, native_pw)
    check_session_state(drv, conn, db, native_user, native_pw)
    conn.close()

    for d in (db, private_db):
        acur.execute(f"DROP DATABASE {d}")
    for user, _, _ in users:
        acur.execute(f"DROP USER '{user}'@'%'")
    expect_error("connect as a dropped user", 1045, lambda: drv.connect(native_user, native_pw), drv.error)
    admin.close()


def scalar(conn, sql, args=None):
    cur = conn.cursor()
    cur.execute(sql, args)
    rows = cur.fetchall()
    check(f"{sql}: one row, got {rows!r}", len(rows) == 1)
    return rows[0][0]


def check_auth(drv, flavor, db, private_db, users):
    for user, pw, plugin in users:
        for tls in (False, True) if plugin == "mysql_native_password" else (True, False):
            # caching_sha2_password: the first login over TLS (full authentication sends
            # the password); the second, without TLS, must pass on the server's cache.
            what = f"{plugin} {user} tls={tls}"
            conn = drv.connect(user, pw, db, tls=tls)
            check_eq(f"{what}: CURRENT_USER()", scalar(conn, "SELECT CURRENT_USER()"), f"{user}@%")
            check(f"{what}: USER() starts with {user}@", scalar(conn, "SELECT USER()").startswith(f"{user}@"))
            check_eq(f"{what}: DATABASE()", scalar(conn, "SELECT DATABASE()"), db)
            used = drv.uses_tls(conn)
            if used is not None:
                check_eq(f"{what}: TLS in use", used, tls)
            conn.ping()
            conn.close()
        # Over TLS: without it, a failed caching_sha2 fast authentication goes on to
        # RSA key exchange, which needs more than the drivers have here.
        expect_error(f"{plugin}: wrong password", 1045, lambda: drv.connect(user, pw + "x", db, tls=True), drv.error)
        expect_error(f"{plugin}: empty password", 1045, lambda: drv.connect(user, "", db, tls=True), drv.error)
    # Privileges: no access to another database, at connect or in a statement.
    user, pw, _ = users[0]
    expect_error("connect to a database without a grant", 1044, lambda: drv.connect(user, pw, private_db), drv.error)
    conn = drv.connect(user, pw, db)
    cur = conn.cursor()
    expect_error("SELECT without the privilege", 1142, lambda: cur.execute(f"SELECT * FROM {private_db}.secret"), drv.error)
    conn.select_db(db)
    check_eq("DATABASE() after COM_INIT_DB", scalar(conn, "SELECT DATABASE()"), db)
    conn.close()


def check_ddl_dml(drv, conn, db, user, pw):
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL, "
        "qty INT NOT NULL DEFAULT 0, price DECIMAL(10,2), created DATETIME, ratio DOUBLE, "
        "UNIQUE KEY uk_name (name))"
    )
    expect_error("CREATE TABLE again", 1050, lambda: cur.execute("CREATE TABLE items (x INT)"), drv.error)
    check_eq("CREATE TABLE IF NOT EXISTS rowcount", cur.execute("CREATE TABLE IF NOT EXISTS items (x INT)"), 0)

    n = cur.execute(
        "INSERT INTO items (name, qty, price, created, ratio) VALUES (%s, %s, %s, %s, %s)",
        ("apple", 3, decimal.Decimal("1.25"), datetime.datetime(2024, 1, 2, 3, 4, 5), 0.1),
    )
    check_eq("INSERT one row: affected rows", n, 1)
    check_eq("INSERT one row: insert id", cur.lastrowid, 1)
    n = cur.executemany(
        "INSERT INTO items (name, qty, price) VALUES (%s, %s, %s)",
        [("pear", 5, "2.50"), ("plum", 7, None), ("fig", 0, "10.00")],
    )
    check_eq("executemany of 3: affected rows", n, 3)
    check_eq("LAST_INSERT_ID() after a 3-row insert (its first id)", scalar(conn, "SELECT LAST_INSERT_ID()"), 2)
    check_eq("COUNT(*)", scalar(conn, "SELECT COUNT(*) FROM items"), 4)

    expect_error("duplicate unique key", 1062, lambda: cur.execute("INSERT INTO items (name) VALUES ('pear')"), drv.error)
    expect_error("duplicate primary key", 1062, lambda: cur.execute("INSERT INTO items (id, name) VALUES (1, 'other')"), drv.error)
    expect_error("NULL into NOT NULL", 1048, lambda: cur.execute("INSERT INTO items (name) VALUES (NULL)"), drv.error)
    expect_error("missing table", 1146, lambda: cur.execute("SELECT * FROM no_such_table"), drv.error)
    expect_error("syntax error", 1064, lambda: cur.execute("SELEKT 1"), drv.error)
    expect_error("unknown column", 1054, lambda: cur.execute("SELECT no_such_col FROM items"), drv.error)
    check_eq("COUNT(*) after failed inserts", scalar(conn, "SELECT COUNT(*) FROM items"), 4)

    # Values and their Python types.
    cur.execute("SELECT id, name, qty, price, created, ratio FROM items ORDER BY id")
    check_eq("column names", [d[0] for d in cur.description], ["id", "name", "qty", "price", "created", "ratio"])
    rows = cur.fetchall()
    check_eq(
        "rows",
        [tuple(r) for r in rows],
        [
            (1, "apple", 3, decimal.Decimal("1.25"), datetime.datetime(2024, 1, 2, 3, 4, 5), 0.1),
            (2, "pear", 5, decimal.Decimal("2.50"), None, None),
            (3, "plum", 7, None, None, None),
            (4, "fig", 0, decimal.Decimal("10.00"), None, None),
        ],
    )

    # Affected rows are changed rows, unless the client asks for found rows.
    check_eq("UPDATE two rows", cur.execute("UPDATE items SET qty = qty + 1 WHERE id IN (1, 2)"), 2)
    check_eq("UPDATE to the same value", cur.execute("UPDATE items SET qty = 4 WHERE id = 1"), 0)
    check_eq("UPDATE matching nothing", cur.execute("UPDATE items SET qty = 1 WHERE id = 99"), 0)
    found = drv.connect(user, pw, db, found_rows=True, autocommit=True)
    check_eq("UPDATE to the same value with CLIENT_FOUND_ROWS", found.cursor().execute("UPDATE items SET qty = 4 WHERE id = 1"), 1)
    found.close()

    upsert = "INSERT INTO items (name, qty) VALUES (%s, %s) ON DUPLICATE KEY UPDATE qty = VALUES(qty)"
    check_eq("upsert of a new row", cur.execute(upsert, ("kiwi", 1)), 1)
    # Failed inserts may use up auto-increment values (InnoDB's do): no exact id.
    kiwi_id = scalar(conn, "SELECT id FROM items WHERE name = 'kiwi'")
    check(f"upsert of a new row: insert id {cur.lastrowid} is the row's {kiwi_id}, past 4", cur.lastrowid == kiwi_id > 4)
    check_eq("upsert that updates", cur.execute(upsert, ("kiwi", 2)), 2)
    check_eq("upsert with no change", cur.execute(upsert, ("kiwi", 2)), 0)
    check_eq("qty after upserts", scalar(conn, "SELECT qty FROM items WHERE name = 'kiwi'"), 2)

    check_eq("DELETE nothing", cur.execute("DELETE FROM items WHERE qty > 100"), 0)
    check_eq("DELETE two", cur.execute("DELETE FROM items WHERE name IN (%s, %s)", ("fig", "kiwi")), 2)
    check_eq("SUM(qty)", scalar(conn, "SELECT SUM(qty) FROM items"), decimal.Decimal(4 + 6 + 7))
    cur.execute("INSERT INTO items (name) VALUES ('lime')")
    check(f"next auto-increment id {cur.lastrowid} is past {kiwi_id}", cur.lastrowid > kiwi_id)
    check_eq("insert id is the row's", scalar(conn, "SELECT id FROM items WHERE name = 'lime'"), cur.lastrowid)

    # Many rows back in order.
    cur.executemany("INSERT INTO items (name, qty) VALUES (%s, %s)", [(f"bulk{i:04}", i) for i in range(500)])
    check_eq("bulk insert affected rows", cur.rowcount, 500)
    cur.execute("SELECT name, qty FROM items WHERE name LIKE 'bulk%%' ORDER BY qty DESC")
    check_eq("bulk rows", [tuple(r) for r in cur.fetchall()], [(f"bulk{i:04}", i) for i in reversed(range(500))])

    cur.execute("ALTER TABLE items ADD COLUMN note VARCHAR(20) DEFAULT 'none'")
    check_eq("added column's default", scalar(conn, "SELECT note FROM items WHERE id = 1"), "none")
    cur.execute("DROP TABLE items")
    expect_error("dropped table", 1146, lambda: cur.execute("SELECT * FROM items"), drv.error)


STRINGS = [
    "O'Reilly",
    'double "quotes"',
    "back\\slash and \\' and \\\\",
    "nul\x00byte",
    "percent %s %% %(x)s",
    "emoji \U0001f980 \u00fcn\u00efc\u00f6d\u00e9 \u4e2d\u6587",
    "line\nbreak\r\ttab",
    "ctrl-z \x1a and \x08",
    "",
    "   trailing spaces   ",
    "--comment /* not */ ; DROP TABLE blobs; #",
]


def check_escaping(drv, conn, rng):
    cur = conn.cursor()
    cur.execute("CREATE TABLE blobs (id INT PRIMARY KEY, label VARCHAR(200), data MEDIUMBLOB)")
    payloads = [
        b"",
        bytes(range(256)),
        b"\x00\x00'\\\"\x1a\xff\xfe",
        b"\xc3\x28 invalid utf-8 \xed\xa0\x80",
        bytes(rng.randrange(256) for _ in range(rng.randrange(1000, 5000))),
        bytes(rng.randrange(256) for _ in range(200_000)),
    ]
    for i, s in enumerate(STRINGS):
        check_eq(f"insert string {i}", cur.execute("INSERT INTO blobs (id, label) VALUES (%s, %s)", (i, s)), 1)
    for i, p in enumerate(payloads):
        cur.execute("INSERT INTO blobs (id, data) VALUES (%s, %s)", (100 + i, p))
    for i, s in enumerate(STRINGS):
        check_eq(f"string {s!r} back", scalar(conn, "SELECT label FROM blobs WHERE id = %s", (i,)), s)
        # The parameter as a literal in a WHERE clause finds the same row.
        check_eq(f"string {s!r} as a key", scalar(conn, "SELECT id FROM blobs WHERE label = %s", (s,)), i)
        # The driver's own escaping, as a literal in the select list.
        if drv.name == "pymysql":
            literal = conn.escape(s)
        else:
            literal = conn.string_literal(s.encode()).decode()
        check_eq(f"string {s!r} as a select literal", scalar(conn, "SELECT " + literal), s)
    for i, p in enumerate(payloads):
        got = scalar(conn, "SELECT data FROM blobs WHERE id = %s", (100 + i,))
        check(f"blob {i} ({len(p)} bytes) round trip (got {len(got)} bytes)", bytes(got) == p)
        check_eq(f"blob {i}: LENGTH()", scalar(conn, "SELECT LENGTH(data) FROM blobs WHERE id = %s", (100 + i,)), len(p))
        if len(p) < 10_000:
            check_eq(f"blob {i} as a key", scalar(conn, "SELECT id FROM blobs WHERE data = %s", (p,)), 100 + i)
    check_eq("LENGTH of the 4-byte emoji string", scalar(conn, "SELECT CHAR_LENGTH(label) FROM blobs WHERE id = 5"), len(STRINGS[5]))
    check_eq("blobs table intact", scalar(conn, "SELECT COUNT(*) FROM blobs"), len(STRINGS) + len(payloads))
    cur.execute("DROP TABLE blobs")


def check_binary_columns(drv, conn):
    """BINARY(16) (the UUID pattern) and VARBINARY take parameters that are not UTF-8,
    come back as bytes (the columns are described with the binary charset), pad
    BINARY with zero bytes, and serve as keys; too long is 1406."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE bin (id BINARY(16) PRIMARY KEY, tag VARBINARY(8), KEY tag (tag))")
    rows = [
        (b"\xff\x00\xfe", b"\xff\x00\xfe"),
        (bytes(range(240, 256)), b"\x80"),
        (bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0"), b""),
    ]
    for key, tag in rows:
        check_eq(f"insert binary key {key!r}", cur.execute("INSERT INTO bin VALUES (%s, %s)", (key, tag)), 1)
    for key, tag in rows:
        padded = key.ljust(16, b"\x00")
        cur.execute("SELECT id, tag FROM bin WHERE id = %s", (padded,))
        got = cur.fetchall()
        check_eq(f"binary key {key!r}: one row", len(got), 1)
        got_id, got_tag = got[0]
        check(f"binary key {key!r} comes back as bytes, got {got_id!r}", isinstance(got_id, bytes))
        check_eq(f"binary key {key!r} back, padded", got_id, padded)
        check(f"varbinary {tag!r} comes back as bytes, got {got_tag!r}", isinstance(got_tag, bytes))
        check_eq(f"varbinary {tag!r} back", got_tag, tag)
        check_eq(f"varbinary {tag!r} as a key", scalar(conn, "SELECT HEX(id) FROM bin WHERE tag = %s", (tag,)), padded.hex().upper())
    check_eq("an unpadded key matches nothing", scalar(conn, "SELECT COUNT(*) FROM bin WHERE id = %s", (b"\xff\x00\xfe",)), 0)
    expect_error("VARBINARY(8) given 9 bytes", 1406, lambda: cur.execute("INSERT INTO bin VALUES (%s, %s)", (b"\x01", b"\xff" * 9)), drv.error)
    expect_error("BINARY(16) given 17 bytes", 1406, lambda: cur.execute("INSERT INTO bin VALUES (%s, %s)", (b"\xfe" * 17, None)), drv.error)
    check_eq("bin table intact", scalar(conn, "SELECT COUNT(*) FROM bin"), len(rows))
    cur.execute("DROP TABLE bin")


def check_json_columns(conn, flavor):
    """A JSON column takes a document as a string parameter and comes back as str
    (MySQL 8 and Tarn describe it as type 245 with the binary charset; both drivers
    decode that type as text). MySQL 8 and Tarn print the document normalized (keys
    by length, one space after ':' and ','); MariaDB keeps the text as written."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE js (id INT PRIMARY KEY, doc JSON)")
    doc = {"name": "Zoë", "tags": ["a", "b"], "n": 1.5, "on": True, "none": None}
    check_eq("insert a JSON document", cur.execute("INSERT INTO js VALUES (1, %s)", (json.dumps(doc, ensure_ascii=False),)), 1)
    cur.execute("SELECT doc, JSON_EXTRACT(doc, '$.name'), JSON_UNQUOTE(JSON_EXTRACT(doc, '$.name')) FROM js")
    got, name, unquoted = cur.fetchone()
    check(f"a JSON column comes back as str, got {got!r}", isinstance(got, str))
    check_eq("the document back", json.loads(got), doc)
    check_eq("JSON_EXTRACT of a string", name, '"Zoë"')
    check_eq("JSON_UNQUOTE of it", unquoted, "Zoë")
    if flavor != "mariadb":
        check_eq("the document normalized", got, '{"n": 1.5, "on": true, "name": "Zoë", "none": null, "tags": ["a", "b"]}')
        check_eq("JSON is type 245", cur.description[0][1], 245)
        check_eq("->> reads a member", scalar(conn, "SELECT doc->>'$.tags[1]' FROM js"), "b")
    cur.execute("DROP TABLE js")


def check_time_and_year(drv, conn):
    """TIME columns take and give datetime.timedelta (negative, past a day, with
    microseconds in a TIME(3)), YEAR columns integers; a TIME parameter finds its row;
    a time that is not one is 1292."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE hours (day INT PRIMARY KEY, opens TIME, closes TIME(3), since YEAR, KEY opens (opens))")
    td = datetime.timedelta
    rows = [
        (1, td(hours=8, minutes=30), td(hours=17, minutes=45, seconds=30, microseconds=125000), 1999),
        (2, td(hours=-1), td(hours=838, minutes=59, seconds=59), 2155),
        (3, td(days=4, hours=4), None, None),
    ]
    for row in rows:
        check_eq(f"insert hours {row[0]}", cur.execute("INSERT INTO hours VALUES (%s, %s, %s, %s)", row), 1)
    check_eq("a TIME given as text", cur.execute("INSERT INTO hours VALUES (4, '1 02:03:04', '-0:0:1.5', '70')"), 1)
    rows.append((4, td(days=1, hours=2, minutes=3, seconds=4), td(seconds=-1, microseconds=-500000), 1970))
    check_eq("times and years back", [tuple(r) for r in fetch(conn, "SELECT * FROM hours ORDER BY day")], [tuple(r) for r in rows])
    check_eq("a TIME parameter as a key", scalar(conn, "SELECT day FROM hours WHERE opens = %s", (td(hours=100),)), 3)
    check_eq("ordered by TIME", [r[0] for r in fetch(conn, "SELECT day FROM hours ORDER BY opens")], [2, 1, 4, 3])
    check_eq("TIME arithmetic", scalar(conn, "SELECT TIME_TO_SEC(ADDTIME(opens, '0:30:00')) FROM hours WHERE day = 1"), 32400)
    expect_error("TIME given 25:61:00", 1292, lambda: cur.execute("INSERT INTO hours (day, opens) VALUES (5, '25:61:00')"), drv.error)
    expect_error("YEAR given 1900", 1264, lambda: cur.execute("INSERT INTO hours (day, since) VALUES (5, 1900)"), drv.error)
    cur.execute("DROP TABLE hours")


def check_enum_set_bit(drv, conn):
    """ENUM and SET columns come back as text and BIT columns as bytes (MySQL describes
    them as STRING with the ENUM/SET flag and as BIT); parameters name members in any
    case, a bool or int sets a BIT, and ORDER BY follows the declared order. A value
    that names no member is 1265, a BIT too wide 1406."""
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE flags (id INT PRIMARY KEY, status ENUM('pending','active','done') NOT NULL "
        "DEFAULT 'pending', perms SET('read','write','admin'), active BIT(1) NOT NULL DEFAULT b'0', "
        "mask BIT(12), KEY status (status))"
    )
    insert = "INSERT INTO flags (id, status, perms, active, mask) VALUES (%s, %s, %s, %s, %s)"
    check_eq("insert an ENUM, SET and BITs", cur.execute(insert, (1, "ACTIVE", "admin,read", True, 0x5A5)), 1)
    check_eq("insert the defaults", cur.execute("INSERT INTO flags (id) VALUES (2)"), 1)
    check_eq("insert by index and bitmask", cur.execute(insert, (3, 3, 2, False, None)), 1)
    cur.execute("SELECT id, status, perms, active, mask, status + 0, mask + 0 FROM flags ORDER BY status DESC")
    check_eq(
        "ENUM and SET as text, BIT as bytes, ordered by index",
        tuple(cur.fetchall()),
        (
            (3, "done", "write", b"\x00", None, 3, None),
            (1, "active", "read,admin", b"\x01", b"\x05\xa5", 2, 0x5A5),
            (2, "pending", None, b"\x00", None, 1, None),
        ),
    )
    check_eq("ENUM key lookup by a parameter", scalar(conn, "SELECT id FROM flags WHERE status = %s", ("Done",)), 3)
    check_eq("BIT(1) compared with a bool", scalar(conn, "SELECT id FROM flags WHERE active = %s", (True,)), 1)
    check_eq("FIND_IN_SET on a SET", scalar(conn, "SELECT id FROM flags WHERE FIND_IN_SET(%s, perms)", ("admin",)), 1)
    expect_error("an ENUM value that is no member", 1265, lambda: cur.execute("UPDATE flags SET status = %s", ("archived",)), drv.error)
    expect_error("a SET value with an unknown member", 1265, lambda: cur.execute(insert, (4, "done", "read,root", 0, 0)), drv.error)
    expect_error("BIT(12) given 13 bits", 1406, lambda: cur.execute(insert, (4, "done", "", 0, 4096)), drv.error)
    check_eq("flags table intact", scalar(conn, "SELECT COUNT(*) FROM flags"), 3)
    cur.execute("DROP TABLE flags")


def check_transactions(drv, conn, db, user, pw):
    cur = conn.cursor()
    cur.execute("CREATE TABLE accounts (id INT PRIMARY KEY, balance INT NOT NULL)")
    cur.execute("INSERT INTO accounts VALUES (1, 100), (2, 100)")
    tx = drv.connect(user, pw, db, autocommit=False)
    tcur = tx.cursor()
    check_eq("@@autocommit with autocommit off", scalar(tx, "SELECT @@autocommit"), 0)
    other = conn

    def total(c):
        return int(scalar(c, "SELECT SUM(balance) FROM accounts"))

    # Rolled back: the other session never sees it, and after rollback it is gone.
    check_eq("transfer debit", tcur.execute("UPDATE accounts SET balance = balance - 30 WHERE id = 1"), 1)
    tcur.execute("INSERT INTO accounts VALUES (3, 5)")
    check_eq("own uncommitted changes", total(tx), 175)
    check_eq("another session during the transaction", total(other), 200)
    tx.rollback()
    check_eq("after rollback", total(tx), 200)
    check_eq("after rollback, other session", total(other), 200)

    # Committed: visible to the other session only after COMMIT.
    tcur.execute("UPDATE accounts SET balance = balance - 30 WHERE id = 1")
    tcur.execute("UPDATE accounts SET balance = balance + 30 WHERE id = 2")
    check_eq("uncommitted transfer, other session", scalar(other, "SELECT balance FROM accounts WHERE id = 1"), 100)
    tx.commit()
    check_eq("committed transfer, other session", [tuple(r) for r in fetch(other, "SELECT id, balance FROM accounts ORDER BY id")], [(1, 70), (2, 130)])

    # A failed statement does not end the transaction: the rest commits.
    tcur.execute("INSERT INTO accounts VALUES (4, 1)")
    expect_error("duplicate inside a transaction", 1062, lambda: tcur.execute("INSERT INTO accounts VALUES (1, 1)"), drv.error)
    tcur.execute("INSERT INTO accounts VALUES (5, 1)")
    tx.commit()
    check_eq("rows after a transaction with a failed statement", [r[0] for r in fetch(other, "SELECT id FROM accounts ORDER BY id")], [1, 2, 4, 5])

    # Explicit START TRANSACTION with autocommit on, and ROLLBACK.
    cur.execute("START TRANSACTION")
    cur.execute("DELETE FROM accounts")
    check_eq("deleted inside a transaction", scalar(conn, "SELECT COUNT(*) FROM accounts"), 0)
    cur.execute("ROLLBACK")
    check_eq("after ROLLBACK of a delete", scalar(conn, "SELECT COUNT(*) FROM accounts"), 4)

    # Switching autocommit on commits the open transaction.
    tcur.execute("UPDATE accounts SET balance = 0 WHERE id = 5")
    tx.autocommit(True)
    check_eq("SET autocommit=1 commits", scalar(other, "SELECT balance FROM accounts WHERE id = 5"), 0)
    tx.close()
    cur.execute("DROP TABLE accounts")


def fetch(conn, sql, args=None):
    cur = conn.cursor()
    cur.execute(sql, args)
    return cur.fetchall()


def check_multi_statements(drv, db, user, pw):
    conn = drv.connect(user, pw, db, multi=True, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE m (x INT); INSERT INTO m VALUES (1), (2); SELECT SUM(x) FROM m; SELECT 'two', 2")
    results = []
    while True:
        if cur.description is not None:
            results.append([tuple(r) for r in cur.fetchall()])
        else:
            results.append(cur.rowcount)
        if not cur.nextset():
            break
    check_eq("multi-statement results", results, [0, 2, [(decimal.Decimal(3),)], [("two", 2)]])
    # An error in the second statement: the first ran, the error is reported.
    expect_error(
        "multi-statement with an error",
        1146,
        lambda: (cur.execute("INSERT INTO m VALUES (3); SELECT * FROM missing_table"), cur.nextset()),
        drv.error,
    )
    conn.close()
    conn = drv.connect(user, pw, db, autocommit=True)
    check_eq("first statement of the failed batch ran", scalar(conn, "SELECT COUNT(*) FROM m"), 3)
    if drv.name == "pymysql":
        # Without CLIENT_MULTI_STATEMENTS two statements are a syntax error.
        expect_error("two statements without the flag", 1064, lambda: conn.cursor().execute("SELECT 1; SELECT 2"), drv.error)
    conn.cursor().execute("DROP TABLE m")
    conn.close()


def check_session_state(drv, conn, db, user, pw):
    """Temporary tables seen from two connections, SELECT .. INTO and SQL-level
    prepared statements, over the wire."""
    cur = conn.cursor()
    cur.execute("CREATE TABLE st (id INT PRIMARY KEY, v VARCHAR(10))")
    cur.execute("INSERT INTO st VALUES (1, 'base')")
    other = drv.connect(user, pw, db, autocommit=True)
    ocur = other.cursor()
    # A temporary table of the same name hides the base table from its own
    # connection only; it does not commit the open transaction.
    cur.execute("START TRANSACTION")
    cur.execute("INSERT INTO st VALUES (2, 'in tx')")
    cur.execute("CREATE TEMPORARY TABLE st (id INT PRIMARY KEY, v VARCHAR(10))")
    check_eq("INSERT into a temporary table", cur.execute("INSERT INTO st VALUES (7, 'temp'), (8, 'temp')"), 2)
    check_eq("own temporary table", [tuple(r) for r in fetch(conn, "SELECT id, v FROM st ORDER BY id")], [(7, "temp"), (8, "temp")])
    check_eq("another connection sees the base table", [tuple(r) for r in fetch(other, "SELECT id, v FROM st")], [(1, "base")])
    ocur.execute("CREATE TEMPORARY TABLE only_mine (x INT)")
    expect_error("another connection's temporary table", 1146, lambda: cur.execute("SELECT * FROM only_mine"), drv.error)
    cur.execute("DROP TEMPORARY TABLE st")
    cur.execute("ROLLBACK")
    check_eq("CREATE/DROP TEMPORARY did not commit", [r[0] for r in fetch(conn, "SELECT id FROM st")], [1])
    other.close()

    # SELECT .. INTO user variables: an OK with one affected row, no result set.
    check_eq("SELECT .. INTO affected rows", cur.execute("SELECT id, v INTO @sid, @sv FROM st WHERE id = 1"), 1)
    check_eq("SELECT .. INTO result set", cur.description, None)
    check_eq("the variables", tuple(fetch(conn, "SELECT @sid, @sv")[0]), (1, "base"))
    check_eq("SELECT .. INTO of no row", cur.execute("SELECT v INTO @sv FROM st WHERE id = 99"), 0)
    check_eq("warning 1329", [tuple(r)[1] for r in fetch(conn, "SHOW WARNINGS")], [1329])
    expect_error("SELECT .. INTO of two rows", 1172, lambda: cur.execute("SELECT 1 UNION SELECT 2 INTO @two"), drv.error)

    # PREPARE / EXECUTE / DEALLOCATE over the text protocol.
    cur.execute("PREPARE ps FROM 'SELECT v FROM st WHERE id = ?'")
    cur.execute("SET @k = 1")
    check_eq("EXECUTE .. USING", [tuple(r) for r in fetch(conn, "EXECUTE ps USING @k")], [("base",)])
    expect_error("EXECUTE with no parameters", 1210, lambda: cur.execute("EXECUTE ps"), drv.error)
    cur.execute("PREPARE ins FROM 'INSERT INTO st VALUES (?, ?)'")
    cur.execute("SET @i = 3, @v = 'three'")
    check_eq("EXECUTE of an INSERT: affected rows", cur.execute("EXECUTE ins USING @i, @v"), 1)
    cur.execute("DEALLOCATE PREPARE ps")
    cur.execute("DROP PREPARE ins")
    expect_error("EXECUTE after DEALLOCATE", 1243, lambda: cur.execute("EXECUTE ps USING @k"), drv.error)
    cur.execute("DROP TABLE st")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python_client.py pymysql|mysqlclient", file=sys.stderr)
        sys.exit(2)
    main(f"python_client {sys.argv[1]}", lambda: run(sys.argv[1]))
