"""`root_agent`: the add-loop scenario at T = 2 on ADK, the fake model of `bench/peers/google_adk.py`.

Its model waits `SERVED_MODEL_DELAY` seconds (default 0) before each answer.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_BENCH = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(_BENCH), str(_BENCH / "peers")]  # the scenario and the in-process peer's model

from google.adk.agents import LlmAgent  # noqa: E402
from google_adk import FakeLlm  # noqa: E402
from scenario import SYSTEM_PROMPT, make_tool  # noqa: E402

root_agent = LlmAgent(
    name="calc",
    model=FakeLlm(model="fake", T=2, sleep_s=float(os.environ.get("SERVED_MODEL_DELAY", "0"))),
    instruction=SYSTEM_PROMPT,
    tools=[make_tool("sync")],
)
