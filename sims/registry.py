"""One registry type for every pluggable kind (attention maps, models, tasks): names to records.

A :class:`Registry` holds the records of one kind by name. The package's own (built-ins) are
registered through the same :meth:`Registry.register` call as a user's from Python; the lines of
the kind's entry-point group are read on the first look-up of a name this process has not
registered (or on the first :meth:`~Registry.names`/:meth:`~Registry.broken`), through
sims/plugins.py: a line that cannot be used costs one warning line on stderr and is left out, the
healthy lines register, and only asking for the broken name fails, saying why. Names already
registered win over an entry point of the same name (a built-in cannot be shadowed by a plugin).

Every error is one line naming the argument (``ValueError``): a name outside the pattern, a built-in
registered twice or removed, an unknown name (with the registered names and where others come from).

>>> reg = Registry[float]("num", "num", "demo.nums", lambda ep, obj: float(obj), "add_num")
>>> reg.register("pi", 3.14, builtin=True)
3.14
>>> reg.register("e", 2.72), reg.names()
(2.72, ('pi', 'e'))
>>> reg.get("tau")
Traceback (most recent call last):
...
ValueError: num='tau': must be one of pi, e (or a num registered with depthscale.add_num or the entry-point group demo.nums)
>>> reg.unregister("pi")
Traceback (most recent call last):
...
ValueError: name='pi': must be a user's num (built-in nums stay registered)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import metadata
from typing import Any, Generic, Protocol, TypeVar

from ..theory._validate import bad_argument
from .plugins import read_plugins, warn_left_out

NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,39}$")  # a registered name: also a CLI value and a store filter
NAME_RULE = "lower-case letters, digits, '_', '.' or '-', starting with a letter (<= 40)"

T = TypeVar("T")


class Registry(Generic[T]):
    """The records of one kind by name: built-ins, a user's from Python and entry-point lines.

    Parameters
    ----------
    kind : str
        The parameter an unknown name is reported under (``attention``, ``model``, ``task``).
    noun : str
        What one record is called in messages (``map``, ``model``, ``task``).
    group : str
        The entry-point group other packages declare their records in (``depthscale.attention``).
    convert : callable
        ``convert(ep, obj) -> T``: the record of an entry point named ``ep.name`` from the object it
        loads; raises ``ValueError`` saying why the line cannot be used. The name is checked first.
    register_function : str
        The public function registering a user's record (``register_attention``), for messages.
    """

    def __init__(
        self, kind: str, noun: str, group: str, convert: Callable[[Any, Any], T], register_function: str
    ) -> None:
        self.kind, self.noun, self.group = kind, noun, group
        self.register_function = register_function
        self._convert = convert
        self._items: dict[str, T] = {}
        self._builtin: list[str] = []
        self._from_entry_points: set[str] = set()  # removed by reload(): read again from the group
        self._broken: dict[str, str] = {}  # entry point name -> "name = 'value': why" (warned once)
        self._read = False

    # ---------------------------------------------------------------------------------- registering
    @property
    def builtin_names(self) -> tuple[str, ...]:
        """The built-ins' names, in registration order."""
        return tuple(self._builtin)

    def check_name(self, name: Any) -> str:
        """``name`` if a user's record may take it (the pattern, no built-in's name); ``ValueError`` naming ``name``.

        A caller that checks more arguments calls this first, so a bad name is the error reported.
        """
        if not isinstance(name, str) or not NAME.match(name):
            bad_argument("name", name, NAME_RULE)
        if name in self._builtin:
            bad_argument("name", name, f"not a built-in {self.noun}'s name ({', '.join(self._builtin)})")
        return name

    def register(self, name: str, item: T, *, builtin: bool = False) -> T:
        """Register ``item`` as ``name`` and return it: a user's record replaces one of the same name,
        a built-in's name is refused (and so is registering a built-in twice)."""
        self.check_name(name)
        if builtin:
            if name in self._items:
                bad_argument("name", name, f"a {self.noun} not registered yet (built-ins are registered once)")
            self._builtin.append(name)
        self._from_entry_points.discard(name)
        self._items[name] = item
        return item

    def unregister(self, name: str) -> None:
        """Remove a user's record (tests, notebooks); a built-in stays registered."""
        if name in self._builtin:
            bad_argument("name", name, f"a user's {self.noun} (built-in {self.noun}s stay registered)")
        self._items.pop(name, None)
        self._from_entry_points.discard(name)

    # ---------------------------------------------------------------------------------- entry points
    def _read_entry_points(self) -> None:
        """Register the group's lines not registered yet (once; sorted by name); warn once per line left out."""
        self._read = True
        lines = sorted(metadata.entry_points(group=self.group), key=lambda e: e.name)
        got = read_plugins([ep for ep in lines if ep.name not in self._items], self._of_entry_point)
        self._items.update(got.loaded)
        self._from_entry_points.update(got.loaded)
        self._broken.update({name: f"{got.where[name]}: {why}" for name, why in got.broken.items()})
        warn_left_out(f"{self.label} plugin", self.group, got)

    def _of_entry_point(self, ep: Any, obj: Any, loaded: Any) -> T:
        self.check_name(ep.name)
        return self._convert(ep, obj)

    @property
    def label(self) -> str:
        """The kind in warnings: ``attention-map``, ``model``, ``task``."""
        return self.noun if self.kind == self.noun else f"{self.kind}-{self.noun}"

    def reload(self) -> None:
        """Read the entry points again on the next look-up (a package installed while the process runs; tests)."""
        for name in self._from_entry_points:
            self._items.pop(name, None)
        self._from_entry_points.clear()
        self._broken.clear()
        self._read = False

    def broken(self) -> dict[str, str]:
        """``{entry point name: "name = 'value': reason"}`` of the lines left out (read first if not yet)."""
        if not self._read:
            self._read_entry_points()
        return dict(self._broken)

    # ---------------------------------------------------------------------------------- looking up
    @property
    def elsewhere(self) -> str:
        """Where records other than the registered ones come from, for an unknown name's message."""
        return (
            f"or {_a(self.noun)} registered with depthscale.{self.register_function} or the entry-point group "
            f"{self.group}"
        )

    def get(self, name: Any) -> T:
        """The record ``name`` (``ValueError`` naming the kind: the registered names, or why its plugin was left out)."""
        if isinstance(name, str) and name not in self._items and not self._read:
            self._read_entry_points()
        if not isinstance(name, str) or name not in self._items:
            if isinstance(name, str) and name in self._broken:
                bad_argument(
                    self.kind, name, f"{_a(self.noun)} that loads; its plugin was left out ({self._broken[name]})"
                )
            bad_argument(self.kind, name, f"one of {', '.join(self._items)} ({self.elsewhere})")
        return self._items[name]

    def names(self) -> tuple[str, ...]:
        """Every registered name: the built-ins first, then the users' in registration order."""
        if not self._read:
            self._read_entry_points()
        return tuple(self._items)


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


class RunsOn(Protocol):
    """A record that names the engines which can compute it (``("numba", "jax")`` or ``("jax",)``)."""

    @property
    def engines(self) -> tuple[str, ...]: ...


R = TypeVar("R", bound=RunsOn)


def check_engine(registry: Registry[R], name: Any, engine: str, why: Callable[[R], str]) -> R:
    """The record ``name`` if ``engine`` can compute it; else ``ValueError`` naming ``engine``, the engines
    that can, and ``why(record)`` (why the others cannot)."""
    entry = registry.get(name)
    if engine not in entry.engines:
        bad_argument("engine", engine, f"{' or '.join(entry.engines)} for {registry.kind}={name!r} ({why(entry)})")
    return entry


__all__ = ["NAME", "Registry", "RunsOn", "check_engine"]
