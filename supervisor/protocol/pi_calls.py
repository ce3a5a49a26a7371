"""Pi's tool calls and results as the engine reads them, for the live hook (hooks/pi) and the
importer of Pi's session files (importers/pi) alike, so a live run and its recording record a
call and its failure the same way. Stdlib only: the hook path reads it.

Pi's `edit` takes `path` and `edits: [{oldText, newText}, ...]` (or one `oldText`/`newText`
pair at the top level, which Pi folds into `edits`): a call with one replacement is recorded
under the names the engine reads for every agent (`old_string`, `new_string`), so a failed
edit is understood as Claude Code's; a call with several keeps its list, each under those
names. Pi's `bash` ends a failed command's output with `Command exited with code N`: its error
is worded `Exit code N` as for every agent.

Oh My Pi, Pi's fork, adds an `i` argument to every call: the model's stated intent, reworded
from call to call. It is recorded as the call's `description` (joined to one the call has), an
argument the engine's repeat fingerprints leave out (`ToolVocabulary.noise_keys`), as Droid's
notes about a command are: two identical calls stated differently are still identical.

Oh My Pi's `edit` may take a patch instead (`input`: `*** Begin Patch`, `*** Update File: PATH`,
hunks, Codex's format): the importer reads it (importers/pi), as Pi's live hook never meets one.

Oh My Pi also writes results for calls it never ran (`details.__synthetic`, `executed` not
true, `isError` true): the rest of a response's calls skipped because the person typed a
message meanwhile ("Skipped due to queued user message"), or aborted with the response that
made them ("Tool execution was aborted: ..."). Such a call is no failure: `not_run` names who
kept it from running, the `refused_by` of a call refused before it ran (docs/protocol.md), so
the engine counts it as an attempt without judging it, and a rule that counts repeated errors
does not take the person's typing for one error three times.
"""

import re
from typing import Any

_EXIT = re.compile(r"\n*Command exited with code (\d+)\s*$")
_EDIT_NAMES = {"oldText": "old_string", "newText": "new_string"}
INTENT = "i"
"""Oh My Pi's argument for the call's stated intent, on every call."""


def edit_args(args: dict[str, Any]) -> dict[str, Any]:
    """An `edit` call's arguments under the engine's names: one replacement flat
    (`old_string`, `new_string`), several as `edits` of those."""
    items = args.get("edits")
    edits = [dict(i) for i in items if isinstance(i, dict)] if isinstance(items, list) else []
    if isinstance(args.get("oldText"), str):  # the form Pi folds into `edits`
        edits.append({"oldText": args["oldText"], "newText": args.get("newText")})
    rest = {k: v for k, v in args.items() if k not in ("edits", "oldText", "newText")}
    renamed = [{_EDIT_NAMES.get(k, k): v for k, v in e.items()} for e in edits]
    if len(renamed) == 1:
        return {**rest, **renamed[0]}
    return {**rest, "edits": renamed} if renamed else rest


def call_args(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments under the engine's names (`edit`'s differ; Oh My Pi's intent `i` is
    the `description`)."""
    args = _intent(args)
    return edit_args(args) if tool == "edit" else args


def _intent(args: dict[str, Any]) -> dict[str, Any]:
    said = args.get(INTENT)
    if not isinstance(said, str):
        return args
    rest = {k: v for k, v in args.items() if k != INTENT}
    known = rest.get("description")
    rest["description"] = f"{known} ({said})" if isinstance(known, str) and known else said
    return rest


def not_run(details: Any) -> str | None:
    """Who kept a call from running, when its result's `details` say Oh My Pi wrote the result
    in its place (`__synthetic`, not `executed`): `user` when the person's queued message
    skipped it, else `agent` (the agent aborted it itself); None for a call that ran."""
    if not isinstance(details, dict) or details.get("__synthetic") is not True or details.get(
            "executed") is True:
        return None
    return "user" if details.get("source") == "interrupt_skipped" else "agent"


INTERRUPTED = "interrupted by the user"
"""The error of a call the person stopped while it ran (Claude Code's hook words its own so)."""


def interrupted(details: Any) -> bool:
    """Whether a result's `details` say the call started and the person stopped it (Oh My Pi:
    `__interrupted`, `execution: started`, its text "Skipped due to queued user message..."
    written after a command ran for twenty minutes): unlike a call `not_run`, it ran, and
    what it did before it was stopped is unknown."""
    return isinstance(details, dict) and details.get("__interrupted") is True


def failure(output: str) -> str:
    """The error of a failed result whose text the model read is `output`: a shell command's
    exit status (`Exit code N`, then the output's first line), else that first line."""
    found = _EXIT.search(output)
    if found:
        shown = _first_line(output[:found.start()])
        return f"Exit code {found.group(1)}" + (f"\n{shown}" if shown else "")
    return _first_line(output) or "the tool call failed"


def _first_line(text: str, limit: int = 500) -> str:
    return (text.strip().splitlines() or [""])[0][:limit]
