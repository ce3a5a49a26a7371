"""The engine: `check` a call before it runs, `observe` every event, keep levels and limits.

Pure and incremental: no I/O and no clock (`now` is passed in), state bounded by the policy's
window, and `snapshot()`/`restore()` so a hook process can load the state, apply one step and
save it. See the package docstring for a usage example and docs/engine.md for the rules.
"""

from copy import deepcopy as _deepcopy
from typing import Any

from supervisor.engine import detectors as d
from supervisor.engine import guidance as g
from supervisor.engine.categories import classify, file_path, is_file_read
from supervisor.engine.decisions import (
    PER_CYCLE_LIMITS,
    SESSION_LIMITS,
    TASK_LIMITS,
    Effect,
    recorded_effect,
)
from supervisor.engine.fingerprint import (
    call_signature,
    canonical_args,
    error_class,
    outcome,
)
from supervisor.engine.policy import Policy
from supervisor.engine.state import SNAPSHOT_VERSION, State
from supervisor.engine.text import repeated_text
from supervisor.engine.types import (
    ACTION_BY_LEVEL,
    Check,
    Escalation,
    Finding,
    Gauge,
    LimitHit,
)

_CANON_KEEP = 400
"""Characters of canonical arguments kept per step (similarity and messages)."""
_MAX_PENDING = 64
_LIMIT_COUNTERS = {
    "consecutive_tool_calls": "consecutive", "iterations_per_session": "iterations",
    "errors_per_session": "errors", "iterations_per_cycle": "cycle", "tokens": "tokens",
    "cost_usd": "cost_usd", "actions_per_task": "task",
}


class Engine:
    """Loop prevention for one session (see module and package docstrings)."""

    def __init__(self, policy: Policy | None = None) -> None:
        self.policy = policy or Policy.profile("default")
        pol = self.policy
        self._ignore = frozenset(pol["ignore_arg_keys"])
        self._limits = [(name, *pol.limit(name)) for name in pol["limits"]
                        if name != "resets_per_conversation"]
        self.st = State(pol["window"], min(pol["lookback"], pol["window"]),
                        pol["detectors"]["repeated_text"]["lookback"])

    # --- public properties -------------------------------------------------------------------

    @property
    def level(self) -> int:
        """The current degradation level, 0 (normal) to 4 (stopped)."""
        return self.st.level

    @property
    def escalation(self) -> Escalation | None:
        """The escalation waiting for the operator, if any (level 3)."""
        e = self.st.escalation
        return Escalation.from_dict(e) if e else None

    @property
    def steps(self) -> int:
        """Tool calls seen so far."""
        return self.st.step_count

    def gauges(self, now: float) -> list[Gauge]:
        """The value of every hard limit, in policy order."""
        out = []
        for name in self.policy["limits"]:
            limit, _ = self.policy.limit(name)
            out.append(Gauge(name, self._limit_value(name, now), limit))
        return out

    # --- check ---------------------------------------------------------------------------------

    def check(self, call: dict[str, Any], now: float) -> Check:
        """The verdict on a tool call about to run (`call` = {call_id, tool, args})."""
        step = self._register(call, now)
        check = self._decide(step, now)
        check.step = step["i"]
        if check.action in ("block", "skip", "pause", "stop"):
            step["blk"] = check.findings[0].detector if check.findings else check.action
        for f in check.findings:
            f.step = step["i"]
        return check

    def _register(self, call: dict[str, Any], now: float) -> dict[str, Any]:
        """Count a call as an attempt and keep it pending until its result arrives."""
        st = self.st
        self._touch(now)
        call = call if isinstance(call, dict) else {}
        tool = str(call.get("tool") or "?")
        args = call.get("args")
        args = args if isinstance(args, dict) else {}
        cid = str(call.get("call_id") or f"step-{st.step_count}")
        canon = canonical_args(args, self._ignore)
        sig = call_signature(tool, canon)
        cat = classify(tool, args, self.policy)
        step = {
            "i": st.step_count, "seq": _int(call.get("seq")), "cid": cid, "tool": tool,
            "cat": cat, "sig": sig, "canon": canon[:_CANON_KEEP], "ws": st.ws, "ok": None,
            "out": None, "err": "", "novel": False, "path": file_path(tool, args, self.policy),
            "blk": None, "read": is_file_read(tool, args, self.policy), "t": now,
        }
        st.step_count += 1
        for key in ("iterations", "consecutive", "cycle", "task"):
            st.counters[key] += 1
        self._add_pending(cid, step)
        st.last_checked = cid
        st.empty_replies = []
        st.fresh_cycle = False
        return step

    def _decide(self, step: dict[str, Any], now: float) -> Check:
        st = self.st
        sig = step["sig"]
        if st.level >= 4:
            return Check("stop", 4, "session stopped", "The session was stopped.", sig)
        hits = self._limit_hits(now)
        if hits:
            return self._limit_check(hits, sig)
        if st.level == 3 and st.escalation:
            esc = Escalation.from_dict(st.escalation)
            return Check("pause", 3, "waiting for the operator", esc.reason, sig,
                         escalation=esc)
        p = self.policy.params(step["tool"], step["cat"])
        cached = self._stale_read(step, p)
        if cached is not None:
            return cached
        if st.approvals.get(sig, 0) > 0:
            st.approvals[sig] -= 1
            left = st.approvals[sig]
            return Check("allow", st.level, f"approved repeat ({left} left)", None, sig)
        for blocker in (self._block_exact, self._block_cycle, self._block_similar,
                        self._block_same_error, self._block_polling):
            got = blocker(step, p)
            if got is not None:
                return self._apply(got, sig, now)
        return Check("allow", st.level, "", None, sig)

    def _stale_read(self, step: dict[str, Any], p: dict[str, Any]) -> Check | None:
        if not step["read"] or not p["stale_read"]["enabled"]:
            return None
        entry = self.st.cache.get(step["sig"])
        if entry is None:
            return None
        msg = g.stale_read(entry["path"], entry["step"])
        f = d.finding("stale_read", 0, step["sig"], [entry["seq"]], msg, step["i"], "skip")
        return Check("skip", self.st.level, "stale read", msg, step["sig"], [f],
                     cached_output=entry["output"])

    def _block_exact(self, step: dict[str, Any], p: dict[str, Any]) -> Finding | None:
        q = p["exact_repeat"]
        if not q["enabled"]:
            return None
        pending = sum(1 for s in self.st.pending.values()
                      if s["blk"] == "exact_repeat" and s["sig"] == step["sig"]
                      and s["ws"] == step["ws"])
        got = d.blocks_exact(self.st, step["sig"], step["ws"], q, self.policy["lookback"], pending)
        if got is None:
            return None
        level, run = got
        steps = sorted(s["i"] for s in run)
        ok, err = run[0]["ok"], run[0]["err"]
        verb = {2: "Blocked", 3: "Paused", 4: "Stopped"}[level]
        msg = (
            f"{verb}: this exact call ({g.short_call(step['tool'], step['canon'])}) already ran "
            f"at {g.steps_text(steps)} with {g.outcome_text(ok, err)}, and nothing changed "
            f"since. {g.advice(step['cat'], err).capitalize()}."
        )
        return d.finding("exact_repeat", level, step["sig"], sorted(s["seq"] for s in run), msg,
                         step["i"])

    def _block_cycle(self, step: dict[str, Any], p: dict[str, Any]) -> Finding | None:
        q = p["cycle"]
        if not q["enabled"]:
            return None
        got = d.blocks_cycle(self.st, step["sig"], step["ws"], q)
        if got is None:
            return None
        level, c = got
        c["blocked"] += 1
        msg = (
            f"{'Blocked' if level == 2 else 'Paused'}: this call continues a cycle of "
            f"{c['period']} calls ({c.get('tools', '?')}) that repeated with identical results "
            f"and no change at {g.steps_text(c.get('steps', []))}. "
            f"{g.advice(step['cat']).capitalize()}."
        )
        return d.finding("cycle", level, d._cycle_signature(c["sigs"]), list(c.get("seqs", [])),
                         msg, step["i"])

    def _block_similar(self, step: dict[str, Any], p: dict[str, Any]) -> Finding | None:
        q = p["similar_calls"]
        if not q["enabled"] or not self.st.similar_flags:
            return None
        got = d.blocks_similar(self.st, step["tool"], step["canon"], step["ws"], q)
        if got is None:
            return None
        level, flag = got
        flag["blocked"] += 1
        msg = (
            f"{'Blocked' if level == 2 else 'Paused'}: {flag['n']} near-identical "
            f"{step['tool']} calls at {g.steps_text(flag['steps'])} all gave "
            f"{g.outcome_text(flag['ok'], flag['err'])}; this is one more variation. "
            f"{g.advice(flag['cat'], flag['err']).capitalize()}."
        )
        return d.finding("similar_calls", level, step["sig"], flag["seqs"], msg, step["i"])

    def _block_same_error(self, step: dict[str, Any], p: dict[str, Any]) -> Finding | None:
        q = p["same_error"]
        if not q["enabled"]:
            return None
        got = d.blocks_same_error(self.st, step["tool"], step["cat"], step["path"], q)
        if got is None:
            return None
        level, se = got
        se["blocked"] += 1
        who = "edits" if se["tool"] == "mutate" else step["tool"]
        verb = {2: "Blocked", 3: "Paused", 4: "Stopped"}[level]
        msg = (
            f"{verb}: {who} failed {se['n']} times in a row "
            f"with {se['err']} at "
            f"{g.steps_text(se['steps'])}. Do something else first: "
            f"{g.advice(se['cat'], se['err'])}."
        )
        return d.finding("same_error", level, f"error:{se['tool']}:{se['err']}", se["seqs"],
                         msg, step["i"])

    def _block_polling(self, step: dict[str, Any], p: dict[str, Any]) -> Finding | None:
        q = p["polling"]
        if step["cat"] != "poll" or not q["enabled"]:
            return None
        got = d.blocks_polling(self.st, step["sig"], step["ws"], q)
        if got is None:
            return None
        level, entry = got
        entry["blocked"] += 1
        msg = (
            f"{'Blocked' if level == 2 else 'Paused'}: polling with "
            f"{g.short_call(step['tool'], step['canon'])} has returned the same output "
            f"{entry['n']} times. {g.STRATEGY['poll'].capitalize()}."
        )
        return d.finding("polling", level, step["sig"], entry["seqs"], msg, step["i"])

    def _apply(self, f: Finding, sig: str, now: float) -> Check:
        """Turn a blocking finding into a check; raise the level, open an escalation."""
        st = self.st
        level = f.level
        if level == 3 and self._cooling(f.signature, now):
            level = 2  # within the cooldown after an approved escalation: block, do not ask
            f.level, f.action = 2, "block"
        st.level = max(st.level, level)
        st.progress_streak = 0
        esc = None
        if level == 3:
            esc = Escalation("detection", f.message, list(f.evidence), f.signature)
            st.escalation = esc.to_dict()
            self._escalated(f.signature, now)
        action = ACTION_BY_LEVEL[level]
        return Check(action, st.level, f.detector, f.message, sig, [f], escalation=esc)

    # --- limits --------------------------------------------------------------------------------

    def _limit_value(self, name: str, now: float) -> float:
        st = self.st
        if name == "duration_s":
            return 0.0 if st.start_ts is None else max(0.0, now - st.start_ts)
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
        esc = Escalation(kind, reason + "." + question, [], None, hit.name)  # type: ignore[arg-type]
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
        self._touch(now)
        if kind == "tool_result":
            return self._result(event)
        if kind == "tool_call":
            cid = str(event.get("call_id") or "")
            if cid and (cid == st.last_checked or cid in st.pending):
                step = st.pending.get(cid)
                if step is not None and not step["seq"]:
                    step["seq"] = _int(event.get("seq"))
                return []
            if event.get("refused_by"):
                self._register(event, now)["blk"] = "operator"
                return []
            return self.check(event, now).findings
        if kind == "decision_applied":
            effect = recorded_effect(self, event)
            if effect is not None:
                self.apply_effect(effect, now)
            return []
        if kind == "message":
            role = event.get("role")
            if role == "user":
                self.new_cycle()
                return []
            if role == "assistant":
                st.counters["consecutive"] = 0
                p = self.policy["detectors"]["repeated_text"]
                if p["enabled"]:
                    f = repeated_text(st, event, p)
                    if f is not None:
                        self._raise(f)
                        return [f]
            return []
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
        if kind in ("task_start", "task_end"):
            if kind == "task_end" and event.get("status") == "skipped":
                self.task_skipped()
            else:
                self._task_boundary()
            return []
        if kind == "checkpoint":
            commit = event.get("commit")
            if isinstance(commit, str) and commit != st.last_commit:
                if st.last_commit is not None:
                    self._workspace_changed(None)
                st.last_commit = commit
            return []
        if kind == "rollback":
            self._workspace_changed(None)
            return []
        return []

    def _result(self, event: dict[str, Any]) -> list[Finding]:
        st = self.st
        cid = str(event.get("call_id") or "")
        step = st.pending.pop(cid, None)
        if step is None:
            return []
        ok = bool(event.get("ok"))
        output = event.get("output")
        output = output if isinstance(output, str) else ""
        err = event.get("error")
        step["ok"] = ok
        step["out"], step["empty"] = outcome(ok, output)
        step["err"] = error_class(ok, err if isinstance(err, str) else None, output)
        step["rseq"] = _int(event.get("seq"))
        if not step["seq"]:
            step["seq"] = step["rseq"]
        blk = step["blk"]
        if blk == "skip":
            return []  # a skipped re-read whose cached content was handed back
        self._unblock(step)
        if not ok:
            st.counters["errors"] += 1
        ws_before = st.ws
        if ok and step["cat"] == "mutate":
            self._workspace_changed(step["path"])
        elif step["cat"] == "mutate" and step["path"]:
            self._forget_cache(step["path"])  # a failed edit: let the agent re-read the file
            if step["err"] == "read_first":
                st.read_first = [*st.read_first, step["path"]][-16:]
        elif step["cat"] in ("run", "mutate") and not step["read"]:
            self._forget_cache(step["path"] if step["cat"] == "mutate" else None)
        if ok and step["cat"] == "read" and step["path"] in st.read_first:
            # the tool wanted this file read before an edit: the same edit may now succeed
            st.read_first = [p for p in st.read_first if p != step["path"]]
            st.ws += 1
        novel = step["out"] not in st.seen_out
        step["novel"] = novel
        st.novel_count += novel
        self._push(step)
        if ok and step["read"] and step["path"]:
            self._cache(step, output)
        progress = st.ws != ws_before or novel
        return self._detect(step, progress)

    def _detect(self, step: dict[str, Any], progress: bool) -> list[Finding]:
        st = self.st
        p = self.policy.params(step["tool"], step["cat"])
        found: list[Finding] = []
        lookback = self.policy["lookback"]
        if p["exact_repeat"]["enabled"]:
            found.append(d.exact_repeat(st, step, p["exact_repeat"], lookback))  # type: ignore[arg-type]
        if p["cycle"]["enabled"]:
            found.append(d.cycle(st, step, p["cycle"]))  # type: ignore[arg-type]
        if p["similar_calls"]["enabled"]:
            found.append(d.similar_calls(st, step, p["similar_calls"]))  # type: ignore[arg-type]
        if p["same_error"]["enabled"]:
            found.append(d.same_error(st, step, p["same_error"]))  # type: ignore[arg-type]
        if p["error_rate"]["enabled"]:
            found.append(d.error_rate(st, step, p["error_rate"]))  # type: ignore[arg-type]
        if step["cat"] == "poll":
            if p["polling"]["enabled"]:
                found.append(d.polling(st, step, p["polling"]))  # type: ignore[arg-type]
        elif step["cat"] != "other" and p["no_progress"]["enabled"]:
            found.append(d.no_progress(st, step, progress, p["no_progress"]))  # type: ignore[arg-type]
        result = [f for f in found if f is not None]
        for f in result:
            self._raise(f)
        if progress and not result:
            st.progress_streak += 1
            if st.progress_streak >= self.policy["level_decay_steps"] and st.level in (1, 2):
                st.level -= 1
                st.progress_streak = 0
        elif not progress:
            st.progress_streak = 0
        return result

    def _raise(self, f: Finding) -> None:
        """Raise the level to an observe-time finding's; open an escalation for level 3 (a
        signature escalated within the cooldown is blocked instead)."""
        st = self.st
        st.progress_streak = 0
        st.fresh_cycle = False
        now = st.last_ts or 0.0
        if f.level == 3 and self._cooling(f.signature, now):
            f.level, f.action = 2, "block"
        if f.level >= 3 and st.level < 3:
            esc = Escalation("detection", f.message, list(f.evidence), f.signature)
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

    def _unblock(self, step: dict[str, Any]) -> None:
        """A blocked call ran anyway (a replay): its result counts, not its block."""
        st = self.st
        blk = step["blk"]
        if blk == "cycle" and st.cycle:
            st.cycle["blocked"] = max(0, st.cycle["blocked"] - 1)
        elif blk == "similar_calls":
            for flag in st.similar_flags:
                if flag["tool"] == step["tool"] and flag["blocked"]:
                    flag["blocked"] -= 1
                    break
        elif blk == "same_error" and st.same_error:
            st.same_error["blocked"] = max(0, st.same_error["blocked"] - 1)
        elif blk == "polling" and step["sig"] in st.polls:
            entry = st.polls[step["sig"]]
            entry["blocked"] = max(0, entry["blocked"] - 1)

    def _push(self, step: dict[str, Any]) -> None:
        st = self.st
        if len(st.outs) == st.outs.maxlen:
            old = st.outs[0]
            n = st.seen_out.get(old, 0) - 1
            if n > 0:
                st.seen_out[old] = n
            else:
                st.seen_out.pop(old, None)
        st.outs.append(step["out"])
        st.hist.append(step)
        st.seen_out[step["out"]] = st.seen_out.get(step["out"], 0) + 1
        st.keys.append(f"{step['sig']}:{step['out']}:{step['ws']}")
        if st.cycle and st.cycle["ws"] == step["ws"] and step["sig"] in st.cycle["sigs"]:
            st.cycle["pos"] = st.cycle["sigs"].index(step["sig"]) + 1

    def _add_pending(self, cid: str, step: dict[str, Any]) -> None:
        pending = self.st.pending
        pending.pop(cid, None)
        pending[cid] = step
        while len(pending) > _MAX_PENDING:
            pending.pop(next(iter(pending)))

    # --- workspace and file cache ------------------------------------------------------------

    def _workspace_changed(self, path: str | None) -> None:
        self.st.ws += 1
        self._forget_cache(path)

    def _forget_cache(self, path: str | None) -> None:
        st = self.st
        if path is None:
            st.cache.clear()
            st.cache_bytes = 0
            return
        for key in [k for k, e in st.cache.items() if e["path"] == path]:
            st.cache_bytes -= st.cache.pop(key)["bytes"]

    def _cache(self, step: dict[str, Any], output: str) -> None:
        st = self.st
        budget = int(self.policy["file_cache_bytes"])
        size = len(output.encode("utf-8", "replace"))
        if size > budget:
            return
        old = st.cache.pop(step["sig"], None)
        if old:
            st.cache_bytes -= old["bytes"]
        st.cache[step["sig"]] = {"path": step["path"], "output": output, "step": step["i"],
                                 "seq": step["seq"], "bytes": size}
        st.cache_bytes += size
        while st.cache_bytes > budget and st.cache:
            st.cache_bytes -= st.cache.pop(next(iter(st.cache)))["bytes"]

    # --- operator effects and boundaries -------------------------------------------------------

    def apply_effect(self, effect: Effect, now: float) -> None:
        """Apply what an operator decision does to the engine (the table in `decisions`)."""
        st = self.st
        self._touch(now)
        if effect.answers:
            self._close_escalation(effect.limit)
        kind = effect.kind
        if kind == "approve":
            if effect.signature and effect.repeats > 0:
                st.approvals.pop(effect.signature, None)
                st.approvals[effect.signature] = effect.repeats
                while len(st.approvals) > 64:
                    st.approvals.pop(next(iter(st.approvals)))
            self._clear_detector_blocks()
            self._lower_level(1)
        elif kind == "guidance":
            self.new_cycle()
        elif kind == "rollback":
            self._clear_detector_blocks()
            self._lower_level(1)
        elif kind == "skip":
            self.task_skipped()
        elif kind == "reset":
            self.reset(now)
        elif kind == "stop":
            st.level = 4

    def approve(self, signature: str | None = None, repeats: int | None = None) -> None:
        """The operator's go-ahead, as the `approve` effect: allow `repeats` (default: the
        policy's `approve_repeats`) further repeats of `signature` (default: the escalated one),
        lower the level to 1, and answer the pending escalation if there is one."""
        esc = self.st.escalation
        n = int(self.policy["approve_repeats"] if repeats is None else repeats)
        effect = Effect("approve", esc is not None, max(0, n),
                        signature or (esc or {}).get("signature"), (esc or {}).get("limit"))
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
        fresh = State(st.sizes["window"], st.sizes["lookback"], st.sizes["text_lookback"])
        fresh.step_count = st.step_count
        fresh.ws = st.ws + 1
        fresh.last_commit = st.last_commit
        fresh.last_ts = now
        fresh.counters["resets"] = st.counters["resets"] + 1
        kept = list(TASK_LIMITS)
        if self.policy["reset_clears_session_limits"]:
            fresh.start_ts = now
        else:
            kept += SESSION_LIMITS
            fresh.start_ts = st.start_ts
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

    def task_skipped(self) -> None:
        """The operator skipped the current task: start the next one with a clean slate."""
        self._task_boundary()

    def _task_boundary(self) -> None:
        self.st.counters["task"] = 0
        self.st.baselines.pop("actions_per_task", None)
        self._new_context()

    def _new_context(self) -> None:
        st = self.st
        st.ws += 1
        self._clear_detector_blocks()
        st.no_progress = 0
        st.no_progress_fired = 0
        st.text_streak = []
        st.escalation = None
        st.limits_hit.clear()
        st.fresh_cycle = False
        self._lower_level(0)

    def _clear_detector_blocks(self) -> None:
        st = self.st
        st.cycle = None
        st.similar_flags = []
        st.same_error = None
        st.error_rate = {"fired": 0, "cooldown": 0}

    def _touch(self, now: float) -> None:
        st = self.st
        if st.start_ts is None:
            st.start_ts = now
        st.last_ts = now

    # --- snapshot ------------------------------------------------------------------------------

    def snapshot(self, *, copy: bool = True) -> dict[str, Any]:
        """The whole state as a JSON-serialisable dict (bounded by the policy's window).

        With `copy=False` the dict shares the engine's live state: serialise it at once, before
        the engine changes again (what a hook process does on exit, without paying for a copy).
        """
        state = self.st.to_dict()
        return {"v": SNAPSHOT_VERSION, "policy": self.policy.to_dict(),
                "state": _deepcopy(state) if copy else state}

    @classmethod
    def restore(cls, snapshot: dict[str, Any], *, copy: bool = True) -> "Engine":
        """An engine that continues exactly as the one that took `snapshot` would.

        With `copy=False` the engine takes the dict over (e.g. freshly parsed JSON) instead of
        copying it; the caller must not use it afterwards.
        """
        if not isinstance(snapshot, dict) or snapshot.get("v") != SNAPSHOT_VERSION:
            raise ValueError("not an engine snapshot of this version")
        state = snapshot["state"]
        engine = cls(Policy(snapshot["policy"] if not copy else _deepcopy(snapshot["policy"])))
        engine.st = State.from_dict(_deepcopy(state) if copy else state)
        return engine


def _int(value: Any) -> int:
    """A non-negative int from an untrusted field (anything else is 0)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    try:
        return max(0, int(value))
    except (ValueError, OverflowError):
        return 0
