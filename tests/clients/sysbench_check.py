"""sysbench (Debian's 1.0.20) against a server: prepare, then a few seconds each of
oltp_point_select, oltp_read_only, oltp_read_write, oltp_write_only,
oltp_update_index and oltp_insert, with prepared statements on and off
(--db-ps-mode=auto|disable), then cleanup. After every run the tables are checked:

- the rows read by a full scan, by primary-key ranges, and through the k index
  (point lookups per k and GROUP BY k) are the same rows, and COUNT/SUM agree;
- read-only runs change nothing (every row identical);
- read_write and write_only delete and re-insert the same ids, so the id set is
  unchanged;
- update_index adds exactly one to SUM(k) per UPDATE sysbench reports;
- insert adds exactly as many rows as the INSERTs sysbench reports, all with new,
  larger auto-increment ids;
- every c and pad has sysbench's length (CHAR columns keep what was written);
- sysbench reports no reconnects, no errors on read-only runs, and few ignored
  errors (deadlocks) on the others.

Environment: TARN_HOST, TARN_PORT, TARN_USER, TARN_PASSWORD (an administrator),
TARN_SEED (sysbench's --rand-seed and the sampling here), TARN_SYSBENCH_TIME (seconds
per run, default 3).
"""

import os
import re
import subprocess

import pymysql

from clientlib import check, check_eq, env, fail, main, seeded_rng, server_flavor

DB = "tarn_sysbench"
TABLES = 2
TABLE_SIZE = 1000
THREADS = 4
READ_ONLY = ("oltp_point_select", "oltp_read_only")
TESTS = ("oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_write_only", "oltp_update_index", "oltp_insert")


def sysbench(test, command, extra=(), seed=0):
    e = env()
    args = [
        "sysbench",
        "--db-driver=mysql",
        f"--mysql-host={e['host']}",
        f"--mysql-port={e['port']}",
        f"--mysql-user={e['user']}",
        f"--mysql-password={e['password']}",
        f"--mysql-db={DB}",
        f"--tables={TABLES}",
        f"--table-size={TABLE_SIZE}",
        f"--rand-seed={seed}",
        *extra,
        test,
        command,
    ]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0 or "FATAL" in out:
        fail(f"sysbench {test} {command} {' '.join(extra)}: exit status {proc.returncode}:\n{out}")
    return out


def stat(out, name):
    m = re.search(rf"^\s*{re.escape(name)}:\s+(\d+)", out, re.M)
    if not m:
        fail(f"no '{name}' in sysbench's report:\n{out}")
    return int(m.group(1))


def connect():
    e = env()
    return pymysql.connect(host=e["host"], port=e["port"], user=e["user"], password=e["password"], database=DB, autocommit=True, ssl_disabled=True)


def query(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return [tuple(r) for r in cur.fetchall()]


def table_rows(conn, table, rng):
    """The table's rows, sorted by id, after checking that every access path agrees."""
    scan = sorted(query(conn, f"SELECT id, k, c, pad FROM {table}"))
    ids = [r[0] for r in scan]
    check(f"{table}: duplicate ids in a full scan", len(set(ids)) == len(ids))

    # Primary-key ranges.
    by_pk = []
    if ids:
        step = 300
        for lo in range(min(ids), max(ids) + 1, step):
            by_pk += query(conn, f"SELECT id, k, c, pad FROM {table} WHERE id BETWEEN %s AND %s ORDER BY id", (lo, lo + step - 1))
    check(f"{table}: rows by primary-key ranges ({len(by_pk)}) differ from a full scan ({len(scan)})", by_pk == scan)
    # Point lookups by primary key for a sample.
    for row in rng.sample(scan, min(40, len(scan))):
        check_eq(f"{table}: point select id={row[0]}", query(conn, f"SELECT id, k, c, pad FROM {table} WHERE id = %s", (row[0],)), [row])

    # The k index: GROUP BY k, lookups per k, ranges of k.
    per_k = {}
    for row in scan:
        per_k.setdefault(row[1], []).append(row[0])
    grouped = dict(query(conn, f"SELECT k, COUNT(*) FROM {table} GROUP BY k"))
    check_eq(f"{table}: GROUP BY k", grouped, {k: len(v) for k, v in per_k.items()})
    for k in rng.sample(sorted(per_k), min(40, len(per_k))):
        check_eq(f"{table}: ids WHERE k = {k}", [r[0] for r in query(conn, f"SELECT id FROM {table} WHERE k = %s ORDER BY id", (k,))], sorted(per_k[k]))
    check_eq(f"{table}: WHERE k = missing value", query(conn, f"SELECT id FROM {table} WHERE k = %s", (-5,)), [])
    for _ in range(5):
        lo = rng.randrange(0, TABLE_SIZE + 10)
        hi = lo + rng.randrange(0, 50)
        want = sorted((r[1], r[0]) for r in scan if lo <= r[1] <= hi)
        got = query(conn, f"SELECT k, id FROM {table} WHERE k BETWEEN %s AND %s ORDER BY k, id", (lo, hi))
        check_eq(f"{table}: k BETWEEN {lo} AND {hi}", got, want)

    # Aggregates computed by the server.
    count, sum_id, sum_k = query(conn, f"SELECT COUNT(*), SUM(id), SUM(k) FROM {table}")[0]
    check_eq(f"{table}: COUNT(*)", count, len(scan))
    check_eq(f"{table}: SUM(id)", int(sum_id or 0), sum(ids))
    check_eq(f"{table}: SUM(k)", int(sum_k or 0), sum(r[1] for r in scan))

    # sysbench's values: c is 119 characters of digit groups, pad 59.
    for row in scan:
        if len(row[2]) != 119 or len(row[3]) != 59 or not re.fullmatch(r"[0-9-]+", row[2]):
            fail(f"{table}: id {row[0]} has c={row[2]!r} pad={row[3]!r}, not sysbench's format")
    return scan


def snapshot(conn, rng):
    return {f"sbtest{i}": table_rows(conn, f"sbtest{i}", rng) for i in range(1, TABLES + 1)}


def run():
    rng = seeded_rng("sysbench_check")
    seed = rng.randrange(1, 1 << 31)
    seconds = os.environ.get("TARN_SYSBENCH_TIME", "3")
    e = env()
    admin = pymysql.connect(host=e["host"], port=e["port"], user=e["user"], password=e["password"], autocommit=True, ssl_disabled=True)
    version = query(admin, "SELECT VERSION()")[0][0]
    print(f"sysbench_check: server {version} ({server_flavor(version)})", flush=True)
    query(admin, f"DROP DATABASE IF EXISTS {DB}")
    query(admin, f"CREATE DATABASE {DB}")

    sysbench("oltp_read_write", "prepare", seed=seed)
    conn = connect()
    check_eq("tables after prepare", sorted(r[0] for r in query(conn, "SHOW TABLES")), [f"sbtest{i}" for i in range(1, TABLES + 1)])
    before = snapshot(conn, rng)
    for table, rows in before.items():
        check_eq(f"{table}: ids after prepare", [r[0] for r in rows], list(range(1, TABLE_SIZE + 1)))

    for ps_mode in ("auto", "disable"):
        for test in TESTS:
            out = sysbench(test, "run", [f"--time={seconds}", f"--threads={THREADS}", f"--db-ps-mode={ps_mode}"], seed=seed)
            tx, writes = stat(out, "transactions"), stat(out, "write")
            ignored, reconnects = stat(out, "ignored errors"), stat(out, "reconnects")
            print(f"sysbench_check: {test} ps-mode={ps_mode}: {tx} transactions, {writes} writes, {ignored} ignored errors", flush=True)
            what = f"{test} --db-ps-mode={ps_mode}"
            check(f"{what}: only {tx} transactions in {seconds}s", tx >= 20)
            check_eq(f"{what}: reconnects", reconnects, 0)
            if test in READ_ONLY:
                check_eq(f"{what}: ignored errors", ignored, 0)
            else:
                check(f"{what}: {ignored} ignored errors (deadlocks, lock waits) in {tx} transactions", ignored <= max(3, tx // 20))
            after = snapshot(conn, rng)
            for table in before:
                b, a = before[table], after[table]
                if test in READ_ONLY:
                    check(f"{what}: {table} changed during a read-only run", a == b)
                elif test in ("oltp_read_write", "oltp_write_only", "oltp_update_index"):
                    check_eq(f"{what}: {table} ids", [r[0] for r in a], [r[0] for r in b])
            if test == "oltp_update_index":
                delta = sum(r[1] for rows in after.values() for r in rows) - sum(r[1] for rows in before.values() for r in rows)
                check(f"{what}: SUM(k) grew by {delta}, want {writes} updates less at most {ignored} failed", writes - ignored <= delta <= writes)
            if test == "oltp_insert":
                added = sum(len(after[t]) - len(before[t]) for t in before)
                check(f"{what}: {added} rows added, want {writes} inserts less at most {ignored} failed", writes - ignored <= added <= writes)
                for table in before:
                    old_max = max(r[0] for r in before[table])
                    new = [r for r in after[table] if r[0] > old_max]
                    check_eq(f"{what}: {table}: rows kept", after[table][: len(before[table])], before[table])
                    check_eq(f"{what}: {table}: new rows all have new ids", len(new), len(after[table]) - len(before[table]))
                    for r in new:
                        check(f"{what}: {table}: inserted k={r[1]} outside 1..{TABLE_SIZE}", 1 <= r[1] <= TABLE_SIZE)
            if test == "oltp_write_only" and ps_mode == "auto":
                # Another client's view agrees (nothing is left uncommitted).
                other = connect()
                check(f"{what}: a new session sees other rows", snapshot(other, rng) == after)
                other.close()
            before = after

    sysbench("oltp_read_write", "cleanup", seed=seed)
    check_eq("tables after cleanup", query(conn, "SHOW TABLES"), [])
    conn.close()
    query(admin, f"DROP DATABASE {DB}")
    admin.close()


if __name__ == "__main__":
    main("sysbench_check", run)
