"""The adapters import from `hookline.models`, lazily: importing hookline loads no SDK.

Each check runs in a fresh interpreter, since this one has long imported every SDK.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import hookline.models
from hookline.models.anthropic import AnthropicModel
from hookline.models.local import LocalModel
from hookline.models.openai import OpenAIModel


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, check=False
    )


def test_importing_hookline_loads_no_provider_sdk_or_store_backend() -> None:
    done = run_python(
        """
        import sys
        import hookline, hookline.models
        heavy = ("openai", "anthropic", "llama_cpp", "aiosqlite", "asyncpg")
        print(sorted(name for name in heavy if name in sys.modules))
        """
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_each_adapter_imports_from_hookline_models_as_its_class() -> None:
    done = run_python(
        """
        import sys
        from hookline.models import AnthropicModel, LocalModel, OpenAIModel
        from hookline.models import anthropic, local, openai
        assert OpenAIModel is openai.OpenAIModel and AnthropicModel is anthropic.AnthropicModel
        assert LocalModel is local.LocalModel
        print("llama_cpp" in sys.modules)
        """
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"  # LocalModel loads llama.cpp only when it runs


def test_the_adapters_are_public_names() -> None:
    assert {"OpenAIModel", "AnthropicModel", "LocalModel"} <= set(hookline.models.__all__)
    assert {"OpenAIModel", "AnthropicModel", "LocalModel"} <= set(dir(hookline.models))
    assert (hookline.models.OpenAIModel, hookline.models.AnthropicModel) == (OpenAIModel, AnthropicModel)
    assert hookline.models.LocalModel is LocalModel
    with pytest.raises(AttributeError, match="has no attribute 'GeminiModel'"):
        _ = hookline.models.GeminiModel  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("sdk", "statement", "hint"),
    [
        ("anthropic", "from hookline.models import AnthropicModel", "pip install 'hookline[anthropic]'"),
        ("anthropic", "from hookline.models.anthropic import AnthropicModel", "pip install 'hookline[anthropic]'"),
        ("openai", "from hookline.models import OpenAIModel", "pip install openai"),
    ],
)
def test_a_missing_sdk_is_an_import_error_that_says_what_to_install(sdk: str, statement: str, hint: str) -> None:
    # `None` in sys.modules makes `import sdk` fail as if the package were not installed.
    done = run_python(
        f"""
        import sys
        sys.modules[{sdk!r}] = None
        import hookline, hookline.models
        try:
            {statement}
        except ImportError as exc:
            print(exc)
        """
    )

    assert done.returncode == 0, done.stderr
    assert hint in done.stdout
    assert f"needs the {sdk!r} package" in done.stdout
