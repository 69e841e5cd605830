"""The typed records a study hands the report: :class:`FigureEntry` (a figure, drawn later, once) and
:class:`Table`; and :class:`DrawnFigure`, a figure entry rendered to PNG by :func:`draw_entry`.

A study's ``sections`` returns them (:class:`~depthscale.derivations.study.Sections`); the report
builder draws each figure entry once and the renderer reads the records as they are. Each record
checks itself on construction, so a bad name, a row of the wrong length or a drawing that is not a
function is refused where it is made, naming the field.

This module imports neither matplotlib nor numpy: a figure's drawing function imports them when it runs.

Examples
--------
>>> t = Table("Losses", ["L", "R_L"], [[1, 0.5], [2, 0.25]])
>>> t.cells()
[['1', '0.5'], ['2', '0.25']]
>>> Table("Losses", ["L", "R_L"], [[1]])
Traceback (most recent call last):
...
ValueError: rows[0]=[1]: must be a list of 2 cells (one per column)
>>> def nothing():
...     raise NoFigure("no runs")
>>> draw_entry(FigureEntry("empty", nothing, caption="Loss against depth."))
DrawnFigure(name='empty', caption='Loss against depth.', png=None, why_missing='no runs')
>>> FigureEntry("../x", nothing)
Traceback (most recent call last):
...
ValueError: name='../x': must be a file-name-safe string (letters, digits, '_', '-', '.'), at most 100 characters
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...theory._validate import bad_argument
from ..formatting import format_value

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


class NoFigure(Exception):
    """Raised by a figure's drawing function when there is nothing to draw; the message says why."""


def _text(name: str, value) -> str:
    if not isinstance(value, str):
        bad_argument(name, value, "a string")
    return value


@dataclass(frozen=True)
class FigureEntry:
    """One figure of a report, before it is drawn.

    Attributes
    ----------
    name : str
        Its file name without ``.png`` (letters, digits, ``_``, ``-``, ``.``), unique in a report; a
        finding names its figure by it.
    draw : callable
        ``draw()`` returns a matplotlib ``Figure`` (the builder renders it to PNG once, with
        ``to_png``) or PNG bytes a study rendered itself, or raises :class:`NoFigure` saying why
        nothing is drawn.
    caption : str
        What the figure shows.
    look_at : str
        What to look at in it; shown after the caption.
    finding : str
        The title of the finding of the study's story it is drawn beside ("" for none; a finding
        that names the figure by its ``figure`` field is drawn beside it as well).
    """

    name: str
    draw: Callable[[], Any]
    caption: str = ""
    look_at: str = ""
    finding: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name) or ".." in self.name:
            bad_argument(
                "name", self.name, "a file-name-safe string (letters, digits, '_', '-', '.'), at most 100 characters"
            )
        if not callable(self.draw):
            bad_argument("draw", self.draw, "a function draw() -> matplotlib Figure or PNG bytes")
        for field_name in ("caption", "look_at", "finding"):
            _text(field_name, getattr(self, field_name))

    @property
    def text(self) -> str:
        """The caption a report prints: what it shows, then what to look at."""
        return " ".join(t for t in (self.caption, self.look_at) if t)


@dataclass(frozen=True)
class DrawnFigure:
    """A :class:`FigureEntry` drawn: its PNG bytes, or None and why it was not drawn."""

    name: str
    caption: str
    png: bytes | None
    why_missing: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name) or ".." in self.name:
            bad_argument("name", self.name, "a file-name-safe string (letters, digits, '_', '-', '.')")
        _text("caption", self.caption)
        if self.png is not None and not (isinstance(self.png, bytes) and self.png.startswith(PNG_MAGIC)):
            shown = self.png[:8] if isinstance(self.png, bytes | bytearray) else self.png
            bad_argument("png", shown, "PNG bytes or None")
        if self.png is None and not (isinstance(self.why_missing, str) and self.why_missing.strip()):
            bad_argument("why_missing", self.why_missing, "the reason the figure was not drawn")


def draw_entry(entry: FigureEntry) -> DrawnFigure:
    """Draw ``entry`` once: its PNG, or the reason it is not drawn (:class:`NoFigure`)."""
    if not isinstance(entry, FigureEntry):
        bad_argument("entry", entry, "a FigureEntry")
    try:
        got = entry.draw()
    except NoFigure as exc:
        return DrawnFigure(entry.name, entry.text, None, str(exc) or "no reason was given")
    if not isinstance(got, bytes | bytearray):
        from .png import to_png  # matplotlib, only when a figure is drawn

        got = to_png(got)
    return DrawnFigure(entry.name, entry.text, bytes(got))


@dataclass(frozen=True)
class Table:
    """One table of a report: a title, column names, rows of cells (one per column) and a note.

    Numbers are shown with 4 significant digits, None and nan as an em dash (:meth:`cells`).
    """

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]] = ()
    note: str = ""

    def __post_init__(self) -> None:
        _text("title", self.title)
        _text("note", self.note)
        cols = self.columns
        if isinstance(cols, str) or not isinstance(cols, Sequence) or not cols:
            bad_argument("columns", cols, "a non-empty list of column names")
        object.__setattr__(self, "columns", tuple(str(c) for c in cols))
        rows = self.rows
        if isinstance(rows, str | bytes | Mapping) or not isinstance(rows, Sequence):
            bad_argument("rows", rows, "a list of rows")
        for i, row in enumerate(rows):
            if isinstance(row, str | bytes | Mapping) or not isinstance(row, Sequence) or len(row) != len(cols):
                bad_argument(f"rows[{i}]", row, f"a list of {len(cols)} cells (one per column)")
        object.__setattr__(self, "rows", tuple(tuple(row) for row in rows))

    def cells(self) -> list[list[str]]:
        """The rows as text."""
        return [[format_value(v) for v in row] for row in self.rows]


__all__ = ["NoFigure", "FigureEntry", "DrawnFigure", "Table", "draw_entry", "PNG_MAGIC"]
