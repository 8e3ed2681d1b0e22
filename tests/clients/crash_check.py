"""Crash test through the server: writers that log every commit the server
acknowledged, and sysbench oltp_write_only, run against a server that is killed with
SIGKILL mid-run; the server is restarted on the same data directory, and then

- every transaction whose COMMIT was acknowledged is there, every row of it, with
  its payload;
- nothing else is there but, per writer, the one transaction whose COMMIT was sent
  and not answered, entirely or not at all;
- each writer's counter row (updated in the same transactions) counts exactly its
  rows that are there;
- sysbench's tables still hold ids 1..N exactly (write_only deletes and re-inserts
  an id in one transaction), and their full scans, primary-key lookups and k index
  agree (the checks of sysbench_check.py).

Then one more cycle ends in a simulated power loss instead of SIGKILL: the server
runs with the fault layer armed (TARN_FAULT=crash_sync=N,tear=SEED), which right
before its Nth fsync puts back the bytes of every write not yet synced (tearing some
of the last ones) and aborts. A commit acknowledged before its redo record was
synced is lost there, where SIGKILL (which leaves the OS page cache) would keep it,
so this cycle checks that the server answers a COMMIT only once it is durable.

After the crash cycles, the server is stopped with SIGTERM (it must exit with status
0), started again, and everything is checked once more.

Environment: TARN_CRASH_SERVER_CMD (required: the command line that runs the server
in the foreground on TARN_HOST:TARN_PORT with a data directory kept across restarts),
TARN_HOST, TARN_PORT, TARN_USER, TARN_PASSWORD (an administrator), TARN_SEED,
TARN_CRASH_CYCLES (default 2), TARN_CRASH_LOG (the server's output, default a
temporary file; the acknowledged commits go to the same path with .acks appended).
"""

import os
import shlex
import signal
import subprocess
import tempfile
import threading
import time

import pymysql

import sysbench_check
from clientlib import check, check_eq, env, fail, main, seeded_rng, server_flavor

DB = "tarn_crash"
WRITERS = 3


class Server:
    def __init__(self, log_path):
        cmd = os.environ.get("TARN_CRASH_SERVER_CMD")
        if not cmd:
            fail("TARN_CRASH_SERVER_CMD is not set: the command that runs the server in the foreground")
        self.argv = shlex.split(cmd)
        self.log_path = log_path
        self.proc = None

    def start(self, fault=None):
        """Starts the server; `fault` arms its fault layer (a TARN_FAULT plan)."""
        log = open(self.log_path, "ab")
        log.write(f"\n=== crash_check: starting {shlex.join(self.argv)} (TARN_FAULT={fault})\n".encode())
        log.flush()
        child_env = dict(os.environ)
        child_env.pop("TARN_FAULT", None)
        if fault:
            child_env["TARN_FAULT"] = fault
        self.proc = subprocess.Popen(
            self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=child_env
        )
        log.close()
        # Recovery may take a while: wait until a login works.
        deadline = time.monotonic() + 90
        while True:
            if self.proc.poll() is not None:
                fail(f"the server exited with status {self.proc.returncode} while starting; its log:\n{self.log_tail()}")
            try:
                admin_connect(timeout=2).close()
                return
            except pymysql.MySQLError:
                if time.monotonic() > deadline:
                    fail(f"the server did not accept a login within 90 s; its log:\n{self.log_tail()}")
                time.sleep(0.1)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def wait_for_abort(self, limit_s):
        """Waits for the server to abort itself (its fault plan's power loss)."""
        try:
            status = self.proc.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            self.kill()
            fail(f"the planned power loss did not come within {limit_s} s; the server's log:\n{self.log_tail()}")
        check(
            f"the server ended with status {status}, want SIGABRT (the planned power loss); its log:\n{self.log_tail()}",
            status == -signal.SIGABRT,
        )

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            status = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            fail(f"the server did not exit within 60 s of SIGTERM; its log:\n{self.log_tail()}")
        check(f"the server's exit status after SIGTERM is {status}, want 0; its log:\n{self.log_tail()}", status == 0)

    def log_tail(self, lines=40):
        with open(self.log_path, "rb") as f:
            return b"".join(f.readlines()[-lines:]).decode(errors="replace")


def admin_connect(database=None, timeout=10):
    e = env()
    return pymysql.connect(
        host=e["host"], port=e["port"], user=e["user"], password=e["password"], database=database,
        autocommit=True, ssl_disabled=True, connect_timeout=timeout, read_timeout=30, write_timeout=30,
    )


def query(conn, sql, args=None):
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return [tuple(r) for r in cur.fetchall()]


class Writer(threading.Thread):
    """Commits transactions of 1-3 rows plus a counter update, logging each one the
    server acknowledged. Stops at the first error (the server was killed)."""

    def __init__(self, number, first_tx, rng, ack_log, lock):
        super().__init__(daemon=True)
        self.number, self.next_tx, self.rng = number, first_tx, rng
        self.acked = {}  # tx id -> row count
        self.in_flight = None  # (tx id, row count) whose COMMIT had no answer
        self.ack_log, self.lock = ack_log, lock
        self.stop_flag = False
        self.error = None

    def run(self):
        try:
            conn = admin_connect(DB)
            conn.autocommit(False)
        except pymysql.MySQLError as e:
            self.error = e
            return
        while not self.stop_flag:
            tx, rows = self.next_tx, self.rng.randint(1, 3)
            self.next_tx += 1
            try:
                with conn.cursor() as cur:
                    for j in range(rows):
                        cur.execute(
                            "INSERT INTO acks (tx, part, writer, payload) VALUES (%s, %s, %s, %s)",
                            (tx, j, self.number, payload(tx, j)),
                        )
                    cur.execute("UPDATE counters SET n = n + %s WHERE writer = %s", (rows, self.number))
                self.in_flight = (tx, rows)
                conn.commit()
            except Exception as e:  # the server went away: any error ends this writer
                self.error = e
                return
            self.in_flight = None
            self.acked[tx] = rows
            with self.lock:
                self.ack_log.write(f"{self.number} {tx} {rows}\n")
                self.ack_log.flush()


def payload(tx, part):
    return f"tx{tx}-part{part}-" + "x" * ((tx * 7 + part) % 23)


def verify(writers, rng, what):
    conn = admin_connect(DB)
    present = {}
    for tx, part, writer, pl in query(conn, "SELECT tx, part, writer, payload FROM acks"):
        check_eq(f"{what}: payload of tx {tx} part {part}", pl, payload(tx, part))
        present.setdefault((writer, tx), set()).add(part)
    counters = dict(query(conn, "SELECT writer, n FROM counters"))
    lost = []
    for w in writers:
        mine = {tx: parts for (writer, tx), parts in present.items() if writer == w.number}
        for tx, rows in w.acked.items():
            if tx not in mine:
                lost.append((w.number, tx))
            elif mine[tx] != set(range(rows)):
                fail(f"{what}: acknowledged tx {tx} of writer {w.number} has parts {sorted(mine[tx])}, want 0..{rows - 1}")
        for tx, parts in mine.items():
            if tx in w.acked:
                continue
            if w.in_flight is None or w.in_flight[0] != tx:
                fail(f"{what}: tx {tx} of writer {w.number} is present but was never committed (in flight: {w.in_flight})")
            check_eq(f"{what}: parts of the in-flight tx {tx} (all or nothing)", parts, set(range(w.in_flight[1])))
        check_eq(f"{what}: writer {w.number}'s counter", counters.get(w.number), sum(len(p) for p in mine.values()))
        # From now on the in-flight transaction is settled: present means committed.
        if w.in_flight is not None:
            if w.in_flight[0] in mine:
                w.acked[w.in_flight[0]] = w.in_flight[1]
            w.in_flight = None
    if lost:
        fail(f"{what}: {len(lost)} acknowledged transactions are missing, e.g. (writer, tx) {lost[:10]}")
    total = sum(len(w.acked) for w in writers)
    for table, rows in sysbench_tables(conn, rng).items():
        check_eq(f"{what}: {table} ids", [r[0] for r in rows], list(range(1, sysbench_check.TABLE_SIZE + 1)))
    conn.close()
    return total


def sysbench_tables(conn, rng):
    return {f"sbtest{i}": sysbench_check.table_rows(conn, f"sbtest{i}", rng) for i in range(1, sysbench_check.TABLES + 1)}


def run():
    rng = seeded_rng("crash_check")
    cycles = int(os.environ.get("TARN_CRASH_CYCLES", "2"))
    log_path = os.environ.get("TARN_CRASH_LOG") or tempfile.mkstemp(prefix="tarn-crash-", suffix=".log")[1]
    ack_path = log_path + ".acks"
    print(f"crash_check: server log {log_path}, acknowledged commits {ack_path}", flush=True)
    server = Server(log_path)
    sysbench_check.DB = DB
    try:
        server.start()
        admin = admin_connect()
        version = query(admin, "SELECT VERSION()")[0][0]
        print(f"crash_check: server {version} ({server_flavor(version)})", flush=True)
        query(admin, f"DROP DATABASE IF EXISTS {DB}")
        query(admin, f"CREATE DATABASE {DB}")
        query(admin, f"CREATE TABLE {DB}.acks (tx BIGINT NOT NULL, part INT NOT NULL, writer INT NOT NULL, payload VARCHAR(64) NOT NULL, PRIMARY KEY (tx, part))")
        query(admin, f"CREATE TABLE {DB}.counters (writer INT PRIMARY KEY, n BIGINT NOT NULL)")
        for w in range(WRITERS):
            query(admin, f"INSERT INTO {DB}.counters VALUES (%s, 0)", (w,))
        admin.close()
        sysbench_check.sysbench("oltp_write_only", "prepare", seed=rng.randrange(1, 1 << 31))

        ack_log = open(ack_path, "w")
        lock = threading.Lock()
        writers = [Writer(w, w * 1_000_000_000 + 1, seeded_sub(rng), ack_log, lock) for w in range(WRITERS)]
        # The last cycle ends in a power loss; the ones before in SIGKILL.
        for cycle in range(1, cycles + 2):
            power_loss = cycle == cycles + 1
            if power_loss:
                # A few hundred syncs in: past the restart's recovery, within seconds
                # of writing (every group commit syncs the log).
                sync = rng.randrange(300, 1500)
                server.stop()
                server.start(fault=f"crash_sync={sync},tear={rng.randrange(1, 1 << 31)}")
            e = env()
            bench = subprocess.Popen(
                [
                    "sysbench", "--db-driver=mysql", f"--mysql-host={e['host']}", f"--mysql-port={e['port']}",
                    f"--mysql-user={e['user']}", f"--mysql-password={e['password']}", f"--mysql-db={DB}",
                    f"--tables={sysbench_check.TABLES}", f"--table-size={sysbench_check.TABLE_SIZE}",
                    "--threads=2", "--time=120", f"--rand-seed={rng.randrange(1, 1 << 31)}",
                    "oltp_write_only", "run",
                ],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            )
            # A thread runs once: each cycle's writers carry on the previous ones'
            # transaction numbers and acknowledged commits.
            threads = []
            for w in writers:
                t = Writer(w.number, w.next_tx, w.rng, ack_log, lock)
                t.acked = w.acked
                threads.append(t)
            for t in threads:
                t.start()
            delay = rng.uniform(1.5, 3.5)
            if power_loss:
                server.wait_for_abort(60)
            else:
                time.sleep(delay)
                failed = [t for t in threads if t.error is not None]
                if failed:
                    fail(f"cycle {cycle}: writers failed before the kill: {[str(t.error) for t in failed]}")
                if bench.poll() is not None:
                    fail(f"cycle {cycle}: sysbench exited before the kill:\n{bench.stdout.read().decode(errors='replace')}")
                server.kill()
            for t in threads:
                t.stop_flag = True
                t.join(timeout=30)
                check(f"cycle {cycle}: writer {t.number} still running 30 s after the kill", not t.is_alive())
            try:
                bench.wait(timeout=30)
            except subprocess.TimeoutExpired:
                bench.kill()
                bench.wait()
            writers = threads
            acked_now = sum(len(w.acked) for w in writers)
            how = "power loss" if power_loss else f"killed after {delay:.1f}s"
            print(f"crash_check: cycle {cycle}: {how}, {acked_now} transactions acknowledged in all", flush=True)
            check(f"cycle {cycle}: no transaction was acknowledged (the writers got nowhere)", acked_now > cycle * 5)
            server.start()
            verify(writers, rng, f"after crash {cycle}")

        server.stop()
        server.start()
        total = verify(writers, rng, "after a clean restart")
        server.stop()
        print(f"crash_check: {total} acknowledged transactions all present after {cycles} kills and a power loss", flush=True)
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


def seeded_sub(rng):
    import random

    return random.Random(rng.randrange(1 << 32))


if __name__ == "__main__":
    main("crash_check", run)
