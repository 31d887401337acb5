"""The distribution carries its licence: LICENSE matches pyproject.toml and ships in the wheel and sdist."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_license_file_is_mit_and_matches_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 descgen contributors" in text
    assert "THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND" in text


def test_license_ships_in_wheel_and_sdist(tmp_path: Path) -> None:
    """The wheel as ``pip wheel`` builds it; the sdist with the installed setuptools. The wheel
    also requires the brief's runtime libraries, bitstring among them (``pip install`` of it pulls
    them in; .ci/run installs one into a fresh venv and uses a Bits result)."""
    wheel = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True)
    assert wheel.returncode == 0, wheel.stderr
    (wheel_name,) = [p.name for p in tmp_path.glob("descgen-*.whl")]
    sdist = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
                            "print(b.build_sdist(sys.argv[1]))", str(tmp_path)], cwd=ROOT, capture_output=True,
                           text=True)
    assert sdist.returncode == 0, sdist.stderr
    sdist_name = sdist.stdout.split()[-1]
    license_text = (ROOT / "LICENSE").read_bytes()
    with zipfile.ZipFile(tmp_path / wheel_name) as whl:
        metadata = whl.read(next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        requires = {line.split(":", 1)[1].strip().split(";")[0].split(">")[0].split("=")[0].strip()
                    for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line}
        assert {"click", "rich", "bitstring"} <= requires, requires
        # the errata ship with the package (descgen explain E19), the same text as docs/
        assert whl.read("descgen/spec-errata.md") == (ROOT / "docs" / "spec-errata.md").read_bytes()
        in_wheel = [n for n in whl.namelist() if n.endswith("/LICENSE")]
        assert in_wheel and whl.read(in_wheel[0]) == license_text
    with tarfile.open(tmp_path / sdist_name) as sdist:
        member = next(m for m in sdist.getmembers() if m.name.endswith("/LICENSE"))
        assert sdist.extractfile(member).read() == license_text
