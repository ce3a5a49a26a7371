"""The runtime policy: thresholds of every detector, hard limits, tool categories, overrides.

A `Policy` is a plain object built from a dict (`Policy.from_dict`), so the hook can rebuild it
from JSON without pydantic. Partial dicts are merged onto a profile (`default` unless the dict
names another), so a policy file only lists what it changes. Validation with clear messages for
files lives in `policy_file.py`; this module only guards against wrong shapes with `ValueError`.

Every default below, and every detector's (beside it in its module under `detectors/`), is
documented in docs/policy.md; a test keeps the two in step.
"""

import copy
import fnmatch
from typing import Any

from supervisor.engine import tools
from supervisor.engine.detectors import NAMES, REGISTRY

CATEGORIES = ("read", "mutate", "run", "poll", "other")
"""Tool categories: read-only, mutating (a success changes the workspace), test/run, polling."""

DETECTORS = NAMES
"""Every detector, in the order the engine asks them (from the registry)."""
LIMITS = (
    "consecutive_tool_calls", "iterations_per_session", "errors_per_session",
    "iterations_per_cycle", "duration_s", "tokens", "cost_usd", "actions_per_task",
    "resets_per_conversation",
)

IDLE_GAP_S = 900.0
"""The most one gap between two events of a session adds to its working time (`duration_s`):
a longer silence is someone away (a permission prompt left open, a laptop closed), not work."""

_DEFAULT: dict[str, Any] = {
    "profile": "default",
    "window": 1000,
    "lookback": 50,
    "approve_repeats": 3,
    "level_decay_steps": 2,
    "escalation_cooldown_s": 300.0,
    "idle_gap_s": IDLE_GAP_S,
    "reset_clears_session_limits": False,
    # the tool lists below come from the agents' tool vocabulary (`_from_vocabulary`)
    "ignore_arg_keys": [],
    "shell_tools": [],
    "editor_tools": [],
    "code_tools": [],
    "file_read_tools": [],
    "path_args": [],
    "file_cache_bytes": 262_144,
    "categories": {
        "read": [
            "Read", "Grep", "Glob", "LS", "NotebookRead", "WebFetch", "WebSearch", "read",
            "browse", "browse_interactive", "web_read", "browser", "open", "goto", "scroll_up",
            "scroll_down", "search_file", "search_dir", "find_file", "read_file", "list_files",
            "glob", "grep", "search", "view", "mcp__*__get*", "mcp__*__list*", "mcp__*__read*",
            "mcp__*__search*", "mcp__*__find*", "mcp__*__fetch*", "search_file_content",
            "list_directory", "read_many_files", "web_fetch", "google_web_search",
            "grep_search", "browser_get_*",
        ],
        "mutate": [
            "Edit", "MultiEdit", "Write", "NotebookEdit", "write", "edit", "create",
            "write_file", "apply_patch", "replace", "insert", "append",
        ],
        "run": [
            "run_ipython", "execute_ipython_cell", "Agent", "Task", "delegate", "mcp__*", "python",
        ],
        "poll": [],  # the vocabulary's poll tools (`_from_vocabulary`)
        "other": ["think", "finish", "submit", "TodoWrite", "TodoRead", "exit_plan_mode",
                  "ExitPlanMode", "AskUserQuestion", "save_memory", "update_plan",
                  "write_todos", "update_topic", "enter_plan_mode", "activate_skill"],
    },
    "detectors": {d.name: dict(d.defaults) for d in REGISTRY},
    "category_overrides": {
        "poll": {"exact_repeat": {"enabled": False}, "similar_calls": {"enabled": False},
                 "cycle": {"enabled": False}, "no_progress": {"enabled": False}},
        "other": {"similar_calls": {"enabled": False}},
        # searching for one name after another with no result is exploring, not a loop
        "read": {"similar_calls": {"nudge": 8, "block": 10, "escalate": 12}},
    },
    "tools": {
        # an action on a browser page (a click, typing, going back) changes state outside the
        # workspace and answers with an acknowledgement ("Clicked element 8"): the same
        # acknowledgement again says nothing about progress; the page state read after it
        # does (the cycle and repeat detectors see that read)
        "browser_*": {"exact_repeat": {"enabled": False}},
        "browser_get_*": {"exact_repeat": {"enabled": True}},
    },
    "limits": {
        "consecutive_tool_calls": {"limit": 250, "action": "pause"},
        "iterations_per_session": {"limit": 2000, "action": "pause"},
        "errors_per_session": {"limit": 300, "action": "pause"},
        "iterations_per_cycle": {"limit": 400, "action": "pause"},
        "duration_s": {"limit": 8 * 3600, "action": "pause"},
        "tokens": {"limit": 50_000_000, "action": "pause"},
        "cost_usd": {"limit": 100.0, "action": "pause"},
        "actions_per_task": {"limit": 1000, "action": "pause"},
        "resets_per_conversation": {"limit": 3, "action": "stop"},
    },
}

_SEED_STRICT: dict[str, Any] = {
    "profile": "seed-strict",
    "detectors": {
        # the seeds: 3 identical actions stop, 3 identical failures stop
        "exact_repeat": {"nudge": 2, "block": 3, "escalate": 3, "stop": 3},
        "similar_calls": {"nudge": 3, "block": 4, "escalate": 5},
        "cycle": {"max_period": 5, "min_steps": 4},
        "recurring_error": {"nudge": 2, "block": 3, "escalate": 3, "stop": 3},
    },
    "limits": {
        "consecutive_tool_calls": {"limit": 10, "action": "pause"},
        "iterations_per_session": {"limit": 100, "action": "stop"},
        "errors_per_session": {"limit": 5, "action": "stop"},
        "iterations_per_cycle": {"limit": 25, "action": "pause"},
        "duration_s": {"limit": 30 * 60, "action": "stop"},
        "resets_per_conversation": {"limit": 2, "action": "stop"},
    },
}

PROFILES: dict[str, dict[str, Any]] = {"default": {}, "seed-strict": _SEED_STRICT}


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of `base` with `over` merged in (dicts recursively, other values replaced)."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _from_vocabulary(base: dict[str, Any]) -> dict[str, Any]:
    """`base` with the tool lists the agents' tool vocabulary (`engine/tools.py`) defines: read
    when a policy is built, not at import, so a vocabulary contributed after this module was
    imported is in every policy built after it."""
    names = tools.vocabulary()
    out = copy.deepcopy(base)
    out.update({
        "ignore_arg_keys": list(names.noise_keys),
        "shell_tools": list(names.shell),
        "editor_tools": list(names.editor),
        "code_tools": list(names.code),
        "file_read_tools": list(names.read),
        "path_args": list(names.path_keys),
    })
    categories = out["categories"]
    categories["poll"] = list(dict.fromkeys(categories["poll"] + list(names.poll)))
    categories["read"] = list(dict.fromkeys(
        categories["read"] + [tool for tool in names.read if ":" not in tool]))
    categories["mutate"] = list(dict.fromkeys(
        categories["mutate"] + list(names.edit) + list(names.write)))
    return out


class Policy:
    """The effective runtime policy. Build with `from_dict` or `profile`; read, never mutate."""

    __slots__ = ("_cache", "data")

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self._cache: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        _check_shape(data)

    @classmethod
    def profile(cls, name: str = "default") -> "Policy":
        """The named built-in profile (`default` or `seed-strict`)."""
        if name not in PROFILES:
            raise ValueError(f"unknown profile {name!r} (known: {', '.join(PROFILES)})")
        return cls(merge(_from_vocabulary(_DEFAULT), PROFILES[name]))

    @classmethod
    def from_dict(cls, d: dict[str, Any], profile: str | None = None) -> "Policy":
        """`d` merged onto its profile (`profile`, else `d["profile"]`, else `default`)."""
        if not isinstance(d, dict):
            raise ValueError("a policy must be a mapping")
        name = profile or d.get("profile") or "default"
        base = cls.profile(name).data
        return cls(merge(base, {**d, "profile": name}))

    def to_dict(self) -> dict[str, Any]:
        """The complete effective policy as a plain dict (JSON- and TOML-serialisable)."""
        return copy.deepcopy(self.data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Policy) and other.data == self.data

    def __repr__(self) -> str:
        return f"Policy(profile={self.data.get('profile')!r})"

    @property
    def name(self) -> str:
        return str(self.data.get("profile", "default"))

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    @property
    def idle_gap_s(self) -> float:
        """`idle_gap_s` (a policy recorded before it existed has the default)."""
        value = self.data.get("idle_gap_s", IDLE_GAP_S)
        return float(value) if isinstance(value, int | float) and value > 0 else IDLE_GAP_S

    def limit(self, name: str) -> tuple[float | None, str]:
        """(limit or None when off, action) of one hard limit."""
        spec = self.data["limits"].get(name) or {}
        value = spec.get("limit")
        return (None if value in (None, 0) else float(value)), str(spec.get("action", "pause"))

    def params(self, tool: str, category: str) -> dict[str, dict[str, Any]]:
        """Every detector's parameters for one tool: defaults < category < per-tool overrides."""
        key = (tool, category)
        got = self._cache.get(key)
        if got is None:
            got = merge(self.data["detectors"], self.data["category_overrides"].get(category, {}))
            for pattern, over in self.data["tools"].items():
                if fnmatch.fnmatchcase(tool, pattern):
                    got = merge(got, {k: v for k, v in over.items() if k in DETECTORS})
            if len(self._cache) < 512:
                self._cache[key] = got
        return got

    def tool_category(self, tool: str) -> str | None:
        """The category a per-tool override forces, if any (the last matching pattern wins)."""
        found = None
        for pattern, over in self.data["tools"].items():
            if "category" in over and fnmatch.fnmatchcase(tool, pattern):
                found = str(over["category"])
        return found


def _check_shape(d: dict[str, Any]) -> None:
    """Cheap shape checks so a bad dict fails here with a message, not deep inside a detector."""
    for key in ("detectors", "limits", "categories", "category_overrides", "tools"):
        if not isinstance(d.get(key), dict):
            raise ValueError(f"policy.{key} must be a table")
    for name in d["detectors"]:
        if name not in DETECTORS:
            raise ValueError(f"unknown detector {name!r} (known: {', '.join(DETECTORS)})")
    for name in d["limits"]:
        if name not in LIMITS:
            raise ValueError(f"unknown limit {name!r} (known: {', '.join(LIMITS)})")
    for name in d["categories"]:
        if name not in CATEGORIES:
            raise ValueError(f"unknown category {name!r} (known: {', '.join(CATEGORIES)})")
    for key in ("window", "lookback"):
        if not isinstance(d.get(key), int) or d[key] < 1:
            raise ValueError(f"policy.{key} must be a positive integer")
