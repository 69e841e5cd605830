"""A process tied to its parent with exit_with_parent ends when the parent is killed: by the kernel's
parent-death signal on Linux, and by the watchdog thread alone where there is none."""

import subprocess
import sys
import textwrap

import pytest
from subprocs import all_exit, kill_survivors, running

CHILD = textwrap.dedent(
    """
    import os, sys, time
    from depthscale.sims import lifeline
    if sys.argv[1] == "watchdog-only":
        lifeline._request_death_signal = lambda: False
    lifeline.exit_with_parent(os.getppid(), interval=0.1)
    print(os.getpid(), flush=True)
    time.sleep(600)
    """
)

PARENT = textwrap.dedent(
    """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2]], stdout=subprocess.PIPE, text=True)
    print(child.stdout.readline().strip(), flush=True)
    time.sleep(600)
    """
)


@pytest.mark.parametrize("how", ["both", "watchdog-only"])
def test_a_child_exits_when_its_parent_is_killed(tmp_path, how):
    if how == "both" and not sys.platform.startswith("linux"):
        pytest.skip("the parent-death signal is Linux's")
    (tmp_path / "child.py").write_text(CHILD)
    (tmp_path / "parent.py").write_text(PARENT)
    parent = subprocess.Popen(
        [sys.executable, str(tmp_path / "parent.py"), str(tmp_path / "child.py"), how],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        child = int(parent.stdout.readline())
        assert running(child)
    finally:
        parent.kill()  # SIGKILL: the parent cannot stop its child itself
        parent.wait(timeout=30)
    try:
        assert all_exit([child], 600, 0.05), "the child outlived its parent"
    finally:
        kill_survivors([child])
