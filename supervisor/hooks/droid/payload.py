"""Map one Factory Droid hook payload to a `HookStep`: Claude Code's mapping, with Droid's
differences (docs/droid.md), measured with Droid 0.225.2:
- no call id in any payload: a call and its outcome pair by order, per tool and arguments
  (`HookStep.pair`; the runtime numbers the calls), as for Gemini CLI;
- tool names: `Execute` is the shell and `Create` writes a whole file; they are recorded under
  Claude Code's names (`Bash`, `Write`) so the engine's categories, its shell parsing and the
  edit guidance read them; `Read`, `Edit`, `LS`, `Grep`, `Glob` and `Task` are Claude Code's
  already (Droid's `Edit` takes `old_str`/`new_str`);
- `Execute`'s `summary`, `riskLevel` and `riskLevelReason` are the model's words about each
  command, which differ between identical commands: they are kept as one `description` (an
  argument the engine's fingerprints leave out, as for Claude Code's Bash);
- `tool_response` is the text the model read;
- Droid runs no PostToolUse for a call that failed: the failure is read from its transcript
  (`transcript`), where every result is.
"""

from typing import Any

from supervisor.hooks.claude_code import payload as claude
from supervisor.hooks.step import HookStep, stable_call_id, text_or_none

AGENT = "droid"
LABEL = "Factory Droid"
TOOL_NAMES = {"Execute": "Bash", "Create": "Write"}
"""Droid's tool name -> the name it is recorded under."""


def tool_name(name: str) -> str:
    return TOOL_NAMES.get(name, name)


NOTES = ("summary", "riskLevel", "riskLevelReason")
"""`Execute`'s arguments that only describe the command."""


def tool_args(tool: str, args: Any) -> dict[str, Any]:
    """The arguments as recorded: `Execute`'s notes folded into one `description`."""
    args = args if isinstance(args, dict) else {}
    if tool != "Execute" or not any(key in args for key in NOTES):
        return args
    summary, level, why = (args.get(key) for key in NOTES)
    risk = " ".join(str(v) for v in (level, why) if v)
    description = " ".join(p for p in (str(summary or ""), f"(risk: {risk})" if risk else "")
                           if p)
    kept = {k: v for k, v in args.items() if k not in NOTES}
    return {**kept, "description": description} if description else kept


def pair_key(tool: str, args: Any) -> str:
    """The pairing key of a call to Droid's `tool` with `args` (as the hook and the transcript
    both give them)."""
    return stable_call_id(tool_name(tool), tool_args(tool, args))


def map_payload(payload: dict[str, Any]) -> HookStep:
    """The step a payload (as returned by `read_payload`) stands for. Never raises."""
    tool = text_or_none(payload.get("tool_name"))
    if tool in TOOL_NAMES:
        payload = {**payload, "tool_name": TOOL_NAMES[tool],
                   "tool_input": tool_args(tool, payload.get("tool_input"))}
    step = claude.map_payload(payload)
    # no tool_use_id: claude's id is the stable one, the pair key
    pair = (step.call["call_id"] if step.call is not None
            else step.result["call_id"] if step.result is not None else None)
    return claude.renamed(step, AGENT, LABEL, "droid_session_id", pair=pair)
