"""`python -m hookline.mcp [module:agent] [--http ...]`: `hookline mcp` without the hookline command."""

import sys

from hookline.mcp.cli import main

sys.exit(main())
