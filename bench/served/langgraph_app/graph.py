"""`graph`: the add-loop scenario at T = 2 for `langgraph dev`, the fake model of `bench/peers/_langchain_model.py`.

Its model waits `SERVED_MODEL_DELAY` seconds (default 0) before each answer.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

_BENCH = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(_BENCH), str(_BENCH / "peers")]  # the scenario and the in-process peer's model

from _langchain_model import FakeChatModel  # noqa: E402
from langgraph.prebuilt import create_react_agent  # noqa: E402
from scenario import SYSTEM_PROMPT, make_tool  # noqa: E402

warnings.filterwarnings("ignore")  # create_react_agent is deprecated in favour of langchain's create_agent

graph = create_react_agent(FakeChatModel(T=2, sleep_s=float(os.environ.get("SERVED_MODEL_DELAY", "0"))),
                           tools=[make_tool("sync")], prompt=SYSTEM_PROMPT)
