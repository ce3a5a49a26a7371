"""What the engine knows of one tool call: the `StepRecord` every detector reads.

A step is made when `check` (or `observe` of a `tool_call`) counts a call, and completed when
its `tool_result` arrives. It is a TypedDict (a plain dict at run time) so the engine's
snapshot stays a shallow walk of JSON values; detectors read it and never change it, except
through the engine.
"""

from collections.abc import Mapping
from typing import Any, TypedDict


class StepRecord(TypedDict):
    """One tool call and, once completed, its outcome (see the module docstring)."""

    index: int
    """0-based index among the session's tool calls (the order `check` saw them in)."""
    seq: int
    """`seq` of its `tool_call` event (0 when unknown); what messages cite as `#seq`."""
    call_id: str
    tool: str
    category: str
    """`read`, `mutate`, `run`, `poll` or `other` (see `categories.classify`)."""
    signature: str
    """xxhash of the tool and its canonical arguments: identical calls share it."""
    run: str
    """The run a shell call makes (`fingerprint.run_signature`): calls that differ only by the
    output filters their line ends with (`pytest`, `pytest 2>&1 | tail -20`) share it, so a
    check re-run through another filter is the same check re-run. Their outputs differ: compare
    outcomes by `signature`. For any other call (and a shell call of another category than
    `run`), its signature."""
    args: str
    """The canonical arguments (cut), for similarity and for messages."""
    head: str
    """What the call runs: the tool, and for a shell line the program of its last command
    (`bash:make`, `bash:pip install`, `bash:python reproduce.py`, `bash:python3 -c`): for
    errors, each program is a tool of its own."""
    workspace: str
    """The workspace version when the call was made (see `workspace.version`): equal for two
    calls exactly when every file the session touched had the same content."""
    batch: str | None
    """Calls issued together in one model turn share a batch (None: a batch of its own); a
    batch counts once when repeats are counted."""
    plan: list[list[list[object]]]
    """What the call would do to files (see `workspace.plan`); emptied once applied."""
    touches: list[str]
    """Keys of the files the call may write (see `workspace.file_key`)."""
    file: dict[str, object] | None
    """What the guard found on disk for a file read, before it ran (`size`, `mtime`, `digest`,
    or `status`): the file cache answers only while the file is still the one it cached."""
    views: str | None
    """The one file a read-only call shows (for noticing changes no call showed)."""
    probe: list[str]
    """Keys of the files a test or script run names as its own (`python reproduce.py`)."""
    path: str | None
    """The file the call reads or writes, when its arguments name one."""
    is_read: bool
    """A file read the file cache may answer."""
    time: float
    """When the call was checked (the `now` passed in)."""
    refused: str | None
    """Why `check` refused it (a detector's name, `skip`, `pause`, `stop`, `operator`), or None."""
    ok: bool | None
    """The outcome: True, False, or None while no result has arrived."""
    outcome: str | None
    """Hash of the success flag and the normalised output (None before the result)."""
    error: str
    """The error class of a failure ("" for a success), which selects the advice."""
    error_id: str
    """The error identity: the normalised line naming the error ("" for a success)."""
    error_source: str
    """Who named it: `output` (the program) or `harness` (the tool that ran it: a time-out,
    a command that could not start), "" for a success."""
    changed: list[str]
    """Keys of the files whose content the call changed ("*": something unknown changed)."""
    returned: list[str]
    """Keys of the files it returned to content they had before (a revert)."""
    empty: bool
    """The output says nothing (blank, "No matches found"): agreeing on it is no evidence."""
    novel: bool
    """The output had not been seen within the window before."""
    progress: bool
    """The step changed the workspace or returned something new."""
    result_seq: int
    """`seq` of its `tool_result` event (0 before it arrived)."""
    last_line: str
    """For a run or poll that succeeded: the last line of its output, normalised as the
    outcome is and cut (the recovery turn quotes the output that stayed the same)."""
    asked: bool
    """The person's latest prompt spells out this shell line and had not been answered by an
    earlier call (see `asked.py`): a run the person asked for, not one of the agent's own."""


def new_step(index: int, seq: int, call_id: str, tool: str, category: str, signature: str,
             args: str, workspace: str, path: str | None, is_read: bool, time: float,
             batch: str | None = None, head: str = "", run: str = "") -> StepRecord:
    """A step that has been checked and has no result yet."""
    return StepRecord(index=index, seq=seq, call_id=call_id, tool=tool, category=category,
                signature=signature, run=run or signature, args=args, head=head or tool,
                workspace=workspace, batch=batch, plan=[],
                touches=[], file=None, views=None, probe=[], path=path, is_read=is_read, time=time,
                refused=None, ok=None, outcome=None, error="", error_id="", error_source="",
                empty=False, novel=False, progress=False, changed=[], returned=[], result_seq=0,
                last_line="", asked=False)


def run_of(step: Mapping[str, Any]) -> str:
    """The run a step made (`StepRecord.run`); its signature for a step an engine before runs
    were told apart recorded (a session in flight across an upgrade carries on)."""
    return str(step.get("run") or step.get("signature") or "")
