"""Killing a child process mid-write, and checking the SQLite file it leaves, for the store and sweep tests."""

import contextlib
import os
import signal
import sqlite3
import time


@contextlib.contextmanager
def sigkill_after(proc):
    """Run the block (which waits for ``proc`` to be mid-work), then SIGKILL ``proc`` and reap it.

    If the block raises, ``proc`` is killed all the same. The caller asserts how it ended
    (``proc.returncode == -signal.SIGKILL``).
    """
    try:
        yield proc
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


def integrity(path):
    """SQLite's own verdict on the file at ``path`` (``"ok"`` when intact)."""
    con = sqlite3.connect(path)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


def running(pid: int) -> bool:
    """True while ``pid`` runs (a zombie nobody has reaped yet has stopped running)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def all_exit(pids, tries: int, pause: float) -> bool:
    """Poll up to ``tries`` times, ``pause`` seconds apart, until none of ``pids`` runs; True if none does."""
    for _ in range(tries):
        if not any(running(pid) for pid in pids):
            return True
        time.sleep(pause)
    return not any(running(pid) for pid in pids)


def kill_survivors(pids):
    """SIGKILL those of ``pids`` still running (a failed test must not leave them computing)."""
    for pid in pids:
        if running(pid):
            os.kill(pid, signal.SIGKILL)
