"""Progress bars that work in a terminal and in a Jupyter notebook alike (``tqdm.auto``), whose
time estimate leaves out the warm-up (numba compiling its kernels on the first step or run).

A bar is shown on a terminal or in a notebook kernel; elsewhere (output to a log file) there is
none, and the command line prints one line per finished run instead.
"""

from __future__ import annotations

import sys


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where stderr is not a terminal but a bar is still seen).

    Examples
    --------
    >>> in_notebook()  # a doctest runs in no kernel
    False
    """
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def interactive(stream=None) -> bool:
    """True when someone watches ``stream`` (default stderr): a terminal or a notebook."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return in_notebook() or bool(isatty and isatty())


class Progress:
    """A ``tqdm.auto`` bar with a warm-up: :meth:`warmed_up` restarts its clock, so the rate and the
    time left are those of the steps after it, not of the compilation before.

    Parameters
    ----------
    total : int
        Steps (or runs) in all.
    unit, desc : str
        tqdm's unit and label.
    **kwargs
        Passed to ``tqdm.auto.tqdm`` (e.g. ``file``, ``leave``, ``disable``).

    Examples
    --------
    >>> import io
    >>> bar = Progress(10, unit="step", file=io.StringIO())
    >>> bar.update()  # the first step: compilation included
    >>> bar.warmed_up()  # from here on the clock counts only warm steps
    >>> bar.update(9); bar.bar.n, bar.bar.initial
    (10, 1)
    >>> bar.close()
    """

    def __init__(self, total: int, unit: str = "it", desc: str | None = None, **kwargs):
        from tqdm.auto import tqdm

        kwargs.setdefault("dynamic_ncols", True)
        self.bar = tqdm(total=total, unit=unit, desc=desc, **kwargs)
        self._warm = False

    def update(self, n: int = 1) -> None:
        self.bar.update(n)

    def set_postfix(self, **values) -> None:
        self.bar.set_postfix(**values)

    def warmed_up(self) -> None:
        """Restart the clock at the current count (once; later calls do nothing).

        tqdm's rate is ``(n - initial) / elapsed`` and an average of the later updates: with the
        clock, ``initial`` and the averages reset here, the steps done so far count for neither.
        """
        if self._warm:
            return
        self._warm = True
        done = self.bar.n
        self.bar.reset(total=self.bar.total)  # clock and rate averages restart, n = 0
        self.bar.n = self.bar.initial = self.bar.last_print_n = done
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


__all__ = ["Progress", "in_notebook", "interactive"]
