"""Put a folder of files in place as one step: a reader (or a kill) sees the old folder or the new one.

A report is several files (``report.md``, ``.html``, ``.tex``, figures, ``claims.json``) that belong
together. Renaming them into place one by one leaves a mix of two reports after a kill between two
renames. Instead the whole new folder is built beside the old one (a hidden sibling
``.NAME.depthscale-new-PID-XXXX``), every entry of the old folder that is not the report's own (a
store, notes) is hard-linked into it, and the two folders are swapped:

- on Linux with ``renameat2(RENAME_EXCHANGE)`` in one atomic step; the old folder, now under the
  sibling name, is then removed;
- elsewhere the old folder is renamed aside (``.NAME.depthscale-old-PID-XXXX``) and the new one in.
  A kill between these two renames leaves no ``NAME`` but the complete old folder aside, which the
  next publication (or :func:`recover`) renames back first.

Whatever a kill leaves beside ``NAME`` is cleaned up by the next publication: a finished swap's old
folder is removed, an unfinished build is discarded. Before an old folder is removed, an entry that
appeared in it after its entries were linked (a ``-wal`` file a running sweep created, say) and is
not in the new folder is moved over, so nothing but the old report's own files is lost.
"""

from __future__ import annotations

import ctypes
import errno
import glob
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path

from ...sims._outputs import process_alive
from ...theory._validate import bad_argument as _bad

_TAG = ".depthscale-"
RENAME_EXCHANGE = 2  # from <linux/fs.h>
_AT_FDCWD = -100


def _step(name: str) -> None:
    """Called after every change on disk: a test makes the process die here to check every state."""


def check_target(name: str, out) -> None:
    """Refuse an ``out`` folder that cannot be swapped: the current directory or one holding it.

    >>> check_target("out", ".")
    Traceback (most recent call last):
    ...
    ValueError: out='.': must not be the current directory or one containing it (the report folder is replaced as a whole)
    """
    real = Path(os.path.realpath(out))
    cwd = Path(os.path.realpath(os.getcwd()))
    if real == cwd or real in cwd.parents:
        raise ValueError(
            f"{name}={str(out)!r}: must not be the current directory or one containing it"
            " (the report folder is replaced as a whole)"
        )


# the entries a report publication writes (write_report's three renderings and figures, and the
# claims.json report_from_records adds): every other entry of the folder is carried over
# and, for a report written outside the documentation site, the pages its links lead to (bundle.py)
REPORT_FILES = (
    "report.md",
    "report.html",
    "report.tex",
    "answer.md",
    "claims.json",
    "figures/*.png",
    "glossary.md",
    "glossary.html",
    "theory/*.md",
    "theory/*.html",
)
# what the names of a publication's siblings add to the folder's: "." NAME ".depthscale-new-" PID "-" 8
# random, a pid of up to 7 digits (Linux's largest pid_max, 2**22)
SIBLING_EXTRA = 1 + len(_TAG) + len("new-") + 7 + 1 + 8


def check_folder(name: str, out, files: Collection[str] = REPORT_FILES) -> None:
    """Refuse, before any work, an ``out`` folder a publication of ``files`` (relative paths or
    ``fnmatch`` patterns) would fail on only after it: the current directory or one holding it, a
    name too long for the sibling the new folder is built in, an entry in the place of a folder a
    file is written in (``figures`` a file or a link) or a folder in the place of a file.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "figures").write_text("x")
    1
    >>> check_folder("out", d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: out=...: must be a folder whose 'figures' is a folder (it is a file or a link)
    """
    from ...sims._outputs import check_name_fits

    check_target(name, out)
    check_name_fits(name, out, SIBLING_EXTRA)
    folder = _target(out)
    for pattern in files:
        parts = pattern.split("/")
        for i in range(1, len(parts)):  # each folder a file goes into: a real folder, or absent
            sub = folder.joinpath(*parts[:i])
            if os.path.lexists(sub) and (sub.is_symlink() or not sub.is_dir()):
                _bad(name, str(out), f"a folder whose {'/'.join(parts[:i])!r} is a folder (it is a file or a link)")
        for entry in glob.glob(glob.escape(str(folder)) + "/" + pattern):
            if os.path.isdir(entry) and not os.path.islink(entry):
                rel = os.path.relpath(entry, folder)
                _bad(name, str(out), f"a folder where {rel!r} can be written (it is a folder)")


def _target(out) -> Path:
    """The folder to replace: absolute, through a symbolic link to it (the link stays a link)."""
    out = Path(out).absolute()
    return Path(os.path.realpath(out)) if out.is_symlink() else out


def _leftovers(out: Path) -> list:
    """``(kind, pid, path)`` of the siblings earlier publications of ``out`` left, oldest kind first."""
    pattern = re.compile(re.escape(f".{out.name}{_TAG}") + r"(new|old)-(\d+)-")
    found = []
    try:
        entries = list(out.parent.iterdir())
    except OSError:
        return []
    for p in entries:
        m = pattern.match(p.name)
        if m and p.is_dir() and not p.is_symlink():
            found.append((m.group(1), int(m.group(2)), p))
    return sorted(found, key=lambda t: (t[0] != "old", t[2].name))


def _retire(old: Path, out: Path, owned: Collection[str]) -> None:
    """Remove the replaced folder ``old``, first moving into ``out`` what only ``old`` holds and is
    not the report's own (entries created in it after the new folder linked them)."""
    for dirpath, dirnames, filenames in os.walk(old):
        here = Path(dirpath)
        links = [d for d in dirnames if (here / d).is_symlink()]
        for entry in filenames + links:
            rel = (here / entry).relative_to(old).as_posix()
            target = out / rel
            if rel in owned or os.path.lexists(target):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(here / entry, target)
            _step(f"moved {rel}")
    shutil.rmtree(old)
    _step("removed the old folder")


def recover(out, owned: Collection[str] = ()) -> None:
    """Clean up what publications of ``out`` killed mid-way left beside it (see the module notes).

    A leftover of a publication still running (its process alive) is left alone.

    >>> import tempfile, pathlib
    >>> recover(pathlib.Path(tempfile.mkdtemp()) / "report")  # nothing to do
    """
    out = _target(out)
    for kind, pid, path in _leftovers(out):
        if pid != os.getpid() and process_alive(pid):
            continue
        if kind == "old" and not os.path.lexists(out):
            os.rename(path, out)  # killed between the two renames: the old folder goes back
            _step("restored the old folder")
        elif out.is_dir():
            _retire(path, out, owned)
        else:
            shutil.rmtree(path)
            _step("removed an unfinished folder")


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2``); False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False  # this file system (or kernel) cannot exchange: rename aside, then in
    raise OSError(err, os.strerror(err), str(b))


def _write(path: Path, data: bytes, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _carry_over(out: Path, new: Path, skip: Collection[str]) -> None:
    """Hard-link every entry of ``out`` whose relative path is not in ``skip`` into ``new``."""
    for dirpath, dirnames, filenames in os.walk(out):
        here = Path(dirpath)
        rel_dir = here.relative_to(out)
        entries = list(filenames)
        for d in list(dirnames):
            if (here / d).is_symlink():
                dirnames.remove(d)
                entries.append(d)
            else:
                dest = new / rel_dir / d
                dest.mkdir(exist_ok=True)
                os.chmod(dest, stat.S_IMODE((here / d).lstat().st_mode))
        for entry in entries:
            rel = (rel_dir / entry).as_posix()
            if rel in skip:
                continue
            try:
                os.link(here / entry, new / rel, follow_symlinks=False)
            except OSError as exc:
                raise ValueError(
                    f"out={str(out)!r}: cannot carry {rel!r} over into the new report folder"
                    f" ({exc.strerror or exc}); the old report is unchanged"
                ) from None
            _step(f"linked {rel}")


def publish(out, files: Mapping[str, bytes], owned: Collection[str] = (), mode: int = 0o644) -> Path:
    """Make the folder ``out`` hold ``files`` in one step, keeping every other entry it holds.

    Parameters
    ----------
    out : str or path-like
        The folder; created if absent (its parent must exist). A symbolic link to a folder stays a
        link and the folder it points to is replaced.
    files : mapping
        ``{relative path: bytes}``, e.g. ``{"report.md": b"...", "figures/a.png": b"..."}``.
    owned : collection of str
        Relative paths that belong to what is published even when this publication does not
        write them (a figure the previous report drew and this one does not): they are dropped
        from the old folder instead of being carried over.
    mode : int
        Permission bits of the written files.

    Returns
    -------
    Path
        The folder written (absolute).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "report"
    >>> _ = publish(out, {"a.md": b"one", "figures/x.png": b"1"})
    >>> (out / "notes.txt").write_text("mine")
    4
    >>> _ = publish(out, {"a.md": b"two"}, owned={"figures/x.png"})
    >>> sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    ['a.md', 'figures', 'notes.txt']
    """
    out = _target(out)
    skip = set(files) | set(owned)
    out.parent.mkdir(parents=True, exist_ok=True)
    recover(out, skip)
    umask = os.umask(0o022)
    os.umask(umask)
    new = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}{_TAG}new-{os.getpid()}-"))
    try:
        for rel, data in files.items():
            _write(new / rel, data, mode)
            _step(f"wrote {rel}")
        if out.is_dir():
            _carry_over(out, new, skip)
            os.chmod(new, stat.S_IMODE(out.stat().st_mode))
        else:
            os.chmod(new, 0o777 & ~umask)
        _step("built")
        if not os.path.lexists(out):
            os.rename(new, out)
            _step("renamed in")
            return out
        exchanged = _exchange(new, out)
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    if exchanged:
        old = new  # which now holds the old folder
        _step("exchanged")
    else:
        old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}{_TAG}old-{os.getpid()}-"))
        try:
            os.rename(out, old)  # onto the empty folder just made: a name no one else takes
        except BaseException:
            shutil.rmtree(new, ignore_errors=True)
            os.rmdir(old)
            raise
        _step("renamed aside")
        try:
            os.rename(new, out)
        except BaseException:
            os.rename(old, out)
            shutil.rmtree(new, ignore_errors=True)
            raise
        _step("renamed in")
    _retire(old, out, skip)
    return out


__all__ = ["publish", "recover", "check_target", "check_folder", "REPORT_FILES"]
