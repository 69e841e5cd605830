"""Outputs that never take an input's place, and files written whole.

Infrastructure shared by every writer of an output (store exports, ``compact_store``, ``sweep``'s
store, the reports of ``report`` and ``reproduce``, ``derive``):

- :func:`refuse_replacing_inputs`: the one check that an output is not, and would not replace, one
  of the command's inputs, compared by identity (the file a path leads to), never by spelling;
- :func:`check_name_fits`: a name the file system takes together with what is written beside it;
- :func:`write_atomic`: a file written through a temporary file beside it and renamed onto it, so
  a failure (a full disk) or a kill never leaves half a file or a truncated old one; its temporary
  name is hidden and recognisable, and the next writer of that output removes what a killed one
  left (:func:`temp_beside`).

Every refusal is one ``ValueError`` of the ``name=value: must be ...`` form, raised before anything
is written.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import tempfile
from collections.abc import Collection, Iterable
from pathlib import Path

from ..theory._validate import bad_argument

NAME_MAX = 255  # where the file system does not say (pathconf): the limit of every common one
_TEMP_TAG = ".depthscale-tmp-"
# what a temporary file's name adds to its output's: "." NAME ".depthscale-tmp-" PID "-" 8 random ".tmp",
# with a pid of up to 7 digits (Linux's largest pid_max, 2**22)
TEMP_EXTRA = 1 + len(_TEMP_TAG) + 7 + 1 + 8 + len(".tmp")


# what SQLite writes beside a store: its journals and the WAL index
COMPANIONS = ("-wal", "-shm", "-journal")
LOCK_SUFFIX = "-lock"  # the writer's lock file (sims/store.py: one writer at a time)
SNAPSHOTS_SUFFIX = ".snapshots"  # the folder of a sweep's training snapshots (sims/snapshots.py)
SIDE_FILES = (*COMPANIONS, LOCK_SUFFIX)
STORE_EXTRA = max(map(len, (*SIDE_FILES, SNAPSHOTS_SUFFIX)))  # what they add to a store's name


def store_inputs(name: str, path) -> list:
    """``(name, file)`` for a store and each file SQLite keeps beside it: what no output may replace."""
    return [(name, Path(str(path) + suffix)) for suffix in ("", *COMPANIONS)]


def refuse_store_side_inputs(name: str, store, inputs: Iterable) -> None:
    """Refuse a ``store`` that is, or whose side files would replace, one of ``inputs``: SQLite replays or
    deletes a ``-wal``/``-journal`` it finds and rewrites a ``-shm``, a writer takes ``-lock``, and a
    sweep writes and removes files in ``<store>.snapshots/``. One ``ValueError`` naming ``name``, before
    anything is written.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> refuse_store_side_inputs("store", d / "s.sqlite", [("grid", d / "s.sqlite-wal")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: store=...: must be a path whose side files are not inputs (its ...s.sqlite-wal' is grid=...)
    """
    inputs = list(inputs)
    refuse_replacing_inputs(name, store, inputs)
    sides = [Path(str(store) + suffix) for suffix in SIDE_FILES]
    folder = Path(os.path.realpath(str(store) + SNAPSHOTS_SUFFIX))
    for label, path in inputs:
        real, ident = Path(os.path.realpath(path)), _identity(path)
        hit = next((s for s in sides if Path(os.path.realpath(s)) == real or (ident and _identity(s) == ident)), None)
        if hit is None and real.is_relative_to(folder):
            hit = folder
        if hit is not None:
            bad_argument(
                name, str(store), f"a path whose side files are not inputs (its {str(hit)!r} is {label}={str(path)!r})"
            )


def _identity(path) -> tuple[int, int] | None:
    """``(device, inode)`` of the file ``path`` leads to (links followed), or None if there is none."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def refuse_replacing_inputs(name: str, output, inputs: Iterable, owned: Collection[str] | None = None) -> None:
    """Refuse an ``output`` whose writing would replace one of ``inputs``; ``ValueError`` naming ``name``.

    Parameters
    ----------
    name : str
        The output's parameter (``out``, ``path``, ``dst``, ``store``).
    output : str or path-like
        A file written over (or renamed onto), or with ``owned`` a folder swapped in whole.
    inputs : iterable of (str, path)
        ``(parameter, path)`` of what the command reads or keeps, existing or about to be created.
    owned : collection of str, optional
        For a folder: the patterns (``fnmatch``, relative to it, ``figures/*.png``) of the entries
        the swap replaces; every other entry is carried over and is no conflict.

    An input conflicts when it is the same file (device and inode, after links) or the same path
    once links are resolved (an input not yet created); for a folder, when it lies inside it under
    an owned name, or is the same file as an owned entry it holds.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "x").mkdir()
    >>> refuse_replacing_inputs("path", d / "x" / ".." / "s.sqlite", [("store", d / "s.sqlite")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: path=...: must be a path other than store=... (writing it would replace that input)
    """
    out_real = Path(os.path.realpath(output))
    out_id = _identity(output)
    for label, path in inputs:
        real = Path(os.path.realpath(path))
        ident = _identity(path)
        if owned is None:
            if real == out_real or (ident is not None and ident == out_id):
                bad_argument(
                    name, str(output), f"a path other than {label}={str(path)!r} (writing it would replace that input)"
                )
            continue
        entry = real.relative_to(out_real).as_posix() if real.is_relative_to(out_real) else None
        if entry is not None and not any(fnmatch.fnmatch(entry, p) for p in owned):
            entry = None
        if entry is None and ident is not None:
            found = (glob.glob(glob.escape(str(out_real)) + "/" + p) for p in owned)
            entry = next((os.path.relpath(f, out_real) for fs in found for f in fs if _identity(f) == ident), None)
        if entry is not None:
            bad_argument(
                name,
                str(output),
                f"a folder none of whose written entries is an input (its {entry} is {label}={str(path)!r})",
            )


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_name_fits(name: str, path, extra: int = TEMP_EXTRA) -> None:
    """Refuse a ``path`` one of whose names is longer than the file system takes, its last name
    counted ``extra`` bytes longer (what the files written beside it add: a temporary file, a
    journal), so an over-long name is refused before anything is computed or created.

    >>> check_name_fits("out", "x" * 300)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: out='xxx...: must be a path whose names are at most 255 bytes long ('xxxxxxxxxxxxxxxxxxxx'... is 337 with ...)
    """
    full = Path(os.path.abspath(path))
    try:
        limit = int(os.pathconf(_nearest_existing(full.parent), "PC_NAME_MAX"))
    except (OSError, ValueError):
        limit = NAME_MAX
    parts = full.parts[1:]
    for i, part in enumerate(parts):
        n = len(os.fsencode(part)) + (extra if i == len(parts) - 1 else 0)
        if n > limit:
            bad_argument(
                name,
                str(path),
                f"a path whose names are at most {limit} bytes long ({part[:20]!r}... is {n}"
                + (f" with the {extra} the files written beside it add)" if i == len(parts) - 1 else ")"),
            )


def refuse_a_store(name: str, path) -> None:
    """``ValueError`` when ``path`` (through links) is an existing SQLite database: an output never
    overwrites a results store, whichever command writes it."""
    try:
        with open(path, "rb") as fh:
            is_store = fh.read(16) == b"SQLite format 3\x00"
    except OSError:  # absent, or unreadable: nothing of a store to lose
        return
    if is_store:
        raise ValueError(f"{name}={str(path)!r}: is a results store (an SQLite database); give another path")


def check_new_file(name: str, path, replace: bool) -> Path:
    """An output file path: a str or path, not a directory, a special file (a pipe, socket or device,
    which the rename that writes it would replace with a regular file) or a dangling or looping link,
    in an existing folder, with a name that fits (``replace``: an existing file may be overwritten);
    ``ValueError``/``TypeError`` naming it.

    >>> check_new_file("path", "/dev/null", replace=True)
    Traceback (most recent call last):
    ...
    ValueError: path='/dev/null': must be a regular file or a new path, not a special file (a pipe, socket or device)
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"{name}={path!r}: must be a file path (str or os.PathLike)")
    if str(path) == "" or "\x00" in str(path):
        bad_argument(name, str(path), "a file path")
    out = Path(path)
    if out.is_dir():
        raise ValueError(f"{name}={str(path)!r}: is a directory, not a file")
    if out.is_symlink() and not out.exists():
        raise ValueError(f"{name}={str(path)!r}: is a link to nothing (or a loop of links); give the file itself")
    # a pipe, socket or device (through a link too): the rename that writes the file would replace it
    if out.exists() and not out.is_file():
        raise ValueError(
            f"{name}={str(path)!r}: must be a regular file or a new path, not a special file (a pipe, socket or device)"
        )
    if out.exists() and not replace:
        raise ValueError(f"{name}={str(path)!r}: must be a new file (it exists; it is never overwritten)")
    if not out.absolute().parent.is_dir():
        raise ValueError(f"{name}={str(path)!r}: its folder {str(out.absolute().parent)!r} does not exist")
    check_name_fits(name, out)
    return out


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (its leftovers are then its own, not to be removed)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_leftovers(out: Path) -> None:
    """Remove the temporary files (and any SQLite journal of one) that writers of ``out`` killed
    mid-way left beside it; those of a writer still running are left alone."""
    pattern = re.compile(re.escape(f".{out.name}{_TEMP_TAG}") + r"(\d+)-[^.]{8}\.tmp(-journal)?")
    try:
        entries = list(out.absolute().parent.iterdir())
    except OSError:
        return
    for p in entries:
        m = pattern.fullmatch(p.name)
        if m and int(m.group(1)) != os.getpid() and not process_alive(int(m.group(1))) and not p.is_dir():
            p.unlink(missing_ok=True)


def temp_beside(name: str, out: Path) -> tuple[int, str]:
    """A new temporary file in ``out``'s folder, ``.NAME.depthscale-tmp-PID-XXXXXXXX.tmp`` (hidden, and
    recognisable as this output's: the leftovers of killed writers are removed first), or a
    ``ValueError`` naming ``name``."""
    _remove_leftovers(out)
    try:
        return tempfile.mkstemp(
            prefix=f".{out.name}{_TEMP_TAG}{os.getpid()}-", suffix=".tmp", dir=out.absolute().parent
        )
    except OSError as exc:
        raise ValueError(
            f"{name}={str(out)!r}: cannot write in {str(out.absolute().parent)!r} ({exc.strerror})"
        ) from None


def write_atomic(name: str, path, write, **open_kw) -> None:
    """``write(fh)`` into a temporary file beside ``path``, then renamed onto it: a reader never sees
    half a file, a failure (a full disk) leaves the old file as it was and nothing beside it (the
    error names ``name``). A link to a file stays a link: the file it leads to is replaced."""
    out = check_new_file(name, path, replace=True)
    refuse_a_store(name, out)
    if out.is_symlink():
        out = Path(os.path.realpath(out))
        check_name_fits(name, out)
    fd, tmp_name = temp_beside(name, out)
    try:
        with open(fd, "w", **open_kw) as fh:
            write(fh)
        os.chmod(tmp_name, 0o666 & ~umask())  # as a file made by open(), not mkstemp's owner-only mode
        os.replace(tmp_name, out)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


__all__ = [
    "COMPANIONS",
    "LOCK_SUFFIX",
    "SIDE_FILES",
    "SNAPSHOTS_SUFFIX",
    "STORE_EXTRA",
    "refuse_store_side_inputs",
    "store_inputs",
    "refuse_replacing_inputs",
    "check_name_fits",
    "check_new_file",
    "refuse_a_store",
    "temp_beside",
    "write_atomic",
    "umask",
    "TEMP_EXTRA",
]
