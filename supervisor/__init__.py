"""Agent Supervisor: keeps AI coding agents out of loops and puts an operator in charge.

This module stays tiny on purpose: the Claude Code hook imports it once per tool call.
"""

__version__ = "0.1.0"
