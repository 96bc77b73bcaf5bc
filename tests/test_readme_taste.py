"""README's "A taste", run against the fake OpenAI server: what `watch()` prints is readable (issue 29, papercuts).

Its block needs a provider, so the snippet runner skips it; here the provider is the fake.
It printed `message ` with no text for every tool call and tool result.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hookline.testing import FakeOpenAIServer
from test_docs_snippets import ROOT, blocks, offline_env


def test_the_taste_prints_status_lines_and_the_answer(tmp_path: Path) -> None:
    (taste,) = [b for b in blocks(ROOT / "README.md") if b.language == "python" and "async def watch" in b.code]
    script = tmp_path / "taste.py"
    script.write_text(taste.code, encoding="utf-8")
    with FakeOpenAIServer() as server:
        for a, b, total in ((2, 3, "5"), (4, 5, "9")):
            server.enqueue_tool_calls([("add", {"a": a, "b": b})])
            server.enqueue_text(f"It is {total}.")
        env = offline_env() | {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test"}
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120, check=False)
        server.assert_complete()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("It is 5. Usage(")
    assert "[tool] running add(a=4, b=5)" in lines
    assert "[tool] add returned 9" in lines
    assert "user: and 4+5?" in lines
    assert lines[-2:] == ["assistant: It is 9.", "[agent] run completed"]
    assert not [line for line in lines if line.split(" ")[0] in ("message", "status", "delta", "message:")]
