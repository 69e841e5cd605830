"""A matplotlib figure as PNG bytes (:func:`to_png`), the one way every report figure is rendered."""

from __future__ import annotations

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .plots import plain_log_ticks

_DPI = 100


def to_png(fig: Figure) -> bytes:
    """The PNG bytes of ``fig`` (Agg canvas, fixed resolution, no timestamp)."""
    for ax in fig.axes:  # a log y axis spanning less than a decade: plain numbers, not 1.95x10^0
        lo, hi = sorted(ax.yaxis.get_view_interval())
        if ax.get_yscale() == "log" and lo > 0 and hi / lo < 10:
            plain_log_ticks(ax.yaxis)
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None})
    return buf.getvalue()


__all__ = ["to_png"]
