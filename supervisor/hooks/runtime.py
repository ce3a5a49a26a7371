"""What every hook target shares: one hook call from payload to answer.

`run_safely` is the entry point of both the resident server and the in-process path: it never
raises and never disturbs the agent because of the supervisor's own trouble (a bad payload, a
corrupt state, a full disk): the complaint goes to the caller's `complain` (stderr or the
server's log) and, when possible, to a `supervisor_error` event in the session, and the agent
gets no answer, which lets its call go on.

`handle` does the work: the target reads the payload into a `HookStep`; the runtime follows resumed
sessions to their current run, opens the session's guard (recovering from a state it cannot
load), applies the step, holds an escalated call for the operator within the call's `Budget`,
and asks the target to phrase the answer. The cost stays flat as the session grows: the guard
loads a bounded snapshot and nothing re-reads the event log. What each step does is in
docs/hooks.md. The step is a value: following a resume or a `supervisor run` makes a new one.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from supervisor.guard.root_policy import budgets_of
from supervisor.guard.spend import Spending
from supervisor.guard.state import STATE_FILE
from supervisor.hooks import memory as hook_memory
from supervisor.hooks import transcript
from supervisor.hooks.budget import Budget
from supervisor.hooks.policy import guard_table, hook_settings, load_policy
from supervisor.hooks.step import (
    Call,
    HookStep,
    PayloadError,
    Result,
    child_session_id,
    read_payload,
    replace,
)
from supervisor.hooks.target import Target
from supervisor.hooks.targets import load as load_target
from supervisor.hooks.wording import note
from supervisor.store import waits
from supervisor.store.paths import (
    ensure_session_dir,
    resolve_root,
    sanitize_session_id,
    session_files,
    validate_session_id,
    write_private,
)
from supervisor.store.writer import LineWriter

if TYPE_CHECKING:  # the guard is imported when a session is opened (`_open_guard`), not before
    from supervisor.guard.core import Guard, Verdict
    from supervisor.guard.settings import GuardSettings
    from supervisor.hooks.resident import Resident
    from supervisor.hooks.target import Issued, Unreported
    from supervisor.hooks.usage import Spent

ERROR_EVENT = "supervisor_error"
"""Event type (protocol extension) written when the supervisor itself failed in this session."""
SUBAGENT_EVENT = "subagent_start"
"""Event type (protocol extension) written in a parent session when a subagent's child session
starts: `session` (the child's id), `agent_id`, `agent_type`."""
RUN_POINTER = "hook.run"
"""File in a session's directory naming its current run (after a resume)."""
LAST_WORD_S = 0.3
"""Recording why a call failed (`record_error`) ends this long before the agent's timeout."""
LATER_S = 5.0
"""Work done after an answer (`read_after`) waits at most this long for a lock."""
CHECKPOINT_AFTER_S = 30.0
"""The periodic checkpoint taken after an answer (`checkpoint_after`) has this long for its lock
and git (a share of it, `journal.CHECKPOINT_SHARE`, for the commit), as a call's PreToolUse
that takes it has its agent's timeout."""
STOP_POLL_S = 0.02
"""How often a hook waiting for an answer in the transcript reads on (a Stop's,
`await_answer`; a call's, `await_asked`)."""
ANSWER_PREFIX = 2000
"""Characters (white space aside) compared to recognise the answer a Stop names."""
HEARTBEAT_S = 5.0
"""While a call is held for the operator, a heartbeat is written this often."""
STILL_WAITING = (
    "This call is on hold: the supervisor asked the operator to review it and no answer has come "
    "yet. It was not run. Do not retry it as it is; wait for guidance or choose another approach."
)


def run_safely(
    target_name: str, data: bytes, root_arg: str | os.PathLike[str] | None, budget: Budget,
    complain: Callable[[str], None], run: tuple[str, int | None] | None = None,
    resident: Resident | None = None, later: list[Callable[[], None]] | None = None,
) -> str:
    """One hook call with the fail-safe: the answer to print, or "" when the supervisor could
    not decide (then `complain` got one line saying why, and the agent's call goes on). `run`:
    (session, pane pid) of an agent `supervisor run` started (`supervisor.runenv`);
    `resident`: the resident server's open sessions (`supervisor.hooks.resident`); `later`:
    where the resident server takes work to do once the answer is sent (`read_after`), each
    of it safe to lose."""
    root = None
    target = None
    try:
        target = load_target(target_name)
        root = resolve_root(root_arg)
        with waits.within(budget.deadline()):  # every lock and git process of this call
            return handle(target, data, root, budget, run, resident, later)
    except PayloadError as exc:
        complain(f"ignored a payload it cannot use: {exc}")
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"
        complain(f"the supervisor failed ({message}); this call goes on unsupervised")
        if root is not None and target is not None:
            try:
                # the log may be what is locked: this wait too ends before the agent's timeout
                with waits.within(budget.started + budget.total_s - LAST_WORD_S):
                    record_error(root, *session_of(target, root, data), message)
            except Exception as more:  # nothing more can be done without disturbing the agent
                complain(f"could not record that: {type(more).__name__}: {more}")
    return ""


def handle(
    target: Target, data: bytes, root: Path, budget: Budget,
    run: tuple[str, int | None] | None = None, resident: Resident | None = None,
    later: list[Callable[[], None]] | None = None,
) -> str:
    """Apply one payload; return what to print on stdout (possibly nothing). Raises on the
    supervisor's own failures (`run_safely` reports them and lets the agent work)."""
    payload = read_payload(data)
    step = target.read(payload)
    if run is not None:
        step = _into_run(step, *run)
    base = step.session_id
    step = _follow_resumes(root, step)
    if later is not None and resident is not None and _last_hook(target, step):
        later.append(functools.partial(checkpoint_after, root, step, resident))
        if _ends_call(target, step):
            later.append(functools.partial(read_after, target, root, step, resident))
    if step.kind == "batch" and _all_seen(root, step):
        return ""  # the common case: every call went through PreToolUse; nothing to open
    if step.kind == "display" and step.display and not step.display["final"]:
        _keep_display(root, step)  # a piece of a message: nothing to record yet
        return ""
    guard, problems = _open_guard(root, step, budget, resident)
    if payload.get("supervisor_rescued"):
        problems.append(f"{payload['supervisor_rescued']}: recorded from what could be read of "
                        "it (session, event, tool, call id)")
    if step.kind == "start" and guard.ended:
        _put_away(guard, resident)
        step = _start_new_run(root, step, base)
        guard, more = _open_guard(root, step, budget, resident)
        problems += more
    try:
        new = not guard.started
        if new:
            guard.start(step.start["agent"], None, pid=step.start.get("pid"), heartbeat_s=None,
                        extra={**_start_extra(step), "usage_record": target.reads_usage})
            if step.parent_session_id:
                _link_parent(root, step)
        elif step.kind == "start" and step.message:
            guard.message(step.message["role"], step.message["text"])
        for problem in problems:
            record_error(root, step.session_id, step.hook_event, problem)
        _count_spending(guard, target, step, root)
        call = _Call(target, guard, step, root, budget)
        call.remember(new)
        return _HANDLERS[step.kind](call)
    finally:
        _put_away(guard, resident)


def _last_hook(target: Target, step: HookStep) -> bool:
    """The last hook of a tool call: the batch's, for an agent that reports one; else the
    result's. What follows it is the agent's next model request, not another hook of ours."""
    return step.kind == ("batch" if target.batches else "result")


def _ends_call(target: Target, step: HookStep) -> bool:
    """The last hook of a tool call (`_last_hook`), of an agent whose transcript is read."""
    return target.transcript is not None and bool(step.transcript) and _last_hook(target, step)


def checkpoint_after(root: Path, step: HookStep, resident: Resident) -> None:
    """Once the last hook of a call is answered, the resident server takes the periodic
    checkpoint the next call is due (`checkpoint_every`), which that call's PreToolUse took
    on the agent's path (a git commit of the work tree: tens of ms, every 25th call). The
    model is thinking now, and the work tree is what the next call starts from, so the
    checkpoint protects that call as before (`Guard.checkpoint_ahead`). It still precedes
    the call: a PreToolUse that comes meanwhile waits for the session lock, which this holds
    while it commits. Safe to lose: a server killed (or a lock not had in time) before it
    is taken and saved leaves the count as it was, so the next PreToolUse takes it inline,
    as without a server. Skipped when another call uses the session's kept guard or none
    is kept (then that call, or the next, does it)."""
    budget = Budget(CHECKPOINT_AFTER_S, time.monotonic())
    with waits.within(budget.deadline()):
        guard = _kept(resident, root, step, budget)
        if guard is None:
            return
        try:
            guard.checkpoint_ahead()
        finally:
            resident.give_back(guard)


def read_after(target: Target, root: Path, step: HookStep, resident: Resident) -> None:
    """Once the last hook of a call is answered, the resident server reads on in the
    session's transcript: an agent that writes the message asking for a call only after that
    call's first hook ran (Claude Code, about half the calls) left it for the next call's
    hook to read and price on the agent's path; now that hook finds only what was written
    since. Counted sooner, never later, so a `tokens`/`cost_usd` limit holds no later than
    before. Safe to lose: the offset read to is saved with what was recorded (the hook
    memory), so a server killed first leaves it all to the next hook, as before. Skipped
    when another call uses the session's kept guard or none is kept (never a guard opened
    for this), or the session follows no transcript yet (where to start is the next hook's
    to decide)."""
    budget = Budget(LATER_S, time.monotonic())
    with waits.within(budget.deadline()):
        guard = _kept(resident, root, step, budget)
        if guard is None:
            return
        try:
            with hook_memory.remembered(guard.files) as memory:
                if memory.transcript == step.transcript:
                    _Call(target, guard, step, root, budget).read_transcript(memory)
        finally:
            resident.give_back(guard)


def _count_spending(guard: Guard, target: Target, step: HookStep, root: Path) -> None:
    """When the policy has daily budgets, this session counts in the store's spend
    (`guard.spend`): its usage is added, its calls checked. A bad `[budgets]` table is
    recorded as a `supervisor_error` (with each call, until it is fixed) and no budget
    holds."""
    try:
        rules = budgets_of(root)
    except ValueError as exc:
        record_error(root, step.session_id, step.hook_event, f"{exc}; no daily budget applies")
        return
    if rules:
        guard.journal.spending = Spending(root, rules, step.session_id, target.name,
                                          guard.cwd)


def _all_seen(root: Path, step: HookStep) -> bool:
    """True when every call of a batch went through PreToolUse and none was refused by the
    agent's own permission check since (cheap: the hook memory as last saved, read without
    its lock, `hook_memory.peek`; a False sends the batch the whole way, which asks again
    under the lock)."""
    if any(item.get("refused") for item in step.batch):
        return False
    files = session_files(root, step.session_id)
    memory = hook_memory.peek(files)
    if memory is None:  # no call of the session went through PreToolUse yet
        return not step.batch and files.dir.is_dir()
    return all(memory.saw(item["call"]["call_id"]) for item in step.batch)


def _keep_display(root: Path, step: HookStep) -> None:
    """Keep a non-final flush of the assistant's text in the hook memory."""
    assert step.display is not None
    ensure_session_dir(root, step.session_id)
    with hook_memory.remembered(session_files(root, step.session_id)) as memory:
        memory.displayed(step.display["message_id"], step.display["delta"])


def session_of(target: Target, root: Path, data: bytes) -> tuple[str, str]:
    """(the supervisor session, the hook event) a payload belongs to; raises like `handle`."""
    step = _follow_resumes(root, target.read(read_payload(data)))
    return step.session_id, step.hook_event


def record_error(root: Path, session_id: str, hook_event: str | None, message: str) -> None:
    """Write a `supervisor_error` event into the session, so the dashboard shows the problem.
    Best effort: if even that fails (full disk), the caller's complaint is all there is."""
    try:
        ensure_session_dir(root, session_id)
        with LineWriter(session_files(root, session_id).events) as writer:
            writer.append({"type": ERROR_EVENT, "hook_event": hook_event, "message": message})
    except Exception:  # the supervisor is already failing: never make it worse for the agent
        return


@dataclass(slots=True)
class _Call:
    """One hook call being handled: what every step handler gets. Its `step` is the one read,
    with the id an agent that gives none gets for its call (`pair`)."""

    target: Target
    guard: Guard
    step: HookStep
    root: Path
    budget: Budget
    batch: str | None = None
    """The call's batch: the id of the model answer that issued it, when the agent's transcript
    already showed that answer (`remember`); None otherwise, as for a call alone."""

    def remember(self, new_session: bool) -> None:
        """Under the session's hook memory: mark a call as seen before it runs (PostToolBatch
        records only calls that were not), and record the assistant's text written to the
        agent's transcript since the last call (hooks are not given it, and
        `consecutive_tool_calls` counts calls since the model last said something). A
        transcript seen for the first time is read from its start only in a session that
        starts now (not resumed): older text is not this run's. At a call, what the
        transcript holds now is read; the call's own answer is never waited for (a Stop may
        wait for its: `await_answer`), only, briefly, the one before's (`await_asked`): an
        answer the agent writes after it ran the hook of the call the answer asked for (Claude
        Code at times, tens of ms later) is counted at the next hook that reads it (in the
        resident server, once the call's last hook is answered: `read_after`), so a
        `tokens`/`cost_usd` limit or budget may hold one call late (docs/hooks.md, "Usage").
        So is a call's batch: an answer's calls the transcript shows are kept until their own
        PreToolUse takes them (`Memory.issued`); a call whose answer is not written yet has
        none."""
        reader, path = self.target.transcript, self.step.transcript
        reads = reader is not None and bool(path) and self.step.kind in _READS_TRANSCRIPT
        sees = self.step.call is not None and self.target.batches
        if not reads and not sees and self.step.pair is None:
            return
        with hook_memory.remembered(self.guard.files) as memory:
            self.pair(memory)
            if sees and self.step.call is not None:
                memory.see(self.step.call["call_id"])
            if not reads or reader is None or path is None:
                return
            if memory.transcript != path:
                resumed = self.step.start.get("source") == "resume" or "resumed_from" in (
                    self.step.start)
                memory.transcript = path
                memory.offset = 0 if new_session and not resumed else _size(path)
                memory.mark = None
                memory.unasked, memory.names_calls = None, False
            said = self.read_transcript(memory)
            if self.step.hook_event == "Stop":  # (a subagent's stop ends no run)
                self.await_answer(memory, said)
            elif self.target.call_waits_s and self.step.kind == "call" and (
                    self.step.call is not None and not self.step.no_result):
                self.await_asked(memory, self.step.call["call_id"])

    def await_answer(self, memory: hook_memory.Memory, said: list[str]) -> None:
        """At Stop, for an agent that writes its transcript behind its hooks
        (`Target.stop_waits_s`): read on until the transcript holds the answer Stop names,
        for at most that long. Stop is the last hook of a headless run, so what its read
        misses is never read: Qwen Code's queue of writes has at times the last two answers
        still to write (the one that asked for the last call, and the last), whose tokens
        were then never counted. The wait ends as soon as the answer is there (a read of
        what was added, every `STOP_POLL_S`), costs nothing when it already is, and is
        once per turn, never per call. An answer without text cannot be recognised, and an
        agent that writes no transcript (Qwen Code with `chatRecording` off) gives none to
        wait for: nothing is waited for."""
        message = self.step.message
        path = memory.transcript
        if (not self.target.stop_waits_s or message is None or path is None
                or not os.path.exists(path)):
            return
        text = message["text"]
        if _text_digest(text.strip()) == memory.last_text or any(
                _same_answer(t, text) for t in said):
            return
        until = min(time.monotonic() + self.target.stop_waits_s, self.budget.deadline())
        while time.monotonic() < until:
            time.sleep(STOP_POLL_S)
            if _size(path) > memory.offset and any(
                    _same_answer(t, text) for t in self.read_transcript(memory)):
                return

    def await_asked(self, memory: hook_memory.Memory, call_id: str) -> None:
        """At a call's PreToolUse, for an agent that writes its transcript behind its hooks
        (`Target.call_waits_s`): read on while the answer that asked for the call before this
        one is unwritten (`Memory.unasked`), for at most that long, so that what every earlier
        answer spent is counted before this call is judged and a `tokens`/`cost_usd` limit
        holds at most one call late. This call's own answer is never waited for: Claude Code
        writes it after the call's PreToolUse for about half the calls, and a wait for it cost
        every such call tens of ms (issue 40); the one before had the time this call's answer
        took to come, so it is nearly always there. No wait then (one comparison), nor while
        the call before is still running (`GuardState.calls`: a call of the same answer, run
        in parallel, whose answer is this call's own), nor when the transcript never named a
        call of the session (`Memory.names_calls`: a wrong file, a format that changed); an
        answer still unwritten at the end is given up on (never waited for again) and this
        call is judged with what was read. Then this call is the one the next waits for,
        unless its own answer was read."""
        pending, path = memory.unasked, memory.transcript
        if (memory.names_calls and pending is not None and pending != call_id and path
                and pending not in self.guard.state.calls):
            until = min(time.monotonic() + self.target.call_waits_s, self.budget.deadline())
            while memory.unasked == pending and (left := until - time.monotonic()) > 0:
                time.sleep(min(STOP_POLL_S, left))
                if _size(path) > memory.offset:
                    self.read_transcript(memory)
        memory.ask(call_id, asked=self.batch is not None)

    def read_transcript(self, memory: hook_memory.Memory) -> list[str]:
        """Record what the transcript the session follows (`memory.transcript`) holds since
        `memory.offset`: the assistant's texts, failures no hook reported, what was spent.
        Returns the assistant's texts it read."""
        reader, path = self.target.transcript, memory.transcript
        if reader is None or path is None:
            return []
        held = None  # the mark of what was read before, when it still holds
        if self.target.reads_usage and memory.mark is not None:
            held = transcript.mark(path, memory.offset)
            if held != memory.mark:
                # Only where usage is read (counted twice otherwise): Factory Droid rewrites
                # the end of its session file as it goes, which is no new transcript.
                held, memory.offset = None, _size(path)  # nothing of it twice
                self.usage_warning(memory, "the agent's transcript was shortened or "
                                   "rewritten under the supervisor; what it held before is "
                                   "not counted again, what it holds now is not counted")
        start = memory.offset
        entries, memory.offset = reader(path, memory.offset)
        entries = memory.tally.merged(entries)  # an answer's lines read at once: one usage
        # checked only where usage is read (above): the others are spared its four syscalls,
        # and a read that moved nothing keeps the mark it was checked with
        if self.target.reads_usage:
            memory.mark = held if held and memory.offset == start else transcript.mark(
                path, memory.offset)
        else:
            memory.mark = None
        said: list[str] = []
        with self.guard.saving_later():  # the step this is read for (or the next) saves, once
            for entry in entries:
                if isinstance(entry, str):
                    said.append(entry)
                    if not memory.displays:  # else the agent's display hook gave the text
                        self.assistant_said(entry, memory)
                elif "pair" in entry:
                    self.unreported(entry, memory)  # type: ignore[arg-type]
                elif "key" in entry:
                    self.spent(entry, memory)  # type: ignore[arg-type]
                elif "issued" in entry:
                    self.issued(entry, memory)  # type: ignore[arg-type]
                elif "used_model" in entry:
                    memory.model = entry["used_model"]
        if self.batch is None and self.step.call is not None and self.step.kind == "call":
            self.batch = memory.batch_of(self.step.call["call_id"])
        return said

    def issued(self, entry: Issued, memory: hook_memory.Memory) -> None:
        """The calls of one model answer: this call's batch when it is one of them; the others
        are kept for their own PreToolUse (those that already had theirs are not)."""
        call = self.step.call
        if self.step.kind == "call" and call is not None and call["call_id"] in entry["issued"]:
            self.batch = entry["batch"]
        memory.issued(entry["issued"], entry["batch"])

    def pair(self, memory: hook_memory.Memory) -> None:
        """For an agent that gives calls no id: a call gets a new one, its result the one of
        the oldest call with the same tool and arguments still waiting (`HookStep.pair`)."""
        step, key = self.step, self.step.pair
        if key is None:
            return
        if step.call is not None:
            call: Call = {**step.call, "call_id": memory.pair_call(key)}
            self.step = replace(step, call=call)
        elif step.result is not None:
            result: Result = {**step.result, "call_id": memory.pair_result(key) or key}
            self.step = replace(step, result=result)

    def decided(self, verdict: Verdict) -> Verdict:
        """After the verdict on a call: a refused call gets no result, so it stops waiting for
        one (`HookStep.pair`); a note on a call that runs waits for its result when the agent takes
        no context before a call (`Target.context_before_call`), and is left out of the
        verdict returned."""
        call = self.step.call
        runs = verdict.action in _RUNS
        unpair = self.step.pair is not None and not runs
        held = verdict.message if runs and not self.target.context_before_call else None
        if call is None or not (unpair or held):
            return verdict
        with hook_memory.remembered(self.guard.files) as memory:
            if unpair and self.step.pair is not None:
                memory.unpair(self.step.pair, call["call_id"])
            if held:
                memory.hold_note(call["call_id"], held)
        return dataclasses.replace(verdict, message=None) if held else verdict

    def held_note(self, call_id: str) -> str | None:
        """The note held back for this call until its result (see `decided`)."""
        if self.target.context_before_call:
            return None
        with hook_memory.remembered(self.guard.files) as memory:
            return memory.take_note(call_id)

    def unreported(self, failure: Unreported, memory: hook_memory.Memory) -> None:
        """A failure the agent's hooks never reported (`target.Unreported`), recorded as the
        result of the oldest call still waiting for one under its key; nothing when none waits
        (its result came through a hook, or the supervisor refused the call)."""
        call_id = memory.pair_result(failure["pair"])
        if call_id is None:
            return
        r = failure["result"]
        self.guard.post_call(call_id, r["output"], ok=r["ok"], error=r["error"],
                             duration_ms=r["duration_ms"], tool=r["tool"])

    def spent(self, entry: Spent, memory: hook_memory.Memory) -> None:
        """Record what a line of the agent's usage record adds to what was recorded under its
        key (`usage.Tally`), priced (`guard.prices`; unknown when the model or a count is);
        a count that could not be read or a model not named is reported once."""
        grown = memory.tally.growth(entry)
        model = entry["model"] or memory.model
        if entry["unknown"]:
            self.usage_warning(memory, "the agent's usage record has counts that are not "
                               f"token counts ({', '.join(entry['unknown'])}); they are "
                               "counted as unknown")
        elif model is None:
            self.usage_warning(memory, "the agent's usage record names no model; its cost is "
                               "unknown")
        if not any(grown.values()) and not entry["unknown"]:
            return
        from supervisor.guard.prices import cost_usd

        cost = None if entry["unknown"] else cost_usd(model, grown)
        self.guard.usage(
            grown.get("input_tokens", 0), grown.get("output_tokens", 0), cost,
            cache_read_tokens=grown.get("cache_read_tokens"),
            cache_write_tokens=grown.get("cache_write_tokens"), model=model,
            answer=entry["key"], extra={"unknown": entry["unknown"]} if entry["unknown"] else None)

    def usage_warning(self, memory: hook_memory.Memory, message: str) -> None:
        """One `supervisor_error` per session about the agent's usage record."""
        if memory.usage_warned:
            return
        memory.usage_warned = True
        record_error(self.root, self.step.session_id, self.step.hook_event, message)

    def assistant_said(self, text: str, memory: hook_memory.Memory) -> None:
        """Record an assistant message once (the transcript and Stop both carry the last)."""
        digest = _text_digest(text)
        if memory.last_text == digest:
            return
        memory.last_text = digest
        self.guard.message("assistant", text)

    def hold(self, verdict: Verdict) -> Verdict:
        """A `pause` verdict waits for the operator (or the escalation's deadline, which the
        policy fitted to the budget) until just before the agent's timeout; any other verdict
        is returned as it is."""
        if verdict.action != "pause":
            return verdict
        return self.guard.wait(timeout=self.budget.wait_s(), heartbeat_s=HEARTBEAT_S)

    def guidance(self) -> str | None:
        """What the operator told the agent that it has not seen yet (from `Guard.poll`):
        its `news`: guidance, a rollback (its files changed under it), a skip that started the
        plan's next step (unsaid, the stop would end that step too).
        Other outcomes (a fallback at a deadline, a reset) are no reason to keep an agent
        working that is about to stop."""
        texts = [n.message for n in self.guard.poll() if n.message and n.news]
        return "\n".join(dict.fromkeys(texts)) or None


def _text_digest(text: str) -> str:
    """What the hook memory keeps of the last assistant text recorded (`Memory.last_text`)."""
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=12).hexdigest()


def _same_answer(read: str, named: str) -> bool:
    """True when a text read from the transcript is the answer a Stop names: the same
    characters but for white space (a reader joins an answer's parts with newlines, an
    agent's Stop may join them with nothing), compared over their first `ANSWER_PREFIX`
    (the Stop's text may be cut, `step.cut_text`)."""
    return ("".join(read.split())[:ANSWER_PREFIX] == "".join(named.split())[:ANSWER_PREFIX])


_READS_TRANSCRIPT = frozenset({"start", "call", "batch", "stop"})
_RUNS = frozenset({"allow", "nudge"})
"""Verdicts under which the call runs (and a result will come)."""


def _on_start(c: _Call) -> str:
    """Operator guidance not yet seen, and the project's failure memory (its pitfalls)."""
    texts = [t for t in (c.guidance(), c.guard.recall()) if t]
    return c.target.answers.context(c.step.hook_event, "\n\n".join(texts) or None)


def _on_prompt(c: _Call) -> str:
    message = c.step.message or {"role": "user", "text": ""}
    if message["role"] == "user":
        if c.guard.state.task is None:
            # the session's task: its first prompt, or the first after its task ended (an
            # operator or the deadline skipped it): the person's next request is new work,
            # and the operator was shown the skipped task's prompt as what it worked on
            c.guard.task_start(_title(message["text"]))
        c.guard.message("user", message["text"], extra=message.get("extra"))
        c.guard.new_cycle()
    else:  # a prompt no person wrote (a task notification): no new cycle, no counter reset
        c.guard.message(message["role"], message["text"])
    return c.target.answers.context(c.step.hook_event, c.guidance())


def _on_call(c: _Call) -> str:
    call = c.step.call
    assert call is not None
    verdict = c.hold(c.guard.pre_call(call["tool"], call["args"], call_id=call["call_id"],
                                      batch=c.batch))
    if verdict.action == "pause":  # the deadline did not pass in time (it always should)
        verdict = dataclasses.replace(verdict, action="block", message=STILL_WAITING)
    if c.step.no_result:  # no hook will report its outcome: it ran, with an unknown result
        if verdict.action in _RUNS:
            c.guard.post_call(call["call_id"], "", tool=call["tool"], unknown=True)
        return c.target.answers.pre_tool(verdict, event=c.step.hook_event)  # type: ignore[call-arg]
    return c.target.answers.pre_tool(c.decided(verdict))


def _on_result(c: _Call) -> str:
    r = c.step.result
    assert r is not None
    detections = c.guard.post_call(r["call_id"], r["output"], ok=r["ok"], error=r["error"],
                                   duration_ms=r["duration_ms"], tool=r["tool"])
    texts = [t for t in (note(c.held_note(r["call_id"])), note(_hints(detections))) if t]
    return c.target.answers.context(c.step.hook_event, "\n".join(texts) or None,
                                    failure=None if r["ok"] else r["error"] or "")


def _on_batch(c: _Call) -> str:
    """Record the calls of a batch that never went through PreToolUse (the agent refused them
    before any hook ran), each as a call the engine checks and its failed result; answer with
    the most severe verdict among them, held for the operator when one escalated. A call that
    went through PreToolUse and was then refused by the agent's own permission check gets the
    batch's result (no other hook reports one)."""
    with hook_memory.remembered(c.guard.files) as memory:
        unseen = [item for item in c.step.batch if not memory.saw(item["call"]["call_id"])]
        for item in unseen:
            memory.see(item["call"]["call_id"])
    open_calls = c.guard.state.calls
    hints: list[dict[str, Any]] = []
    for item in c.step.batch:  # let through by PreToolUse, refused by the agent's own check
        r = item["result"]
        if item.get("refused") and item not in unseen and r["call_id"] in open_calls:
            hints += c.guard.post_call(r["call_id"], r["output"], ok=r["ok"], error=r["error"],
                                       duration_ms=r["duration_ms"], tool=r["tool"],
                                       verdict_known=False)
    worst = None
    for item in unseen:
        call, r = item["call"], item["result"]
        verdict = c.guard.pre_call(call["tool"], call["args"], call_id=call["call_id"])
        hints += c.guard.post_call(r["call_id"], r["output"], ok=r["ok"], error=r["error"],
                                   duration_ms=r["duration_ms"], tool=r["tool"],
                                   verdict_known=False)  # judged after the fact
        if worst is None or _SEVERITY[verdict.action] > _SEVERITY[worst.action]:
            worst = verdict
    if worst is None:  # only calls the agent's permission check refused: what they taught
        return c.target.answers.context(c.step.hook_event, note(_hints(hints)))
    verdict = c.hold(worst)
    if verdict.action == "pause":
        verdict = dataclasses.replace(verdict, action="block", message=STILL_WAITING)
    if verdict.action in ("allow", "nudge"):  # the calls ran: what their outcomes taught too
        told = "\n".join(t for t in (verdict.message, _hints(hints)) if t)
        verdict = dataclasses.replace(verdict, message=told or None)
    return c.target.answers.batch(c.step.hook_event, verdict)


_SEVERITY = {"allow": 0, "nudge": 1, "skip": 2, "block": 3, "pause": 4, "stop": 5}


def _on_stop(c: _Call) -> str:
    if c.step.message:
        with hook_memory.remembered(c.guard.files) as memory:
            c.assistant_said(c.step.message["text"], memory)
    guidance = c.guidance()
    if guidance is None:  # the turn ended with nothing left to tell: the plan's next step
        guidance = c.guard.next_task()  # (docs/plans.md); None: no plan, or it is finished
    if c.step.end and not guidance:  # a subagent kept working by guidance has not ended
        c.guard.end(c.step.end["status"], c.step.end["reason"])
    return c.target.answers.stop(c.step.hook_event, guidance)


def _on_display(c: _Call) -> str:
    """The final flush of an assistant message: the whole message, once."""
    display = c.step.display
    assert display is not None
    with hook_memory.remembered(c.guard.files) as memory:
        memory.displays = True
        text = (memory.display.pop(display["message_id"], "") + display["delta"]).strip()
        if text:
            c.assistant_said(text, memory)
    return ""


def _on_message(c: _Call) -> str:
    if c.step.message:
        c.guard.message(c.step.message["role"], c.step.message["text"])
    return ""


def _on_end(c: _Call) -> str:
    end = c.step.end or {"status": "completed", "reason": None}
    c.guard.end(end["status"], end["reason"])
    return ""


def _on_other(c: _Call) -> str:
    with LineWriter(c.guard.files.events) as writer:
        writer.append(c.step.record or {})
    return ""


_HANDLERS: dict[str, Callable[[_Call], str]] = {
    "start": _on_start,
    "prompt": _on_prompt,
    "call": _on_call,
    "result": _on_result,
    "batch": _on_batch,
    "stop": _on_stop,
    "notification": _on_message,
    "end": _on_end,
    "display": _on_display,
    "other": _on_other,
}


def _hints(detections: list[dict[str, Any]]) -> str | None:
    return "\n".join(dict.fromkeys(d["message"] for d in detections if d.get("message"))) or None


def _title(prompt: str, limit: int = 200) -> str:
    line = " ".join(prompt.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _follow_resumes(root: Path, step: HookStep) -> HookStep:
    """The step pointed at the current run of its agent session (see `_start_new_run`)."""
    base = step.parent_session_id or step.session_id
    current = _current_run(root, base)
    if current == base:
        return step
    return _in_session(step, current)


def _in_session(step: HookStep, session: str) -> HookStep:
    """The step recorded into `session`; a subagent's into its child session of `session`."""
    if step.parent_session_id:
        return replace(
            step, parent_session_id=session, start={**step.start, "parent_session": session},
            session_id=child_session_id(session, (step.subagent or {})["agent_id"]))
    return replace(step, session_id=session)


def _start_new_run(root: Path, step: HookStep, base: str) -> HookStep:
    """A session that ended (SessionEnd, an abort, a hard limit) and is resumed in the agent
    (`claude --resume`) continues as a new supervisor session `<id>.run<N>`: the ended one stays
    as it was, and the new run is supervised afresh. The base session's directory keeps a
    pointer to the current run, which every later hook invocation follows."""
    pointer = session_files(root, base).file(RUN_POINTER)
    current = _current_run(root, base)
    number = int(current.rsplit(".run", 1)[1]) + 1 if current != base else 2
    session = sanitize_session_id(f"{base[:100]}.run{number}")
    ensure_session_dir(root, base)
    write_private(pointer, (session + "\n").encode("utf-8"))
    return replace(step, session_id=session,
                               start={**step.start, "resumed_from": step.session_id})


def _current_run(root: Path, base: str) -> str:
    try:
        text = _read_small(session_files(root, base).file(RUN_POINTER)).strip()
        int(text.rsplit(".run", 1)[1])
        return validate_session_id(text)
    except (OSError, ValueError, IndexError):
        return base


def _open_guard(root: Path, step: HookStep, budget: Budget,
                resident: Resident | None = None) -> tuple[Guard, list[str]]:
    """The session's guard, and problems to record: the resident server's kept one when it has
    it (up to date with what other processes did, `SessionJournal.refresh`), else opened. A
    state the guard cannot restore is kept aside (`state.json.corrupt-<time>`) and the session
    goes on from a fresh state."""
    problems: list[str] = []
    guard = _kept(resident, root, step, budget, problems) if resident is not None else None
    if guard is None:
        guard = _opened(root, step, budget, resident, problems)
        if guard.journal.states_set_aside:
            problems.append(_SET_ASIDE)
    return guard, problems


_SET_ASIDE = ("the session state was unreadable; it was kept as state.json.bad and supervision "
              "restarted from a fresh state")


def _kept(resident: Resident, root: Path, step: HookStep, budget: Budget,
          problems: list[str] | None = None) -> Guard | None:
    """The resident server's kept guard of the session, brought up to date with what other
    processes did (`SessionJournal.refresh`; a state it found unreadable and kept aside is
    added to `problems`); None when it keeps none, or when that failed (a state another
    process left that cannot be loaded: the guard is dropped unsaved and the session opened
    like any other, which says why)."""
    kept = resident.take(root, step.session_id)
    if kept is None:
        return None
    set_aside = kept.journal.states_set_aside
    try:
        kept.journal.refresh()
        kept.journal.use_settings(_settings(root, budget, []))
    except Exception:
        resident.drop(kept)
        return None
    finally:
        if kept.journal.states_set_aside != set_aside and problems is not None:
            problems.append(_SET_ASIDE)
    return kept


def _opened(root: Path, step: HookStep, budget: Budget, resident: Resident | None,
            problems: list[str]) -> Guard:
    """The session's guard, opened from its saved state and log."""
    from supervisor.guard.core import Guard

    state = session_files(root, step.session_id).file(STATE_FILE)
    kwargs: dict[str, Any] = {"cwd": step.start.get("cwd")}
    if resident is not None:
        from supervisor.hooks.resident import SAVE_EVERY_S

        kwargs["save_every_s"] = SAVE_EVERY_S
    fresh = not state.exists()
    if fresh:
        kwargs.update(_new_session_policy(root, problems))
    kwargs["settings"] = _settings(root, budget, problems if fresh and not problems else [])
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
    return guard


def _put_away(guard: Guard, resident: Resident | None) -> None:
    """Done with the session's guard for this call: kept by the resident server, else closed
    (which saves its state)."""
    if resident is None:
        guard.close()
    else:
        resident.give_back(guard)


def _new_session_policy(root: Path, problems: list[str]) -> dict[str, Any]:
    """The engine policy for a session being created (later steps restore it)."""
    from supervisor.engine import Policy

    try:
        policy, _source = load_policy(root)
    except ValueError as exc:
        problems.append(f"{exc}; using the default profile")
        policy = Policy.profile("default")
    return {"policy": policy}


def _settings(root: Path, budget: Budget, report: list[str]) -> GuardSettings:
    """The guard settings for this invocation: the policy's `[guard]` table, its hold time
    fitted to this call's budget. A bad table gives the defaults (reported once, at
    creation)."""
    try:
        return hook_settings(guard_table(root), budget)
    except ValueError as exc:
        report.append(f"{exc}; using the default guard settings")
        return hook_settings({}, budget)


def _into_run(step: HookStep, session: str, pid: int | None) -> HookStep:
    """The step recorded into the session `supervisor run` named (its subagents into child
    sessions of it), whatever id the agent gave itself; the pane's pid makes a dead agent show
    `dead`."""
    session = validate_session_id(session)
    if step.parent_session_id:
        return _in_session(step, session)
    return replace(step, session_id=session, start={**step.start, "pid": pid})


def _start_extra(step: HookStep) -> dict[str, Any]:
    skip = {"type", "agent", "task", "cwd", "pid", "policy", "heartbeat_s"}
    return {k: v for k, v in step.start.items() if k not in skip and v is not None}


def _link_parent(root: Path, step: HookStep) -> None:
    """Tell the parent session (if it exists) that a subagent's child session started."""
    parent = session_files(root, step.parent_session_id or "")
    if not parent.dir.is_dir():
        return
    with LineWriter(parent.events) as writer:
        writer.append({"type": SUBAGENT_EVENT, "session": step.session_id, **(step.subagent or {})})


def _read_small(path: Path) -> str:
    """A few bytes of text (the run pointer), read without `open()`'s buffered layers: it is
    looked for at every call, and is mostly not there."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
        return b"".join(chunks).decode("utf-8")
    finally:
        os.close(fd)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


