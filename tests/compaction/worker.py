"""Sends prompts to the compaction tests' agent in a process of its own (test_processes.py).

    python worker.py BACKEND TARGET NOTES_FOLDER PROMPT...

BACKEND is sqlite (TARGET a file) or postgres (TARGET a URL); the model's requests and the
summariser's calls are noted in files of NOTES_FOLDER.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compaction.agents import Notes, chatty
from support.backends import open_store


async def main(backend: str, target: str, folder: str, prompts: list[str]) -> None:
    async with open_store(backend, target) as store:
        agent = chatty(store, Notes(Path(folder)))
        for prompt in prompts:
            await agent.prompt(prompt).session("s")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]))
