"""The static site of ``descgen site DIR``: the page, the Python it runs and the Pyodide core.

What ``DIR`` holds after :func:`build_site`:

- ``index.html``, ``app.js``, ``style.css``: the page (``descgen/site/static/``, package data);
- ``site.json``: what the page loads (:attr:`Site.manifest`): where Pyodide is, the archive, the
  wheels, and what the site lacks and why;
- ``python.zip``: the pure-Python distributions descgen runs on (descgen and, following the
  requirements in its metadata, click, rich and rich's dependencies), each distribution's files
  as installed here (its ``RECORD``; an editable install's package from its folder), unpacked
  by the page into Pyodide's site-packages;
- ``wheels/``: the wheels given with ``wheels=`` (``--wheels``), for distributions with compiled
  code, which only a build for Pyodide's platform can bring (bitstring's bitarray), installed by
  the page with ``pyodide.loadPackage``;
- ``pyodide/``: the Pyodide core, copied from a local copy of the npm package ``pyodide``
  (``pyodide=``), unless the page is to load it from ``pyodide_url=``, a URL the user accepts.

Nothing is downloaded here: every file comes from this machine. A required distribution that
cannot run in the page (compiled code and no wheel given for it) is left out and listed in
:attr:`Site.missing` with why; the page says so, and the commands that import it fail there as
they would in an install without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import zipfile
from dataclasses import dataclass, replace
from importlib import metadata, util
from pathlib import Path, PurePosixPath
from typing import Any, Iterator, Sequence

from ..core.version import __version__

__all__ = [
    "PYODIDE_VERSION",
    "PYODIDE_CORE",
    "SiteError",
    "Distribution",
    "Missing",
    "Site",
    "build_site",
]

#: The version of the npm package ``pyodide`` the site is built and tested with (README, .ci/run).
PYODIDE_VERSION = "314.0.7"
#: The files of the Pyodide core the page loads (the npm package's; pyodide.asm.js in releases
#: before 0.28 stands for pyodide.asm.mjs), and package.json for its version.
PYODIDE_CORE = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json",
                "package.json")
_PYODIDE_OLD_ASM = {"pyodide.asm.mjs": "pyodide.asm.js"}
#: The page's own files (package data, ``static/``).
PAGE = ("index.html", "app.js", "style.css")
STATIC = Path(__file__).with_name("static")
ARCHIVE = "python.zip"
MANIFEST = "site.json"
#: Files of an installed distribution that are this machine's, not the distribution's.
_LOCAL_FILES = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
_NATIVE = (".so", ".pyd", ".dylib", ".dll")
#: A zip entry's time: fixed, so that one input gives one archive.
_EPOCH = (1980, 1, 1, 0, 0, 0)


class SiteError(ValueError):
    """The site cannot be built as asked: no Pyodide core where one was named, a wheel for another
    platform or Python, a Pyodide whose Python is older than descgen needs, a target folder that
    is neither empty nor a site."""


@dataclass(frozen=True, slots=True)
class Distribution:
    """A distribution in the site: ``name`` and ``version``; ``source`` is ``"archive"`` (packed
    from this machine's install) or the wheel's file name under ``wheels/``."""

    name: str
    version: str
    source: str


@dataclass(frozen=True, slots=True)
class Missing:
    """A distribution descgen requires that the site lacks, and why (``why``: compiled code with
    no wheel given, not installed, or a requirement of it missing)."""

    name: str
    why: str


@dataclass(frozen=True, slots=True)
class Site:
    """A built site: its folder, files (paths relative to it, sorted) and their total size, where
    the page loads Pyodide from (``pyodide``: ``"pyodide/"`` or the URL given) and which version
    (``pyodide_version``, ``python``; None for a URL), the distributions it carries and those it
    lacks. :attr:`manifest` is what ``site.json`` holds."""

    directory: Path
    files: tuple[str, ...]
    size: int
    pyodide: str
    pyodide_version: str | None
    python: str | None
    distributions: tuple[Distribution, ...]
    missing: tuple[Missing, ...]

    @property
    def manifest(self) -> dict[str, Any]:
        """``site.json``: the page reads it first. ``load_by_name``: with a Pyodide URL, the
        missing distributions the page asks that Pyodide's own package repository for."""
        return {
            "descgen": __version__,
            "pyodide": {"url": self.pyodide, "version": self.pyodide_version, "python": self.python},
            "archive": ARCHIVE,
            "wheels": [f"wheels/{d.source}" for d in self.distributions if d.source != "archive"],
            "distributions": [{"name": d.name, "version": d.version, "source": d.source} for d in self.distributions],
            "missing": [{"name": m.name, "why": m.why} for m in self.missing],
            "load_by_name": [m.name for m in self.missing] if self.pyodide_version is None else [],
        }


def build_site(directory: str | os.PathLike[str], *, pyodide: str | os.PathLike[str] | None = None,
               pyodide_url: str | None = None, wheels: str | os.PathLike[str] | None = None) -> Site:
    """Write the static site into ``directory`` (created; an earlier site there is replaced).

    Args:
        pyodide: a folder holding the Pyodide core (:data:`PYODIDE_CORE`), such as
            ``node_modules/pyodide`` after ``npm install pyodide@VERSION``; copied into the site.
        pyodide_url: instead, the URL the page loads the Pyodide core from (a CDN the user
            accepts, ending in ``/``): the site then holds no Pyodide, and the page also asks that
            Pyodide's package repository for the distributions the site lacks.
        wheels: a folder of wheels to install in the page too: pure ones, or built for the
            Pyodide's platform (``pyemscripten_<abi>_wasm32``) and Python. A wheel stands in for
            the installed distribution of its name (bitstring 4 with bitarray's wasm wheel for the
            bitstring 5 installed here, whose tibs is compiled code).

    Exactly one of ``pyodide`` and ``pyodide_url`` is given.

    Raises:
        SiteError: see :class:`SiteError`.
    """
    if (pyodide is None) == (pyodide_url is None):
        raise SiteError("give exactly one of a local Pyodide core (pyodide=) and a Pyodide URL (pyodide_url=)")
    out = Path(directory)
    core = _core(Path(pyodide)) if pyodide is not None else None
    url = _url(pyodide_url) if pyodide_url is not None else "pyodide/"
    lock = json.loads((core["pyodide-lock.json"]).read_text(encoding="utf-8")).get("info", {}) if core else None
    if lock is not None:
        _check_python(lock)
    given = {w.key: w for w in _wheels(Path(wheels), lock)} if wheels is not None else {}
    distributions, missing = _distributions(given)
    _prepare(out)
    for name in PAGE:
        shutil.copyfile(STATIC / name, out / name)
    _write_archive(out / ARCHIVE, [d for d in distributions if d.source == "archive"])
    for d in distributions:
        if d.source != "archive":
            (out / "wheels").mkdir(exist_ok=True)
            shutil.copyfile(given[_key(d.name)].path, out / "wheels" / d.source)
    version = python = None
    if core is not None:
        (out / "pyodide").mkdir()
        for name, path in core.items():
            shutil.copyfile(path, out / "pyodide" / name)
        version = json.loads(core["package.json"].read_text(encoding="utf-8")).get("version")
        python = str(lock.get("python")) if lock else None
    site = Site(out, (), 0, url, version, python, tuple(distributions), tuple(missing))
    (out / MANIFEST).write_text(json.dumps(site.manifest, indent=2) + "\n", encoding="utf-8")
    files = sorted(p for p in out.rglob("*") if p.is_file())
    return replace(site, files=tuple(p.relative_to(out).as_posix() for p in files),
                   size=sum(p.stat().st_size for p in files))


# --------------------------------------------------------------------------------------------
# Pyodide.


def _core(folder: Path) -> dict[str, Path]:
    """The core's files in ``folder`` by the name the page loads them by."""
    found: dict[str, Path] = {}
    for name in PYODIDE_CORE:
        path = folder / name
        if not path.is_file() and name in _PYODIDE_OLD_ASM:
            path = folder / _PYODIDE_OLD_ASM[name]
            name = _PYODIDE_OLD_ASM[name]
        if not path.is_file():
            raise SiteError(f"{folder} is not a Pyodide core: it has no {name} (the npm package's folder, e.g. "
                            f"node_modules/pyodide after: npm install pyodide@{PYODIDE_VERSION})")
        found[name] = path
    return found


def _url(url: str) -> str:
    if not re.match(r"^https?://[^/\s]+/\S*$", url):
        raise SiteError(f"{url!r} is not an http(s) URL of a folder holding pyodide.mjs")
    return url if url.endswith("/") else url + "/"


def _check_python(lock: dict[str, Any]) -> None:
    """The Pyodide's Python (``pyodide-lock.json``'s ``info.python``) is one descgen runs on."""
    requires = metadata.distribution("descgen").metadata["Requires-Python"] or ""
    need, have = _version(requires.removeprefix(">=")), _version(lock.get("python"))
    if need and have and have < need:
        raise SiteError(f"this Pyodide runs Python {lock.get('python')}; descgen needs {requires}")


def _version(text: Any) -> tuple[int, int] | None:
    """``(3, 14)`` of ``"3.14.2"`` (or of a wheel's ``"cp314"``); None for anything else."""
    found = re.match(r"\s*(?:cp(\d)(\d+)|(\d+)\.(\d+))", str(text or ""))
    if found is None:
        return None
    major, minor = (g for g in found.groups() if g is not None)
    return int(major), int(minor)


# --------------------------------------------------------------------------------------------
# The distributions: what the site carries, from where.


@dataclass(frozen=True, slots=True)
class _Wheel:
    path: Path
    name: str
    version: str
    requires: tuple[str, ...]

    @property
    def key(self) -> str:
        return _key(self.name)


def _name(requirement: str) -> str:
    """The distribution a requirement names (``pygments (>=2.13.0,<3.0.0)`` -> ``pygments``)."""
    return re.split(r"[\s(<>=!~;\[]", requirement.strip())[0]


def _key(name: str) -> str:
    """A distribution's normalized name (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _wheels(folder: Path, lock: dict[str, Any] | None) -> list[_Wheel]:
    """The wheels of ``folder``, each checked against the Pyodide's platform and Python when its
    ``pyodide-lock.json`` is at hand (a local core)."""
    if not folder.is_dir():
        raise SiteError(f"{folder} is not a folder of wheels")
    found = []
    for path in sorted(folder.glob("*.whl")):
        parts = path.name[:-4].split("-")
        if len(parts) not in (5, 6):
            raise SiteError(f"{path.name} is not a wheel's file name (NAME-VERSION-PYTHON-ABI-PLATFORM.whl)")
        python, abi, platform = parts[-3:]
        if lock is not None and platform != "any":
            _check_platform(path.name, python, abi, platform, lock)
        with zipfile.ZipFile(path) as whl:
            meta = next((n for n in whl.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)), None)
            if meta is None:
                raise SiteError(f"{path.name} has no .dist-info/METADATA")
            headers = _headers(whl.read(meta).decode("utf-8"))
        found.append(_Wheel(path, headers["Name"][0], headers["Version"][0], tuple(headers.get("Requires-Dist", ()))))
    return found


def _check_platform(name: str, python: str, abi: str, platform: str, lock: dict[str, Any]) -> None:
    """A wheel with compiled code fits the Pyodide of ``lock``: built for its platform (the ABI
    tag, ``pyemscripten_2026_0_wasm32``, or the Emscripten version of older releases) and its
    Python (``cp314``; an ``abi3`` wheel, for it or an older one)."""
    abi_version = lock.get("abi_version")
    platforms = {f"{lock.get('platform')}_wasm32", *((f"pyemscripten_{abi_version}_wasm32",
                                                      f"pyodide_{abi_version}_wasm32") if abi_version else ())}
    have, built = _version(lock.get("python")), _version(python)
    fits = have is None or built == have or (abi == "abi3" and built is not None and built <= have)
    if platform not in platforms or not fits:
        runs = f"cp{have[0]}{have[1]}" if have else "its Python"
        raise SiteError(f"{name} is built for {python}-{abi}-{platform}; this Pyodide runs {runs} on "
                        f"{' or '.join(sorted(platforms))}")


def _headers(text: str) -> dict[str, list[str]]:
    """A METADATA file's headers (each may repeat), up to its body."""
    headers: dict[str, list[str]] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        key, sep, value = line.partition(":")
        if sep and not line[:1].isspace():
            headers.setdefault(key.strip(), []).append(value.strip())
    return headers


def _distributions(given: dict[str, _Wheel]) -> tuple[list[Distribution], list[Missing]]:
    """The distributions the page needs, dependencies first, and those it cannot have.

    From descgen's requirements (``Requires-Dist`` without an ``extra`` marker; one with another
    marker is followed where it is installed here, so Windows' colorama is not): a distribution a
    wheel ``given`` (normalized name -> wheel) provides comes from it, its own requirements
    followed in turn; else this machine's install, when it has no compiled code and what it
    requires can come too; else it is missing, with why. descgen itself always comes: it imports
    what it may lack (bitstring) only where it is used."""
    done: dict[str, bool] = {}
    order: list[Distribution] = []
    missing: list[Missing] = []

    def visit(requirement: str, optional: bool = False, root: bool = False) -> bool:
        """Whether the distribution ``requirement`` names can be in the site (it is then in ``order``)."""
        name = _name(requirement)
        key = _key(name)
        if key in done:
            return done[key]
        done[key] = True  # (a cycle is no reason to leave one out)
        wheel = given.get(key)
        requires: Sequence[str]
        why = None
        if wheel is not None:
            dist, requires = Distribution(wheel.name, wheel.version, wheel.path.name), wheel.requires
        else:
            try:
                installed = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                done[key] = optional
                if not optional:
                    missing.append(Missing(name, "not installed here"))
                return optional
            dist = Distribution(installed.metadata["Name"], installed.version, "archive")
            requires = installed.requires or []
            native = next((f for f in installed.files or () if f.suffix in _NATIVE), None)
            if native is not None:
                why = f"compiled code ({native.name}), and no wheel built for Pyodide given"
        for req in requires:
            head, _, marker = req.partition(";")
            conditional = bool(marker.strip())  # (a marker other than an extra: taken where installed)
            if "extra" not in marker and not visit(head, conditional) and not conditional and why is None and not root:
                why = f"needs {_name(head)}"
        done[key] = why is None
        if why is None:
            order.append(dist)
        else:
            missing.append(Missing(dist.name, why))
        return done[key]

    visit("descgen", root=True)
    return order, missing


def _package_files(dist: metadata.Distribution) -> Iterator[tuple[str, Path]]:
    """(path in site-packages, file here) of an installed distribution: its ``RECORD``'s files
    inside site-packages, less byte code and this machine's records; for an editable install
    (``direct_url.json``), the folders of its import packages (``top_level.txt``, else its name)."""
    editable = json.loads(dist.read_text("direct_url.json") or "{}").get("dir_info", {}).get("editable", False)
    for f in dist.files or ():
        path = PurePosixPath(str(f))
        if path.parts[0] == ".." or "__pycache__" in path.parts or path.suffix in (".pyc", ".pth"):
            continue
        if path.parent.name.endswith(".dist-info") and path.name in _LOCAL_FILES:
            continue
        if editable and not path.parts[0].endswith(".dist-info"):
            continue
        yield str(path), Path(str(dist.locate_file(f)))
    if editable:
        names = (dist.read_text("top_level.txt") or _key(dist.metadata["Name"]).replace("-", "_")).split()
        for name in names:
            spec = util.find_spec(name)
            if spec is None or not spec.submodule_search_locations:
                raise SiteError(f"the editable install of {dist.metadata['Name']} has no package {name}")
            root = Path(list(spec.submodule_search_locations)[0])
            for folder, subfolders, files in os.walk(root, followlinks=True):
                subfolders[:] = sorted(d for d in subfolders if d != "__pycache__" and not d.startswith("."))
                for file in sorted(files):
                    if not file.endswith((".pyc", ".pyo")) and not file.startswith("."):
                        full = Path(folder) / file
                        yield (PurePosixPath(name) / full.relative_to(root).as_posix()).as_posix(), full


def _write_archive(path: Path, distributions: list[Distribution]) -> None:
    """The archive of the distributions' files, entries sorted, times fixed."""
    entries: dict[str, Path] = {}
    for d in distributions:
        entries.update(_package_files(metadata.distribution(d.name)))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, _EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, entries[name].read_bytes())


def _prepare(out: Path) -> None:
    """An empty ``out``, or one holding an earlier site (its files removed): nothing else is
    overwritten."""
    if out.exists() and not out.is_dir():
        raise SiteError(f"{out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not (out / MANIFEST).is_file():
            raise SiteError(f"{out} is not empty and holds no site ({MANIFEST}); give an empty or new folder")
        for name in (*PAGE, ARCHIVE, MANIFEST):
            (out / name).unlink(missing_ok=True)
        for folder in ("pyodide", "wheels"):
            shutil.rmtree(out / folder, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
