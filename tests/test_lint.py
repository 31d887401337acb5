"""ruff over the repository (pyproject's [tool.ruff]): an undefined name in a command's body, an
unused import or a dead variable fails here, not only in the test that happens to reach it; so
does a line over 120 characters (E501; pyproject lists the files not wrapped yet)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_ruff_finds_nothing() -> None:
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed: pip install -e '.[test]' installs it")
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "descgen", "cli", "tests", "bench"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_sees_an_undefined_name(tmp_path) -> None:
    """The check itself: a planted undefined name is reported with the project's configuration."""
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed: pip install -e '.[test]' installs it")
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    return undefined_name\n")
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
                             os.path.join(REPO, "pyproject.toml"), str(bad)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1 and "F821" in result.stdout
