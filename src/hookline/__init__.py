"""hookline: an agent loop whose every step is an event in a durable session log.

The public names (docs/contract.md) are importable from here:

```python
from hookline import Agent, tool, hook, State, HookPoint, RunResult
```
"""

from hookline._version import __version__ as __version__
from hookline.agent import Agent, PromptRequest
from hookline.context import RunContext
from hookline.errors import (
    ConfigError,
    HookError,
    HooklineError,
    MaxTurnsExceeded,
    ModelError,
    SessionBusy,
    SessionNotFound,
    ToolError,
)
from hookline.events import Event, StatusOptions
from hookline.hook_points import HookPoint
from hookline.hooks import Hook, hook
from hookline.messages import (
    DocumentPart,
    FilePart,
    ImagePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from hookline.models import ModelSettings
from hookline.result import Interruption, RunResult
from hookline.state import State
from hookline.tools import Tool, tool
from hookline.tracing import instrument, uninstrument
from hookline.usage import Prices, Usage

__all__ = [
    "Agent",
    "ConfigError",
    "DocumentPart",
    "Event",
    "FilePart",
    "Hook",
    "HookError",
    "HookPoint",
    "HooklineError",
    "ImagePart",
    "Interruption",
    "MaxTurnsExceeded",
    "Message",
    "ModelError",
    "ModelSettings",
    "Prices",
    "PromptRequest",
    "ReasoningPart",
    "RunContext",
    "RunResult",
    "SessionBusy",
    "SessionNotFound",
    "State",
    "StatusOptions",
    "TextPart",
    "Tool",
    "ToolCallPart",
    "ToolError",
    "ToolResultPart",
    "Usage",
    "hook",
    "instrument",
    "tool",
    "uninstrument",
]
