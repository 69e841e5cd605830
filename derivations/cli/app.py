"""The ``depthscale`` command line: one entry point, one module per sub-command.

Each module in ``depthscale.derivations.cli.commands`` exposes ``register(subparsers)``, which adds its
sub-command and sets ``func(args) -> int``. Command modules import only the standard library and
``depthscale.theory._validate`` at module level; everything heavy (sympy, numba, matplotlib) is
imported inside the handler that needs it, so ``depthscale ... --help`` and argument errors are
fast. Bad input of any kind (a ``ValueError`` or an ``OSError`` such as an unwritable ``--out``)
ends as one line on stderr and exit status 2; Ctrl-C ends with status 130, and so does SIGTERM (what
``kill`` and batch schedulers send at a time limit), through the same path: workers are stopped,
finished runs stay in the store, rerunning resumes.
"""

from __future__ import annotations

import argparse
import importlib
import re
import signal
import sys
from pathlib import Path

COMMANDS = (
    "predict",
    "derive",
    "simulate",
    "sweep",
    "fit",
    "check",
    "calibrate",
    "plan",
    "report",
    "reproduce",
    "infer_scale",
    "store",
    "warm",
)


class _Parser(argparse.ArgumentParser):
    """argparse prints usage plus the error; we want a single line, naming what is allowed."""

    def error(self, message):  # noqa: D401 - argparse hook
        # "argument --depth: invalid int value: 'x'" names no range; the option's help does.
        m = re.match(r"argument ([^\s:/]+)(?:/\S+)?: invalid ", message)
        action = self._option_string_actions.get(m.group(1)) if m else None
        if action is not None and action.help:
            message += f"; expected: {action.help}"
        sys.stderr.write(f"depthscale: error: {message}\n")
        raise SystemExit(2)


def version() -> str:
    """The installed package version (``unknown`` when running from an uninstalled tree)."""
    from importlib import metadata

    try:
        return metadata.version("depthscale")
    except metadata.PackageNotFoundError:
        return "unknown"


class _Version(argparse.Action):
    """``--version``, looked up only when asked (package metadata is slow to import)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"depthscale {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The full parser. A missing or broken command module raises: it is a bug, never a skipped command."""
    parser = _Parser(prog="depthscale", description="Depth scaling in attention models: theory, simulation, verdicts.")
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        importlib.import_module(f"depthscale.derivations.cli.commands.{name}").register(sub)
    return parser


def command_list(parser: argparse.ArgumentParser) -> str:
    """The usage line, then one line per command with its help (what a bare ``depthscale`` prints)."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = [(a.dest, a.help or "") for a in sub._choices_actions]
    width = max(len(name) for name, _ in helps)
    lines = ["usage: depthscale COMMAND [options]   (depthscale COMMAND --help: its options)", "commands:"]
    return "\n".join(lines + [f"  {name:<{width}}  {text}" for name, text in helps])


def to_json(obj) -> str:
    """Strict JSON text of ``obj``: NaN and infinities become ``null`` (see docs/user-guide.md)."""
    from ...sims.store import json_text

    return json_text(obj)


def emit(obj, as_json: bool, text: str | None = None) -> None:
    """Print ``obj`` as strict JSON (``--json``) or the readable ``text``."""
    if as_json or text is None:
        print(to_json(obj))
    else:
        print(text)


def parse_list(name: str, text: str, kind=int) -> list:
    """Parse a comma-separated list such as ``--depths 1,2,4``; a bad item raises ``ValueError`` naming ``name``.

    >>> parse_list("depths", "1, 2,4")
    [1, 2, 4]
    """
    what = f"{name}={text!r}: must be a comma-separated list of distinct {kind.__name__} values"
    parts = [t.strip() for t in text.split(",")]
    if "" in parts:  # "", "1,,2", "4,"
        raise ValueError(what)
    try:
        items = [kind(t) for t in parts]
    except ValueError:
        raise ValueError(what) from None
    if len(set(items)) != len(items):
        raise ValueError(what + " (a value is repeated)")
    return items


def _nearest_existing(path: Path) -> Path:
    anc = path.absolute()
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    return anc


def _probe_writable(name: str, value, directory: Path) -> None:
    """Raise ``ValueError`` unless a file can be created in ``directory``; leaves no entry behind.

    An anonymous temporary file (``O_TMPFILE`` where the OS has it) is the one test that also holds
    for root, read-only mounts and network file systems, where permission bits do not tell.
    """
    import tempfile

    if not directory.is_dir():
        raise ValueError(f"{name}={str(value)!r}: {str(directory)!r} is a file, not a directory")
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise ValueError(f"{name}={str(value)!r}: cannot write in {str(directory)!r} ({exc.strerror or exc})") from None


def check_out_dir(name: str, value) -> Path:
    """An output directory that exists and is writable, or could be created; nothing is created here.

    Commands call this before any computation, so an unusable ``--out`` fails at once.
    """
    if value is None or str(value) == "":
        raise ValueError(f"{name}={value!r}: must be a directory path")
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name}={str(value)!r}: must be a directory (something else is in the way)")
    if path.is_symlink() and not path.exists():  # dangling, or a loop that no directory ends
        raise ValueError(f"{name}={str(value)!r}: is a symbolic link that does not lead to a directory")
    _probe_writable(name, value, _nearest_existing(path))
    return path


def check_out_file(name: str, value) -> Path:
    """An output file that can be written: not a directory; its directory exists or could be created."""
    if value is None or str(value) == "":
        raise ValueError(f"{name}={value!r}: must be a file path")
    path = Path(value)
    if path.is_dir():
        raise ValueError(f"{name}={str(value)!r}: is a directory, not a file")
    if path.exists() and not path.is_file():  # a pipe, socket or device: never replaced by an output
        raise ValueError(
            f"{name}={str(value)!r}: must be a regular file or a new path, not a special file (a pipe, socket or device)"
        )
    if path.exists():
        import os

        if not os.access(path, os.W_OK):
            raise ValueError(f"{name}={str(value)!r}: the file is not writable")
    _probe_writable(name, value, _nearest_existing(path.absolute().parent))
    return path


def check_in_store(name: str, value) -> Path:
    """A store to read: an existing regular file, checked before anything heavy is imported (the full
    check, ``sims.store.check_store_file``, follows when the store is opened)."""
    import stat

    if value is None or str(value) == "":
        raise ValueError(f"{name}={value!r}: must be a file path")
    path = Path(value)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ValueError(f"{name}={str(value)!r}: must be an existing results store (no such file)") from None
    except OSError as exc:
        raise ValueError(f"{name}={str(value)!r}: cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise ValueError(f"{name}={str(value)!r}: must be a file, not a directory")
    if not stat.S_ISREG(mode):
        raise ValueError(f"{name}={str(value)!r}: is not a regular file (a FIFO, device or socket)")
    return path


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, ValueError):
        where = exc.filename if exc.filename is not None else ""
        return f"{where}: {exc.strerror or exc}" if where else str(exc.strerror or exc)
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _show_warning(message, category, filename, lineno, file=None, line=None, _default=None):
    """depthscale's own warnings (a store's skipped or unknown runs) as one line each, as its errors."""
    if category.__module__.startswith("depthscale."):
        sys.stderr.write(f"depthscale: warning: {_one_line(message)}\n")
    elif _default is not None:
        _default(message, category, filename, lineno, file, line)


def _tolerant_output() -> None:
    """Output that cannot fail on a character: a terminal or pipe in ASCII (``PYTHONIOENCODING=ascii``,
    a C locale) gets ``\\u2014`` for an em dash instead of an error after the work is done."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def main(argv=None) -> int:
    import warnings

    _tolerant_output()
    with warnings.catch_warnings():  # the warning display restored when main returns (tests call it)
        default = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            _show_warning(message, category, filename, lineno, file, line, default)

        warnings.showwarning = show
        return _main(argv)


def _main(argv) -> int:
    parser = build_parser()
    if not (sys.argv[1:] if argv is None else argv):  # a bare `depthscale`: what it can do, not an error
        print(command_list(parser))
        return 0
    args = parser.parse_args(argv)
    # SIGTERM takes Ctrl-C's path; left at its default it would kill this process alone and leave
    # the process-pool workers computing runs nobody will store.
    try:
        signal.signal(signal.SIGTERM, signal.default_int_handler)
    except ValueError:  # called from a thread other than the main one: signals are not ours to set
        pass
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # the reader went away (`depthscale ... | head`): not an error of the input
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at interpreter exit
        return 141
    except (ValueError, OSError) as exc:
        sys.stderr.write(f"depthscale: error: {_one_line(exc)}\n")
        return 2
    except MemoryError:
        sys.stderr.write("depthscale: error: out of memory; use smaller sizes (d, P, batch, contexts)\n")
        return 2
    except Exception as exc:  # sqlite3's errors: a damaged or locked store the checks could not foresee
        sqlite3 = sys.modules.get("sqlite3")
        if sqlite3 is None or not isinstance(exc, sqlite3.Error):
            raise
        sys.stderr.write(f"depthscale: error: a results store: {_one_line(exc)}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("depthscale: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
