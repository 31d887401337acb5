"""``descgen site DIR``: the static site's files, where Pyodide comes from, the archive of the
distributions, the wheels, and the entry the page calls (``descgen.cli.site.run_piped``) against
the console script piped. The page itself runs in a browser in tests/test_browser.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from descgen.cli.site import command_options, run_piped
from descgen.site import build
from test_cli import run
from test_docs import README, readme_cli_commands

ROOT = Path(__file__).resolve().parents[1]
#: The console script beside this interpreter (python -m descgen where there is none).
DESCGEN = [str(Path(sys.executable).with_name("descgen"))] if Path(sys.executable).with_name("descgen").exists() \
    else [sys.executable, "-m", "descgen"]
#: What decides the piped output besides the arguments: left out of the reference's environment.
_TERMINAL_ENV = ("COLUMNS", "LINES", "TERM", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE",
                 "DESCGEN_PAGER", "PAGER", "PYTHONIOENCODING")


def piped(argv: list[str], stdin: str = "", env: dict[str, str] | None = None) -> tuple[str, str, int]:
    """``descgen ARGV`` run by a shell with stdout and stderr piped: (stdout, stderr, exit status)."""
    environ = {k: v for k, v in os.environ.items() if k not in _TERMINAL_ENV} | (env or {})
    proc = subprocess.run([*DESCGEN, *argv], input=stdin.encode(), capture_output=True, env=environ, timeout=120)
    return proc.stdout.decode(), proc.stderr.decode(), proc.returncode


def fake_core(folder: Path, python: str = "3.14.2", abi: str = "2026_0") -> Path:
    """A folder shaped as the npm package ``pyodide``: the core's files (placeholders), its lock
    file's platform and Python, its package.json's version."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in build.PYODIDE_CORE:
        (folder / name).write_text(f"placeholder {name}\n")
    (folder / "pyodide-lock.json").write_text(json.dumps(
        {"info": {"abi_version": abi, "arch": "wasm32", "platform": "emscripten_5_0_3", "python": python},
         "packages": {}}))
    (folder / "package.json").write_text(json.dumps({"name": "pyodide", "version": build.PYODIDE_VERSION}))
    (folder / "pyodide.js.map").write_text("not copied\n")
    return folder


def fake_wheel(folder: Path, name: str, version: str, tags: str, requires: tuple[str, ...] = ()) -> Path:
    """A wheel file with a METADATA (Name, Version, Requires-Dist) and one module."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}-{tags}.whl"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n"
                                                                                 for r in requires)
    with zipfile.ZipFile(path, "w") as whl:
        whl.writestr(f"{name}-{version}.dist-info/METADATA", meta + "\nbody\n")
        whl.writestr(f"{name}/__init__.py", "")
    return path


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fake_core(tmp_path_factory.mktemp("npm") / "node_modules" / "pyodide")


@pytest.fixture(scope="module")
def site(core: Path, tmp_path_factory: pytest.TempPathFactory) -> build.Site:
    return build.build_site(tmp_path_factory.mktemp("site") / "out", pyodide=core)


# --------------------------------------------------------------------------------------------
# Where Pyodide comes from: an option, never a silent download.


def test_site_without_a_pyodide_names_both_options_and_the_npm_command(tmp_path: Path) -> None:
    result = run("site", str(tmp_path / "out"), code=2)
    assert "--pyodide DIR" in result.stderr and "--pyodide-url URL" in result.stderr
    assert f"npm install pyodide@{build.PYODIDE_VERSION}" in result.stderr
    assert not (tmp_path / "out").exists()


def test_site_takes_one_source_of_pyodide(tmp_path: Path, core: Path) -> None:
    result = run("site", str(tmp_path), "--pyodide", str(core), "--pyodide-url", "https://example.org/p/", code=2)
    assert "mutually exclusive" in result.stderr


def test_a_folder_without_the_core_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = run("site", str(tmp_path / "out"), "--pyodide", str(tmp_path / "empty"), code=2)
    assert "is not a Pyodide core: it has no pyodide.mjs" in result.stderr
    assert f"npm install pyodide@{build.PYODIDE_VERSION}" in result.stderr


def test_a_pyodide_older_than_descgen_needs_is_refused(tmp_path: Path) -> None:
    old = fake_core(tmp_path / "old", python="3.10.2")
    with pytest.raises(build.SiteError, match=r"runs Python 3\.10\.2; descgen needs >=3\.11"):
        build.build_site(tmp_path / "out", pyodide=old)


def test_the_local_core_is_copied_and_nothing_else_of_the_package(site: build.Site, core: Path) -> None:
    for name in build.PYODIDE_CORE:
        assert (site.directory / "pyodide" / name).read_bytes() == (core / name).read_bytes()
    assert not (site.directory / "pyodide" / "pyodide.js.map").exists()
    assert site.pyodide == "pyodide/" and site.pyodide_version == build.PYODIDE_VERSION and site.python == "3.14.2"


def test_a_pyodide_url_is_loaded_from_there_and_asked_for_what_the_site_lacks(tmp_path: Path) -> None:
    built = build.build_site(tmp_path / "out", pyodide_url="https://cdn.example.org/pyodide/v1/full")
    manifest = json.loads((tmp_path / "out" / "site.json").read_text())
    assert manifest["pyodide"] == {"url": "https://cdn.example.org/pyodide/v1/full/", "version": None, "python": None}
    assert manifest["load_by_name"] == [m.name for m in built.missing]
    assert not (tmp_path / "out" / "pyodide").exists()
    with pytest.raises(build.SiteError, match="not an http"):
        build.build_site(tmp_path / "other", pyodide_url="file:///etc/")


# --------------------------------------------------------------------------------------------
# The site's files.


def test_the_site_holds_the_page_the_archive_and_the_manifest(site: build.Site) -> None:
    assert {"index.html", "app.js", "style.css", "site.json", "python.zip"} <= set(site.files)
    assert site.size == sum((site.directory / f).stat().st_size for f in site.files)
    for name in build.PAGE:
        assert (site.directory / name).read_bytes() == (build.STATIC / name).read_bytes()
    manifest = json.loads((site.directory / "site.json").read_text())
    assert manifest == site.manifest
    assert manifest["descgen"] == __import__("descgen").__version__
    names = [d["name"].lower() for d in manifest["distributions"]]
    assert {"descgen", "click", "rich", "markdown-it-py", "mdurl", "pygments"} <= set(names)
    assert names.index("click") < names.index("descgen") and names.index("mdurl") < names.index("markdown-it-py")


def test_the_page_loads_nothing_from_elsewhere(site: build.Site) -> None:
    """The page's own files name no http(s) address: what it loads is the site's (or the Pyodide
    URL the builder was given, read from site.json). The browser test checks what it fetched."""
    for name in build.PAGE:
        text = (site.directory / name).read_text(encoding="utf-8")
        assert not re.findall(r"https?://", text), name
        assert "@import" not in text and "url(" not in text.replace("new URL(", ""), name


def test_the_archive_holds_the_distributions_as_installed(site: build.Site) -> None:
    with zipfile.ZipFile(site.directory / "python.zip") as archive:
        names = archive.namelist()
        for path in ("descgen/__init__.py", "descgen/cli/app.py", "descgen/cli/site.py",
                     "descgen/tables/idesc_dense.toml", "descgen/spec-errata.md",
                     "descgen/backends/cpp_header_eval.hpp", "click/core.py", "rich/console.py", "markdown_it/main.py",
                     "mdurl/__init__.py", "pygments/lexer.py"):
            assert path in names, path
        assert archive.read("descgen/tables/idesc_dense.toml") == (ROOT / "tables" / "idesc_dense.toml").read_bytes()
        assert any(n.startswith("click-") and n.endswith(".dist-info/METADATA") for n in names)
        assert not [n for n in names if "__pycache__" in n or n.endswith((".pyc", ".so", ".pth"))]
        assert not [n for n in names if n.endswith(("/RECORD", "/direct_url.json", "/INSTALLER"))]
        assert not [n for n in names if n.startswith(("/", "..")) or "/../" in n]
        assert {i.date_time for i in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_one_input_gives_one_site(site: build.Site, core: Path, tmp_path: Path) -> None:
    again = build.build_site(tmp_path / "again", pyodide=core)
    assert again.files == site.files
    for name in site.files:
        assert (tmp_path / "again" / name).read_bytes() == (site.directory / name).read_bytes(), name


def test_a_site_is_rebuilt_in_place_but_no_other_folder_is_overwritten(core: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build.build_site(out, pyodide=core)
    (out / "wheels").mkdir()
    (out / "wheels" / "stale.whl").write_text("old")
    build.build_site(out, pyodide=core)
    assert not (out / "wheels").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(build.SiteError, match="not empty and holds no site"):
        build.build_site(tmp_path / "mine", pyodide=core)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_what_the_site_lacks_is_said_with_why(site: build.Site) -> None:
    """A distribution with compiled code (bitstring 5's tibs here) cannot come from this machine;
    it is listed with why, and so is each one that needs it; descgen itself always comes."""
    for m in site.missing:
        assert m.why.startswith(("compiled code (", "needs ", "not installed")), m
    assert "descgen" not in {m.name for m in site.missing}
    shipped = {d.name.lower() for d in site.distributions}
    assert not shipped & {m.name.lower() for m in site.missing}


# --------------------------------------------------------------------------------------------
# Wheels built for Pyodide.


def test_wheels_stand_in_for_what_has_compiled_code(core: Path, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    fake_wheel(wheels, "bitstring", "4.3.1", "py3-none-any", ("bitarray<4.0,>=3.0.0",))
    fake_wheel(wheels, "bitarray", "3.12.3", "cp314-cp314-pyemscripten_2026_0_wasm32")
    built = build.build_site(tmp_path / "out", pyodide=core, wheels=wheels)
    assert not [m for m in built.missing if m.name.lower() in ("bitstring", "bitarray", "tibs")]
    manifest = json.loads((tmp_path / "out" / "site.json").read_text())
    assert manifest["wheels"] == ["wheels/bitarray-3.12.3-cp314-cp314-pyemscripten_2026_0_wasm32.whl",
                                  "wheels/bitstring-4.3.1-py3-none-any.whl"]
    for w in manifest["wheels"]:
        assert (tmp_path / "out" / w).read_bytes() == (wheels / Path(w).name).read_bytes()
    with zipfile.ZipFile(tmp_path / "out" / "python.zip") as archive:
        assert not [n for n in archive.namelist() if n.startswith(("bitstring/", "tibs/"))]


@pytest.mark.parametrize("tags, why", [
    ("cp313-cp313-pyemscripten_2026_0_wasm32", "this Pyodide runs cp314"),
    ("cp314-cp314-pyemscripten_2025_0_wasm32", "pyemscripten_2026_0_wasm32"),
    ("cp314-cp314-manylinux_2_17_x86_64", "built for cp314-cp314-manylinux_2_17_x86_64"),
])
def test_a_wheel_for_another_pyodide_is_refused(core: Path, tmp_path: Path, tags: str, why: str) -> None:
    fake_wheel(tmp_path / "wheels", "bitarray", "3.12.3", tags)
    result = run("site", str(tmp_path / "out"), "--pyodide", str(core), "--wheels", str(tmp_path / "wheels"), code=2)
    assert why in result.stderr


def test_an_abi3_wheel_of_an_older_python_fits(core: Path, tmp_path: Path) -> None:
    fake_wheel(tmp_path / "wheels", "bitarray", "3.12.3", "cp312-abi3-pyemscripten_2026_0_wasm32")
    build.build_site(tmp_path / "out", pyodide=core, wheels=tmp_path / "wheels")


# --------------------------------------------------------------------------------------------
# The command.


def test_site_command_prints_where_and_how_to_serve(core: Path, tmp_path: Path) -> None:
    result = run("site", str(tmp_path / "out"), "--pyodide", str(core))
    assert result.stdout.startswith(f"{tmp_path / 'out'}: ") and f"python -m http.server -d {tmp_path / 'out'}" \
        in result.stdout
    assert f"Pyodide {build.PYODIDE_VERSION}" in result.stdout
    lacks = build.build_site(tmp_path / "again", pyodide=core).missing
    assert ("note: not in the site: " in result.stderr) == bool(lacks)


def test_the_pyodide_version_and_wheels_are_the_ones_ci_and_the_readme_install() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    section = README[README.index("### In the browser"):]
    section = section[:section.index("\n## ")]
    for text in (ci, section):
        assert f"pyodide@{build.PYODIDE_VERSION}" in text
    pins = r"--platform \S+ --python-version \S+|'(?:bitstring|bitarray)==[^']+'"
    assert re.findall(pins, ci) == re.findall(pins, section) != []


# --------------------------------------------------------------------------------------------
# The page's entry: the command line, piped.

def outside_the_page(argv: list[str]) -> str | None:
    """Why a command line cannot run in the page as it does here, or None: it reads or writes a
    file of this machine (a path among its arguments, a file name's suffix, a file to write), or
    runs worker processes (--jobs), which Pyodide has not."""
    writes = ("-o", "--output", "--svg")
    if any(os.sep in a or re.search(r"\.(ptx|jsonl|json|hpp|h|svg|txt|cu)$", a) for a in argv) \
            or any(a in writes and argv[i + 1:i + 2] != ["-"] for i, a in enumerate(argv)):
        return "a file"
    if {"-j", "--jobs"} & set(argv):
        return "worker processes"
    return None


#: The README's examples that need no file (scan, batch, instrument read theirs).
README_COMMANDS = [c for c in readme_cli_commands() if outside_the_page(c) is None]


@pytest.mark.parametrize("argv", README_COMMANDS, ids=" ".join)
def test_run_piped_is_the_console_script_piped(argv: list[str]) -> None:
    assert run_piped(argv) == piped(argv)


@pytest.mark.parametrize("argv, stdin, env", [
    (["decode", "-", "--short"], "$1 = 0x08400010\n4000404000010040, 0x0840001000000000\n", {}),
    (["scan", "-"], (ROOT / "tests" / "ptx" / "bad_descriptors.ptx").read_text(), {}),
    (["idesc", "--kind", "f16", "--m", "256", "--n", "128", "--cta-group", "1", "--table"], "", {"COLUMNS": "100"}),
    (["idesc", "--kind", "f16", "--m", "100", "--n", "256"], "", {}),
    (["decode", "zz"], "", {}),
    (["nope"], "", {}),
])
def test_run_piped_reads_stdin_and_the_environment(argv: list[str], stdin: str, env: dict[str, str]) -> None:
    before = dict(os.environ)
    assert run_piped(argv, stdin, env) == piped(argv, stdin, env)
    assert dict(os.environ) == before


def test_command_options_describe_a_form() -> None:
    options = {o["name"]: o for o in command_options("idesc")}
    assert options["kind"]["flags"] == ["--kind"] and options["kind"]["required"]
    assert "f16" in options["kind"]["choices"] and "e4m3" in options["atype"]["choices"]
    assert options["negate_a"]["flag"] and options["ctx_ws"]["flags"] == ["--ws", "--no-ws"]
    assert "sm_100a" in {o["name"]: o for o in command_options("smem")}["ctx_arch"]["choices"]
    assert options["m"]["choices"] == [] and options["m"]["metavar"] == "M"
