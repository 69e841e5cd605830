"""numba for the kernel modules, with its on-disk cache kept out of the installed package.

Every module that compiles kernels imports ``njit`` and ``prange`` from here (tested), so the cache
folder is chosen before the first ``@njit(cache=True)`` runs: numba fixes a function's cache
folder when it is decorated.

Why not numba's default (a ``__pycache__`` beside each source file): in a regular install that is
``site-packages/depthscale/sims/__pycache__``, and pip's uninstall removes only the files it
installed. The index and data files numba added stay, and the folder they keep alive shadows the
package when it is later installed in editable mode (``depthscale`` resolves to the leftover
folder, a namespace package, and ``from depthscale.sims import sweep`` fails). A system-wide
install may also be read-only. So, unless ``NUMBA_CACHE_DIR`` is set, the cache lives in the
user's cache folder under depthscale's version: an upgrade never loads another version's machine
code and an old version's folder can be removed whole. Within it numba keys each source folder by
a hash of its absolute path and checks each file's time stamp and size, so two installs or
checkouts never share an entry and an edited kernel is recompiled.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def user_cache_dir() -> Path | None:
    """depthscale's folder in the user's cache (None when there is no home directory).

    ``$XDG_CACHE_HOME`` (absolute) or ``~/.cache`` on Linux and other Unix systems,
    ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows; then ``depthscale``.

    >>> user_cache_dir().name
    'depthscale'
    """
    try:
        home = Path.home()
    except RuntimeError:  # no HOME and no password-database entry
        home = None
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or (home and home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home and home / "Library" / "Caches"
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = xdg if os.path.isabs(xdg) else (home and home / ".cache")  # the XDG spec ignores relative paths
    return Path(base) / "depthscale" if base else None


def numba_cache_dir() -> Path | None:
    """Where numba caches depthscale's kernels unless ``NUMBA_CACHE_DIR`` says otherwise.

    ``<user cache>/depthscale/<version>/numba`` (see :func:`user_cache_dir`).

    >>> numba_cache_dir().relative_to(user_cache_dir()).parts[1:]
    ('numba',)
    """
    from importlib.metadata import PackageNotFoundError, version  # numba imports it anyway

    root = user_cache_dir()
    if root is None:
        return None
    try:
        release = version("depthscale")
    except PackageNotFoundError:  # a source tree on sys.path, never installed
        release = "unknown"
    return root / release / "numba"


def writable_folder(folder: Path) -> bool:
    """True if ``folder`` exists or can be created, and a file can be written in it."""
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        return False
    return True


def fallback_cache_dir() -> Path:
    """A per-user folder in the system's temporary directory: where the cache goes when the configured
    one cannot be created or written.

    >>> fallback_cache_dir().parts[-1]
    'numba'
    """
    import tempfile
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("depthscale")
    except PackageNotFoundError:
        release = "unknown"
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"depthscale-{user}" / release / "numba"


def configure_cache() -> str | None:
    """Set ``NUMBA_CACHE_DIR`` to :func:`numba_cache_dir` unless the user has set it; return its value.

    The folder (the user's or the default) must be creatable and writable: numba would otherwise fail
    at the first cached kernel ("no locator available") or, worse, cache into the installed package.
    If it is not, the cache moves to :func:`fallback_cache_dir` with one warning line on stderr; if
    that is not writable either, ``NUMBA_CACHE_DIR`` is left pointing at it and the kernels of this
    process compile without caching (:func:`cache_usable` is then False; one warning line).
    If numba was imported before (its configuration read without the variable), its configuration
    is reloaded, so functions decorated from now on cache there.
    """
    global _CACHE_USABLE
    chosen = os.environ.get("NUMBA_CACHE_DIR") or None
    folder = Path(chosen) if chosen else numba_cache_dir()
    if folder is None or not writable_folder(folder):
        fallback = fallback_cache_dir()
        what = f"NUMBA_CACHE_DIR={chosen!r}" if chosen else f"the cache folder {str(folder)!r}"
        if writable_folder(fallback):
            sys.stderr.write(f"depthscale: warning: {what} cannot be written; caching kernels in {str(fallback)!r}\n")
        else:
            _CACHE_USABLE = False
            sys.stderr.write(f"depthscale: warning: {what} cannot be written; kernels are compiled without a cache\n")
        folder = fallback
    if os.environ.get("NUMBA_CACHE_DIR") != str(folder):
        os.environ["NUMBA_CACHE_DIR"] = str(folder)
        if "numba" in sys.modules:
            from numba.core import config

            config.reload_config()
    return os.environ["NUMBA_CACHE_DIR"]


_CACHE_USABLE = True


def cache_usable() -> bool:
    """False when no cache folder could be written (kernels then compile in every process)."""
    return _CACHE_USABLE


configure_cache()

from numba import njit as _numba_njit  # noqa: E402 - after the cache folder is set
from numba import prange  # noqa: E402


def njit(*args, **kwargs):
    """numba's ``njit``; ``cache=True`` is dropped when no cache folder is writable (see
    :func:`configure_cache`), where numba would refuse to decorate ("no locator available")."""
    if not _CACHE_USABLE:
        kwargs.pop("cache", None)
    return _numba_njit(*args, **kwargs)


__all__ = [
    "njit",
    "prange",
    "cache_usable",
    "configure_cache",
    "fallback_cache_dir",
    "numba_cache_dir",
    "user_cache_dir",
    "writable_folder",
]
