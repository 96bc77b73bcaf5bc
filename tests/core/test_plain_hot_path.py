"""The hot path's plain twins (`hookline._hot_path`, `HOOKLINE_PLAIN_HOT_PATH=1`) keep the core working (issue 29).

The switch is read once, at import, so the core subset runs in a pytest of its own with it on:
the loop, the prompt view, messages and their views, the codec and the store contract.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hookline._hot_path import COUNTS_REFERENCES, PLAIN, PLAIN_ENV
from hookline.messages import Message, ToolResultPart

TESTS = Path(__file__).resolve().parents[1]
CORE_SUBSET = [
    "core/test_plain_hot_path.py", "core/test_loop.py", "core/test_prompt_view_runs.py",
    "core/test_prompt_view_properties.py", "core/test_message_views.py", "core/test_shared_fields_sets.py",
    "core/test_parity.py", "codec", "sessions/test_store_contract.py",
]


@pytest.mark.skipif(not PLAIN, reason=f"runs in the pytest below, with {PLAIN_ENV}=1")
def test_every_trick_is_off() -> None:
    assert not COUNTS_REFERENCES, "PromptView copies the conversation for every call"
    one, two = ToolResultPart.from_valid("c1", "3", name="add"), ToolResultPart.from_valid("c2", "4", name="add")
    assert one.__pydantic_fields_set__ is not two.__pydantic_fields_set__
    assert one == ToolResultPart(call_id="c1", content="3", name="add")
    message = Message.from_valid_parts("tool", [one])
    assert message == Message(role="tool", parts=[ToolResultPart(call_id="c1", content="3", name="add")])
    assert message.model_fields_set == {"role", "parts"}


@pytest.mark.slow
@pytest.mark.skipif(PLAIN, reason="this is the pytest that runs the subset")
def test_the_core_passes_with_the_plain_twins() -> None:
    env = {**os.environ, PLAIN_ENV: "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *CORE_SUBSET],
        cwd=TESTS, env=env, capture_output=True, text=True, timeout=900, check=False,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "test_every_trick_is_off" not in done.stdout, "the switch was not on in that pytest"
    print(done.stdout.splitlines()[-1])  # how many tests ran that way, for the record (-s)
