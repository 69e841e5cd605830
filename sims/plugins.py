"""Entry points of other packages read once, a broken one warned about and left out.

Studies, attention maps, models and tasks come from the entry-point groups ``depthscale.studies``,
``depthscale.attention``, ``depthscale.models`` and ``depthscale.tasks`` (the last three through
sims/registry.py). A third party's line can fail in any way: its
module raises on import (any exception, or an exit), it lacks its attribute, or it names the wrong
kind of object. :func:`read_plugins` loads each line of a group and converts what it names;
:func:`warn_left_out` writes one warning line per line that could not be used, naming it and why.
The lines that load are used as if the others did not exist, so one broken package never takes
the healthy ones (or the built-ins) down with it.

Examples
--------
>>> from importlib.metadata import EntryPoint
>>> eps = [EntryPoint("ok", "math:pi", "demo.group"), EntryPoint("gone", "no_such_module_xyz:f", "demo.group")]
>>> got = read_plugins(eps, lambda ep, obj, found: round(obj, 2))
>>> got.loaded, got.broken["gone"][:19]
({'ok': 3.14}, 'ModuleNotFoundError')
>>> got.where["gone"]
"gone = 'no_such_module_xyz:f'"
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PluginLines:
    """What :func:`read_plugins` made of a group's entry points.

    Attributes
    ----------
    loaded : dict
        ``{entry point name: converted object}`` of the lines that could be used, in reading order.
    broken : dict
        ``{entry point name: reason}`` of the lines left out (the reason is one line).
    where : dict
        ``{entry point name: "name = 'module:attribute'"}`` of every line read, for messages.
    """

    loaded: dict[str, Any] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (``(no message)`` for an empty one).

    >>> first_line(ValueError("bad\\nmore"))
    'bad'
    """
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"


def load_object(ep) -> Any:
    """``ep.load()``; any error it raises (an exception or an exit of a third party's import) as a
    ``ValueError`` ``"<type>: <first line>"``.

    >>> from importlib.metadata import EntryPoint
    >>> load_object(EntryPoint("e", "math:e", "demo.group")) > 2.7
    True
    """
    try:
        return ep.load()
    except (Exception, SystemExit) as exc:  # a third party's import: any error, or an exit, is its own
        raise ValueError(f"{type(exc).__name__}: {first_line(exc)}") from None


def read_plugins(entry_points: Iterable, convert: Callable[[Any, Any, Mapping[str, Any]], Any]) -> PluginLines:
    """Load every entry point of ``entry_points`` in order and convert what it names.

    Parameters
    ----------
    entry_points : iterable of importlib.metadata.EntryPoint
        The lines to read (anything with ``name``, ``value`` and ``load()``), in the order they are
        accepted: where two collide, the first one read wins.
    convert : callable
        ``convert(ep, obj, loaded) -> object``: the object of one line from what it names (``obj``)
        and the lines accepted so far; raises ``ValueError`` saying why the line cannot be used.

    Returns
    -------
    PluginLines
        The converted objects of the lines that could be used, the reasons of the others, and
        every line's ``name = 'value'``. Nothing is written: :func:`warn_left_out` warns.

    Examples
    --------
    >>> from importlib.metadata import EntryPoint
    >>> def number(ep, obj, loaded):
    ...     if not isinstance(obj, float):
    ...         raise ValueError(f"names a {type(obj).__name__}, not a number")
    ...     return obj
    >>> got = read_plugins([EntryPoint("pi", "math:pi", "g"), EntryPoint("root", "math:sqrt", "g")], number)
    >>> sorted(got.loaded), got.broken
    (['pi'], {'root': 'names a builtin_function_or_method, not a number'})
    """
    out = PluginLines()
    for ep in entry_points:
        out.where[ep.name] = f"{ep.name} = {ep.value!r}"
        try:
            obj = convert(ep, load_object(ep), out.loaded)
        except ValueError as exc:
            out.broken[ep.name] = first_line(exc)
            continue
        out.loaded[ep.name] = obj
    return out


def warn_left_out(kind: str, group: str, lines: PluginLines, names: Iterable[str] | None = None) -> None:
    """One line on stderr per line left out: ``depthscale: warning: <kind> <name = 'value'> (<group>)
    left out: <reason>`` (``names``: only these, default every broken one).

    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     warn_left_out("demo plugin", "demo.group", PluginLines({}, {"x": "boom"}, {"x": "x = 'm:x'"}))
    >>> err.getvalue()
    "depthscale: warning: demo plugin x = 'm:x' (demo.group) left out: boom\\n"
    """
    for name in lines.broken if names is None else names:
        sys.stderr.write(f"depthscale: warning: {kind} {lines.where[name]} ({group}) left out: {lines.broken[name]}\n")


__all__ = ["PluginLines", "first_line", "load_object", "read_plugins", "warn_left_out"]
