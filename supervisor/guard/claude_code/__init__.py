"""Claude Code integration: payload mapping, the hook handler and the settings installer.

Nothing is imported here on purpose: `supervisor hook claude-code` starts once per tool call and
loads only the modules it needs (see `docs/claude-code.md`).
"""
