"""The per-user cache of compiled code (descgen.usercache.compiled, for start-up): a record's
``__init__`` and a plan's pack/unpack functions are compiled by the first process and read back by
the next, keyed by their source text, so a stale entry cannot be served."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from types import CodeType

from descgen import usercache

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Decodes a word under every kind (each kind's plan, every record), then reports whether this
#: process compiled anything the cache file did not hold, and what it cached.
_PROBE = """
import json, sys
import descgen
from descgen import usercache
from descgen.identify import identify
found = identify(0x08400010)
print(json.dumps({"new": usercache._NEW, "kinds": [r.kind for r in found.consistent],
                  "cached": len(usercache._CODE or {})}))
"""


def _probe(env: dict[str, str]) -> dict[str, object]:
    base = {k: v for k, v in os.environ.items() if k not in ("DESCGEN_CACHE_DIR", "DESCGEN_NO_CACHE")}
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120,
                         env={**base, "PYTHONPATH": REPO, **env})
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_the_second_process_compiles_nothing(tmp_path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    first = _probe(env)
    files = list((tmp_path / "descgen").glob("code-*.marshal"))
    assert first["new"] is True and len(files) == 1
    second = _probe(env)
    assert second == {**first, "new": False}  # the same answer, from code read back
    with open(files[0], "rb") as fh:
        stored = marshal.loads(fh.read())
    assert len(stored) == first["cached"] and all(isinstance(c, CodeType) for c in stored.values())
    assert any(source.startswith("def unpack(word):") for source in stored)
    assert any(source.startswith("def __init__(self,") for source in stored)


def test_an_unreadable_or_foreign_cache_is_not_used(tmp_path) -> None:
    """A file that is not marshal data, or one whose entries are not code under source text
    (another program's file, a damaged one), is ignored: the process compiles what it needs."""
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    first = _probe(env)
    path = tmp_path / "descgen" / f"code-{sys.implementation.cache_tag}.marshal"
    sources = list(marshal.loads(path.read_bytes()))
    path.write_bytes(b"not marshal")
    assert _probe(env) == first
    path.write_bytes(marshal.dumps({**{source: 3 for source in sources}, 5: compile("x = 1", "<x>", "exec")}))
    assert _probe(env) == first  # every entry dropped: all compiled again (new), same answer


def test_no_cache_writes_nothing(tmp_path) -> None:
    assert _probe({"XDG_CACHE_HOME": str(tmp_path), "DESCGEN_NO_CACHE": "1"})["new"] is True
    assert not (tmp_path / "descgen").exists()


def test_the_cache_directory(monkeypatch, tmp_path) -> None:
    """``$XDG_CACHE_HOME/descgen`` (``~/.cache/descgen``), unless ``DESCGEN_CACHE_DIR`` names one;
    none with ``DESCGEN_NO_CACHE``."""
    for name in ("DESCGEN_CACHE_DIR", "DESCGEN_NO_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert usercache.cache_file("x") == str(tmp_path / ".cache" / "descgen" / "x")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert usercache.cache_file("x") == str(tmp_path / "xdg" / "descgen" / "x")
    monkeypatch.setenv("DESCGEN_CACHE_DIR", str(tmp_path / "here"))
    assert usercache.cache_file("x") == str(tmp_path / "here" / "x")
    monkeypatch.setenv("DESCGEN_NO_CACHE", "1")
    assert usercache.cache_file("x") is None


def test_compiled_is_compile(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("DESCGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(usercache, "_CODE", None)
    source = "def f(x):\n    return x * 3\n"
    code = usercache.compiled(source, "<test>")
    assert code is usercache.compiled(source, "<elsewhere>")  # compiled once per process
    env: dict[str, object] = {}
    exec(code, env)
    assert env["f"](5) == 15  # type: ignore[operator]
