"""The guard SDK: what an agent loop calls around every tool call.

    from supervisor.guard import Session

    with Session("my-agent", task="fix the failing test", cwd="/path/to/repo") as s:
        for tool, args in model_calls():           # your model's tool calls, one by one
            verdict = s.before_call(tool, args)
            if verdict.proceed:                    # allow or nudge: run the tool
                output = run_tool(tool, args)
                s.after_call(verdict, output, ok=True)
            if verdict.message:                    # tell the model (nudge, block, guidance...)
                tell_model(verdict.message)
            if verdict.action == "stop":
                break

`before_call` answers `allow`, `nudge`, `skip`, `block` or `stop`. When the engine escalates (or
an operator pauses the session) it waits inside: it writes heartbeats, waits for the operator's
decision on the control channel or for the deadline (then the fallback applies), and returns the
resulting verdict with the message the agent must be told. `Session.tool` guards a plain Python
function in one line. Leaving the `with` block on an exception ends the session as `failed`.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, overload

from supervisor.guard import signals
from supervisor.guard.core import Guard, Verdict
from supervisor.guard.journal import PolicyArg
from supervisor.guard.root_policy import PolicyError, budgets_of
from supervisor.guard.settings import GuardSettings
from supervisor.guard.spend import Spending
from supervisor.runenv import RUN_SESSION_ENV
from supervisor.store.paths import resolve_root, sanitize_session_id, validate_session_id
from supervisor.store.writer import LineWriter

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_HEARTBEAT_S = 5.0

_OPEN: set[tuple[str, str]] = set()
"""(store root, session id) of every `Session` open in this process: a second one on the same
session would end it under the first (and save its state over the first's)."""
_OPEN_LOCK = threading.Lock()
_ROLES = ("assistant", "user", "system")
_ASKED_KEPT = 1024
_NOT_ASKED = object()


class ToolRefused(Exception):
    """Raised by a guarded tool function (`Session.tool`) whose call must not run.

    `verdict` says why (`block`, `skip` without cached output, `stop`); `str(exc)` is the
    message to give the model."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.message or f"the call was refused ({verdict.action})")
        self.verdict = verdict


class SessionStopped(ToolRefused):
    """The session is over (a hard limit, or the operator aborted it): stop the agent."""


class Session:
    """One guarded agent session; also a context manager."""

    def __init__(
        self,
        agent: str,
        task: str | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        policy: PolicyArg | os.PathLike[str] = None,
        root: str | os.PathLike[str] | None = None,
        session_id: str | None = None,
        settings: GuardSettings | None = None,
        heartbeat_s: float | None = DEFAULT_HEARTBEAT_S,
        wait_timeout: float | None = None,
    ) -> None:
        """Open the session: writes `session_start` and takes the first checkpoint.

        `cwd`: the agent's working directory (checkpoints cover it; default: the current
        directory). `policy`: a `supervisor.engine.Policy`, a profile name, a dict, or the
        `Path` of a policy TOML file (default: the `default` profile). `root`: the store
        root (default: `$SUPERVISOR_HOME`, else the user state directory). `heartbeat_s`:
        interval of the heartbeat thread (None: none). `wait_timeout`: give up waiting for
        an operator after this many seconds and return `block` (None: wait for the decision
        or the escalation's deadline)."""
        self.root = resolve_root(root)
        named_by_run = session_id is None and bool(os.environ.get(RUN_SESSION_ENV))
        session_id = session_id or os.environ.get(RUN_SESSION_ENV)  # `supervisor run` names it
        self.session_id = validate_session_id(session_id) if session_id else _new_id(agent)
        self.cwd = Path(cwd or os.getcwd()).resolve()
        if not self.cwd.is_dir():  # else every checkpoint and file check fails, one by one
            raise NotADirectoryError(f"cwd {str(self.cwd)!r} is not a directory (the session's "
                                     "checkpoints and file checks cover it)")
        self.heartbeat_s = heartbeat_s
        self.wait_timeout = wait_timeout
        self.last_verdict: Verdict | None = None
        self.last_hint: str | None = None
        """The hint of the latest `after_call` (also for guarded functions), or None."""
        if isinstance(policy, os.PathLike):
            from supervisor.engine.policy_file import load_policy

            policy = load_policy(Path(policy))
        key = (str(self.root), self.session_id)
        with _OPEN_LOCK:
            if key in _OPEN:
                raise RuntimeError(
                    f"session {self.session_id!r} is already open in this process (another "
                    "Session); use that one, or give this one another session_id"
                    + (f" (both took ${RUN_SESSION_ENV})" if named_by_run else ""))
            _OPEN.add(key)
        try:
            self._guard = Guard.open(
                self.root, self.session_id, cwd=self.cwd, policy=policy, settings=settings,
                save_every_s=1.0,
            )
            self._refuse_ended(named_by_run)
            resumed = self._guard.state.started
            self._guard.start(agent, task, pid=os.getpid(), heartbeat_s=heartbeat_s)
            if resumed and task and self._guard.state.task is None:
                self._guard.task_start(task)  # a resumed session (or `supervisor run`'s) gets it
            self._count_in_budgets(agent)
        except BaseException:
            with _OPEN_LOCK:
                _OPEN.discard(key)
            raise
        self._key = key
        self._closed = False
        self._asked: dict[str, Verdict] = {}
        """The calls `before_call` answered whose result is not recorded yet, with the verdict
        given (the latest `_ASKED_KEPT`: a refused call's result may never come)."""
        self._signals = signals.install()  # SIGTERM/SIGHUP end the session like Ctrl+C
        self._beats: _Heartbeats | None = None
        if heartbeat_s:
            self._beats = _Heartbeats(self._guard.files.events, heartbeat_s)
            self._beats.start()

    def _refuse_ended(self, named_by_run: bool) -> None:
        """A session that has ended stays ended: opened again, its every call would be `stop`.
        Say so at once, where the mistake is (a second `Session` after the first closed, under
        `supervisor run` the same id for both)."""
        ended = self._guard.ended
        if ended is None:
            return
        self._guard.close()
        hint = (f" (the id came from ${RUN_SESSION_ENV}: one `supervisor run` is one session)"
                if named_by_run else "")
        raise RuntimeError(f"session {self.session_id!r} has ended ({ended}); a new session "
                           f"needs another session_id{hint}")

    def _count_in_budgets(self, agent: str) -> None:
        """The store root's daily budgets (the `[budgets]` of its policy file, as hook sessions
        count them, docs/policy.md) count this session too: what `usage()` reports is added
        to the day's spend, and a call that would cross a budget is held like a hook target's.
        A table that cannot be used is recorded as a `supervisor_error`, and no budget holds
        (the agent is not stopped for the store's configuration)."""
        try:
            rules = budgets_of(self.root)
        except PolicyError as exc:
            with self._guard.journal.step():
                self._guard.journal.write({"type": "supervisor_error",
                                           "message": f"{exc}; no daily budget applies"})
            return
        if rules:
            self._guard.journal.spending = Spending(self.root, rules, self.session_id, agent,
                                                    str(self.cwd))

    # -- context manager -------------------------------------------------------------------

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        if exc is None:
            self.close("completed")
            return
        if isinstance(exc, SessionStopped):
            status, reason = ("aborted" if exc.verdict.decision == "abort" else "terminated",
                              str(exc))
        elif isinstance(exc, signals.Terminated):
            status, reason = "terminated", str(exc)
        elif isinstance(exc, KeyboardInterrupt):
            status, reason = "terminated", "interrupted (Ctrl+C)"
        else:
            status, reason = "failed", f"{type(exc).__name__}: {exc}"
        try:
            self.close(status, reason)
        except Exception as failed:  # the store is full or gone: the same cause, most often
            # Raised here it would replace the exception that ended the block, the one the
            # agent's code handles; it rides along on it instead.
            exc.add_note(f"and the session {self.session_id!r} could not be ended as "
                         f"{status!r}: {type(failed).__name__}: {failed}")

    # -- the calls -------------------------------------------------------------------------

    @property
    def guard(self) -> Guard:
        """The guard core of this session (for what the SDK does not wrap)."""
        return self._guard

    def recall(self) -> str | None:
        """The pitfalls the project's failure memory knows from earlier sessions (what failed,
        what worked then; docs/memory.md), for the agent's first prompt; None when there are
        none. Before each call, `before_call`'s verdict carries the memory's warning itself."""
        return self._guard.recall()

    @property
    def ended(self) -> str | None:
        return self._guard.ended

    def before_call(
        self, tool: str, args: dict[str, Any] | None = None, *, call_id: str | None = None,
        batch: str | None = None,
    ) -> Verdict:
        """Record a tool call and get the verdict on it (waits while an escalation pends).
        `args`: the call's arguments as a JSON object (a dict with string keys). `batch`: the
        calls of one model turn (parallel tool calls) share it, as a hook target's do, so the
        engine counts them as one decision when it counts repeats."""
        self._check_open()
        if not isinstance(tool, str) or not tool:
            raise TypeError(f"before_call: tool must be the tool's name, not {tool!r}")
        if args is not None and not isinstance(args, dict):
            raise TypeError("before_call: args must be a dict of the call's arguments, not "
                            f"{type(args).__name__} (the event log's tool_call.args is an object)")
        verdict = self._guard.pre_call(tool, args or {}, call_id=call_id, batch=batch)
        if verdict.action == "pause":
            beat = None if self._beats is not None else DEFAULT_HEARTBEAT_S
            verdict = self._guard.wait(self.wait_timeout, escalation_id=verdict.escalation_id,
                                       heartbeat_s=beat)
            if verdict.action == "pause":  # gave up waiting (wait_timeout)
                verdict = Verdict(
                    "block", verdict.level, "No operator decision arrived in time; the call was "
                    "not run. Try a different approach.", "operator did not answer in time",
                    verdict.call_id, escalation_id=verdict.escalation_id,
                )
        self.last_verdict = verdict
        if verdict.call_id is not None:
            self._asked[verdict.call_id] = verdict
            if len(self._asked) > _ASKED_KEPT:
                del self._asked[next(iter(self._asked))]
        return verdict

    def after_call(
        self, call: Verdict | str, output: Any = "", *, ok: bool = True,
        error: str | None = None, duration: float | None = None,
    ) -> str | None:
        """Record a tool call's outcome. `call`: the verdict `before_call` gave, or its call
        id. `duration` in seconds. Returns the hint to give the model now when the outcome
        shows a loop forming (a nudge), else None."""
        self._check_open()
        call_id = call.call_id if isinstance(call, Verdict) else call
        if call_id is None:
            raise ValueError("after_call needs the verdict of before_call (or its call id)")
        asked = self._asked.get(call_id, _NOT_ASKED)
        if asked is _NOT_ASKED:
            raise ValueError(
                f"after_call: no call {call_id!r} of this session awaits its result (before_call "
                "never gave it, or its result was recorded already)")
        if isinstance(call, Verdict) and call is not asked:  # call ids repeat across sessions
            raise ValueError(f"after_call: this verdict on {call_id!r} is not the one this "
                             f"session ({self.session_id!r}) gave: another session's?")
        del self._asked[call_id]
        if isinstance(output, bytes | bytearray):
            output = bytes(output).decode("utf-8", "replace")  # what the tool printed
        detections = self._guard.post_call(
            call_id, output if isinstance(output, str) else repr(output), ok=ok, error=error,
            duration_ms=None if duration is None else round(duration * 1000.0, 3),
        )
        self.last_hint = "\n".join(d["message"] for d in detections) or None
        return self.last_hint

    def message(self, role: str, text: str) -> None:
        """Record a message of the conversation (`assistant`, `user` or `system`)."""
        self._check_open()
        if role not in _ROLES:
            raise ValueError(f"message: role must be one of {', '.join(_ROLES)}, not {role!r}")
        self._guard.message(role, text)

    def usage(
        self, input_tokens: int, output_tokens: int, cost_usd: float | None = None, *,
        cache_read_tokens: int | None = None, cache_write_tokens: int | None = None,
        model: str | None = None,
    ) -> None:
        """Record one model call's token usage and cost. `input_tokens`: those not read from
        the provider's cache (cache reads and writes apart, as the providers' APIs report
        them). `cost_usd` None with a `model`: priced from the `genai-prices` table as the
        hooks price their agents' answers (unknown to it: the cost stays unknown), so the
        session's `cost_usd` limit and the store's daily budgets count it."""
        self._check_open()
        counts = {"input_tokens": input_tokens, "output_tokens": output_tokens,
                  "cache_read_tokens": cache_read_tokens, "cache_write_tokens": cache_write_tokens}
        for name, value in counts.items():
            if value is None and name.startswith("cache"):
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"usage: {name} must be a count (an int >= 0), not {value!r}")
        if cost_usd is not None and not (isinstance(cost_usd, int | float)
                                         and 0 <= cost_usd < math.inf):
            raise ValueError(f"usage: cost_usd must be dollars (>= 0) or None, not {cost_usd!r}")
        if cost_usd is None and model:
            from supervisor.guard.prices import cost_usd as price  # the table: loaded once

            cost_usd = price(model, {k: v for k, v in counts.items() if v is not None})
        self._guard.usage(input_tokens, output_tokens, cost_usd,
                          cache_read_tokens=cache_read_tokens,
                          cache_write_tokens=cache_write_tokens, model=model)

    def _check_open(self) -> None:
        """A call on a closed session says which session and how it ended (the core's own
        error, `the guard is closed`, names neither)."""
        if self._closed:
            raise RuntimeError(f"session {self.session_id!r} is closed ({self.ended}): open a "
                               "new Session to go on")

    def start_task(self, title: str, task_id: str | None = None) -> str:
        """Start a task (the current one, if any, ends as done); return its id."""
        return self._guard.task_start(title, task_id)

    def end_task(self, status: str = "done") -> None:
        self._guard.task_end(status)

    def next_task(self) -> str | None:
        """The operator's plan (a `split`, docs/plans.md): mark the current sub-task done and
        return the next one's instruction for the model, or None when the plan is done (or
        there is no plan). The first sub-task comes in the message of the verdict that
        answered the escalation."""
        return self._guard.next_task()

    @contextmanager
    def task(self, title: str, task_id: str | None = None) -> Iterator[str]:
        """A task as a block: done at the end, failed on an exception (unless it was skipped
        or the session stopped meanwhile)."""
        started = self.start_task(title, task_id)
        try:
            yield started
        except SessionStopped:
            raise
        except BaseException:
            self._end_task_if_current(started, "failed")
            raise
        self._end_task_if_current(started, "done")

    def checkpoint(self, label: str) -> Any:
        """Take a checkpoint of the working directory now (None when checkpoints are off)."""
        return self._guard.checkpoint(label)

    def close(self, status: str = "completed", reason: str | None = None) -> None:
        """End the session (`completed`, `terminated`, `aborted`, `failed`); idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            with signals.shielded():  # a second SIGTERM must not cut the ending short
                if self._beats is not None:
                    self._beats.stop()
                try:
                    self._guard.end(status, reason)
                finally:
                    self._guard.close()
        finally:
            with _OPEN_LOCK:
                _OPEN.discard(self._key)
            if self._signals:
                signals.uninstall()

    @overload
    def tool(self, fn: F, *, name: str | None = None) -> F: ...

    @overload
    def tool(self, fn: None = None, *, name: str | None = None) -> Callable[[F], F]: ...

    def tool(self, fn: F | None = None, *, name: str | None = None) -> F | Callable[[F], F]:
        """Guard a plain Python tool function: `read = session.tool(read_file)`,
        `@session.tool` or `@session.tool(name="bash")`; the guarded function keeps the
        signature of the one it wraps (typed for the caller's mypy). Each call asks
        `before_call` first (arguments by name), runs the function when allowed, and records
        its result or exception. A `skip` with a cached output returns that output; any other
        refusal raises `ToolRefused` (`SessionStopped` for `stop`) whose message is what the
        model must be told."""
        if fn is None:
            def decorate(f: F) -> F:
                return self.tool(f, name=name)
            return decorate
        tool_name = name or fn.__name__
        signature = inspect.signature(fn)

        def ask(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Verdict:
            try:
                bound = signature.bind(*args, **kwargs)
                call_args = {k: _jsonable(v) for k, v in bound.arguments.items()}
            except TypeError:
                call_args = {"args": [_jsonable(a) for a in args],
                             **{k: _jsonable(v) for k, v in kwargs.items()}}
            return self.before_call(tool_name, call_args)

        def refused(verdict: Verdict) -> Any:
            if verdict.action == "skip" and verdict.cached_output is not None:
                return verdict.cached_output
            if verdict.action == "stop":
                raise SessionStopped(verdict)
            raise ToolRefused(verdict)

        def record(verdict: Verdict, started: float, result: Any,
                   exc: BaseException | None = None) -> None:
            duration = time.perf_counter() - started
            if exc is not None:
                self.after_call(verdict, "", ok=False, error=f"{type(exc).__name__}: {exc}",
                                duration=duration)
            else:
                self.after_call(verdict, result if isinstance(result, str) else repr(result),
                                ok=True, duration=duration)

        if inspect.iscoroutinefunction(fn):
            # The tool's result is what its coroutine returns, not the coroutine; the verdict
            # may wait for an operator, so it is asked off the event loop.
            import asyncio

            @functools.wraps(fn)
            async def guarded_async(*args: Any, **kwargs: Any) -> Any:
                verdict = await asyncio.to_thread(ask, args, kwargs)
                if not verdict.proceed:
                    return refused(verdict)
                started = time.perf_counter()
                try:
                    result = await fn(*args, **kwargs)
                except Exception as exc:
                    record(verdict, started, None, exc)
                    raise
                record(verdict, started, result)
                return result

            return guarded_async  # type: ignore[return-value]

        @functools.wraps(fn)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            verdict = ask(args, kwargs)
            if not verdict.proceed:
                return refused(verdict)
            started = time.perf_counter()
            try:
                result = fn(*args, **kwargs)
            except Exception as exc:
                record(verdict, started, None, exc)
                raise
            record(verdict, started, result)
            return result

        return guarded

    def _end_task_if_current(self, task_id: str, status: str) -> None:
        current = self._guard.state.task
        if current is not None and current.get("task_id") == task_id and not self.ended:
            self._guard.task_end(status)


class _Heartbeats(threading.Thread):
    """Writes a `heartbeat` whenever the event log has been quiet for `interval` seconds,
    through its own writer (the file lock orders it with the agent thread's appends)."""

    def __init__(self, events: Path, interval: float) -> None:
        super().__init__(name="supervisor-heartbeat", daemon=True)
        self.events = events
        self.interval = interval
        self._stop_event = threading.Event()

    def run(self) -> None:
        with LineWriter(self.events) as writer:
            while not self._stop_event.wait(self._next_due()):
                try:
                    quiet = time.time() - os.stat(self.events).st_mtime
                except OSError:
                    return
                if quiet >= self.interval * 0.9:
                    writer.append({"type": "heartbeat"})

    def _next_due(self) -> float:
        try:
            quiet = time.time() - os.stat(self.events).st_mtime
        except OSError:
            return self.interval
        return max(0.05, self.interval - quiet)

    def stop(self) -> None:
        self._stop_event.set()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(timeout=5)


def _new_id(agent: str) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return sanitize_session_id(f"{agent}-{stamp}-{uuid.uuid4().hex[:6]}")


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return repr(value)
