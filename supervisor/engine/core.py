"""The engine: `check` a call before it runs, `observe` every event, keep levels and limits.

Pure and incremental: no I/O and no clock (`now` is passed in), state bounded by the policy's
window, and `snapshot()`/`restore()` so a hook process can load the state, apply one step and
save it. See the package docstring for a usage example and docs/engine.md for the rules.
"""

from collections.abc import Collection
from copy import deepcopy as _deepcopy
from typing import Any

from supervisor.engine import asked, tools, workspace
from supervisor.engine.confidence import as_block, as_nudge, may_refuse, weigh
from supervisor.engine.decisions import (
    PER_CYCLE_LIMITS,
    SESSION_LIMITS,
    TASK_LIMITS,
    recorded_effect,
)
from supervisor.engine.detectors import REGISTRY, Detector
from supervisor.engine.detectors.stale_read import StaleRead
from supervisor.engine.effects import Approve, Effect
from supervisor.engine.facts import CallFacts, facts_of
from supervisor.engine.failures import error_identity, error_source, failure_line
from supervisor.engine.fingerprint import (
    NO_RESULT,
    call_signature,
    canonical_args,
    error_class,
    is_launch,
    launch_outcome,
    outcome,
    reports_pending,
    run_signature,
    waited_out,
)
from supervisor.engine.policy import PROFILES, Policy
from supervisor.engine.recovery import output_line, recovery_turn
from supervisor.engine.shell import last_pipeline_head, probe_files, program
from supervisor.engine.state import SNAPSHOT_VERSION, State
from supervisor.engine.step import StepRecord, new_step
from supervisor.engine.types import (
    ACTION_BY_LEVEL,
    Check,
    EscalationRequest,
    Finding,
    LimitGauge,
    LimitHit,
)

_ARGS_KEPT = 400
"""Characters of canonical arguments kept per step (similarity and messages)."""
_MAX_PENDING = 64
_LIMIT_COUNTERS = {
    "consecutive_tool_calls": "consecutive", "iterations_per_session": "iterations",
    "errors_per_session": "errors", "iterations_per_cycle": "cycle", "tokens": "tokens",
    "cost_usd": "cost_usd", "actions_per_task": "task",
}
_FILE_CACHE = next(d for d in REGISTRY if isinstance(d, StaleRead))
_DETECTORS = {d.name: d for d in REGISTRY}


def _taking(hook: str) -> tuple[Detector, ...]:
    """The detectors that implement `hook`, in the registry's order: only they are asked (the
    base class's does nothing, and most detectors leave most hooks to it: of the twelve, one
    reads the assistant's messages and two record steps, and a call asked each of them every
    time)."""
    return tuple(d for d in REGISTRY if getattr(type(d), hook) is not getattr(Detector, hook))


_SKIPPERS = tuple(d for d in _taking("refuse") if d.skips)
_REFUSERS = tuple(d for d in _taking("refuse") if not d.skips)
_RECORDERS = _taking("record")
_OBSERVERS = _taking("observe")
_READERS = _taking("message")
"""Of the assistant's messages."""
_WATCHERS = _taking("workspace_changed")


class Engine:
    """Loop prevention for one session (see module and package docstrings)."""

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy = policy or Policy.profile("default")
        pol = self.policy
        self._ignore = frozenset(pol["ignore_arg_keys"])
        self._shell_tools = frozenset(pol["shell_tools"])
        self._limits = [(name, *pol.limit(name)) for name in pol["limits"]
                        if name != "resets_per_conversation"]
        self._gauged = [(name, pol.limit(name)[0]) for name in pol["limits"]]
        """(name, limit) of every hard limit, in policy order: `gauges`, at every call."""
        self.st = self._fresh_state()

    def _fresh_state(self) -> State:
        pol = self.policy
        st = State(pol["window"], min(pol["lookback"], pol["window"]),
                   int(pol["file_cache_bytes"]))
        st.memory = {d.name: d.memory() for d in REGISTRY}
        return st

    # --- public properties -------------------------------------------------------------------

    @property
    def level(self) -> int:
        """The current degradation level, 0 (normal) to 4 (stopped)."""
        return self.st.level

    @property
    def escalation(self) -> EscalationRequest | None:
        """The escalation waiting for the operator, if any (level 3)."""
        e = self.st.escalation
        return EscalationRequest.from_dict(e) if e else None

    @property
    def steps(self) -> int:
        """Tool calls seen so far."""
        return self.st.step_count

    def facts(self, tool: str, args: Any) -> CallFacts:
        """The facts of the call `tool(args)` under this engine's policy, read once and handed
        to every station of the call (`check` takes them too); see `facts`."""
        return facts_of(tool, args, self.policy, self._shell_tools)

    def planned_paths(self, facts: CallFacts) -> list[str]:
        """The files a call may write, as it names them (the guard reports their digests
        before the call as `files_before`, and after it as `tool_result.files`)."""
        return workspace.written_paths(self.st.workspace, facts.plan) if facts.plan else []

    def touched_paths(self, call_id: str) -> list[str]:
        """`planned_paths` of a call still waiting for its result."""
        step = self.st.pending.get(call_id)
        if step is None or not step["plan"]:
            return []
        return workspace.written_paths(self.st.workspace, step["plan"])

    def pending_step(self, call_id: str) -> StepRecord | None:
        """The step of a call checked and still waiting for its result (the same record is
        completed in place when the result is observed), or None."""
        return self.st.pending.get(call_id)

    def gauges(self, now: float, only: Collection[str] | None = None) -> list[LimitGauge]:
        """The value of every hard limit (of those named in `only`, when given: a usage
        moves only tokens and cost), in policy order."""
        return [LimitGauge(name, self._limit_value(name, now), limit)
                for name, limit in self._gauged if only is None or name in only]

    # --- check ---------------------------------------------------------------------------------

    def check(self, call: dict[str, Any], now: float, facts: CallFacts | None = None
              ) -> Check:
        """The verdict on a tool call about to run (`call` = {call_id, tool, args}; `facts`:
        `self.facts` of its tool and arguments, when the caller read them already)."""
        step = self._register(call, now, facts)
        check = self._decide(step, now)
        check.step = step["index"]
        if check.action in ("block", "skip", "pause", "stop"):
            step["refused"] = check.findings[0].detector if check.findings else check.action
        for f in check.findings:
            f.step = step["index"]
        return check

    def _register(self, call: dict[str, Any], now: float, facts: CallFacts | None = None
                  ) -> StepRecord:
        """Count a call as an attempt and keep it pending until its result arrives."""
        st = self.st
        self._touch(now)
        if st.waiting == "user":
            st.waiting = None  # the agent works again (a hook target's turn went on)
        call = call if isinstance(call, dict) else {}
        if facts is None or facts.args is not call.get("args"):
            # facts read from other arguments than these (the log cut a huge call): read what
            # the call holds, as a replay of the log will
            facts = self.facts(str(call.get("tool") or "?"), call.get("args"))
        tool, args = facts.tool, facts.args
        call_id = str(call.get("call_id") or f"step-{st.step_count}")
        canon = canonical_args(args, self._ignore)
        batch = call.get("batch")
        step = new_step(
            st.step_count, _int(call.get("seq")), call_id, tool, facts.category,
            call_signature(tool, canon), canon[:_ARGS_KEPT], st.ws, facts.path, facts.is_read,
            now, batch if isinstance(batch, str) and batch else None, self._head(facts),
            self._run(facts),
        )
        request = asked.asked_for(st.prompt, facts.line, st.asked, facts.run)
        if request is not None:
            step["asked"] = True
            st.asked = [*st.asked, request][-32:]
        try:
            self._follow_files(step, facts)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
            step["plan"], step["touches"], step["views"] = [], [], None  # odd input: unknown
        state = call.get("file")
        step["file"] = state if isinstance(state, dict) else None
        before = call.get("files_before")
        if isinstance(before, dict):
            workspace.meet(st.workspace, before)
        self._settle_unanswered(step)
        st.step_count += 1
        # A poll waits on work already started (a build, a CI run, a sub-agent): it is no
        # iteration of the agent's, so the per-cycle limits that ask "continue?" leave it out
        # (a PR routine that polls its checks for an hour was paused for it); the session's
        # and the task's totals still count it, and `polling` judges a poll that sees nothing.
        waits = step["category"] == "poll"
        for key in ("iterations", "consecutive", "cycle", "task"):
            if not (waits and key in ("consecutive", "cycle")):
                st.counters[key] += 1
        self._add_pending(call_id, step)
        st.last_checked = call_id
        st.fresh_cycle = False
        return step

    def _run(self, facts: CallFacts) -> str:
        """The run a shell call that runs something (`run` category) makes (`StepRecord.run`);
        "" (its signature) for other calls: only runs are asked whether they ran again."""
        if facts.line is None or facts.category != "run":
            return ""
        keys = tools.vocabulary().command_keys
        rest = {k: v for k, v in facts.args.items() if k not in keys and k not in self._ignore}
        return run_signature(facts.tool, canonical_args(rest) if rest else "", facts.run)

    def _follow_files(self, step: StepRecord, facts: CallFacts) -> None:
        """What the call would write, which file it shows, which files a probe calls its own."""
        st = self.st
        if step["category"] in ("mutate", "run"):
            step["plan"] = facts.plan
            step["touches"] = workspace.touched_keys(st.workspace, facts.plan)
        elif step["category"] == "read":
            step["views"] = workspace.viewed_path(step["path"], facts.commands)
        if step["category"] == "run" and facts.line is not None:
            step["probe"] = workspace.note_probe(st.workspace,
                                                 probe_files(facts.line, facts.commands))

    def _head(self, facts: CallFacts) -> str:
        """The tool, and for a shell line the program of its last pipeline (whose status the
        line reports), for an editor its sub-command (`str_replace`, `insert`)."""
        tool = facts.tool
        if facts.line is not None:
            last = last_pipeline_head([c for c in facts.commands if c.words])
            return f"{tool}:{program(last)[:80]}" if last is not None else tool
        sub = facts.args.get("command")
        if isinstance(sub, str) and sub.isidentifier():  # an editor's sub-command
            return f"{tool}:{sub}"
        return tool

    def _settle_unanswered(self, step: StepRecord) -> None:
        """Earlier attempts of the same call whose result never came (the harness did not
        report one) still count: they join the history with no outcome."""
        st = self.st
        for cid, old in list(st.pending.items()):
            if (old["signature"] == step["signature"] and not old["refused"]
                    and (old["batch"] is None or old["batch"] != step["batch"])):
                del st.pending[cid]
                old["outcome"], old["error"], old["plan"] = NO_RESULT, "no_result", []
                self._push(old)
                for det in _RECORDERS:
                    det.record(st, old, st.memory[det.name])

    def _decide(self, step: StepRecord, now: float) -> Check:
        st = self.st
        sig = step["signature"]
        if st.level >= 4:
            return Check("stop", 4, "session stopped", "The session was stopped.", sig)
        hits = self._limit_hits(now)
        if hits:
            return self._limit_check(hits, sig)
        if st.level == 3 and st.escalation:
            esc = EscalationRequest.from_dict(st.escalation)
            return Check("pause", 3, "waiting for the operator", esc.reason, sig,
                         escalation=esc)
        p = self.policy.params(step["tool"], step["category"])
        for det in _SKIPPERS:  # the file cache answers a re-read, approved or not
            f = self._refusal(det, step, p)
            if f is not None and not self._quieted(f, step["index"]):
                return Check("skip", st.level, "stale read", f.message, sig, [f],
                             cached_output=f.cached_output)
        if st.approvals.get(sig, 0) > 0:
            st.approvals[sig] -= 1
            left = st.approvals[sig]
            return Check("allow", st.level, f"approved repeat ({left} left)", None, sig)
        for det in _REFUSERS:  # the first detector to refuse the call wins
            f = self._refusal(det, step, p)
            if f is not None and not self._quieted(f, step["index"]):
                return self._apply(f, sig, now)
        return Check("allow", st.level, "", None, sig)

    def _refusal(self, det: Detector, step: StepRecord, p: dict[str, dict[str, Any]]
                 ) -> Finding | None:
        q = p[det.name]
        return det.refuse(self.st, step, self.st.memory[det.name], q) if q["enabled"] else None

    def _apply(self, f: Finding, sig: str, now: float) -> Check:
        """Turn a refusing finding into a check; raise the level, open an escalation (a
        finding without strong evidence is told as a nudge: the call runs)."""
        st = self.st
        self._weigh(f, st.pending.get(st.last_checked or ""))
        if f.level < 2:
            st.level = max(st.level, 1)
            return Check("nudge", st.level, f.detector, f.message, sig, [f])
        level = f.level
        if level == 3 and self._cooling(f.signature, now):
            level = 2  # within the cooldown after an approved escalation: block, do not ask
            f.level, f.action, f.message = 2, "block", as_block(f.message)
        st.level = max(st.level, level)
        st.progress_streak = 0
        esc = None
        if level == 3:
            esc = EscalationRequest("detection", f.message, list(f.evidence), f.signature)
            st.escalation = esc.to_dict()
            self._escalated(f.signature, now)
        action = ACTION_BY_LEVEL[level]
        return Check(action, st.level, f.detector, f.message, sig, [f], escalation=esc)

    # --- limits --------------------------------------------------------------------------------

    def _limit_value(self, name: str, now: float) -> float:
        st = self.st
        if name == "duration_s":
            return st.work_s + self._worked(now)
        if name == "resets_per_conversation":
            return st.counters["resets"]
        return st.counters[_LIMIT_COUNTERS[name]]

    def _limit_hits(self, now: float) -> list[LimitHit]:
        hits = []
        for name, limit, action in self._limits:
            if limit is None:
                continue
            value = self._limit_value(name, now)
            if value - self.st.baselines.get(name, 0.0) > limit or (
                name not in ("consecutive_tool_calls", "iterations_per_cycle",
                             "iterations_per_session", "actions_per_task")
                and value - self.st.baselines.get(name, 0.0) >= limit
            ):
                if self.st.limits_hit.get(name) and self.st.level >= 3:
                    continue  # already escalated; the pause below answers
                hits.append(LimitHit(name, value, limit, action))  # type: ignore[arg-type]
        return hits

    def _limit_check(self, hits: list[LimitHit], sig: str) -> Check:
        st = self.st
        stop = [h for h in hits if h.action == "stop"]
        hit = stop[0] if stop else hits[0]
        for h in hits:
            st.limits_hit[h.name] = True
        unit = {"duration_s": " s", "cost_usd": " USD"}.get(hit.name, "")
        reason = f"limit {hit.name} reached: {hit.value:g}{unit} of {hit.limit:g}{unit}"
        if stop:
            st.level = 4
            return Check("stop", 4, reason, f"Stopped: {reason}. The session ends here.", sig,
                         limits=hits)
        kind = "cycle" if hit.name == "iterations_per_cycle" else "limit"
        question = (
            " Continue?" if kind == "cycle"
            else " An operator must decide whether to go on."
        )
        esc = EscalationRequest(kind, reason + "." + question, [], None, hit.name)  # type: ignore[arg-type]
        st.level = 3
        st.escalation = esc.to_dict()
        return Check("pause", 3, reason, f"Paused: {reason}.{question}", sig, limits=hits,
                     escalation=esc)

    # --- observe -------------------------------------------------------------------------------

    def observe(self, event: dict[str, Any], now: float) -> list[Finding]:
        """Feed any protocol event; returns the detections it caused (possibly none).

        A `tool_call` already passed to `check` is not counted again; one the operator refused
        before it ran (`refused_by`) counts as an attempt without a verdict. A `decision_applied`
        applies its recorded effect (see `decisions`): the live guard applies the effect itself
        and never shows the engine its own `decision_applied`, a replay observes it.
        """
        if not isinstance(event, dict):
            return []
        try:
            return self._observe(event, now)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return []  # a malformed event never breaks the engine

    def _observe(self, event: dict[str, Any], now: float) -> list[Finding]:
        st = self.st
        kind = event.get("type")
        user = kind == "message" and _prompted(event)
        self._touch(now, waited=user)
        if kind == "tool_result":
            st.waiting = None  # a tool ran: whatever held the agent is over
            return self._result(event)
        if kind == "tool_call":
            cid = str(event.get("call_id") or "")
            if cid and (cid == st.last_checked or cid in st.pending):
                step = st.pending.get(cid)
                if step is not None and not step["seq"]:
                    step["seq"] = _int(event.get("seq"))
                return []
            if event.get("refused_by"):
                self._register(event, now)["refused"] = "operator"
                return []
            return self.check(event, now).findings
        if kind == "decision_applied":
            effect = recorded_effect(self, event)
            if effect is not None:
                self.apply_effect(effect, now)
            return []
        if kind == "message":
            return self._message(event)
        if kind == "usage":
            st.counters["tokens"] += _int(event.get("input_tokens")) + _int(
                event.get("output_tokens"))
            cost = event.get("cost_usd")
            if isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0:
                st.counters["cost_usd"] += float(cost)
            return []
        if kind == "session_start":
            ts = event.get("ts")
            st.start_ts = float(ts) if isinstance(ts, int | float) and ts else now
            return []
        if kind == "escalation":  # the guard's own pause, or this engine's escalation
            st.waiting = "operator"
            return []
        if kind in ("task_start", "task_end"):
            self._task_boundary()
            return []
        if kind == "checkpoint":
            commit = event.get("commit")
            if isinstance(commit, str) and commit != st.last_commit:
                if st.last_commit is not None:
                    self._bump()
                st.last_commit = commit
            return []
        if kind == "rollback":
            self._bump()
            return []
        return []

    def _message(self, event: dict[str, Any]) -> list[Finding]:
        st = self.st
        role = event.get("role")
        if role == "user":  # a person's prompt: a new task (see `user_turn`)
            if _prompted(event):
                self.user_turn(str(event.get("text")))
            return []
        if role != "assistant":
            return []
        st.counters["consecutive"] = 0
        found = []
        for det in _READERS:
            p = self.policy["detectors"][det.name]
            if p["enabled"]:
                f = det.message(st, event, st.memory[det.name], p)
                if f is not None and not self._quieted(f, st.step_count):
                    self._weigh(f)
                    self._raise(f)
                    found.append(f)
        return found

    def _result(self, event: dict[str, Any]) -> list[Finding]:
        st = self.st
        cid = str(event.get("call_id") or "")
        step = st.pending.pop(cid, None)
        if step is None:
            return []
        output = event.get("output")
        output = output if isinstance(output, str) else ""
        err = event.get("error")
        err = err if isinstance(err, str) else None
        # a wait whose time ran out saw the work still running: no failure of the poll
        waited = step["category"] == "poll" and waited_out(output)
        ok = bool(event.get("ok")) and (waited or failure_line(output) is None)
        step["ok"] = ok
        step["outcome"], step["empty"] = outcome(ok, output)
        if ok and is_launch(output):  # an acknowledgement is no outcome: the launch itself is
            step["outcome"] = launch_outcome(step["signature"])
        elif ok and step["category"] in ("run", "read") and reports_pending(output):
            step["category"] = "poll"  # "still running": it waited on work already started
        step["error"] = error_class(ok, err, output)
        step["error_id"] = error_identity(ok, err, output, step["args"])
        step["error_source"] = error_source(ok, err, output)
        step["result_seq"] = _int(event.get("seq"))
        if ok and step["category"] in ("run", "poll"):
            step["last_line"] = output_line(output)
        if not step["seq"]:
            step["seq"] = step["result_seq"]
        refused = step["refused"]
        if refused == "skip":
            return []  # a skipped re-read whose cached content was handed back
        if refused in st.memory:  # refused, but it ran anyway (a replay)
            _DETECTORS[refused].undo(step, st.memory[refused])
        if not ok:
            st.counters["errors"] += 1
        category, path = step["category"], step["path"]
        digests = event.get("files")
        changes = workspace.apply(
            st.workspace, step["index"], step["plan"], ok,
            digests if isinstance(digests, dict) else None, category == "mutate")
        step["plan"] = []
        if ok and step["views"]:
            changes += workspace.observe_view(st.workspace, step["index"], step["views"],
                                              step["signature"], step["outcome"] or "")
        step["changed"] = [c["file"] for c in changes]
        step["returned"] = [c["file"] for c in changes if c["returned"]]
        for change in changes:
            self._files_changed(None if change["file"] == workspace.UNKNOWN_FILE
                                else change["file"])
        if category == "mutate" and not ok and path:
            self._files_changed(path)  # a failed edit: let the agent re-read the file
            if step["error"] == "read_first":
                st.read_first = [*st.read_first, path][-16:]
        elif category == "run" and not step["is_read"]:
            self._files_changed(None)  # a script may have written anything
        if ok and category == "read" and path in st.read_first:
            # the tool wanted this file read before an edit: the same edit may now succeed
            st.read_first = [p for p in st.read_first if p != path]
            workspace.bump(st.workspace)
        st.ws = workspace.version(st.workspace)
        novel = step["outcome"] not in st.seen_out
        step["novel"] = novel
        st.novel_count += novel
        step["progress"] = workspace.is_new_version(st.workspace) or novel
        self._push(step)
        if ok and step["is_read"] and path:
            _FILE_CACHE.keep(st, step, st.memory[_FILE_CACHE.name], output)
        return self._detect(step)

    def _detect(self, step: StepRecord) -> list[Finding]:
        st = self.st
        p = self.policy.params(step["tool"], step["category"])
        for det in _RECORDERS:
            det.record(st, step, st.memory[det.name])
        found = []
        for det in _OBSERVERS:
            q = p[det.name]
            if q["enabled"]:
                f = det.observe(st, step, st.memory[det.name], q)
                if f is not None and not self._quieted(f, step["index"]):
                    found.append(f)
        for f in found:
            if f.level == 1 and _DETECTORS[f.detector].loop:
                # the first nudge of a loop: a recovery turn from the evidence, in place of
                # the detector's generic advice (kept when nothing it cites is still known)
                f.message = recovery_turn(f.detector, f.evidence, st.hist) or f.message
            self._weigh(f)
            self._raise(f)
        if step["progress"] and not found:
            st.progress_streak += 1
            if st.progress_streak >= self.policy["level_decay_steps"] and st.level in (1, 2):
                st.level -= 1
                st.progress_streak = 0
        elif not step["progress"]:
            st.progress_streak = 0
        return found

    def _quieted(self, f: Finding, index: int) -> bool:
        """Whether an operator quieted this finding (its detector, or its loop signature) for
        the step at `index` (see `decisions`, the `quiet` effect); expired quiets are dropped."""
        quiet = self.st.quiet
        if not quiet:
            return False
        quiet[:] = [q for q in quiet if q["until"] is None or q["until"] > index]
        return any(q["detector"] == f.detector
                   and (q["signature"] is None or q["signature"] == f.signature)
                   for q in quiet)

    def _weigh(self, f: Finding, attempt: StepRecord | None = None) -> None:
        """Grade a loop finding's evidence (`confidence.weigh`; `attempt`: the call a refusal
        is about), say it in its message, and keep blocks and escalations to strong evidence:
        a weaker one becomes a nudge."""
        if not _DETECTORS[f.detector].loop:
            return
        f.confidence, f.basis = weigh(f.detector, f.evidence, self.st.hist, attempt, f.level)
        if f.level >= 2 and not may_refuse(f.confidence):
            f.level, f.action, f.message = 1, "nudge", as_nudge(f.message)
        f.message = f"{f.message} (Evidence: {f.confidence}, {f.basis}.)"

    def _raise(self, f: Finding) -> None:
        """Raise the level to an observe-time finding's; open an escalation for level 3 (a
        signature escalated within the cooldown is blocked instead)."""
        st = self.st
        st.progress_streak = 0
        st.fresh_cycle = False
        now = st.last_ts or 0.0
        if f.level == 3 and self._cooling(f.signature, now):
            f.level, f.action, f.message = 2, "block", as_block(f.message)
        if f.level >= 3 and st.level < 3:
            esc = EscalationRequest("detection", f.message, list(f.evidence), f.signature)
            st.escalation = esc.to_dict()
            self._escalated(f.signature, now)
        st.level = max(st.level, f.level)

    def _cooling(self, signature: str, now: float) -> bool:
        last = self.st.escalated_at.get(signature)
        return last is not None and now - last < float(self.policy["escalation_cooldown_s"])

    def _escalated(self, signature: str, now: float) -> None:
        marks = self.st.escalated_at
        marks.pop(signature, None)
        marks[signature] = now
        while len(marks) > 64:
            marks.pop(next(iter(marks)))

    def _push(self, step: StepRecord) -> None:
        st = self.st
        if len(st.outs) == st.outs.maxlen:
            old = st.outs[0]
            n = st.seen_out.get(old, 0) - 1
            if n > 0:
                st.seen_out[old] = n
            else:
                st.seen_out.pop(old, None)
        out = step["outcome"] or ""
        st.outs.append(out)
        st.hist.append(step)
        st.seen_out[out] = st.seen_out.get(out, 0) + 1

    def _add_pending(self, cid: str, step: StepRecord) -> None:
        pending = self.st.pending
        pending.pop(cid, None)
        pending[cid] = step
        while len(pending) > _MAX_PENDING:
            pending.pop(next(iter(pending)))

    # --- workspace -----------------------------------------------------------------------------

    def _bump(self) -> None:
        """Something changed that nobody can see into: a new workspace version."""
        workspace.bump(self.st.workspace)
        self.st.ws = workspace.version(self.st.workspace)
        self._files_changed(None)

    def _files_changed(self, path: str | None) -> None:
        """`path` (a path or a file key; None: any file) may differ from what was read: tell
        the detectors."""
        for det in _WATCHERS:
            det.workspace_changed(self.st.memory[det.name], path)

    # --- operator effects and boundaries -------------------------------------------------------

    def apply_effect(self, effect: Effect, now: float) -> None:
        """Apply what an operator decision does to the engine (the table in `decisions`): what
        every effect does here, the rest by the effect itself (`engine.effects`)."""
        st = self.st
        self._touch(now)
        st.waiting = None  # an operator decided: the agent goes on
        if effect.answers:
            self._close_escalation(effect.limit)
        effect.apply(self, now)

    def go_on(self, call_id: str, now: float) -> None:
        """The pending escalation is answered "go on" (no extra repeats) and the paused call
        `call_id` runs: what a replay of a run without an operator assumes."""
        esc = self.st.escalation
        if esc is not None:
            self.apply_effect(Effect(True, esc.get("signature"), esc.get("limit")), now)
        step = self.st.pending.get(call_id)
        if step is not None and step["refused"] == "pause":
            step["refused"] = None

    def approve(self, signature: str | None = None, repeats: int | None = None) -> None:
        """The operator's go-ahead, as the `approve` effect: allow `repeats` (default: the
        policy's `approve_repeats`) further repeats of `signature` (default: the escalated one),
        lower the level to 1, and answer the pending escalation if there is one."""
        esc = self.st.escalation
        n = int(self.policy["approve_repeats"] if repeats is None else repeats)
        effect = Approve(esc is not None, signature or (esc or {}).get("signature"),
                         (esc or {}).get("limit"), max(0, n))
        self.apply_effect(effect, self.st.last_ts or 0.0)

    def _close_escalation(self, limit: str | None) -> None:
        """The operator (or the deadline) answered the pending escalation: close it; a limit
        behind it starts a new episode from its current value."""
        st = self.st
        st.escalation = None
        if limit:
            st.baselines[limit] = self._limit_value(limit, st.last_ts or 0.0)
            st.limits_hit.pop(limit, None)
        self._lower_level(1)

    def unblock(self) -> None:
        """The operator let the agent go on (an approval, a rollback): the detectors' blocks
        are cleared and the level is at most 1."""
        self._clear_detector_blocks()
        self._lower_level(1)

    def _lower_level(self, at_most: int) -> None:
        if self.st.level < 4:
            self.st.level = min(self.st.level, at_most)

    def can_reset(self) -> bool:
        """Whether a reset is allowed now (not stopped, `resets_per_conversation` not used up)."""
        st = self.st
        limit, _ = self.policy.limit("resets_per_conversation")
        return st.level < 4 and (limit is None or st.counters["resets"] < limit)

    def reset(self, now: float) -> bool:
        """Clear what `decisions.RESET_CLEARS` says (like a `/clear`), at most
        `resets_per_conversation` times; returns whether the reset was allowed.

        Kept: the tool-call count, the workspace version, the per-task counter, and the
        session-wide counters unless the policy's `reset_clears_session_limits` is true."""
        if not self.can_reset():
            return False
        st = self.st
        fresh = self._fresh_state()
        fresh.step_count = st.step_count
        fresh.workspace = st.workspace
        workspace.bump(fresh.workspace)
        fresh.ws = workspace.version(fresh.workspace)
        fresh.last_commit = st.last_commit
        fresh.last_ts = now
        fresh.counters["resets"] = st.counters["resets"] + 1
        fresh.quiet = st.quiet  # the operator's quiets outlast a reset
        kept = list(TASK_LIMITS)
        if self.policy["reset_clears_session_limits"]:
            fresh.start_ts = now
        else:
            kept += SESSION_LIMITS
            fresh.start_ts, fresh.work_s = st.start_ts, st.work_s
        for name in kept:
            counter = _LIMIT_COUNTERS.get(name)
            if counter is not None:
                fresh.counters[counter] = st.counters[counter]
            if name in st.baselines:
                fresh.baselines[name] = st.baselines[name]
        self.st = fresh
        return True

    def new_cycle(self) -> None:
        """A new conversation cycle (the user spoke): per-cycle counters restart, detectors see
        a new context, and the level returns to normal unless the session is stopped. Two
        signals of a new cycle with no tool call in between are one cycle."""
        st = self.st
        if st.fresh_cycle:
            return
        for name in PER_CYCLE_LIMITS:
            st.counters[_LIMIT_COUNTERS[name]] = 0
            st.baselines.pop(name, None)
        self._new_context()
        st.fresh_cycle = True

    def user_turn(self, prompt: str = "") -> None:
        """A person prompted: a new cycle and a new task. The per-cycle and per-task limits
        start again, and the detectors see a new context (a new workspace version: "run the
        tests again", asked by the user, is no repeat of the agent's). The agent no longer
        waits for its user. The shell lines `prompt` spells out are the person's requests
        (`asked.py`)."""
        self.st.waiting = None
        self.st.prompt, self.st.asked = asked.prompt_text(prompt), []
        self.new_cycle()
        self.st.counters["task"] = 0
        self.st.baselines.pop("actions_per_task", None)

    def task_skipped(self) -> None:
        """The operator skipped the current task: start the next one with a clean slate."""
        self._task_boundary()

    def _task_boundary(self) -> None:
        self.st.counters["task"] = 0
        self.st.baselines.pop("actions_per_task", None)
        self._new_context()

    def _new_context(self) -> None:
        st = self.st
        self._bump()
        self._clear_detector_blocks()
        for det in REGISTRY:
            det.new_context(st.memory[det.name])
        st.escalation = None
        st.limits_hit.clear()
        st.fresh_cycle = False
        self._lower_level(0)

    def _clear_detector_blocks(self) -> None:
        for det in REGISTRY:
            det.clear(self.st.memory[det.name])

    def _touch(self, now: float, *, waited: bool = False) -> None:
        """Time moves to `now`: the gap since the last event joins the working time, unless
        the agent was waiting (`waited`: the event is a user's prompt, so the agent waited
        for it)."""
        st = self.st
        if st.start_ts is None:
            st.start_ts = now
        if not waited:
            st.work_s += self._worked(now)
        st.last_ts = now

    def _worked(self, now: float) -> float:
        """What the time since the last event adds to the agent's working time: nothing while
        it waits for its operator (an escalation held) or for its user (after the end of a
        turn, `waiting`), and at most the policy's `idle_gap_s` for one silence (someone is
        away, not the agent at work). The engine has no clock: only the `now` it is given."""
        st = self.st
        if st.last_ts is None or st.waiting is not None or st.escalation is not None:
            return 0.0
        return min(max(0.0, now - st.last_ts), self.policy.idle_gap_s)

    # --- snapshot ------------------------------------------------------------------------------

    def snapshot(self, *, copy: bool = True) -> dict[str, Any]:
        """The whole state as a JSON-serialisable dict (bounded by the policy's window).

        With `copy=False` the dict shares the engine's live state and its policy (which never
        changes): serialise it at once, before the engine changes again (what a hook step does
        when it saves, without paying for a copy of either).
        """
        state = self.st.to_dict()
        if not copy:
            return {"v": SNAPSHOT_VERSION, "policy": self.policy.data, "state": state}
        return {"v": SNAPSHOT_VERSION, "policy": self.policy.to_dict(), "state": _deepcopy(state)}

    @classmethod
    def restore(cls, snapshot: dict[str, Any], *, copy: bool = True) -> "Engine":
        """An engine that continues exactly as the one that took `snapshot` would.

        With `copy=False` the engine takes the dict over (e.g. freshly parsed JSON) instead of
        copying it; the caller must not use it afterwards.
        """
        if not isinstance(snapshot, dict) or snapshot.get("v") != SNAPSHOT_VERSION:
            raise ValueError("not an engine snapshot of this version")
        state = snapshot["state"]
        policy = snapshot["policy"] if not copy else _deepcopy(snapshot["policy"])
        engine = cls(Policy(_with_every_detector(policy)))
        engine.st = State.from_dict(_deepcopy(state) if copy else state)
        for det in REGISTRY:  # a detector added since the snapshot starts with a fresh memory
            if det.name not in engine.st.memory:
                engine.st.memory[det.name] = det.memory()
        return engine

    @classmethod
    def resume(cls, snapshot: Any, *, copy: bool = True) -> "Engine":
        """`restore`, or, for a snapshot an older version of the engine saved (the package was
        upgraded in the middle of a session), a fresh engine under the policy it recorded: its
        memories, levels and counters start over. Anything else raises `ValueError`. `copy` as
        for `restore`."""
        version = snapshot.get("v") if isinstance(snapshot, dict) else None
        recorded = snapshot.get("policy") if isinstance(snapshot, dict) else None
        if not (isinstance(version, int) and 0 < version < SNAPSHOT_VERSION
                and isinstance(recorded, dict)):
            return cls.restore(snapshot, copy=copy)  # this version's, or not one (ValueError)
        try:
            return cls(Policy.from_dict(recorded))
        except ValueError:  # a key this version no longer knows
            name = recorded.get("profile")
            return cls(Policy.profile(name if name in PROFILES else "default"))


def _with_every_detector(policy: dict[str, Any]) -> dict[str, Any]:
    """`policy` (a snapshot's) with the defaults of every detector it lacks: the package was
    upgraded in the middle of a session and a detector added, which this session's policy,
    recorded before, could not name. Its snapshot version is the same (a new detector keeps
    the snapshot's shape), so the session carries on, the new detector under its defaults."""
    detectors = policy.get("detectors")
    if isinstance(detectors, dict):
        for det in REGISTRY:
            if det.name not in detectors:
                detectors[det.name] = dict(det.defaults)
    return policy


def _int(value: Any) -> int:
    """A non-negative int from an untrusted field (anything else is 0)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    try:
        return max(0, int(value))
    except (ValueError, OverflowError):
        return 0


def _prompted(event: dict[str, Any]) -> bool:
    """Whether a user message is a person's prompt: it says something. Qwen Code sends an empty
    prompt between the turns of one answer (its tool results going back to the model); that is
    no new task, or a loop would restart its count at every call."""
    text = event.get("text")
    return event.get("role") == "user" and isinstance(text, str) and bool(text.strip())
