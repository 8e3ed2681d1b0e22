"""Shared helpers for the Python client programs in tests/clients.

Every program reads the server's address and an administrator account from the
environment: TARN_HOST (default 127.0.0.1), TARN_PORT (default 3306), TARN_USER
(default root) and TARN_PASSWORD (default empty). A randomised program prints its
seed; TARN_SEED replays it.
"""

import os
import random
import sys
import time


class CheckFailed(Exception):
    pass


def env():
    return {
        "host": os.environ.get("TARN_HOST", "127.0.0.1"),
        "port": int(os.environ.get("TARN_PORT", "3306")),
        "user": os.environ.get("TARN_USER", "root"),
        "password": os.environ.get("TARN_PASSWORD", ""),
    }


def seeded_rng(program):
    seed = int(os.environ.get("TARN_SEED") or random.SystemRandom().randrange(1 << 32))
    print(f"{program}: seed {seed} (TARN_SEED={seed} replays)", flush=True)
    return random.Random(seed)


def fail(message):
    raise CheckFailed(message)


def check_eq(what, got, want):
    if got != want:
        fail(f"{what}: got {got!r}, want {want!r}")


def check(what, condition):
    if not condition:
        fail(what)


def expect_error(what, errno, fn, error_types):
    """Runs fn, which must fail with MySQL error number errno."""
    try:
        fn()
    except error_types as e:
        got = e.args[0] if e.args else None
        if got != errno:
            fail(f"{what}: want error {errno}, got {got}: {e}")
        return e
    fail(f"{what}: want error {errno}, but it succeeded")


def server_flavor(version):
    """'tarn', 'mariadb' or 'mysql', from SELECT VERSION(). When TARN_EXPECT_SERVER
    names one (the Rust test sets it to tarn), the server must be that one: Tarn-only
    expectations are checked only on a server whose version names Tarn."""
    v = version.lower()
    if "tarn" in v:
        flavor = "tarn"
    elif "mariadb" in v:
        flavor = "mariadb"
    else:
        flavor = "mysql"
    expected = os.environ.get("TARN_EXPECT_SERVER")
    if expected and flavor != expected:
        fail(f"VERSION() is {version!r}: want a {expected} server (TARN_EXPECT_SERVER={expected})")
    return flavor


def wait_for_port(host, port, timeout=30.0, proc=None):
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            fail(f"server exited with status {proc.returncode} before listening")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    fail(f"server did not listen on {host}:{port} within {timeout}s")


def main(program, body):
    """Runs body(); prints PASS or the failure and exits non-zero."""
    import signal

    def terminate(signum, frame):
        # A timeout in the test harness: unwind, so a server this program started
        # is stopped by its finally block.
        raise SystemExit(f"{program}: stopped by signal {signum}")

    signal.signal(signal.SIGTERM, terminate)
    start = time.monotonic()
    try:
        body()
    except CheckFailed as e:
        print(f"{program}: FAIL: {e}", file=sys.stderr, flush=True)
        sys.exit(1)
    print(f"{program}: PASS ({time.monotonic() - start:.1f}s)", flush=True)
