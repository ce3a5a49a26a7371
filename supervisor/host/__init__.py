"""Agents the supervisor starts itself (`supervisor run`): each in a tmux session of the
supervisor's own tmux server (its own socket: the user's tmux is never touched), optionally in a
git worktree of its own, with the hooks wired for that run only.

- `tmux`: the supervisor's tmux server of a store root (start, capture, send-keys, attach, kill);
- `records`: what is remembered of each run (`<root>/host/<session>.json`);
- `agents`: how each hook target's CLI is started with the hooks for one run;
- `pane`: the process in the agent's pane, which starts the agent and cleans up after it;
- `launch`: `start_run`, from the command line to a running, supervised agent;
- `control`: screen, send, attach and stop of a run;
- `worktree`: the git worktree of a run (create, list, diff, merge, discard).

See docs/run.md.
"""


class HostError(Exception):
    """Bad input or a missing tool: one line for the operator; nothing was left behind."""
