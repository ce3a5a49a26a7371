"""The hook platform: supervising agent CLIs we do not own through their command hooks.

One package for every agent CLI (docs/hooks.md):

- `client`: the command the agent runs for every hook event (stdlib only: it starts once per
  tool call); it hands the payload to the resident `server` of its store root, or handles it
  in-process (`local`) when there is none;
- `server`: one resident server per root and environment, dispatching on the target;
- `runtime`: what every target shares: opening the session's guard (with recovery), the session
  policy, the fail-safe, holding a call for the operator within the agent's own hook timeout
  (`budget`), resume chaining, the supervisor's own errors;
- `targets`: the registry, one line per agent CLI; a target (`target.Target`, e.g.
  `claude_code`) reads a payload into a `step.HookStep`, writes answers in the agent's shape and
  knows where the agent keeps its hook settings (`settings_file`).

Nothing is imported here on purpose: the client must stay light.
"""
