"""``depthscale derive NAME --format md|html|tex [--style full|paper] --out PATH``: render a machine-checked derivation.

``--out`` is a file, or a directory (created if needed) that receives ``derivation-NAME.EXT``.
Exit status 0 when every step's check passed, 1 when some failed (they are named), 2 on bad input
(nothing written).
"""

from __future__ import annotations

import os
import sys

from ....theory._choices import FORMATS
from ....theory._validate import check_choice
from ..app import check_out_dir, check_out_file, emit


def register(subparsers) -> None:
    """Add the ``derive`` sub-command.

    >>> import argparse
    >>> sub = argparse.ArgumentParser().add_subparsers()
    >>> register(sub)
    """
    p = subparsers.add_parser("derive", help="render a machine-checked derivation (Markdown, HTML or LaTeX)")
    from ....theory.derivation_index import BUILDERS  # names only: no sympy

    p.add_argument("name", help="name of the derivation: " + ", ".join(BUILDERS))
    p.add_argument("--format", default="md", help="md, html or tex (default md)")
    p.add_argument(
        "--style",
        default="full",
        help="full (default: every step with its machine check) or paper (the result as a few displayed equations"
        " with their conditions, the checked steps as an appendix)",
    )
    p.add_argument(
        "--out",
        required=True,
        help="output file, or a directory for derivation-NAME.EXT (a name without extension is a directory, created)",
    )
    p.add_argument("--json", action="store_true", help="print a machine-readable summary")
    p.set_defaults(func=handler)


def _target(out: str, name: str, fmt: str) -> tuple[str, bool]:
    """Resolve ``--out``: (path, is_directory). An existing directory, a trailing separator or a name
    without an extension means a directory (created on writing)."""
    if not out:
        raise ValueError(f"out={out!r}: must be a file or directory path")
    if os.path.exists(out) and not (os.path.isdir(out) or os.path.isfile(out)):
        # a device or a pipe: the file is written by renaming a temporary file onto it
        raise ValueError(f"out={out!r}: must be a regular file or a directory, not a special file")
    if os.path.isdir(out) or out.endswith((os.sep, "/")) or not os.path.splitext(out)[1]:
        return os.path.join(out, f"derivation-{name}.{fmt}"), True
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        what = "is a file, not a directory" if os.path.exists(parent) else "does not exist"
        raise ValueError(f"out={out!r}: the directory {parent!r} {what}")
    return out, False


def handler(args) -> int:
    """Validate, check the derivation, render it, write it; see the module docstring for exit codes."""
    from ....theory.derivation_index import BUILDERS

    name = check_choice("name", args.name, tuple(BUILDERS))  # before sympy is imported
    fmt = check_choice("format", args.format, FORMATS)
    style = check_choice("style", args.style, ("full", "paper"))  # render_derivation.STYLES, without sympy
    path, is_dir = _target(args.out, name, fmt)
    if os.path.isdir(path):
        raise ValueError(f"out={args.out!r}: {path!r} is a directory, not a file")
    if is_dir:
        check_out_dir("out", os.path.dirname(path))
    check_out_file("out", path)
    from ....sims._outputs import check_name_fits, check_new_file, refuse_a_store, write_atomic

    if not is_dir or os.path.isdir(os.path.dirname(path)):  # a link to nothing, a loop, a name too long
        check_new_file("out", path, replace=True)
        refuse_a_store("out", path)
    else:  # the folder is created on writing: only the names can be checked
        check_name_fits("out", path)
    from ....theory.derivation import build_derivation
    from ....theory.render_derivation import render_derivation  # sympy: only once the paths are good

    der = build_derivation(name)
    result = der.check()
    text = render_derivation(der, fmt, style=style)
    if is_dir:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    # beside, then renamed: a full disk or a kill leaves the previous file whole, not truncated
    write_atomic("out", path, lambda fh: fh.write(text), encoding="utf-8")

    summary = {
        "name": name,
        "path": path,
        "steps": [{"title": r.title, "method": r.method, "passed": r.passed, "error": r.error} for r in result.steps],
        "all_passed": result.all_passed,
    }
    lines = [f"{'ok  ' if r.passed else 'FAIL'} {r.title}: {r.method}" for r in result.steps]
    lines.append(f"wrote {path}")
    emit(summary, args.json, "\n".join(lines))
    if not result.all_passed:
        sys.stderr.write("depthscale: derivation check failed at: " + "; ".join(result.failed()) + "\n")
        return 1
    return 0
