"""descgen's per-user cache: files under ``$XDG_CACHE_HOME/descgen`` (``~/.cache/descgen`` by
default; ``DESCGEN_CACHE_DIR`` names another directory) that spare a start the work an earlier start did, each keyed so that it cannot go stale:

- the tables, parsed from TOML (:func:`descgen.loader.read_table`; keyed by each file's path,
  size and modification time);
- the code descgen writes and compiles at run time, a record's ``__init__`` and a plan's pack and
  unpack functions (:func:`compiled`; keyed by the source text itself, per Python bytecode
  version). Compiling them is about a tenth of a command's start-up (``descgen decode WORD``
  compiles some 25 functions); reading them back is a few per cent of that.

``DESCGEN_NO_CACHE`` turns both off. A cache file that cannot be read or written is not used: a
start then does the work itself.
"""

from __future__ import annotations

import marshal
import os
import sys
from types import CodeType
from typing import Any

__all__ = ["cache_file", "load", "save", "compiled", "define"]


def cache_file(name: str) -> str | None:
    """``NAME`` in ``$DESCGEN_CACHE_DIR``, by default ``$XDG_CACHE_HOME/descgen`` (``~/.cache``
    when that is not set); None when ``DESCGEN_NO_CACHE`` is set."""
    if os.environ.get("DESCGEN_NO_CACHE"):
        return None
    where = os.environ.get("DESCGEN_CACHE_DIR")
    if not where:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        where = os.path.join(base, "descgen")
    return os.path.join(where, name)


def load(path: str | None) -> dict[Any, Any] | None:
    """The dict marshalled in ``path``, or None (no file, an unreadable one, or no cache)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            # One read, then loads: marshal.load(fh) reads the file object piece by piece, ten
            # times slower for the tables' ~75 kB.
            loaded = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return loaded if isinstance(loaded, dict) else None


def save(path: str | None, data: dict[Any, Any]) -> None:
    """Write ``data`` to ``path`` atomically (a reader sees the old file or the new one)."""
    if path is None:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as fh:
            marshal.dump(data, fh)
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass


#: Code objects by source text: loaded from the cache file on first use.
_CODE: dict[str, CodeType] | None = None
#: The sources compiled or read back in this process (what a full cache file keeps).
_USED: set[str] = set()
#: Whether this process compiled code the file does not hold (it is written at exit).
_NEW = False
#: Past this many entries (other versions' code), the file keeps only this process's.
_MAX_ENTRIES = 2000


def _code_file() -> str | None:
    return cache_file(f"code-{sys.implementation.cache_tag}.marshal")


def compiled(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")``, from the per-user cache when an earlier process
    compiled the same text (with this Python's bytecode version). Code compiled here is added to
    the cache file when the process exits."""
    global _CODE, _NEW
    if _CODE is None:
        loaded = load(_code_file())
        _CODE = {k: v for k, v in loaded.items() if isinstance(k, str) and isinstance(v, CodeType)} if loaded else {}
    code = _CODE.get(source)
    _USED.add(source)
    if code is None:
        code = _CODE[source] = compile(source, filename, "exec")
        if not _NEW:
            import atexit

            _NEW = True
            atexit.register(_save_code)
    return code


def define(name: str, source: str, filename: str, env: dict[str, Any]) -> Any:
    """The function ``name`` that generated ``source`` defines, made in ``env`` (the names the
    source reads), its code from :func:`compiled`."""
    exec(compiled(source, filename), env)
    return env[name]


def _save_code() -> None:
    code = _CODE or {}
    if len(code) > _MAX_ENTRIES:
        code = {source: c for source, c in code.items() if source in _USED}
    save(_code_file(), code)
