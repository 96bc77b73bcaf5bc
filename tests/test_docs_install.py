"""`scripts/docs` installs the docs tools only: not the offline model, whose C++ build takes minutes (issue 29)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_docs_install_builds_no_offline_model(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, clone / name)
    for folder in ("scripts", "src"):
        shutil.copytree(ROOT / folder, clone / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    done = subprocess.run(["scripts/install", "docs"], cwd=clone, capture_output=True, text=True, timeout=900,
                          check=False)
    assert done.returncode == 0, done.stderr
    python = str(clone / ".venv" / "bin" / "python")
    tools = subprocess.run([python, "-c", "import mkdocs, mkdocstrings, hookline"], capture_output=True, text=True,
                           check=False)
    assert tools.returncode == 0, tools.stderr
    local = subprocess.run([python, "-c", "import llama_cpp"], capture_output=True, text=True, check=False)
    assert local.returncode != 0, "llama-cpp-python was installed (and built) for the docs"
