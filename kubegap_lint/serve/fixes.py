"""Where fixes plug in: the one place the servers ask for them.

The autofix (issue 32) does not exist yet. When it does, `available()` returns True and
`suggest(...)` returns, for a file's text and its findings, the edits that fix them (a unified
diff for MCP's `suggest_fixes`, text edits for the language server's quick fixes and fix-all).
`mcp.py` registers the `suggest_fixes` tool and `lsp.py` offers code actions only when
`available()` is true; nothing else in the servers changes. Fixes are proposed, never written
by a server.
"""

from __future__ import annotations

from typing import Any


def available() -> bool:
    return False


def suggest(path: str, text: str, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The edits for `findings` (the CLI's JSON finding objects) in `text`: none until issue 32."""
    raise NotImplementedError("the autofix is not built yet (issue 32)")
