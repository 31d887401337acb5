"""``tables/*.toml`` read from the ``descgen.tables`` data package, the parsed tables kept in a
per-user marshal cache (``~/.cache/descgen``, :func:`read_table`); :mod:`descgen.model.loader`
checks and compiles what it reads."""

from __future__ import annotations

import marshal
import os
from typing import Any

from ..core.errors import TableError

__all__ = ["read_table"]


def read_table(name: str) -> dict[str, Any]:
    """Parse one table file from the ``descgen.tables`` data package (``tables/`` in the repo).

    The package's ``__path__`` is read directly rather than through ``importlib.resources``, which
    costs a few milliseconds of imports at every CLI start; descgen is never run from a zip.
    Parsed tables are kept in a per-user marshal file (:func:`_cache_file`), keyed by each table
    file's path, size and modification time, so a start reads one marshal file instead of parsing
    TOML (15-18 ms less for every command, about twice a bare interpreter's start-up: ``python
    bench/bench.py --startup`` with and without ``DESCGEN_NO_CACHE=1``); any change to a table
    file parses it again.
    """
    path = f"tables/{name}"
    try:
        import descgen.tables as package

        full = os.path.join(list(package.__path__)[0], name)
        st = os.stat(full)
        stamp = (full, st.st_mtime_ns, st.st_size)
        cache = _cache()
        hit = cache.get(name)
        if hit is not None and tuple(hit[0]) == stamp:
            table: dict[str, Any] = hit[1]
            return table
        import tomllib

        with open(full, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, ImportError, IndexError) as exc:  # pragma: no cover - packaging fault
        raise TableError(path, "file", f"cannot read the table: {exc}") from None
    except ValueError as exc:  # tomllib.TOMLDecodeError
        raise TableError(path, "file", f"not valid TOML: {exc}") from None
    cache[name] = (stamp, data)
    _save_cache(cache)
    return data


_CACHE: dict[str, Any] | None = None


def _cache_file() -> str | None:
    """``tables-<python>-<dir>.marshal`` in ``$DESCGEN_CACHE_DIR``, by default
    ``$XDG_CACHE_HOME/descgen`` (``~/.cache/descgen``); None when ``DESCGEN_NO_CACHE`` is set.
    ``<dir>`` is a checksum of the tables' directory: each install (a venv, a checkout, a git
    worktree) has its own file, so two installs used in turn do not evict each other's entries."""
    if os.environ.get("DESCGEN_NO_CACHE"):
        return None
    import sys
    from binascii import crc32

    import descgen.tables as package

    where = os.environ.get("DESCGEN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "descgen")
    tables = crc32(os.fsencode(list(package.__path__)[0]))
    return os.path.join(where, f"tables-{sys.implementation.cache_tag}-{tables:08x}.marshal")


def _cache() -> dict[str, Any]:
    """The cache file's entries: empty when there is no file or it cannot be read (the tables are
    then parsed)."""
    global _CACHE
    if _CACHE is None:
        _CACHE = {}
        path = _cache_file()
        try:
            if path is not None:
                with open(path, "rb") as fh:
                    # One read, then loads: marshal.load(fh) reads the file object piece by
                    # piece, ten times slower for the tables' ~75 kB.
                    loaded = marshal.loads(fh.read())
                if isinstance(loaded, dict):
                    _CACHE = loaded
        except (OSError, EOFError, ValueError, TypeError):
            pass
    return _CACHE


def _save_cache(cache: dict[str, Any]) -> None:
    """Write the cache atomically (a reader sees the old file or the new one); a cache that cannot
    be written is simply not used."""
    path = _cache_file()
    if path is None:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            marshal.dump(cache, fh)
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass
