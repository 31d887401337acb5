"""No file of the repository names a path of one machine.

A benchmark whose default input is ``/some/dir/of/mine.ptx``, a comment citing a file outside the
repository by its absolute path, a ``.file`` directive with the compiling machine's directories:
on any other machine these point nowhere. Inputs live under the repository or come from an
argument; temporary files come from ``tempfile`` / ``mktemp``; the corpus scripts write ``.file``
paths and DWARF's compiling directory relative (``tests/corpus/trim.py``'s ``portable_paths``).

The files checked are those a commit would hold: ``git ls-files`` (tracked, and new files git does
not ignore), else, outside a git checkout, every file under the repository but the ignored
directories.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

ROOT = Path(REPO)
#: An absolute path into a home, work, scratch or temporary directory (POSIX, macOS, Windows), not
#: inside a longer path or a URL (``https://host/home/...``). Written in pieces so that this file
#: does not name one itself.
MACHINE_PATH = re.compile(
    r"(?<![\w./~$%-])(?:/(?:" + "|".join(["wo" + "rk", "ro" + "ot", "ho" + "me", "Us" + "ers", "t" + "mp", "m" + "nt",
                                          "scr" + "atch", "private/var", "var/folders"])
    + r")/|[A-Za-z]:\\(?:Users|Documents and Settings)\\)")
#: Directories never committed (as .gitignore says), for a tree without git.
IGNORED = {".git", ".venv", ".venv-corpus", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis",
           ".mypy_cache", "data"}


def repository_files() -> list[Path]:
    git = shutil.which("git")
    if git and (ROOT / ".git").exists():
        out = subprocess.run([git, "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, check=True).stdout
        return [ROOT / p for p in sorted(set(out.decode().split("\0"))) if p and (ROOT / p).is_file()]
    found = []
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED and not d.endswith(".egg-info"))
        found += [Path(top) / f for f in sorted(files) if not f.endswith((".pyc", ".whl"))]
    return found


def machine_paths(text: str) -> list[tuple[int, str]]:
    return [(text.count("\n", 0, m.start()) + 1, text[m.start():m.start() + 60].splitlines()[0])
            for m in MACHINE_PATH.finditer(text)]


def test_the_pattern_finds_machine_paths_and_nothing_else():
    home, work = "/ho" + "me/ann/k.ptx", "/wo" + "rk/corpus-big/x.ptx"
    for bad in (f'BIG = Path("{work}")', f"see {home}", f"-o /t{'mp'}/probe", f'.file 1 "{work}"',
                f"V={work}", f"(`{work}`)", "C:\\Users\\ann\\k.ptx"):
        assert machine_paths(bad), bad
    for fine in ("tests/corpus/make_triton.py", "~/.triton/cache", "https://example.com/ho" + "me/x",
                 "bench/data/triton_20mb.ptx", "a/wo" + "rk/b", "$HOME/x", "/usr/local/cuda", "/dev/null",
                 "tempfile.mkdtemp()", ".b8 47"):
        assert not machine_paths(fine), fine


def test_no_tracked_file_names_a_path_of_one_machine():
    files = repository_files()
    assert len(files) > 100 and any(f.suffix == ".ptx" for f in files)
    found = []
    for path in files:
        data = path.read_bytes()
        if b"\0" in data[:4096]:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}:{line}: {what}" for line, what in machine_paths(text)]
    assert found == [], "absolute paths of one machine:\n" + "\n".join(found[:50])


def test_compiler_output_keeps_no_compiling_directory_in_its_dwarf_bytes():
    """DWARF's DW_AT_comp_dir is written as ``.b8`` bytes, one per line: read them as text too."""
    found = []
    for path in sorted((ROOT / "tests").rglob("*.ptx")):
        text = path.read_text(errors="replace")
        if ".b8" not in text:
            continue
        data = bytes(int(n) & 0xFF for n in re.findall(r"^\.b8 (\d+)", text, flags=re.M))
        found += [f"{path.relative_to(ROOT)}: {s.decode()}" for s in re.findall(rb"[ -~]{4,}", data)
                  if machine_paths(s.decode())]
    assert found == []


def test_the_benchmark_reads_its_input_from_the_repository_or_an_argument():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import bench_scan
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert bench_scan.BIG.is_relative_to(ROOT)
    assert bench_scan.inputs([str(ROOT / "tests" / "ptx" / "clean.ptx")]) == [str(ROOT / "tests" / "ptx" / "clean.ptx")]
    if not bench_scan.BIG.exists():  # not made here: the corpus under the repository
        files = bench_scan.inputs([])
        assert files and all(Path(f).is_relative_to(ROOT / "tests" / "corpus") for f in files)


@pytest.mark.parametrize("name", ["make_triton.py", "make_triton_sm90.py"])
def test_the_triton_scripts_write_portable_paths(name):
    sys.path.insert(0, str(ROOT / "tests" / "corpus"))
    try:
        import trim
    finally:
        sys.path.remove(str(ROOT / "tests" / "corpus"))
    assert "portable_paths(" in (ROOT / "tests" / "corpus" / name).read_text()
    here = "/wo" + "rk/wt-x"
    text = (f'.version 9.0\n\t.file\t1 "{here}/tests/corpus/make_triton.py"\n'
            f'\t.file\t2 "{here}/.venv/lib/python3.11/site-packages/triton/language/standard.py"\n'
            ".b8 47                                  // DW_AT_comp_dir\n"
            + "".join(f".b8 {b}\n" for b in f"{here}/tests/corpus".encode()[1:]) + ".b8 0\n")
    out = trim.portable_paths(text)
    assert out.count("\n") == text.count("\n") and not machine_paths(out)
    assert '"tests/corpus/make_triton.py"' in out and '"site-packages/triton/language/standard.py"' in out
    comp = bytes(int(n) for n in re.findall(r"^\.b8 (\d+)", out, flags=re.M))
    assert comp == b"./././././tests/corpus/\0"  # the same length (an odd pad: a trailing /): no offset moves
