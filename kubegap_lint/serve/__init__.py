"""Servers that meet users in their tools: MCP for coding agents (`mcp.py`), the language server
for editors (`lsp.py`), and what both offer (`workspace.py`, `runs.py`, `rules.py`, `fixes.py`)."""
