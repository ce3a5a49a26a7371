"""Handle one Claude Code hook invocation: payload in, the guard's answer out.

Every invocation is its own process: it opens the session's guard (which takes the session lock,
loads the saved state and engine snapshot), applies one step, saves and answers. The cost stays
flat as the session grows because nothing re-reads the event log. What each hook event does is
in docs/claude-code.md; the fail-safe wrapper around this is `supervisor.cli.hook_cmd`.
"""

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

from supervisor.guard.claude_code import respond
from supervisor.guard.claude_code.payload import Step, child_session_id, map_payload, read_payload
from supervisor.guard.claude_code.policy import (
    ANSWER_MARGIN_S,
    guard_table,
    hook_settings,
    load_policy,
)
from supervisor.guard.state import STATE_FILE
from supervisor.store.paths import (
    ensure_session_dir,
    sanitize_session_id,
    session_dir,
    validate_session_id,
)
from supervisor.store.writer import LineWriter

ERROR_EVENT = "supervisor_error"
"""Event type (protocol extension) written when the supervisor itself failed in this session."""
SUBAGENT_EVENT = "subagent_start"
"""Event type (protocol extension) written in a parent session when a subagent's child session
starts: `session` (the child's id), `agent_id`, `agent_type`."""
RUN_POINTER = "claude-code.run"
"""File in a Claude Code session's directory naming its current run (after a resume)."""
HEARTBEAT_S = 5.0
"""While a call is held for the operator, a heartbeat is written this often."""
STILL_WAITING = (
    "This call is on hold: the supervisor asked the operator to review it and no answer has come "
    "yet. It was not run. Do not retry it as it is; wait for guidance or choose another approach."
)


def handle(data: bytes, root: Path, budget_s: float, started: float) -> str:
    """Apply one payload; return what to print on stdout (possibly nothing).

    `budget_s` is the hook's timeout in Claude Code's settings and `started` the
    `time.monotonic()` at which this process began: a held call answers before the budget ends.
    Raises on the supervisor's own failures (the caller reports them and lets the agent work).
    """
    step = map_payload(read_payload(data))
    base = step.session_id
    _follow_resumes(root, step)
    guard, problems = _open_guard(root, step, budget_s)
    if step.kind == "start" and guard.ended:
        guard.close()
        _start_new_run(root, step, base)
        guard, more = _open_guard(root, step, budget_s)
        problems += more
    try:
        if not guard.started:
            guard.start(step.start["agent"], None, heartbeat_s=None, extra=_start_extra(step))
            if step.parent_session_id:
                _link_parent(root, step)
        elif step.kind == "start" and step.message:
            guard.message(step.message["role"], step.message["text"])
        for problem in problems:
            record_error(root, step.session_id, step.hook_event, problem)
        return _HANDLERS[step.kind](guard, step, root, budget_s, started)
    finally:
        guard.close()


def session_of(root: Path, data: bytes) -> tuple[str, str]:
    """(the supervisor session, the hook event) a payload belongs to; raises like `handle`."""
    step = map_payload(read_payload(data))
    _follow_resumes(root, step)
    return step.session_id, step.hook_event


def record_error(root: Path, session_id: str, hook_event: str | None, message: str) -> None:
    """Write a `supervisor_error` event into the session, so the dashboard shows the problem.
    Best effort: if even that fails (full disk), the caller's stderr message is all there is."""
    try:
        directory = ensure_session_dir(root, session_id)
        with LineWriter(directory / "events.jsonl") as writer:
            writer.append({"type": ERROR_EVENT, "hook_event": hook_event, "message": message})
    except Exception:  # the supervisor is already failing: never make it worse for the agent
        return


def _follow_resumes(root: Path, step: Step) -> None:
    """Point the step at the current run of its Claude Code session (see `_start_new_run`)."""
    base = step.parent_session_id or step.session_id
    current = _current_run(root, base)
    if current == base:
        return
    if step.parent_session_id:
        step.parent_session_id = current
        step.start["parent_session"] = current
        step.session_id = child_session_id(current, (step.subagent or {})["agent_id"])
    else:
        step.session_id = current


def _start_new_run(root: Path, step: Step, base: str) -> None:
    """A session that ended (SessionEnd, an abort, a hard limit) and is resumed in Claude Code
    (`claude --resume`) continues as a new supervisor session `<id>.run<N>`: the ended one stays
    as it was, and the new run is supervised afresh. The base session's directory keeps a pointer
    to the current run, which every later hook invocation follows."""
    pointer = session_dir(root, base) / RUN_POINTER
    current = _current_run(root, base)
    number = int(current.rsplit(".run", 1)[1]) + 1 if current != base else 2
    previous = step.session_id
    step.session_id = sanitize_session_id(f"{base[:100]}.run{number}")
    step.start["resumed_from"] = previous
    ensure_session_dir(root, base)
    temp = pointer.with_name(f".{RUN_POINTER}.{os.getpid()}.tmp")
    temp.write_text(step.session_id + "\n", encoding="utf-8")
    os.replace(temp, pointer)


def _current_run(root: Path, base: str) -> str:
    try:
        text = (session_dir(root, base) / RUN_POINTER).read_text(encoding="utf-8").strip()
        int(text.rsplit(".run", 1)[1])
        return validate_session_id(text)
    except (OSError, ValueError, IndexError):
        return base


def _open_guard(root: Path, step: Step, budget_s: float) -> tuple[Any, list[str]]:
    """The session's guard, and problems to record. A state the guard cannot restore is kept
    aside (`state.json.corrupt-<time>`) and the session goes on from a fresh state."""
    from supervisor.guard.core import Guard

    problems: list[str] = []
    directory = session_dir(root, step.session_id)
    state = directory / STATE_FILE
    bad = state.with_suffix(".json.bad")
    bad_before = _mtime(bad)
    kwargs: dict[str, Any] = {"cwd": step.start.get("cwd")}
    fresh = not state.exists()
    if fresh:
        kwargs.update(_new_session_policy(root, problems))
    kwargs["settings"] = _settings(root, budget_s, problems if fresh and not problems else [])
    if _too_broad(step.start.get("cwd")):
        kwargs["settings"] = dataclasses.replace(kwargs["settings"], checkpoints=False)
    try:
        guard = Guard.open(root, step.session_id, **kwargs)
    except Exception as exc:
        if not state.exists():
            raise
        aside = state.with_name(f"{STATE_FILE}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        os.replace(state, aside)
        problems.append(
            f"the session state could not be loaded ({type(exc).__name__}: {exc}); it was kept "
            f"as {aside.name} and supervision restarted from a fresh state"
        )
        kwargs.update(_new_session_policy(root, problems))
        guard = Guard.open(root, step.session_id, **kwargs)
    if _mtime(bad) != bad_before:
        problems.append(
            "the session state was unreadable; it was kept as state.json.bad and supervision "
            "restarted from a fresh state"
        )
    return guard, problems


def _new_session_policy(root: Path, problems: list[str]) -> dict[str, Any]:
    """The engine policy for a session being created (later steps restore it)."""
    from supervisor.engine import Policy

    try:
        policy, _source = load_policy(root)
    except ValueError as exc:
        problems.append(f"{exc}; using the default profile")
        policy = Policy.profile("default")
    return {"policy": policy}


def _settings(root: Path, budget_s: float, report: list[str]) -> Any:
    """The guard settings for this invocation: the policy's `[guard]` table, its hold time
    fitted to this hook's budget. A bad table gives the defaults (reported once, at creation)."""
    try:
        return hook_settings(guard_table(root), budget_s)
    except ValueError as exc:
        report.append(f"{exc}; using the default guard settings")
        return hook_settings({}, budget_s)


def _start_extra(step: Step) -> dict[str, Any]:
    skip = {"type", "agent", "task", "cwd", "pid", "policy", "heartbeat_s"}
    return {k: v for k, v in step.start.items() if k not in skip and v is not None}


def _link_parent(root: Path, step: Step) -> None:
    """Tell the parent session (if it exists) that a subagent's child session started."""
    parent = session_dir(root, step.parent_session_id or "")
    if not parent.is_dir():
        return
    with LineWriter(parent / "events.jsonl") as writer:
        writer.append({"type": SUBAGENT_EVENT, "session": step.session_id, **(step.subagent or {})})


def _on_start(guard: Any, step: Step, root: Path, budget_s: float, started: float) -> str:
    return respond.render(respond.context_output("SessionStart", _guidance(guard.poll())))


def _on_prompt(guard: Any, step: Step, root: Path, budget_s: float, started: float) -> str:
    message = step.message or {}
    guard.message("user", message.get("text", ""))
    guard.new_cycle()
    return respond.render(respond.context_output("UserPromptSubmit", _guidance(guard.poll())))


def _on_call(guard: Any, step: Step, root: Path, budget_s: float, started: float) -> str:
    call = step.call or {}
    verdict = guard.pre_call(call["tool"], call["args"], call_id=call["call_id"])
    if verdict.action == "pause":
        # the escalation's deadline is at most budget - ANSWER_MARGIN_S after it was raised;
        # waiting until half the margin before the timeout lets the fallback apply first
        left = budget_s - ANSWER_MARGIN_S / 2 - (time.monotonic() - started)
        verdict = guard.wait(timeout=max(left, 0.5), heartbeat_s=HEARTBEAT_S)
    if verdict.action == "pause":  # the deadline did not pass in time (it always should)
        return respond.render(respond.pre_tool_output("block", STILL_WAITING))
    output = respond.pre_tool_output(verdict.action, verdict.message,
                                     cached_output=verdict.cached_output)
    return respond.render(output)


def _on_result(guard: Any, step: Step, root: Path, budget_s: float, started: float) -> str:
    r = step.result or {}
    detections = guard.post_call(r["call_id"], r["output"], ok=r["ok"], error=r["error"],
                                 duration_ms=r["duration_ms"], tool=r["tool"])
    hints = "\n".join(dict.fromkeys(d["message"] for d in detections if d.get("message")))
    return respond.render(respond.context_output(step.hook_event, hints))


def _on_stop(guard: Any, step: Step, root: Path, budget_s: float, started: float) -> str:
    if step.message:
        guard.message(step.message["role"], step.message["text"])
    guidance = _guidance(guard.poll())
    if step.end and not guidance:  # a subagent kept working by guidance has not ended
        guard.end(step.end["status"], step.end["reason"])
    return respond.render(respond.stop_output(guidance))


def _on_message(guard: Any, step: Step, root: Path, budget_s: float, started: float) -> str:
    if step.message:
        guard.message(step.message["role"], step.message["text"])
    return ""


def _on_end(guard: Any, step: Step, root: Path, budget_s: float, started: float) -> str:
    end = step.end or {}
    guard.end(end.get("status", "completed"), end.get("reason"))
    return ""


def _on_other(guard: Any, step: Step, root: Path, budget_s: float, started: float) -> str:
    with LineWriter(guard.dir / "events.jsonl") as writer:
        writer.append(step.record or {})
    return ""


_HANDLERS = {
    "start": _on_start,
    "prompt": _on_prompt,
    "call": _on_call,
    "result": _on_result,
    "stop": _on_stop,
    "notification": _on_message,
    "end": _on_end,
    "other": _on_other,
}


def _guidance(notes: list[Any]) -> str | None:
    """What the operator told the agent that it has not seen yet (from `Guard.poll`): guidance,
    and a rollback (its files changed under it). Other outcomes (a fallback at a deadline, a
    reset) are no reason to keep an agent working that is about to stop."""
    texts = [n.message for n in notes if n.message and n.decision in _TOLD]
    return "\n".join(dict.fromkeys(texts)) or None


_TOLD = frozenset({"guidance", "rollback"})


def _too_broad(cwd: str | None) -> bool:
    """A home directory or the file system root is no project to checkpoint: copying it into
    git would hold up every hook call (Claude Code started in `~`)."""
    if not cwd:
        return False
    try:
        where = Path(cwd).resolve()
        return where == Path(where.anchor) or where == Path.home().resolve()
    except (OSError, RuntimeError):
        return False


def _mtime(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
