"""The event protocol, version 1: the contract between guard, dashboard and offline tools.

Submodules, by weight:

- `supervisor.protocol.names`: event types, actions, levels as plain constants (stdlib only);
- `supervisor.protocol.lines`: encode one event dict into one line of bytes (stdlib only), used
  by the writers and the hook, which must stay free of pydantic for start-up speed;
- `supervisor.protocol.bad_line`: `BadLine` and `LineKind` (stdlib only), which the store's
  interfaces and the dashboard's first screen name without loading the parser;
- `supervisor.protocol.charge`: which model answers a tool call is charged (stdlib only), the
  one rule of every figure of what a loop cost;
- `supervisor.protocol.models`: pydantic v2 models of every event;
- `supervisor.protocol.codec`: parse a line of bytes into a model or a `BadLine`, and dump back.

This package's `__init__` imports nothing so the light modules stay light.
"""
