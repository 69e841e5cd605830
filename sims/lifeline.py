"""Tie a worker process's life to its parent's: a pool worker whose sweep was killed exits too.

A process pool's workers notice an orderly shutdown of their parent, but not a ``kill -9`` of it:
they would compute on, orphaned, until their job ends (hours, for a sweep's long runs). On Linux
the kernel delivers SIGKILL to the worker when its parent dies (``prctl(PR_SET_PDEATHSIG)``);
elsewhere, and as a second line, a daemon thread checks once a second whether the parent is gone.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _request_death_signal() -> bool:
    """Ask Linux to SIGKILL this process when its parent exits; True if that is in force."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int, interval: float) -> None:
    while True:
        time.sleep(interval)
        if os.getppid() != parent:  # reparented: the parent has died
            os._exit(1)


def exit_with_parent(parent: int, interval: float = 1.0) -> bool:
    """Make this process exit when its parent ``parent`` (a pid) dies.

    The kernel's parent-death signal, where there is one, and a watchdog thread in any case (it
    needs the GIL, so a job holding it for long is stopped only by the signal). A parent that died
    before this call ends the process at once. Returns True if the kernel's signal is in force.
    The Linux signal fires when the *thread* that started this process ends: start workers from a
    thread that outlives them (a sweep's calling thread does).

    Examples
    --------
    >>> import subprocess, sys
    >>> code = "import os; from depthscale.sims.lifeline import exit_with_parent as e; print(e(os.getppid()))"
    >>> out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    >>> out.strip() == str(sys.platform.startswith("linux"))  # the kernel's signal is Linux's
    True
    """
    signalled = _request_death_signal()
    if os.getppid() != parent:  # died before the request took effect
        os._exit(1)
    threading.Thread(target=_watch, args=(parent, interval), daemon=True, name="exit-with-parent").start()
    return signalled


__all__ = ["exit_with_parent"]
