"""The ``depthscale`` command line: one entry point, one module per sub-command.

Each module in ``depthscale.derivations.commands`` exposes ``register(subparsers)``, which adds its
sub-command and sets ``func(args) -> int``. Bad input of any kind ends as one line on stderr and
exit status 2, before anything is written.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

COMMANDS = ("predict", "derive", "simulate", "sweep", "fit", "report", "reproduce", "infer_scale")


class _Parser(argparse.ArgumentParser):
    """argparse prints usage plus the error; we want a single line."""

    def error(self, message):  # noqa: D401 - argparse hook
        sys.stderr.write(f"depthscale: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="depthscale", description="Depth scaling in attention models: theory, simulation, verdicts.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"depthscale.derivations.commands.{name}")
        except ModuleNotFoundError as exc:  # a command whose module is not written yet
            if exc.name != f"depthscale.derivations.commands.{name}":
                raise
            continue
        module.register(sub)
    return parser


def emit(obj, as_json: bool, text: str | None = None) -> None:
    """Print ``obj`` as JSON (``--json``) or the readable ``text``."""
    if as_json:
        print(json.dumps(obj, indent=None, allow_nan=True, default=_jsonable))
    else:
        print(text if text is not None else json.dumps(obj, indent=2, default=_jsonable))


def _jsonable(x):
    import numpy as np

    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def parse_list(name: str, text: str, kind=int) -> list:
    """Parse a comma-separated list such as ``--depths 1,2,4``; a bad item raises ``ValueError`` naming ``name``."""
    try:
        items = [kind(t) for t in text.split(",") if t.strip() != ""]
    except ValueError:
        raise ValueError(f"{name}={text!r}: must be a comma-separated list of {kind.__name__} values") from None
    if not items:
        raise ValueError(f"{name}={text!r}: must list at least one value")
    return items


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:
        sys.stderr.write(f"depthscale: error: {str(exc).splitlines()[0]}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("depthscale: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
