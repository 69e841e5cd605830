"""Resumable training: a lockstep group's whole training state, saved every few minutes beside the store.

One group of the headline preset trains for about 2.5 core-hours, and a killed sweep or an ended
session used to lose all of it. With snapshots a rerun of the same sweep resumes each group from its
last one, and the records are bitwise those of an uninterrupted run (tested): a snapshot holds the
step, every model's parameters, Adam's moments and stopping-rule state, the checkpoint measurements
made so far and the data stream's generator state.

A snapshot is a pickle that this package writes beside the user's own store (``<store>.snapshots/``)
and deletes once the group's records are stored; treat the folder like the store itself. A record
trained across a resume names the steps and code versions it resumed at (``resumed``).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import time
from pathlib import Path

from ._outputs import SNAPSHOTS_SUFFIX
from .config import run_key

SNAPSHOT_EVERY = 600.0  # seconds of training between snapshots: at most ten minutes lost to a kill
_FORMAT = 1


def snapshot_dir(store_path) -> Path:
    """The folder of a store's snapshots: ``results/x.sqlite`` -> ``results/x.sqlite.snapshots``."""
    p = Path(store_path)
    return p.with_name(p.name + SNAPSHOTS_SUFFIX)


# classes a snapshot names by where they were when it was written, and where they are now
MOVED = {("depthscale.sims.training", "Adam"): ("depthscale.sims.optimizer_registry", "Adam")}


class _Unpickler(pickle.Unpickler):
    """Reads snapshots written before a class they hold moved (a group resumes across that change)."""

    def find_class(self, module: str, name: str):
        return super().find_class(*MOVED.get((module, name), (module, name)))


class Snapshot:
    """The snapshot file of one lockstep group (its configs at one seed) and when to write it next."""

    def __init__(self, directory, configs, seed: int, every: float = SNAPSHOT_EVERY):
        self.keys = sorted(run_key(c, seed) for c in configs)
        name = hashlib.sha256("\n".join(self.keys).encode()).hexdigest()[:24]
        self.path = Path(directory) / f"{name}.pkl"
        self.every = float(every)
        self.resumed: list[dict] = []  # [{"step": s, "code_version": v}, ...] of the state loaded
        self._last = time.monotonic()

    def load(self) -> dict | None:
        """The saved state, or None when there is none (or it belongs to another group or format)."""
        try:
            with open(self.path, "rb") as fh:
                state = _Unpickler(fh).load()
        except FileNotFoundError:
            return None
        except Exception as exc:  # unreadable (a damaged disk, another version's classes): train afresh
            print(
                f"depthscale: warning: snapshot {self.path} unreadable ({type(exc).__name__}); training afresh",
                file=sys.stderr,
            )
            return None
        if not isinstance(state, dict) or state.get("format") != _FORMAT or state.get("keys") != self.keys:
            return None
        self.resumed = [*state["resumed"], {"step": state["step"], "code_version": state["code_version"]}]
        return state

    def due(self) -> bool:
        return time.monotonic() - self._last >= self.every

    def save(self, state: dict) -> None:
        """Write ``state`` atomically (a kill mid-write leaves the previous snapshot)."""
        from .provenance import code_version

        self.path.parent.mkdir(parents=True, exist_ok=True)
        state = {**state, "format": _FORMAT, "keys": self.keys, "resumed": self.resumed, "code_version": code_version()}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self.path)
        self._last = time.monotonic()

    def discard(self) -> None:
        """Delete the snapshot (its group's records are stored), and the folder once it is empty."""
        self.path.unlink(missing_ok=True)
        try:
            self.path.parent.rmdir()
        except OSError:
            pass
