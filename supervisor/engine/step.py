"""What the engine knows of one tool call: the `Step` every detector reads.

A step is made when `check` (or `observe` of a `tool_call`) counts a call, and completed when
its `tool_result` arrives. It is a TypedDict (a plain dict at run time) so the engine's
snapshot stays a shallow walk of JSON values; detectors read it and never change it, except
through the engine.
"""

from typing import TypedDict


class Step(TypedDict):
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
    args: str
    """The canonical arguments (cut), for similarity and for messages."""
    workspace: int
    """The workspace version when the call was made (see `State.ws`)."""
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
    """The error class of a failure ("" for a success)."""
    empty: bool
    """The output says nothing (blank, "No matches found"): agreeing on it is no evidence."""
    novel: bool
    """The output had not been seen within the window before."""
    progress: bool
    """The step changed the workspace or returned something new."""
    result_seq: int
    """`seq` of its `tool_result` event (0 before it arrived)."""


def new_step(index: int, seq: int, call_id: str, tool: str, category: str, signature: str,
             args: str, workspace: int, path: str | None, is_read: bool, time: float) -> Step:
    """A step that has been checked and has no result yet."""
    return Step(index=index, seq=seq, call_id=call_id, tool=tool, category=category,
                signature=signature, args=args, workspace=workspace, path=path,
                is_read=is_read, time=time, refused=None, ok=None, outcome=None, error="",
                empty=False, novel=False, progress=False, result_seq=0)
