"""The public API is typed: ``mypy --strict`` passes on a user's script that uses every export
(tests/typing/user_script.py), rejects a script with type errors, and the ``Literal`` types of
:mod:`descgen.core.types` list exactly the tables' members.

mypy runs as it does for a user with descgen installed (``py.typed``): with
``--follow-imports=silent``, descgen's own modules are analysed for their signatures but their
internal errors are not the script's. (Run ``mypy --strict descgen`` for the library itself.)
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import get_args

import pytest

import descgen
from descgen.core import types
from descgen.model.catalog import constraints
from descgen.words.identify import DESCRIPTORS
from descgen.model.loader import atoms, layout, shapes

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "tests", "typing", "user_script.py")
HAVE_MYPY = importlib.util.find_spec("mypy") is not None


def _mypy(tmp_path_factory: pytest.TempPathFactory, *paths: str) -> subprocess.CompletedProcess[str]:
    if not HAVE_MYPY:
        pytest.skip("mypy is not installed: pip install -e '.[test]' installs it")
    cache = tmp_path_factory.getbasetemp() / "mypy_cache"
    env = {**os.environ, "MYPYPATH": REPO}  # this checkout's descgen, whatever is installed
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
         "--show-error-codes", "--no-color-output", "--cache-dir", str(cache), *paths],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )


def test_user_script_passes_mypy_strict(tmp_path_factory: pytest.TempPathFactory) -> None:
    result = _mypy(tmp_path_factory, SCRIPT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_python_example_passes_mypy_strict(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The README's Python block, as a user pastes it into a script: ``w.findings`` of an encode
    type-checks whether or not the word warns (every encoder returns a ``descgen.Word``)."""
    readme = Path(REPO, "README.md").read_text(encoding="utf-8")
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert "encode_idesc" in code and ".findings" in code
    script = tmp_path_factory.mktemp("readme") / "readme_example.py"
    script.write_text(code, encoding="utf-8")
    result = _mypy(tmp_path_factory, str(script))
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_encoder_returns_a_word_with_findings() -> None:
    """One return type: a clean word has ``.findings == ()``, a warned one its findings."""
    clean = [descgen.encode_idesc("f16", 128, 256), descgen.encode_smem(start_address=0x400, lbo=16, sbo=1024,
                                                                        swizzle="128B"),
             descgen.encode_zcm(start_count=(1, 3, 5, 7), skip_span=1, use_span=13), descgen.encode_taddr(32, 0),
             descgen.encode_wgmma_smem(start_address=0x400, lbo=16, sbo=1024, swizzle="128B"),
             descgen.encode("idesc_dense", "f16", m=128, n=256)]
    assert [w.__class__ for w in clean] == [descgen.Word] * len(clean)
    assert [w.findings for w in clean] == [()] * len(clean)
    warned = descgen.encode_idesc("f16", 128, 256, max_shift=8, ws=False)
    assert warned.__class__ is descgen.Word and [f.code for f in warned.findings] == ["IDESC-MAX-SHIFT-WS"]


def test_mypy_finds_the_installed_descgen_from_a_users_directory(tmp_path: Path) -> None:
    """As a user runs it: the script in their own directory, no MYPYPATH, descgen found where pip
    put it. After the README's `pip install -e '.[test]'` that is the editable install: its path
    entry (src/, a plain .pth line) is what mypy follows; setuptools' import-hook finder, used
    when packages are remapped one by one, is invisible to mypy."""
    import importlib.metadata
    import shutil

    if not HAVE_MYPY:
        pytest.skip("mypy is not installed: pip install -e '.[test]' installs it")
    try:
        importlib.metadata.distribution("descgen")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("descgen is not installed (the README's commands install it)")
    script = shutil.copy(SCRIPT, tmp_path / "my_kernel_script.py")
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--no-color-output",
                             "--cache-dir", str(tmp_path / "cache"), str(script)],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'Cannot find implementation or library stub for module named "descgen"' not in result.stdout


def test_the_library_itself_passes_mypy_strict(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Not only what a user script sees: every module of descgen/ and of the command line (cli/,
    linked as descgen.cli) is strict-clean."""
    if not HAVE_MYPY:
        pytest.skip("mypy is not installed: pip install -e '.[test]' installs it")
    cache = tmp_path_factory.getbasetemp() / "mypy_cache"
    result = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-color-output", "--cache-dir", str(cache),
                             "descgen"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_user_script_runs() -> None:
    result = subprocess.run([sys.executable, SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "constexpr std::uint32_t idesc = 0x08410490u;" in result.stdout


def test_user_script_uses_every_export() -> None:
    with open(SCRIPT, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    used = {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "descgen"}
    missing = sorted(set(descgen.__all__) - used)
    assert not missing, f"use these exports in tests/typing/user_script.py: {missing}"


#: Each line must make ``mypy --strict`` fail: the test fails if a signature accepts any of them.
BAD_LINES = {
    "encode_idesc_str": 's: str = descgen.encode_idesc("f16", 128, 256)',
    "kind_int": "descgen.encode_idesc(5, 128, 256)",
    "kind_unknown": 'descgen.encode_idesc("f17", 128, 256)',
    "atype": 'descgen.encode_idesc("f16", 128, 256, atype="fp16")',
    "major": 'descgen.encode_idesc("f16", 128, 256, a_major="row")',
    "cta_group": 'descgen.validate_idesc(0x08400010, "f16", cta_group=3)',
    "scale_vec": 'descgen.check_mma(idesc=0, kind="mxf4", b_desc=0, scale_vec="8X")',
    "arch": 'descgen.encode_smem(start_address=0, lbo=16, sbo=1024, swizzle="128B", arch="sm_90a")',
    "swizzle_int": "descgen.encode_smem(start_address=0, lbo=16, sbo=1024, swizzle=3)",
    "lbo_mode": 'descgen.encode_smem(start_address=0, lbo=16, sbo=1024, swizzle="128B", lbo_mode="abs")',
    "tile_dtype": 'descgen.smem_for_tile(dtype="float16", major="k", swizzle="128B", mn=128, k=64, start_address=0)',
    "tile_type": 't: descgen.SmemLayout = descgen.smem_for_tile(dtype="f16", major="k", swizzle="128B", mn=128, '
                 'k=64, start_address=0)',
    "emit_format": 'descgen.emit(0x08400010, "rust")',
    "emit_what": 'descgen.emit("0x08400010")',
    "diff_descriptor": 'descgen.diff(1, 2, descriptor="instr")',
    "scan_arch": 'descgen.scan_ptx("", arch="sm_100")',
    "advance_str": 's: str = descgen.advance_smem(0, 32)',
    "taddr": 'descgen.encode_taddr("32", 0)',
    "report_codes": "c: list[str] = descgen.validate_taddr(0).codes",
}


def test_mypy_rejects_type_errors(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One bad line per function in one file: mypy must report an error on every one."""
    folder = tmp_path_factory.mktemp("bad")
    path = folder / "bad_script.py"
    lines = ["import descgen", ""] + [f"def {name}() -> None:\n    {line}\n" for name, line in BAD_LINES.items()]
    path.write_text("\n".join(lines), encoding="utf-8")
    result = _mypy(tmp_path_factory, str(path))
    assert result.returncode == 1, result.stdout + result.stderr
    text = path.read_text(encoding="utf-8").splitlines()
    flagged = {int(line.split(":")[1]) for line in result.stdout.splitlines() if ": error:" in line}
    for name, bad in BAD_LINES.items():
        lineno = text.index(f"    {bad}") + 1
        assert lineno in flagged, f"mypy accepts {name}: {bad}\n{result.stdout}"


# --------------------------------------------------------------------------------------------
# The Literal types cannot drift from the tables.


def _members(t: object) -> tuple[object, ...]:
    return get_args(t)


def test_literals_equal_the_tables() -> None:
    assert _members(types.Kind) == descgen.KINDS == tuple(descgen.KIND_LAYOUTS)
    assert set(_members(types.Kind)) == {k for name in ("idesc_dense", "idesc_mxf8f6f4", "idesc_mxf4")
                                         for k in layout(name).kinds}
    assert _members(types.ElementType) == descgen.type_names("atype") == descgen.type_names("btype")
    assert set(_members(types.ElementType)) == set(atoms().elements) == set(constraints().type_bits)
    assert _members(types.AccumType) == descgen.type_names("dtype")
    assert _members(types.ScaleType) == descgen.type_names("scale_type")
    assert _members(types.Swizzle) == descgen.SWIZZLES
    assert set(_members(types.Swizzle)) == set(atoms().swizzles)
    assert _members(types.Major) == descgen.MAJORS
    assert _members(types.LboMode) == descgen.LBO_MODES
    assert _members(types.ScaleVec) == descgen.SCALE_VECS
    c = constraints()
    assert _members(types.Arch) == (*c.targets, *c.aliases)
    assert set(_members(types.CtaGroup)) == {row.cta_group for kind in descgen.KINDS for row in shapes().for_kind(kind)}
    assert _members(types.Descriptor) == DESCRIPTORS
    assert _members(types.Format) == descgen.FORMATS
    assert _members(types.AtomOrder) == descgen.ATOM_ORDERS


def test_every_literal_is_exported() -> None:
    for name in types.__all__:
        assert getattr(descgen, name) is getattr(types, name)
        assert name in descgen.__all__


def test_py_typed_ships() -> None:
    """``py.typed`` is in the package and in its package data (so wheels carry it)."""
    assert os.path.isfile(os.path.join(REPO, "descgen", "py.typed"))
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as fh:
        project = tomllib.load(fh)
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["descgen"]
    assert any(dep.startswith("mypy") for dep in project["project"]["optional-dependencies"]["test"])
