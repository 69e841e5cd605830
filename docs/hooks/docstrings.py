"""griffe extension: the project's docstrings as the reference site shows them.

The docstrings are written for ``help()`` and doctest, and use two things Markdown reads
differently:

- Doctest lines (``>>>``) outside an ``Examples`` section: Markdown takes ``>>>`` for nested block
  quotes and ``x["k"][:]`` for a reference link. Each such block becomes a fenced ``pycon`` block.
- Sphinx roles (``:func:`name```): shown as the code they name.

Only the rendering changes; the source stays as it is (doctests still run on it).
"""

from __future__ import annotations

import re

try:
    import griffe
except ModuleNotFoundError:  # the docs extra is not installed: the functions still import (and are tested)
    griffe = None

ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|obj|exc):`~?([^`]+)`")
HEADER = re.compile(r"^\s*-{3,}\s*$")


def fence_doctests(text: str) -> str:
    """``text`` with every doctest block outside an ``Examples`` section fenced as ``pycon``.

    >>> print(fence_doctests("Sum.\\n\\n>>> 1 + 1\\n2\\n\\nEnd."))
    Sum.
    <BLANKLINE>
    ```pycon
    >>> 1 + 1
    2
    ```
    <BLANKLINE>
    End.
    """
    lines = text.split("\n")
    out: list[str] = []
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and HEADER.match(lines[i + 1]) and line.strip():
            section = line.strip().lower()
        if line.lstrip().startswith(">>>") and section not in ("examples", "example"):
            indent = line[: len(line) - len(line.lstrip())]
            block = []
            while i < len(lines) and lines[i].strip():  # a doctest block ends at a blank line
                block.append(lines[i])
                i += 1
            out += [f"{indent}```pycon", *block, f"{indent}```"]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def for_the_site(docstring: str) -> str:
    """A docstring as the site shows it: roles as code, doctests outside ``Examples`` fenced.

    >>> for_the_site("See :func:`~depthscale.sims.runner.run` and :class:`Store`.")
    'See `depthscale.sims.runner.run` and `Store`.'
    """
    return fence_doctests(ROLE.sub(r"`\1`", docstring))


if griffe is not None:

    class Docstrings(griffe.Extension):
        """Apply :func:`for_the_site` to every docstring griffe reads."""

        def on_object(self, *, obj, **kwargs) -> None:
            if obj.docstring is not None:
                obj.docstring.value = for_the_site(obj.docstring.value)
