"""Killing a child process mid-write, and checking the SQLite file it leaves, for the store and sweep tests."""

import contextlib
import signal
import sqlite3


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
