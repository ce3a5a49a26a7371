"""The real agent CLIs (Claude Code, Codex, Gemini) driven against scripted fake model servers.

Test support lives beside the tests: `script` (the assistant turns a test scripts),
`model_server` (the logging HTTP server the fakes share), one fake per model API
(`anthropic_api`, ...), `clis` (the pinned npm installs), and one runner per agent
(`claude_runner`, ...). Tests here carry the `agent_cli` marker (docs/agent-cli-tests.md).
"""
