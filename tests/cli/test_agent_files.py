"""`--agent path/to/file.py:agent` (and `serve`, `mcp`) import the modules beside the file, as
`python path/to/file.py` does (issue 29, papercuts)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from .test_cli_subprocess import Running, clean_env, hookline, served_url

EXAMPLES = Path(__file__).parents[2] / "examples"

_APP = '''
from helpers import script

from hookline import Agent
from hookline.models import FunctionModel

agent = Agent("beside", model=FunctionModel(script))
'''
_HELPERS = '''
from hookline.models import ModelResponse

def script(request):
    return ModelResponse(text="answered by the helper module")
'''


def test_run_imports_a_module_beside_the_agent_file(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text(textwrap.dedent(_APP))
    (project / "helpers.py").write_text(textwrap.dedent(_HELPERS))
    done = hookline("run", "hi", "--agent", "project/app.py:agent", env=clean_env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "answered by the helper module"


def test_a_module_missing_beside_the_file_says_where_it_was_looked_for(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(textwrap.dedent(_APP))
    done = hookline("run", "hi", "--agent", "app.py:agent", env=clean_env(), cwd=tmp_path)
    assert done.returncode == 2
    assert "No module named 'helpers'" in done.stderr
    assert f"its folder {tmp_path} is on the import path" in done.stderr


def test_serve_an_example_by_its_path(tmp_path: Path) -> None:
    args = ["serve", str(EXAMPLES / "budget_and_approval.py") + ":agent", "--port", "0", "--db", "s.db"]
    with Running(args, clean_env(), tmp_path) as running:
        served_url(running)
        running.interrupt()
        running.exit()
    assert b"No module named" not in running.stderr


@pytest.mark.anyio
async def test_mcp_serves_an_example_by_its_path(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k == "PYTHONPATH"}
    command = StdioServerParameters(command=sys.executable, cwd=tmp_path, env=env,
                                    args=["-m", "hookline", "mcp", str(EXAMPLES / "mcp_server.py") + ":agent"])
    async with Client(command) as client:
        listing = await client.list_tools()
    assert [tool.name for tool in listing.tools] == ["calculator"]
