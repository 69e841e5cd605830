"""SQLite results store: one file, one row per run, one transaction per finished run.

The store is written by one client (the sweep loop) and may be read by others at the same time; a
second writer (another sweep on the same store) is refused while the first runs: a writer holds an
advisory lock on ``<store>-lock``, which the kernel releases however its process ends.
WAL journaling plus one transaction per run means a writer killed at any instant (SIGINT or
SIGKILL) leaves a readable file that holds every run whose transaction committed; only runs in
flight are lost. Per-context arrays (``record["arrays"]``) live in a separate table as compressed
NumPy bytes, so iterating over records does not load them unless asked.
"""

from __future__ import annotations

import csv
import dataclasses
import errno
import fcntl
import html
import io
import json
import lzma
import os
import shutil
import sqlite3
import stat
import tempfile
import time
import warnings
import weakref
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from ..theory._json import json_safe
from ..theory._validate import check_bool, check_choice, check_real
from ._outputs import (
    COMPANIONS,
    LOCK_SUFFIX,
    STORE_EXTRA,
    check_name_fits,
    check_new_file,
    refuse_replacing_inputs,
    store_inputs,
    temp_beside,
    umask,
    write_atomic,
)
from .config import CONTEXTS_VERSION, ModelConfig, TaskConfig, TrainConfig
from .display import RecordView, store_html
from .record_filters import REGISTERED, check_filters
from .record_tables import flatten, records_frame
from .records import STATUSES, RecordWarning, record_problem, unknown_config_fields

SCHEMA_VERSION = 2  # 2: arrays packed by byte plane in LZMA2 (see _pack_arrays); 1 is still read
SCHEMA_VERSIONS = (1, 2)
# Small pages: a run's arrays (about 20 KB) end in a part-filled overflow page, and with 4 KB pages that
# slack was 5 % of a store.
PAGE_SIZE = 1024
SKIPPED_SHOWN = 5  # malformed rows named one by one on a read; any beyond are counted in one more line

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    config_hash TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    config TEXT NOT NULL,
    record TEXT NOT NULL,
    finished REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status);
CREATE TABLE IF NOT EXISTS arrays (
    key TEXT PRIMARY KEY REFERENCES runs(key) ON DELETE CASCADE,
    data BLOB NOT NULL
);
"""


def _not_json(x):
    raise TypeError(f"record field of type {type(x).__name__} is not JSON serialisable")


def json_text(obj, **kwargs) -> str:
    """Strict JSON of a record or any result: NaN and infinities are written as ``null``.

    A measurement that does not exist (``C_L`` of a one-layer model, a fit that failed) is NaN in
    memory; JSON has no NaN, and strict parsers (``sqlite3``'s ``json_extract``, browsers) reject
    it, so it is stored and printed as ``null``. Readers treat ``null`` as missing.

    >>> json_text({"C_L": float("nan"), "x": [1.0, float("inf")], "n": np.int64(3)})
    '{"C_L": null, "x": [1.0, null], "n": 3}'
    """
    return json.dumps(json_safe(obj, finite=True), allow_nan=False, default=_not_json, **kwargs)


def unstorable(record: dict) -> str | None:
    """Why :meth:`Store.put` would refuse the fields of ``record`` (a dict), or None: a field that is not
    JSON-able (a set, an object), arrays that are not a dict of arrays of numbers, a seed that is not
    an integer. A sweep stores such a run as failed with this reason (it checks what a run function
    returns before it is stored) instead of stopping with a traceback.

    >>> unstorable({"key": "k-0", "seed": 0, "final_loss": 0.5, "when": {1, 2}})
    "record['when'] is not JSON-able (record field of type set is not JSON serialisable)"
    """
    for name, value in record.items():
        if name == "arrays":
            if value is None:
                continue
            if not isinstance(value, dict):
                return f"record['arrays'] is a {type(value).__name__}, not a dict of arrays"
            for k, v in value.items():
                try:
                    kind = np.asarray(v).dtype
                except Exception as exc:  # numpy refuses ragged lists and odd objects in many ways
                    return f"record['arrays'][{str(k)!r}] is not an array ({type(exc).__name__}: {exc})"
                if kind.hasobject:
                    return f"record['arrays'][{str(k)!r}] has dtype object: not an array of numbers"
            continue
        try:
            json_text(value)
        except (TypeError, ValueError, RecursionError) as exc:
            return f"record[{name!r}] is not JSON-able ({exc})"
    seed: Any = record.get("seed")
    try:
        int(seed)  # what put stores
    except (TypeError, ValueError, OverflowError):
        return f"record['seed']={record.get('seed')!r} is not an integer"
    return None


# A run's arrays as stored. Schema 1 wrote an ``.npz`` (deflate); schema 2 writes ``ARRAYS_MAGIC`` and
# then LZMA2 of a JSON header (name, dtype, shape of each array) and the arrays' bytes shuffled by
# byte plane (all first bytes, then all second bytes, ...). Per-context errors in float16 are noise in
# their low mantissa byte but not in their sign-and-exponent byte: by plane they pack 8 % smaller
# than as an .npz, losslessly. A store keeps the format of its schema, so older code never meets a
# blob it cannot read; ``compact_store`` writes schema 2.
ARRAYS_MAGIC = b"DSA2"
# part of the format (raw LZMA2 has no header): a 1 MiB dictionary keeps a pack at about 3 ms and
# little memory where preset 9's own 64 MiB took 70 ms, and packs a run's errors as small
_LZMA_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "dict_size": 1 << 20}]
_NUMBER_KINDS = "biufc"  # bools and numbers: an array's bytes and dtype say all there is


def _pack_arrays(arrays: dict, schema: int = 2) -> bytes:
    named: dict[str, Any] = {str(k): np.asarray(v) for k, v in arrays.items()}  # numpy's stub types **kwds as bool
    if schema == 1 or any(a.dtype.kind not in _NUMBER_KINDS for a in named.values()):
        buf = io.BytesIO()  # strings (allowed by put) keep numpy's own container
        np.savez_compressed(buf, **named)
        return buf.getvalue()
    header = json.dumps([[k, a.dtype.str, list(a.shape)] for k, a in named.items()]).encode()
    planes = [np.ascontiguousarray(a).view(np.uint8).reshape(-1, a.dtype.itemsize).T.tobytes() for a in named.values()]
    payload = len(header).to_bytes(4, "little") + header + b"".join(planes)
    return ARRAYS_MAGIC + lzma.compress(payload, format=lzma.FORMAT_RAW, filters=_LZMA_FILTERS)


# A run's arrays decompress to at most ARRAYS_RATIO times their stored bytes or ARRAYS_FLOOR, whichever
# is larger: stored arrays shrink by a few times (float noise, parameters) and all-zero ones by at most
# about a thousand, so a legitimate run is far inside it, while a crafted blob of 200 KB that would
# unpack to gigabytes (an LZMA or deflate "bomb") is refused before it is unpacked.
ARRAYS_RATIO = 64
ARRAYS_FLOOR = 64 << 20


def arrays_cap(stored: int) -> int:
    """The most bytes the arrays stored in ``stored`` bytes may unpack to.

    >>> arrays_cap(1000) == ARRAYS_FLOOR, arrays_cap(10 << 20) == 640 << 20
    (True, True)
    """
    return max(ARRAYS_RATIO * int(stored), ARRAYS_FLOOR)


def _too_big(size: int, stored: int) -> str:
    return (
        f"they would unpack to {size:,} bytes or more, over the cap of {arrays_cap(stored):,} "
        f"({ARRAYS_RATIO} times their {stored:,} stored bytes, at least {ARRAYS_FLOOR >> 20} MiB)"
    )


def _dtype_of(name, text) -> np.dtype:
    try:
        dtype = np.dtype(text) if isinstance(text, str) else None
    except (TypeError, ValueError):  # numpy: TypeError "data type 'x' not understood"
        dtype = None
    if dtype is None:
        raise ValueError(f"array {name!r} names an unknown dtype {text!r}")
    if dtype.kind not in _NUMBER_KINDS:
        raise ValueError(f"array {name!r} has dtype {text}: not a number type")
    return dtype


def _unpack_npz(blob: bytes) -> dict:
    """Schema 1's ``.npz``: each member's declared sizes checked against the cap before it is read."""
    cap = arrays_cap(len(blob))
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        if sum(info.file_size for info in zf.infolist()) > cap:
            raise ValueError(_too_big(sum(info.file_size for info in zf.infolist()), len(blob)))
        for info in zf.infolist():  # the array's own header (its shape) must fit the member's size too
            with zf.open(info) as fh:
                read_header = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
                version = np.lib.format.read_magic(fh)
                if version not in read_header:  # depthscale wrote 1.0 (savez); 3.0 only differs in text
                    raise ValueError(f"array {info.filename!r} is in .npy format {version}, not one depthscale wrote")
                shape, _, dtype = read_header[version](fh)
                if int(np.prod(shape, dtype=np.int64)) * dtype.itemsize > info.file_size:
                    raise ValueError(f"array {info.filename!r} declares more data than it holds")
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _unpack_arrays(blob: bytes) -> dict:
    if not bytes(blob[: len(ARRAYS_MAGIC)]) == ARRAYS_MAGIC:
        return _unpack_npz(blob)
    cap = arrays_cap(len(blob))
    unpacker = lzma.LZMADecompressor(format=lzma.FORMAT_RAW, filters=_LZMA_FILTERS)
    try:  # never more than the cap in memory, however much the blob would unpack to
        payload = unpacker.decompress(bytes(blob[len(ARRAYS_MAGIC) :]), max_length=cap + 1)
    except lzma.LZMAError as exc:
        raise ValueError(f"not LZMA2 data ({exc})") from None
    if len(payload) > cap:
        raise ValueError(_too_big(len(payload), len(blob)))
    n = int.from_bytes(payload[:4], "little")
    try:
        header = json.loads(payload[4 : 4 + n])
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"unreadable header ({exc})") from None
    if not isinstance(header, list) or not all(isinstance(h, list) and len(h) == 3 for h in header):
        raise ValueError("its header is not a list of [name, dtype, shape]")
    out, at = {}, 4 + n
    for name, dtype_str, shape in header:
        dtype = _dtype_of(name, dtype_str)
        if not isinstance(shape, list) or not all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in shape
        ):
            raise ValueError(f"array {name!r} has shape {shape!r}: not a list of sizes")
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        plane = np.frombuffer(payload, np.uint8, count=size, offset=at) if size else np.zeros(0, np.uint8)
        if plane.size != size:
            raise ValueError(f"array {name!r} is cut short")
        at += size
        out[str(name)] = plane.reshape(dtype.itemsize, -1).T.copy().view(dtype).reshape(shape)
    if at != len(payload):
        raise ValueError(f"{len(payload) - at} bytes after the last array")
    return out


def _stored_arrays(name: str, path, key: str, blob: bytes) -> dict:
    """The arrays of run ``key`` from its stored bytes; damaged bytes are a ``ValueError`` naming the
    store (as the parameter ``name``) and the run."""
    try:
        return _unpack_arrays(blob)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, KeyError) as exc:  # KeyError: a zip member's
        raise ValueError(f"{name}={str(path)!r}: the arrays of run {key!r} are damaged ({exc})") from None


def _parse(text) -> tuple[Any, str | None]:
    """``(value, None)`` for stored JSON text, or ``(None, "is not valid JSON (why)")``."""
    try:
        return json.loads(text), None
    except (json.JSONDecodeError, TypeError, UnicodeDecodeError) as exc:  # TypeError: a NULL where text was
        return None, f"is not valid JSON ({exc})"


def _get_path(obj: dict, dotted: str):
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return _MISSING
        obj = obj[part]
    return obj


_MISSING = object()
_SECTIONS: dict[str, type] = {"task": TaskConfig, "model": ModelConfig, "train": TrainConfig}


def _filter_value(cfg: dict, dotted: str):
    """The config's value at ``dotted`` for a ``where`` filter: a field a run was stored without (it
    predates the field) reads as the field's default, as the run itself was trained with it."""
    value = _get_path(cfg, dotted)
    if value is _MISSING and (cls := _SECTIONS.get(dotted.partition(".")[0])) is not None:
        name = dotted.partition(".")[2]
        for f in dataclasses.fields(cls):
            if f.name == name and f.default is not dataclasses.MISSING:
                return f.default
    return value


SQLITE_HEADER = b"SQLite format 3\x00"
_TABLES = {"meta", "runs", "arrays"}
MODES = ("read", "write")


def _versions(con) -> tuple[int, int]:
    """``(schema_version, contexts_version)`` of an open store. A store from before the contexts
    field holds version-1 contexts, or none yet if it has no runs."""
    schema = int(con.execute("SELECT value FROM meta WHERE name='schema_version'").fetchone()[0])
    row = con.execute("SELECT value FROM meta WHERE name='contexts_version'").fetchone()
    if row is not None:
        return schema, int(row[0])
    empty = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    return schema, CONTEXTS_VERSION if empty else 1


def contexts_mismatch(path, have: int) -> str:
    """The refusal for adding this engine's runs to a store drawn on other contexts."""
    return (
        f"store={str(path)!r}: holds runs on version-{have} contexts; this depthscale draws version "
        f"{CONTEXTS_VERSION}, whose runs would not share evaluation contexts with them: use a new store"
    )


# One writer at a time: a writer holds an exclusive flock on ``<store>-lock`` for as long as its store is
# open. The kernel drops the lock when the process ends however it ends, so a killed sweep never leaves a
# stale lock (its file may stay; the next writer takes it over). A separate file, not the store: SQLite
# holds its own POSIX locks on the store, which flock emulated over NFS would collide with.
def _lock_path(path) -> Path:
    return Path(str(path) + LOCK_SUFFIX)


def _lock_owner(fd: int) -> str | None:
    """The pid a writer wrote into its lock file ('' if none yet), or None for a file holding anything else."""
    try:
        text = os.pread(fd, 64, 0).strip()
    except OSError:
        return ""
    if not text:
        return ""
    return text.decode("ascii") if text.isdigit() else None


def _busy(path, fd: int) -> str:
    owner = _lock_owner(fd)
    who = f"process {owner}" if owner else "another process"
    return (
        f"store={str(path)!r}: another sweep is writing it ({who} holds {_lock_path(path).name!r}); "
        "one writer at a time: wait for it to end, or use another store"
    )


def _lock_file_problem(path) -> str | None:
    """Why the lock file beside ``path`` cannot be one (a link, folder or special file), or None."""
    try:
        st = os.lstat(_lock_path(path))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"its lock file cannot be read ({exc.strerror})"
    if not stat.S_ISREG(st.st_mode):
        return f"its lock file {str(_lock_path(path))!r} is not a regular file (a link, folder or special file): move it away"
    return None


def _foreign_lock(path) -> str:
    return (
        f"store={str(path)!r}: {str(_lock_path(path))!r} is not a depthscale lock file (it holds other data): "
        "move it away"
    )


def _check_no_writer(path) -> None:
    """Refuse, changing nothing, a store whose lock another live writer holds (the lock file only read)."""
    if (problem := _lock_file_problem(path)) is not None:
        raise ValueError(f"store={str(path)!r}: {problem}")
    try:
        fd = os.open(_lock_path(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ValueError(f"store={str(path)!r}: its lock file cannot be read ({exc.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(_busy(path, fd)) from None
        except OSError:
            return  # a file system without locks: the writer's own attempt says so
        if _lock_owner(fd) is None:
            raise ValueError(_foreign_lock(path))
    finally:
        os.close(fd)  # releases the probe's shared lock


def _take_writer_lock(path) -> int:
    """An exclusive lock on ``<store>-lock`` (created if need be), or ``ValueError`` naming the store."""
    lock = _lock_path(path)
    for _ in range(100):  # a writer closing between our open and our lock removes the file: open it again
        if (problem := _lock_file_problem(path)) is not None:
            raise ValueError(f"store={str(path)!r}: {problem}")
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise ValueError(
                f"store={str(path)!r}: cannot create its lock file {str(lock)!r} ({exc.strerror})"
            ) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ValueError(_busy(path, fd)) from None
            except OSError as exc:
                if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                    raise ValueError(f"store={str(path)!r}: cannot lock {str(lock)!r} ({exc.strerror})") from None
                # a file system without locks: go on unguarded, as before locks existed
            try:
                current = os.stat(lock)
            except FileNotFoundError:
                current = None
            mine = os.fstat(fd)
            if current is None or (current.st_dev, current.st_ino) != (mine.st_dev, mine.st_ino):
                os.close(fd)
                continue
            if _lock_owner(fd) is None:
                raise ValueError(_foreign_lock(path))
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        except BaseException:
            os.close(fd)
            raise
    raise ValueError(
        f"store={str(path)!r}: its lock file {str(lock)!r} keeps changing; another sweep is starting on it"
    )


def _release_writer_lock(path, fd: int) -> None:
    """Remove the lock file (while still holding it, so no one locks a file about to vanish), then unlock."""
    try:
        current, mine = os.stat(_lock_path(path)), os.fstat(fd)
        if (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino):
            os.unlink(_lock_path(path))
    except OSError:
        pass
    finally:
        os.close(fd)


def _stray_companions(path: Path) -> str | None:
    """For a store about to be created: a journal, WAL or WAL index already beside it is not its own
    (SQLite would replay or delete it, whoever's file it is), or None."""
    for suffix in COMPANIONS:
        side = Path(str(path) + suffix)
        if side.exists() or side.is_symlink():
            return (
                f"store={str(path)!r}: a new store, but {str(side)!r} exists beside it (SQLite would take it as the "
                "store's own and replay, rewrite or delete it): move it away, or give another store"
            )
    return None


def check_store_file(path, mode: str = "read", contexts: int | None = None) -> bool:
    """Check, without changing anything, that ``path`` may be opened as a store in ``mode``.

    ``"read"``: an existing depthscale results store. ``"write"``: that, or a path that does not
    exist yet or is an empty file (where a new store is created). Anything else (a directory, a
    foreign file, another application's SQLite database, a 0-byte file for reading, a store of
    another schema version, or in write mode with ``contexts`` given a store whose runs were drawn
    on other contexts) raises ``ValueError`` naming the path; the file is only read. Returns True
    if the store exists already.

    >>> import os, tempfile
    >>> check_store_file(os.path.join(tempfile.mkdtemp(), "new.sqlite"), "write")
    False
    """
    check_choice("mode", mode, MODES)
    path = store_path(path)
    name = str(path)
    if mode == "write":  # SQLite's journal beside it must fit too, or the store is made and then fails
        check_name_fits("store", path, extra=STORE_EXTRA)
    if path.is_dir():
        raise ValueError(f"store={name!r}: must be a file, not a directory")
    if mode == "write":
        _check_no_writer(path)
    if not path.exists():
        if mode == "read":
            raise ValueError(f"store={name!r}: must be an existing results store (no such file)")
        if not path.absolute().parent.is_dir():
            raise ValueError(f"store={name!r}: must be a file in an existing directory")
        if (stray := _stray_companions(path)) is not None:
            raise ValueError(stray)
        return False
    for file in (path, Path(name + "-wal")):
        # open() on a FIFO waits for a writer forever, and a device is no store
        if file.exists() and not stat.S_ISREG(file.stat().st_mode):
            raise ValueError(f"store={name!r}: {str(file)!r} is not a regular file (a FIFO, device or socket)")
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise ValueError(f"store={name!r}: cannot be read ({exc.strerror or exc})") from None
    if not head:
        if mode == "read":
            raise ValueError(f"store={name!r}: is an empty file, not a depthscale results store")
        if (stray := _stray_companions(path)) is not None:
            raise ValueError(stray)
        return False
    if head != SQLITE_HEADER:
        raise ValueError(f"store={name!r}: is not a depthscale results store (not an SQLite file)")
    try:
        con, private = _open_read(path)
        try:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            meta = tables >= _TABLES and con.execute("SELECT 1 FROM meta WHERE name='schema_version'").fetchone()
            versions = _versions(con) if meta else None
            # every page of every table and index read once: cheap (0.05 s for a 130 MB store), and a
            # damaged store is refused here rather than half-way through a report
            damage = [r[0] for r in con.execute("PRAGMA quick_check(3)")] if meta else ["ok"]
        finally:
            con.close()
            _remove_private(private)
    except (sqlite3.DatabaseError, OSError) as exc:
        raise ValueError(f"store={name!r}: is damaged or not a usable SQLite file ({exc})") from None
    if meta and damage != ["ok"]:
        raise ValueError(f"store={name!r}: is damaged (SQLite's quick_check: {'; '.join(damage)})")
    if not meta:
        shown = ", ".join(sorted(tables)[:5]) or "none"
        raise ValueError(
            f"store={name!r}: is an SQLite database of another application (tables: {shown}),"
            " not a depthscale results store"
        )
    assert versions is not None  # read whenever meta is
    schema, have = versions
    if schema not in SCHEMA_VERSIONS:
        raise ValueError(
            f"store={name!r}: schema version {schema} is not supported (expected one of {SCHEMA_VERSIONS})"
        )
    if mode == "write" and contexts is not None and have != contexts:
        raise ValueError(contexts_mismatch(name, have))
    return True


def store_path(path) -> Path:
    """``path`` as a ``Path``: a ``str`` or ``os.PathLike`` naming a file, else ``TypeError``/``ValueError``.

    >>> store_path("runs.sqlite").name
    'runs.sqlite'
    >>> store_path(123)
    Traceback (most recent call last):
    ...
    TypeError: store=123: must be a file path (str or os.PathLike), not int
    """
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"store={path!r}: must be a file path (str or os.PathLike), not {type(path).__name__}")
    if path == "" or "\x00" in path:
        raise ValueError(f"store={path!r}: must be a file path")
    return Path(path)


def connect(path, query: str = "", timeout: float = 60.0) -> sqlite3.Connection:
    """The one way a store file is opened: as a URI built from its absolute path, ``?``, ``#``, ``%``
    and every other special character percent-quoted, so a path is a file name and nothing else.
    (SQLite reads a name beginning with ``file:`` as a URI: ``file:x.sqlite`` would open ``x.sqlite``
    and ``file:s.sqlite?mode=memory`` a database that keeps nothing.) ``query``: SQLite's URI
    parameters (``mode=ro``)."""
    uri = "file:" + quote(os.fsencode(Path(path).absolute())) + ("?" + query if query else "")
    return sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)


def _signature(path: Path) -> tuple:
    """What changes when a writer commits or checkpoints: size and time of the store and its ``-wal``."""
    out: list[tuple[int, int, int] | None] = []
    for file in (path, Path(str(path) + "-wal")):
        try:
            st = file.stat()
            out.append((st.st_size, st.st_mtime_ns, st.st_ino))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)


COPY_TRIES = 5  # copies of a store with a -wal torn by a writer before reading is refused


def _open_read(path: Path, timeout: float = 60.0):
    """``(connection, private_dir)``: a read-only connection to the store at ``path`` that creates and
    changes no file beside it, and the private directory it reads a copy from (None if it reads
    ``path`` itself). The one read path of stores: :class:`Store` in read mode, ``to_frame`` and the
    checks of :func:`check_store_file` all read through it.

    - no ``-wal``: every commit is in the main file, so ``immutable=1`` reads it in place without
      looking for or creating ``-wal``/``-shm``.
    - a ``-wal`` (a writer connected, or one killed before its checkpoint): committed runs may live
      only in the ``-wal``, and reading them in place uses a ``-shm`` that SQLite creates or rewrites
      beside the store (and cannot, on read-only media). So the store and its ``-wal`` (never the
      ``-shm``) are copied into a private temporary directory and read there; SQLite rebuilds the
      index from the ``-wal`` and reads exactly the committed transactions. A copy during which a
      writer committed or checkpointed (size or time of either file changed) is made again, and
      refused after ``COPY_TRIES`` attempts rather than read torn.
    """
    wal = Path(str(path) + "-wal")
    if not wal.exists():
        return connect(path, "mode=ro&immutable=1", timeout), None
    for _ in range(COPY_TRIES):
        before = _signature(path)
        private = Path(tempfile.mkdtemp(prefix="depthscale-store-"))
        try:
            shutil.copyfile(path, private / "store.sqlite")
            if wal.exists():
                shutil.copyfile(wal, private / "store.sqlite-wal")
            if _signature(path) != before:
                shutil.rmtree(private, ignore_errors=True)
                time.sleep(0.05)
                continue
            con = connect(private / "store.sqlite", "mode=ro", timeout)
            con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return con, private
        except BaseException:
            shutil.rmtree(private, ignore_errors=True)
            raise
    raise ValueError(
        f"store={str(path)!r}: changed during each of {COPY_TRIES} reads (a writer is busy); read it again"
    )


def _remove_private(private) -> None:
    if private is not None:
        shutil.rmtree(private, ignore_errors=True)


class Store:
    """A results store in one SQLite file.

    Parameters
    ----------
    path : str or Path
        The database file. Its directory must exist.
    timeout : float
        Seconds to wait for a lock held by another connection.
    mode : {"read", "write"}
        ``"read"`` (default) opens an existing store read-only: no journal switch, no tables added,
        no file created or changed beside it, whatever WAL files are present (see
        :func:`_open_read`); writing methods then fail. ``"write"`` opens an existing store, or
        creates one where ``path`` does not exist or is an empty file. Either mode refuses anything
        that is not a depthscale store with a ``ValueError`` and leaves it untouched (see
        :func:`check_store_file`).
    contexts : int, optional
        In write mode, also refuse (untouched) a store whose runs were drawn on other contexts.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "runs.sqlite")
    >>> with Store(path, mode="write") as s:
    ...     s.put({"key": "abc-0", "config": {"model": {"depth": 2}}, "seed": 0,
    ...            "status": "ok", "reason": None, "final_loss": 0.5})
    ...     s.get("abc-0")["final_loss"], s.keys()
    (0.5, ['abc-0'])
    >>> with Store(path) as s:  # read-only
    ...     len(s)
    1
    """

    def __init__(self, path, timeout: float = 60.0, mode: str = "read", contexts: int | None = None):
        self._con: sqlite3.Connection | None = None
        self._closed = True
        self._private = None
        self._unlock: weakref.finalize | None = None
        self.path = store_path(path)
        self.timeout = check_real("timeout", timeout, lo=0)
        self.mode = check_choice("mode", mode, MODES)
        if contexts is not None and (isinstance(contexts, bool) or not isinstance(contexts, int) or contexts < 1):
            raise ValueError(f"contexts={contexts!r}: must be None or a contexts version (an integer >= 1)")
        check_store_file(self.path, mode, contexts)
        if mode == "read":
            self._open_reader()
            self._closed = False
            return
        # before SQLite touches the file: a second writer (another sweep) is refused here, not mid-way
        fd = _take_writer_lock(self.path)
        self._unlock = weakref.finalize(self, _release_writer_lock, self.path, fd)  # also if never closed
        try:
            self._open_writer(path)
        except BaseException:
            self._unlock()
            raise

    def _open_writer(self, path) -> None:
        try:
            con = self._con = connect(self.path, timeout=self.timeout)
            con.execute("PRAGMA foreign_keys=ON")
            con.execute(f"PRAGMA page_size={PAGE_SIZE}")  # takes effect only in a new, empty file
            # WAL: readers never block the writer and a killed writer leaves a consistent file.
            # synchronous=NORMAL in WAL mode survives a process kill (not a power cut) at lower cost.
            mode = con.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            con.execute("PRAGMA synchronous=NORMAL")
            con.execute("BEGIN IMMEDIATE")
            try:
                for stmt in _SCHEMA.split(";"):
                    if stmt.strip():
                        con.execute(stmt)
                # versions were checked read-only above; a new store gets this engine's
                con.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                self.schema_version, self.contexts_version = _versions(con)
                con.execute("INSERT OR IGNORE INTO meta VALUES ('contexts_version', ?)", (str(self.contexts_version),))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as exc:
            if self._con is not None:
                self._con.close()
            raise ValueError(f"store={str(path)!r}: not a usable SQLite results store ({exc})") from None
        self.journal_mode = mode
        self._closed = False

    def _open_reader(self) -> None:
        """(Re)open the read connection through :func:`_open_read`, noting the files it read."""
        old, self._con = self._con, None
        if old is not None:
            old.close()
        _remove_private(self._private)
        self._private = None
        try:
            self._signature = _signature(self.path)
            self._con, self._private = _open_read(self.path, self.timeout)
            self.schema_version, self.contexts_version = _versions(self._con)
            self.journal_mode = self._con.execute("PRAGMA journal_mode").fetchone()[0]
        except (sqlite3.DatabaseError, OSError) as exc:
            if self._con is not None:
                self._con.close()
                self._con = None
            _remove_private(self._private)
            self._private = None
            raise ValueError(f"store={str(self.path)!r}: not a usable SQLite results store ({exc})") from None

    @property
    def _conn(self):
        """The connection, as a :class:`_Guarded` one: sqlite3 errors become one ``ValueError`` naming
        the store. A closed store says so; a store open for reading first rereads the file if a writer
        has committed since (what it shows is never older than the last call)."""
        if self._closed or self._con is None:
            raise ValueError(f"store={str(self.path)!r}: is closed")
        if self.mode == "read" and _signature(self.path) != self._signature:
            self._open_reader()
        return _Guarded(self._con, self.path)

    @_conn.setter
    def _conn(self, con) -> None:
        self._con = con.con if isinstance(con, _Guarded) else con

    def _writable(self) -> None:
        if self.mode != "write":
            raise ValueError(
                f"store={str(self.path)!r}: is open for reading (mode='read'); "
                "open it with Store(path, mode='write') to add or delete runs"
            )

    def __repr__(self) -> str:
        if self._closed:
            return f"Store({str(self.path)!r}, mode={self.mode!r}, closed)"
        return f"Store({str(self.path)!r}, mode={self.mode!r}, runs={len(self)})"

    def to_frame(self, kind: str = "runs"):
        """This store as a pandas DataFrame: :func:`depthscale.sims.frames.to_frame` of it."""
        return records_frame(self.records(), kind)

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection (the file stays consistent whether or not this is called); closing
        twice is harmless, and any later use raises ``ValueError`` saying the store is closed. A
        writer's lock is released last, once SQLite has checkpointed and closed."""
        self._closed = True
        if self._con is not None:
            self._con.close()
        _remove_private(self._private)
        self._private = None
        if self._unlock is not None:
            self._unlock()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __len__(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def __contains__(self, key) -> bool:
        return self.has(key)

    def _repr_html_(self) -> str:
        """A notebook's view: counts by status, model and task (:func:`~depthscale.sims.display.store_html`)."""
        if self._closed:
            return f"<p>results store {html.escape(self.path.name)} (closed)</p>"
        return store_html(self)

    # -- writing ---------------------------------------------------------------------------
    def put(self, record: dict) -> None:
        """Write one finished run (replacing any earlier row with its key) in ONE transaction; a
        record that is not ``ok`` never replaces an ``ok`` row (a second sweep on the same store, or
        a rerun that failed, must not erase a finished run): it is dropped with a warning.

        ``record`` follows the run record of the engine contract; it needs at least ``key``,
        ``config`` (a dict), ``seed`` and ``status``. ``record["arrays"]`` (a dict of arrays), if
        present, is stored compressed in its own table.
        """
        self._writable()
        if not isinstance(record, dict):
            raise ValueError(f"record={type(record).__name__}: must be a dict")
        for name in ("key", "config", "seed", "status"):
            if name not in record:
                raise ValueError(f"record[{name!r}]: missing; a run record needs key, config, seed and status")
        key = record["key"]
        if not isinstance(key, str) or not key:
            raise ValueError(f"record['key']={key!r}: must be a non-empty string")
        if not isinstance(record["config"], dict):
            raise ValueError(f"record['config']={record['config']!r}: must be a dict")
        check_choice("record['status']", record["status"], STATUSES)
        arrays = record.get("arrays")
        if arrays is not None and not isinstance(arrays, dict):
            raise ValueError(f"record['arrays']={type(arrays).__name__}: must be a dict of arrays or None")
        for name, value in (arrays or {}).items():
            if np.asarray(value).dtype.hasobject:  # saved only by pickling, which reading never does
                raise TypeError(
                    f"record['arrays'][{name!r}]: dtype object: must be an array of numbers (or bools or strings)"
                )
        body = {k: v for k, v in record.items() if k != "arrays"}
        # Serialise before the transaction opens so a bad record never leaves a half-written row.
        text = json_text(body)
        config_text = json_text(record["config"], sort_keys=True)
        blob = _pack_arrays(arrays, self.schema_version) if arrays else None
        chash = key.rsplit("-", 1)[0]
        c = self._conn
        c.execute("BEGIN IMMEDIATE")
        try:
            if record["status"] != "ok":
                row = c.execute("SELECT status FROM runs WHERE key=?", (key,)).fetchone()
                if row is not None and row[0] == "ok":
                    c.execute("COMMIT")
                    warnings.warn(
                        f"{self.path.name}: run {key} is already finished; its {record['status']} record is not stored",
                        stacklevel=2,
                    )
                    return
            c.execute("DELETE FROM arrays WHERE key=?", (key,))
            c.execute(
                "INSERT OR REPLACE INTO runs (key, config_hash, seed, status, reason, config, record, finished)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    chash,
                    int(record["seed"]),
                    record["status"],
                    record.get("reason"),
                    config_text,
                    text,
                    time.time(),
                ),
            )
            if blob is not None:
                c.execute("INSERT INTO arrays (key, data) VALUES (?, ?)", (key, blob))
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:  # an interrupt can land after COMMIT has ended the transaction
                c.execute("ROLLBACK")
            raise

    def delete(self, key: str) -> None:
        """Remove one run (and its arrays)."""
        self._writable()
        _check_key(key)
        c = self._conn
        c.execute("BEGIN IMMEDIATE")
        try:
            c.execute("DELETE FROM arrays WHERE key=?", (key,))
            c.execute("DELETE FROM runs WHERE key=?", (key,))
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:  # an interrupt can land after COMMIT has ended the transaction
                c.execute("ROLLBACK")
            raise

    # -- reading ---------------------------------------------------------------------------
    def has(self, key: str, status: str | None = None) -> bool:
        """True if a run with this key is stored (with this status, if given)."""
        _check_key(key)
        if status is None:
            row = self._conn.execute("SELECT 1 FROM runs WHERE key=?", (key,)).fetchone()
        else:
            row = self._conn.execute("SELECT 1 FROM runs WHERE key=? AND status=?", (key, status)).fetchone()
        return row is not None

    def status(self, key: str) -> str | None:
        """The stored status of a run, or None if it is not stored."""
        _check_key(key)
        row = self._conn.execute("SELECT status FROM runs WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def statuses(self) -> dict:
        """``{key: status}`` for every stored run (one query; what a sweep checks before it starts)."""
        return dict(self._conn.execute("SELECT key, status FROM runs"))

    def keys(self, status: str | None = None) -> list:
        """Keys of the stored runs, optionally only those with ``status``, in key order."""
        if status is None:
            return [r[0] for r in self._conn.execute("SELECT key FROM runs ORDER BY key")]
        check_choice("status", status, STATUSES)
        return [r[0] for r in self._conn.execute("SELECT key FROM runs WHERE status=? ORDER BY key", (status,))]

    def get(self, key: str, arrays: bool = True) -> dict | None:
        """The record of one run (with its arrays unless ``arrays=False``), or None if absent; a
        malformed stored record (edited, or damaged) is a ``ValueError`` naming the run and field."""
        _check_key(key)
        arrays = check_bool("arrays", arrays)
        row = self._conn.execute("SELECT record FROM runs WHERE key=?", (key,)).fetchone()
        if row is None:
            return None
        rec = self._decode(key, row[0])
        problem = record_problem(rec)
        if problem is not None:
            raise ValueError(self._malformed(key, problem))
        if arrays:
            rec["arrays"] = self.load_arrays(key)
        return rec

    def record(self, key: str, arrays: bool = False) -> RecordView | None:
        """The record of one run as a :class:`~depthscale.sims.display.RecordView` (the same dict, shown
        as a table in a notebook), or None if absent. Arrays are left out unless ``arrays``.

        Examples
        --------
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "runs.sqlite")
        >>> with Store(path, mode="write") as s:
        ...     s.put({"key": "abc-0", "config": {"model": {"depth": 2}}, "seed": 0, "status": "ok",
        ...            "reason": None, "final_loss": 0.5})
        ...     r = s.record("abc-0")
        >>> r["final_loss"], "<table>" in r._repr_html_()
        (0.5, True)
        """
        _check_key(key)
        rec = self.get(key, arrays=check_bool("arrays", arrays))
        return None if rec is None else RecordView(rec)

    def _decode(self, key: str, text: str) -> dict:
        rec, problem = _parse(text)
        if problem is not None:
            raise ValueError(f"store={str(self.path)!r}: the record of run {key!r} {problem}")
        return current_spelling(rec)

    def _malformed(self, key: str, problem: str) -> str:
        return f"store={str(self.path)!r}: run {key!r} is malformed and not read: {problem}"

    def load_arrays(self, key: str) -> dict | None:
        """The per-context arrays of one run as ``{name: ndarray}``, or None if it stored none."""
        _check_key(key)
        row = self._conn.execute("SELECT data FROM arrays WHERE key=?", (key,)).fetchone()
        return None if row is None else _stored_arrays("store", self.path, key, row[0])

    def records(
        self,
        status: str | None = None,
        where: dict | None = None,
        arrays: bool = False,
        model: str | None = None,
        task: str | None = None,
    ) -> Iterator[dict]:
        """Iterate over stored records.

        Every filter is checked first: a path that is not a config field, or a value outside a
        field's choices (``model="Softmax"``), is a ``ValueError`` naming it and what is allowed
        (:func:`~depthscale.sims.record_filters.check_filters`), never an empty iteration.

        Parameters
        ----------
        status : str, optional
            Only runs with this status ("ok", "diverged", "failed").
        where : dict, optional
            ``{"dotted.config.path": value or [values]}`` filters on the run configuration, e.g.
            ``{"model.depth": [1, 2], "task.a": 0.5}``.
        arrays : bool
            Load each run's per-context arrays into ``record["arrays"]`` (off by default: they can
            be large; use :meth:`load_arrays` on demand).
        model, task : str, optional
            Shorthands for ``where={"model.model": model, "task.task": task}``.
        """
        if status is not None:
            check_choice("status", status, STATUSES)
        # a model, map or task name the store's runs hold is a value too (registered or not in this process)
        given = set(where) if isinstance(where, dict) else set()
        given |= {p for p, v in (("model.model", model), ("task.task", task)) if v is not None}
        named = {p for p in REGISTERED if p in given}
        stored = self._config_values(named)
        conds = check_filters(where, stored, model=model, task=task)  # at the call, not at the first next()
        return self._records(status, conds, check_bool("arrays", arrays))

    def _config_values(self, paths) -> dict[str, set]:
        """``{path: the string values the runs' configs hold there}`` for each config path of ``paths``."""
        out: dict[str, set] = {p: set() for p in paths}
        if not out:
            return out
        for (text,) in self._conn.execute("SELECT config FROM runs").fetchall():
            cfg, _ = _parse(text)
            for p in out:
                if isinstance(value := _get_path(cfg, p), str):
                    out[p].add(value)
        return out

    def _records(self, status: str | None, conds: dict, arrays: bool) -> Iterator[dict]:
        sql = "SELECT key, config, record FROM runs"
        params: tuple = ()
        if status is not None:
            sql += " WHERE status=?"
            params = (status,)
        # fetchall: a concurrent writer must not change what this iteration sees halfway.
        rows = self._conn.execute(sql + " ORDER BY key", params).fetchall()
        # Every row is checked against this version's schema before any is yielded, so the warnings
        # come once per read, first: a malformed row (edited, or damaged) is skipped with its key and
        # field named, and the rest of the store still reads; a run whose configuration has fields
        # this version does not know (a newer version's, or an edit) is read, and named once per field.
        good: list[tuple[str, dict]] = []
        skipped: list[str] = []
        unknown: dict[str, list[str]] = {}
        for key, config_text, text in rows:
            if conds:
                cfg, _ = _parse(config_text)  # unreadable: matches nothing, and its record is named below
                if not all(_filter_value(cfg, k) in vals for k, vals in conds.items()):
                    continue
            rec, problem = _parse(text)
            if problem is None:
                rec = current_spelling(rec)
                problem = record_problem(rec)
            if problem is not None:
                skipped.append(self._malformed(key, problem))
                continue
            for name in unknown_config_fields(rec["config"]):
                unknown.setdefault(name, []).append(key)
            good.append((key, rec))
        for text in skipped[:SKIPPED_SHOWN]:
            warnings.warn(text, RecordWarning, stacklevel=3)
        if len(skipped) > SKIPPED_SHOWN:
            more = len(skipped) - SKIPPED_SHOWN
            warnings.warn(
                f"store={str(self.path)!r}: {more} more malformed run(s) not read", RecordWarning, stacklevel=3
            )
        for name, keys in unknown.items():
            warnings.warn(
                f"store={str(self.path)!r}: {len(keys)} run(s) (first {keys[0]!r}) have config field {name!r}, "
                "which this version of depthscale does not know (written by a newer version, or edited); "
                "their curves are kept apart from runs without it",
                RecordWarning,
                stacklevel=3,
            )
        for key, rec in good:
            if arrays:
                rec["arrays"] = self.load_arrays(key)
            yield rec

    def failed(self) -> list:
        """``[{"key", "config", "seed", "reason"}]`` for every failed run."""
        rows = self._conn.execute("SELECT key, config, seed, reason FROM runs WHERE status='failed' ORDER BY key")
        out = []
        for k, c, s, r in rows:
            config, problem = _parse(c)
            if problem is not None:
                warnings.warn(self._malformed(k, f"its configuration {problem}"), RecordWarning, stacklevel=2)
                continue
            out.append({"key": k, "config": config, "seed": s, "reason": r})
        return out

    # -- export ----------------------------------------------------------------------------
    def export_csv(self, path) -> int:
        """Write one row per run with its flat scalar fields (config as ``config.task.a`` and so on).

        Lists and arrays are left out. Returns the number of rows written.
        """
        check_new_file("path", path, replace=True)
        refuse_replacing_inputs("path", path, store_inputs("store", self.path))
        rows = []
        for rec in self.records():
            flat = flatten({k: v for k, v in rec.items() if k != "config"})
            flat.update(flatten(rec.get("config", {}), "config."))
            rows.append(flat)
        first = ["key", "seed", "status", "reason"]
        cols = first + sorted({c for r in rows for c in r} - set(first))

        def write(fh) -> None:
            w = csv.DictWriter(fh, fieldnames=cols, restval="")
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if v is None else v) for k, v in r.items()})

        write_atomic("path", path, write, newline="")
        return len(rows)

    def export_json(self, path, arrays: bool = False) -> int:
        """Write every record as a JSON list (with per-context arrays as lists if ``arrays``).

        Non-finite floats are written as ``null`` (strict JSON, see :func:`json_text`). Returns the
        number of records written.
        """
        check_bool("arrays", arrays)
        check_new_file("path", path, replace=True)
        refuse_replacing_inputs("path", path, store_inputs("store", self.path))
        recs = list(self.records(arrays=arrays))
        write_atomic("path", path, lambda fh: fh.write(json_text(recs)))
        return len(recs)


def _check_key(key) -> None:
    if not isinstance(key, str):
        raise TypeError(f"key={key!r}: must be a run key (a str such as 'abc123-0'), not {type(key).__name__}")


class _Rows:
    """The rows of one statement, fetched at once (errors surface at ``execute``, not while iterating)."""

    def __init__(self, rows):
        self.rows = rows

    def fetchone(self):
        return self.rows[0] if self.rows else None

    def fetchall(self):
        return self.rows

    def __iter__(self):
        return iter(self.rows)


class _Guarded:
    """A connection whose ``execute`` turns every sqlite3 error into one ``ValueError`` naming the store."""

    def __init__(self, con, path: Path):
        self.con, self.path = con, path

    @property
    def in_transaction(self) -> bool:
        return self.con.in_transaction

    def close(self) -> None:
        self.con.close()

    def execute(self, sql: str, params=()):
        try:
            return _Rows(self.con.execute(sql, params).fetchall())
        except sqlite3.OperationalError as exc:
            raise ValueError(f"store={str(self.path)!r}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"store={str(self.path)!r}: is damaged or unreadable ({exc})") from None


def current_spelling(rec):
    """A stored record with today's field names, renamed in place: records written before 0.3 spell the reference
    floors ``baseline``, and those written before 0.2 the two-temperature signed mixture ``pair``.

    >>> current_spelling({"key": "k-0", "baseline": {"single": {"loss": 1.0}, "pair": {"loss": 0.5}}})
    {'key': 'k-0', 'floors': {'single': {'loss': 1.0}, 'mixture': {'loss': 0.5}}}
    """
    if isinstance(rec, dict) and "baseline" in rec and "floors" not in rec:
        rec["floors"] = rec.pop("baseline")
    floors = rec.get("floors") if isinstance(rec, dict) else None
    if isinstance(floors, dict) and "pair" in floors and "mixture" not in floors:
        floors["mixture"] = floors.pop("pair")
    return rec


def is_finished(status: str | None) -> bool:
    """A run counts as done (skipped by a resumed sweep) unless it is absent or failed."""
    return status is not None and status != "failed"


# -- compact stores ----------------------------------------------------------------------------
PARAMETER_ARRAYS = ("theta",)  # a run's trained parameters: written by the engine, read by no claim or figure
PER_CONTEXT_ARRAYS = ("sq_err",)  # per-context squared errors: the paired floor claims read them
COMPACT_FORM = (
    "trained parameters (theta) dropped; per-context squared errors (sq_err) in float16, or float32/float64"
    " for a run whose errors exceed float16's range; arrays packed by byte plane in LZMA2 (schema 2)"
)


def narrow_errors(values) -> np.ndarray:
    """Per-context errors in the narrowest float type of float16, float32 and float64 that holds their range.

    Rounding to float16 changes a value ``x`` of its normal range (``|x| >= 2**-14``) by at most
    ``2**-11 |x|`` and a smaller one by at most ``2**-25``, so a mean over contexts moves by at most
    ``2**-11`` of the mean absolute value plus ``2**-25`` (and, rounding errors being unbiased, by
    far less in practice). Non-finite values are kept as they are.

    >>> narrow_errors(np.array([0.25, 3.0], np.float32)).dtype, narrow_errors(np.array([1e5])).dtype
    (dtype('float16'), dtype('float32'))
    """
    a = np.asarray(values)
    if not np.issubdtype(a.dtype, np.floating):
        raise TypeError(f"values dtype={a.dtype}: must be a float array")
    finite = np.abs(a[np.isfinite(a)])
    top = float(finite.max()) if finite.size else 0.0
    for dt in (np.float16, np.float32):
        if np.dtype(dt).itemsize > a.dtype.itemsize:
            break
        if top <= float(np.finfo(dt).max):
            with np.errstate(over="ignore", under="ignore"):
                return a.astype(dt)
    return a


def compact_arrays(arrays: dict | None) -> dict | None:
    """The compact form of a run's arrays (:data:`COMPACT_FORM`): without its trained parameters, with
    its per-context squared errors narrowed by :func:`narrow_errors`; any other array kept as it is.
    None (or nothing left) gives None.

    >>> out = compact_arrays({"sq_err": np.array([0.5, 0.25]), "theta": np.zeros(3)})
    >>> sorted(out), out["sq_err"].dtype
    (['sq_err'], dtype('float16'))
    """
    if arrays is None:
        return None
    if not isinstance(arrays, dict):
        raise TypeError(f"arrays={type(arrays).__name__}: must be a dict of arrays or None")
    out = {
        k: (narrow_errors(v) if k in PER_CONTEXT_ARRAYS else np.asarray(v))
        for k, v in arrays.items()
        if k not in PARAMETER_ARRAYS
    }
    return out or None


def compact_record(record: dict) -> dict:
    """``record`` with its arrays in the compact form (:func:`compact_arrays`); the record is not changed."""
    if not isinstance(record, dict) or "arrays" not in record:
        return record
    return {**record, "arrays": compact_arrays(record["arrays"])}


def compact_store(src, dst) -> dict:
    """Write a compact copy of the store at ``src`` to the new file ``dst`` (:data:`COMPACT_FORM`).

    Every run row (configuration, record, status, finish time) and every ``meta`` entry is copied
    as it is; each run's arrays are replaced by :func:`compact_arrays` of them, packed in schema 2's
    form (1 KB pages, byte planes in LZMA2: lossless); the new store notes the form in ``meta``
    (``compacted``, ``schema_version``) and is written in one go (a temporary file renamed into
    place), so ``dst`` either appears whole or not at all. ``src`` is only read.

    Returns ``{"src", "dst", "runs", "arrays", "bytes_before", "bytes_after", "dropped"}``:
    ``dropped`` counts the arrays left out by name.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with Store(os.path.join(d, "full.sqlite"), mode="write") as s:
    ...     s.put({"key": "abc-0", "config": {}, "seed": 0, "status": "ok",
    ...            "arrays": {"sq_err": np.array([0.5, 0.25]), "theta": np.zeros(1000)}})
    >>> out = compact_store(os.path.join(d, "full.sqlite"), os.path.join(d, "compact.sqlite"))
    >>> out["runs"], out["dropped"]
    (1, {'theta': 1})
    >>> with Store(os.path.join(d, "compact.sqlite")) as s:
    ...     sorted(s.load_arrays("abc-0"))
    ['sq_err']
    """
    dst = check_new_file("dst", dst, replace=False)
    if not isinstance(src, str | os.PathLike):
        raise TypeError(f"src={src!r}: must be a store path (str or os.PathLike)")
    src = Path(src)
    try:
        check_store_file(src, "read")
    except ValueError as exc:
        raise ValueError(f"src: {exc}") from None
    if Path(str(dst) + "-wal").exists():
        raise ValueError(f"dst={str(dst)!r}: must be a new file (its -wal exists; compact_store never overwrites)")
    refuse_replacing_inputs("dst", dst, store_inputs("src", src))
    fd, tmp_name = temp_beside("dst", dst)  # hidden, and removed by the next run if a kill leaves it
    os.close(fd)
    tmp = Path(tmp_name)
    dropped: dict[str, int] = {}
    n_arrays = 0
    try:
        with Store(src) as old:
            con = connect(tmp)
            try:
                # no journal: the file is new and is thrown away on any failure, so a rollback journal
                # would only be one more file a kill leaves beside it
                con.execute("PRAGMA journal_mode=OFF")
                con.execute(f"PRAGMA page_size={PAGE_SIZE}")
                con.execute("BEGIN")
                for stmt in _SCHEMA.split(";"):
                    if stmt.strip():
                        con.execute(stmt)
                meta = old._conn.execute("SELECT name, value FROM meta").fetchall()
                if not any(name == "contexts_version" for name, _ in meta):
                    meta.append(("contexts_version", str(old.contexts_version)))
                con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta)
                con.execute("INSERT OR REPLACE INTO meta VALUES ('compacted', ?)", (COMPACT_FORM,))
                con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                cols = "key, config_hash, seed, status, reason, config, record, finished"
                rows = old._conn.execute(f"SELECT {cols} FROM runs ORDER BY key").fetchall()
                con.executemany(f"INSERT INTO runs ({cols}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
                for key, blob in old._conn.execute("SELECT key, data FROM arrays ORDER BY key"):
                    arrays = _stored_arrays("src", src, key, blob)
                    for name in arrays:
                        if name in PARAMETER_ARRAYS:
                            dropped[name] = dropped.get(name, 0) + 1
                    kept = compact_arrays(arrays)
                    if kept:
                        con.execute("INSERT INTO arrays (key, data) VALUES (?, ?)", (key, _pack_arrays(kept)))
                        n_arrays += 1
                con.execute("COMMIT")
                con.execute("VACUUM")
            finally:
                con.close()
        os.chmod(tmp, 0o666 & ~umask())  # as a file made by open(), not mkstemp's owner-only mode
        os.replace(tmp, dst)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return {
        "src": str(src),
        "dst": str(dst),
        "runs": len(rows),
        "arrays": n_arrays,
        "bytes_before": src.stat().st_size,
        "bytes_after": dst.stat().st_size,
        "dropped": dropped,
    }


__all__ = [
    "Store",
    "STATUSES",
    "current_spelling",
    "flatten",
    "is_finished",
    "json_text",
    "check_store_file",
    "store_path",
    "unstorable",
    "compact_arrays",
    "compact_record",
    "compact_store",
    "narrow_errors",
    "COMPACT_FORM",
]
