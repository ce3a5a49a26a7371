"""`supervisor otel` against a real OTLP/HTTP receiver (tests/otlp_receiver.py decodes what it
gets with opentelemetry-proto, as a collector does): the spans of recorded sessions, their
parent/child structure, the GenAI and supervisor attributes, the metrics; a restart mid-session
that doubles nothing; a collector that is down, then back; bad configuration in one line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from supervisor.otel import translate
from supervisor.otel.translate import SessionTranslator
from supervisor.protocol.codec import parse_line
from supervisor.store.writer import event_writer
from tests.otlp_receiver import OtlpReceiver

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_sessions" / "sessions"


def private_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sessions").mkdir(parents=True)
    for path in (root, root / "sessions"):
        path.chmod(0o700)
    return root


def copy_samples(root: Path, names: list[str] | None = None) -> list[str]:
    names = names or sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())
    for name in names:
        target = root / "sessions" / name
        shutil.copytree(SAMPLES / name, target)
        for path in [target, *target.rglob("*")]:
            path.chmod(0o700 if path.is_dir() else 0o600)
    return names


def otel(root: Path, endpoint: str, cursor: Path, *extra: str, timeout: float = 120,
         request_timeout: str = "3") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_EXPORTER_OTLP_TIMEOUT=request_timeout)
    return subprocess.run(
        [sys.executable, "-m", "supervisor", "otel", "--root", str(root), "--cursor", str(cursor),
         *extra], env=env, capture_output=True, text=True, timeout=timeout, cwd=REPO)


def events_of(session_dir: Path) -> list[dict]:
    """The session's events as the exporter reads them (bad lines left out)."""
    from supervisor.protocol.codec import BadLine

    out = []
    for line in (session_dir / "events.jsonl").read_bytes().splitlines():
        event = parse_line(line)
        if not isinstance(event, BadLine):
            out.append({**event.model_dump(), **(event.model_extra or {})})
    return out


def by_session(spans: list[dict]) -> dict[str, list[dict]]:
    """Spans grouped by the session their trace belongs to."""
    trace_of = {s["trace_id"]: s["attributes"]["gen_ai.conversation.id"]
                for s in spans if s["name"].startswith("invoke_agent")}
    out: dict[str, list[dict]] = {}
    for span in spans:
        out.setdefault(trace_of.get(span["trace_id"], "?"), []).append(span)
    return out


@pytest.mark.slow
def test_recorded_sessions_become_traces_by_the_genai_conventions(tmp_path: Path) -> None:
    root = private_root(tmp_path)
    names = copy_samples(root)
    with OtlpReceiver() as rx:
        done = otel(root, rx.endpoint, tmp_path / "cursor.json")
        assert done.returncode == 0, done.stderr
        spans = rx.spans()
        metrics = rx.metrics()
    assert len({s["span_id"] for s in spans}) == len(spans), "a span was sent twice"
    grouped = by_session(spans)
    ended = [n for n in names if any(e.get("type") == "session_end"
                                     for e in events_of(root / "sessions" / n))]
    assert sorted(k for k in grouped if k != "?") == sorted(ended)
    for name in ended:
        events = events_of(root / "sessions" / name)
        mine = grouped[name]
        (session,) = [s for s in mine if s["name"].startswith("invoke_agent")]
        start = next(e for e in events if e["type"] == "session_start")
        end = next(e for e in events if e["type"] == "session_end")
        # the session span: GenAI names, the agent, the status, the whole session's time
        assert session["name"] == f"invoke_agent {start['agent']}"
        assert session["parent"] is None
        assert session["attributes"]["gen_ai.operation.name"] == "invoke_agent"
        assert session["attributes"]["gen_ai.agent.name"] == start["agent"]
        assert session["attributes"]["supervisor.session.status"] == end["status"]
        assert session["start"] == int(events[0]["ts"] * 1e9)
        assert session["end"] == int(end["ts"] * 1e9)
        assert session["resource"]["service.name"] == "agent-supervisor"
        assert session["scope"] == ("agent-supervisor",
                                    f"https://opentelemetry.io/schemas/{translate.SEMCONV_VERSION}")
        # one trace per session, every other span a child of the session span
        assert {s["trace_id"] for s in mine} == {session["trace_id"]}
        assert all(s["parent"] == session["span_id"] for s in mine if s is not session)
        # one execute_tool span per tool call, named and identified as the call was
        calls = [e for e in events if e["type"] == "tool_call"]
        tools = [s for s in mine if s["name"].startswith("execute_tool")]
        assert sorted(s["attributes"]["gen_ai.tool.call.id"] for s in tools) == \
            sorted(c["call_id"] for c in calls)
        for span in tools:
            assert span["attributes"]["gen_ai.operation.name"] == "execute_tool"
            assert span["name"] == f"execute_tool {span['attributes']['gen_ai.tool.name']}"
            assert "gen_ai.tool.call.arguments" not in span["attributes"]  # content is opt-in
        # a failed result is an error span; a refused call says it was refused
        results = {e["call_id"]: e for e in events if e["type"] == "tool_result"}
        refusing = {e["call_id"] for e in events if e["type"] == "verdict"
                    and e["action"] in ("skip", "block", "stop")}
        for span in tools:
            call_id = span["attributes"]["gen_ai.tool.call.id"]
            if call_id in refusing and call_id not in results:
                assert span["attributes"]["error.type"] == "supervisor.refused"
                assert span["status"][0] == 2  # STATUS_CODE_ERROR
            elif call_id in results and not results[call_id]["ok"]:
                assert span["attributes"]["error.type"] == "tool_error"
                assert span["status"][0] == 2
        # each detection is a span event (on the call it was about, or on the session)
        detections = [e for e in events if e["type"] == "detection"]
        seen = [attrs for s in mine for name, attrs in s["events"]
                if name == "supervisor.detection"]
        assert sorted(d["supervisor.detector"] for d in seen) == \
            sorted(d["detector"] for d in detections)
        # each escalation: a span from the escalation to its answer, with who and what
        escalations = {e["escalation_id"]: e for e in events if e["type"] == "escalation"}
        answers = {e["escalation_id"]: e for e in events if e["type"] == "decision_applied"
                   and e.get("escalation_id")}
        spans_of = {s["attributes"]["supervisor.escalation.id"]: s for s in mine
                    if s["name"] == "supervisor.escalation"}
        assert set(spans_of) == set(escalations)
        for esc_id, span in spans_of.items():
            answer = answers.get(esc_id)
            if answer is None:
                assert span["attributes"]["supervisor.decision.action"] == "none"
                continue
            assert span["attributes"]["supervisor.decision.action"] == answer["action"]
            assert span["attributes"]["supervisor.decision.id"] == answer["decision_id"]
            waited = answer["ts"] - escalations[esc_id]["ts"]
            assert span["attributes"]["supervisor.escalation.wait_s"] == pytest.approx(waited,
                                                                                      abs=1e-3)
            if answer.get("operator"):
                assert span["attributes"]["supervisor.decision.operator"] == answer["operator"]
    # metrics: the counts of what the sessions hold
    everything = [e for n in names for e in events_of(root / "sessions" / n)]
    kinds = Counter(e["type"] for e in everything)

    def total(metric: str) -> float:
        return sum(v for _, v in metrics[metric])

    assert total("supervisor.tool_calls") == kinds["tool_call"]
    assert total("supervisor.loops") == kinds["detection"]
    assert total("supervisor.escalations") == kinds["escalation"]
    assert total("supervisor.rollbacks") == kinds["rollback"]
    assert total("supervisor.sessions.ended") == kinds["session_end"]
    waits = metrics["supervisor.escalation.wait"]
    assert sum(v["count"] for _, v in waits) == sum(
        1 for e in everything if e["type"] == "decision_applied" and e.get("escalation_id"))
    assert sum(v for _, v in metrics["supervisor.sessions"]) == len(names)


@pytest.mark.slow
def test_genai_names_are_the_semantic_conventions() -> None:
    from opentelemetry.semconv._incubating.attributes import error_attributes as err
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as g
    from opentelemetry.semconv.schemas import Schemas

    assert translate.OPERATION == g.GEN_AI_OPERATION_NAME
    assert translate.AGENT_NAME == g.GEN_AI_AGENT_NAME
    assert translate.CONVERSATION_ID == g.GEN_AI_CONVERSATION_ID
    assert translate.TOOL_NAME == g.GEN_AI_TOOL_NAME
    assert translate.TOOL_CALL_ID == g.GEN_AI_TOOL_CALL_ID
    assert translate.TOOL_ARGUMENTS == g.GEN_AI_TOOL_CALL_ARGUMENTS
    assert translate.TOOL_RESULT == g.GEN_AI_TOOL_CALL_RESULT
    assert translate.INPUT_TOKENS == g.GEN_AI_USAGE_INPUT_TOKENS
    assert translate.OUTPUT_TOKENS == g.GEN_AI_USAGE_OUTPUT_TOKENS
    assert translate.CACHE_READ_TOKENS == g.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS
    assert translate.CACHE_WRITE_TOKENS == g.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS
    assert translate.ERROR_TYPE == err.ERROR_TYPE
    assert g.GenAiOperationNameValues.INVOKE_AGENT.value == "invoke_agent"
    assert g.GenAiOperationNameValues.EXECUTE_TOOL.value == "execute_tool"
    assert f"https://opentelemetry.io/schemas/{translate.SEMCONV_VERSION}" in \
        {s.value for s in Schemas}


def _call(writer, call_id: str, ok: bool = True) -> None:
    writer.append({"type": "tool_call", "call_id": call_id, "tool": "Bash",
                   "args": {"command": f"echo {call_id}"}})
    writer.append({"type": "verdict", "call_id": call_id, "action": "allow", "level": 0})
    writer.append({"type": "tool_result", "call_id": call_id, "ok": ok, "output": call_id,
                   "output_bytes": len(call_id), "output_hash": "00",
                   "error": None if ok else "exit status 1"})


@pytest.mark.slow
def test_a_restart_mid_session_neither_loses_nor_doubles_a_span(tmp_path: Path) -> None:
    root = private_root(tmp_path)
    writer = event_writer(root, "live")
    writer.append({"type": "session_start", "agent": "demo", "task": "t"})
    for i in range(5):
        _call(writer, f"c{i}")
    # a call in flight and an escalation waiting when the exporter stops
    writer.append({"type": "tool_call", "call_id": "open", "tool": "Edit", "args": {}})
    writer.append({"type": "escalation", "escalation_id": "e1", "level": 3, "reason": "loop",
                   "evidence": [2], "options": ["approve", "abort"], "fallback": "abort"})
    cursor = tmp_path / "cursor.json"
    with OtlpReceiver() as rx:
        first = otel(root, rx.endpoint, cursor)
        assert first.returncode == 0, first.stderr
        before = rx.spans()
    assert sorted(s["attributes"]["gen_ai.tool.call.id"] for s in before) == \
        [f"c{i}" for i in range(5)]
    writer.append({"type": "decision_applied", "escalation_id": "e1", "decision_id": "d1",
                   "action": "approve", "outcome": "approved", "operator": "alice"})
    writer.append({"type": "tool_result", "call_id": "open", "ok": True, "output": "",
                   "output_bytes": 0, "output_hash": "00"})
    _call(writer, "c5", ok=False)
    writer.append({"type": "session_end", "status": "completed"})
    with OtlpReceiver() as rx:
        second = otel(root, rx.endpoint, cursor)
        assert second.returncode == 0, second.stderr
        after = rx.spans()
    with OtlpReceiver() as rx:  # the same session exported in one go, elsewhere
        whole = otel(root, rx.endpoint, tmp_path / "other-cursor.json")
        assert whole.returncode == 0, whole.stderr
        reference = rx.spans()
    ids = [s["span_id"] for s in before + after]
    assert len(ids) == len(set(ids)), "a span was sent twice"
    assert sorted(ids) == sorted(s["span_id"] for s in reference), "a span was lost"
    (session,) = [s for s in after if s["name"].startswith("invoke_agent")]
    # spans sent before the restart point at the session span sent after it
    assert {s["parent"] for s in before} == {session["span_id"]}
    escalation = next(s for s in after if s["name"] == "supervisor.escalation")
    assert escalation["attributes"]["supervisor.decision.operator"] == "alice"
    # and a third run has nothing left to send
    with OtlpReceiver() as rx:
        third = otel(root, rx.endpoint, cursor)
        assert third.returncode == 0 and rx.spans() == []


@pytest.mark.slow
def test_an_unreachable_collector_is_one_line_and_the_next_run_sends_everything(
        tmp_path: Path) -> None:
    root = private_root(tmp_path)
    copy_samples(root, ["exact-repeat-approve"])
    cursor = tmp_path / "cursor.json"
    with OtlpReceiver() as rx:
        endpoint = rx.endpoint
    # nothing listens there any more: the refusal is known at once, so the command does not
    # sit out the exporter's retries for its request timeout (an hour here: the subprocess's
    # two minutes would end it) before it says so
    down = otel(root, endpoint, cursor, request_timeout="3600")
    assert down.returncode == 1
    lines = down.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("supervisor: error: not sent: ")
    assert "span(s) of 1 session(s)" in lines[0]
    assert f"no collector answers at {endpoint}: connection refused" in lines[0]
    assert "Traceback" not in down.stderr
    empty = private_root(tmp_path / "empty")  # nothing to send: the metrics were not sent
    none = otel(empty, endpoint, tmp_path / "c2.json", request_timeout="3600")
    assert none.returncode == 1 and none.stderr.strip().splitlines() == [
        f"supervisor: error: no collector answers at {endpoint}: connection refused; nothing "
        "was sent, the metrics neither"]
    with OtlpReceiver() as rx:
        up = otel(root, rx.endpoint, cursor)
        assert up.returncode == 0, up.stderr
        assert rx.spans(), "what was not sent before is sent now"


@pytest.mark.slow
def test_a_collector_that_never_answers_is_said_before_the_wait(tmp_path: Path) -> None:
    """A black-holed collector (here a listening socket whose accept queue is full, so the
    kernel drops new connections unanswered): the first line says the command waits, for
    whom, and how long each request may take, while it waits (it said nothing until the
    exporter's timeouts were over)."""
    import socket

    root = private_root(tmp_path)
    copy_samples(root, ["exact-repeat-approve"])
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(0)
    filler = []
    for _ in range(3):  # fill the accept queue: further connections get no answer
        conn = socket.socket()
        conn.setblocking(False)
        conn.connect_ex(hole.getsockname())
        filler.append(conn)
    endpoint = f"http://127.0.0.1:{hole.getsockname()[1]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_EXPORTER_OTLP_TIMEOUT="3600")
    proc = subprocess.Popen(
        [sys.executable, "-m", "supervisor", "otel", "--root", str(root),
         "--cursor", str(tmp_path / "cursor.json")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        import select

        said, _, _ = select.select([proc.stdout], [], [], 60)  # a generous bound, not a timing
        assert said, "nothing said while it waits"
        first = proc.stdout.readline()  # type: ignore[union-attr]
        assert proc.poll() is None, "said while it waits, not after"
        assert first == (f"otel: waiting for the collector at {endpoint} (no answer within "
                         "1 s; each request waits up to 3600 s)\n")
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
        for conn in [*filler, hole]:
            conn.close()


def _follow_with_no_collector(tmp_path: Path, timeout_s: str
                              ) -> tuple[subprocess.Popen[str], str]:
    """`otel --follow` of one recorded session with nothing listening at its endpoint (a
    receiver's, closed), each request timing out after `timeout_s`; and that endpoint."""
    root = private_root(tmp_path)
    copy_samples(root, ["exact-repeat-approve"])
    with OtlpReceiver() as rx:
        endpoint = rx.endpoint
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_EXPORTER_OTLP_TIMEOUT=timeout_s)
    proc = subprocess.Popen(
        [sys.executable, "-m", "supervisor", "otel", "--root", str(root), "--follow",
         "--cursor", str(tmp_path / "cursor.json")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    return proc, endpoint


def _next_line(proc: subprocess.Popen[str], what: str) -> str:
    """The next line `proc` says, waited for at most a minute (a bound, not a timing)."""
    import select

    said, _, _ = select.select([proc.stdout], [], [], 60)
    assert said, what
    return proc.stdout.readline()  # type: ignore[union-attr]


@pytest.mark.slow
def test_follow_says_at_once_that_no_collector_listens(tmp_path: Path) -> None:
    """`--follow` with nothing listening: the second line says so and that it retries, before
    the exporter's first attempt has timed out (an hour here)."""
    proc, endpoint = _follow_with_no_collector(tmp_path, "3600")
    try:
        lines: list[str] = []
        while len(lines) < 2:
            lines.append(_next_line(proc, f"nothing more said: {lines}"))
        assert lines[0].startswith("otel: exporting ")
        assert lines[1] == (f"otel: no collector at {endpoint} (connection refused); retrying "
                            "until one answers\n")
    finally:
        proc.kill()  # its exporter is inside an hour-long request: not what is tested here
        proc.communicate(timeout=60)


@pytest.mark.slow
def test_follow_stopped_while_the_collector_is_down_says_what_was_not_sent(
        tmp_path: Path) -> None:
    """Stopped while it retried, `--follow` said "sent 0 span(s)" and spoke only of the
    metrics (after sitting out one more request timeout to send them): it says how many spans
    were not sent (the next run sends them) and does not ask the collector again."""
    proc, _ = _follow_with_no_collector(tmp_path, "2")
    try:
        line = ""
        while "span(s) waiting" not in line:
            line = _next_line(proc, "it never said it retries")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("supervisor: error: not sent: "), err
    assert "span(s) of 1 session(s)" in lines[0] and "the next run sends them" in lines[0]
    assert "Traceback" not in err


@pytest.mark.slow
def test_otlp_over_grpc_when_the_protocol_says_so(tmp_path: Path) -> None:
    root = private_root(tmp_path)
    copy_samples(root, ["healthy-refactor"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    with OtlpReceiver(grpc=True) as rx:
        env.update(OTEL_EXPORTER_OTLP_ENDPOINT=rx.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
                   OTEL_EXPORTER_OTLP_INSECURE="true")
        done = subprocess.run(
            [sys.executable, "-m", "supervisor", "otel", "--root", str(root),
             "--cursor", str(tmp_path / "c.json")],
            env=env, capture_output=True, text=True, timeout=120, cwd=REPO)
        assert done.returncode == 0, done.stderr
        spans = rx.spans()
        metrics = rx.metrics()
    calls = [e for e in events_of(root / "sessions" / "healthy-refactor")
             if e["type"] == "tool_call"]
    assert len([s for s in spans if s["name"].startswith("execute_tool")]) == len(calls)
    assert sum(v for _, v in metrics["supervisor.tool_calls"]) == len(calls)


@pytest.mark.slow
@pytest.mark.parametrize("endpoint", ["localhost:4318", "http://", "ftp://collector:4318",
                                      "http://collector:99999"])
def test_a_malformed_endpoint_is_refused_in_one_line(tmp_path: Path, endpoint: str) -> None:
    root = private_root(tmp_path)
    done = otel(root, endpoint, tmp_path / "cursor.json")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "is not an OTLP endpoint" in done.stderr
    assert not (tmp_path / "cursor.json").exists()


@pytest.mark.slow
def test_a_second_exporter_of_the_same_store_and_collector_is_refused(tmp_path: Path) -> None:
    from supervisor.otel.cursor import CursorBusy, CursorFile

    held = CursorFile(tmp_path / "cursor.json")
    try:
        with pytest.raises(CursorBusy):
            CursorFile(tmp_path / "cursor.json")
        root = private_root(tmp_path)
        done = otel(root, "http://127.0.0.1:9", tmp_path / "cursor.json")
        assert done.returncode == 2 and "another `supervisor otel` is exporting" in done.stderr
    finally:
        held.close()


@pytest.mark.slow
def test_follow_exports_as_the_session_goes_on_and_rides_out_a_collector_outage(
        tmp_path: Path) -> None:
    root = private_root(tmp_path)
    writer = event_writer(root, "live")
    writer.append({"type": "session_start", "agent": "demo"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    with OtlpReceiver() as rx:
        env.update(OTEL_EXPORTER_OTLP_ENDPOINT=rx.endpoint, OTEL_EXPORTER_OTLP_TIMEOUT="2",
                   OTEL_METRIC_EXPORT_INTERVAL="500")
        proc = subprocess.Popen(
            [sys.executable, "-m", "supervisor", "otel", "--root", str(root), "--follow",
             "--interval", "0.1", "--cursor", str(tmp_path / "cursor.json")],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
        try:
            _call(writer, "a1")
            _wait(lambda: len(rx.spans()) == 1)
            rx.failing = 10**6  # the collector goes down
            _call(writer, "a2")
            _wait(lambda: rx.requests > 3)
            rx.failing = 0  # and comes back
            _call(writer, "a3")
            writer.append({"type": "session_end", "status": "completed"})
            _wait(lambda: len(rx.spans()) == 4)
            _wait(lambda: "supervisor.tool_calls" in rx.metrics())
        finally:
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        names = sorted(s["name"] for s in rx.spans())
        assert names == ["execute_tool Bash"] * 3 + ["invoke_agent demo"]
        assert "retrying" in out and "the collector is back" in out


def _wait(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.slow
def test_include_content_adds_arguments_and_results_made_safe(tmp_path: Path) -> None:
    root = private_root(tmp_path)
    writer = event_writer(root, "s")
    writer.append({"type": "session_start", "agent": "demo"})
    writer.append({"type": "tool_call", "call_id": "c", "tool": "Bash",
                   "args": {"command": "printf '\x1b[2J\x1b]0;owned\x07'"}})
    writer.append({"type": "tool_result", "call_id": "c", "ok": True,
                   "output": "x" * 10_000 + "\x1b[31m", "output_bytes": 10_005,
                   "output_hash": "00"})
    writer.append({"type": "session_end", "status": "completed"})
    with OtlpReceiver() as rx:
        done = otel(root, rx.endpoint, tmp_path / "c.json", "--include-content")
        assert done.returncode == 0, done.stderr
        (tool,) = [s for s in rx.spans() if s["name"].startswith("execute_tool")]
    arguments = tool["attributes"]["gen_ai.tool.call.arguments"]
    result = tool["attributes"]["gen_ai.tool.call.result"]
    assert "\x1b" not in arguments + result and "\x07" not in arguments
    assert "printf" in arguments
    assert len(result) <= translate.MAX_CONTENT


def _event(line: dict) -> object:
    parsed = parse_line(json.dumps({"v": 1, "seq": line.pop("seq"), "ts": line.pop("ts"),
                                    **line}).encode())
    return parsed


def test_usage_read_from_an_agents_record_with_its_cache_tokens() -> None:
    translator = SessionTranslator("s")
    events = [{"type": "session_start", "agent": "claude-code"},
              {"type": "usage", "input_tokens": 3, "output_tokens": 120,
               "cache_read_tokens": 41200, "cache_write_tokens": 380, "cost_usd": 0.0156,
               "model": "claude-sonnet-4-5-20250929"},
              {"type": "usage", "input_tokens": 100, "output_tokens": 10, "cost_usd": None},
              {"type": "session_end", "status": "completed"}]
    spans = []
    for seq, fields in enumerate(events, 1):
        spans += translator.feed(_event({"seq": seq, "ts": 1000.0 + seq, **fields})).spans
    (session,) = [s for s in spans if s.name.startswith("invoke_agent")]
    assert session.attributes["gen_ai.usage.input_tokens"] == 3 + 41200 + 380 + 100
    assert session.attributes["gen_ai.usage.output_tokens"] == 130
    assert session.attributes["gen_ai.usage.cache_read.input_tokens"] == 41200
    assert session.attributes["gen_ai.usage.cache_creation.input_tokens"] == 380
    assert session.attributes["supervisor.cost_usd"] == 0.0156


def test_open_calls_are_bounded_and_what_a_cap_drops_is_said() -> None:
    translator = SessionTranslator("s")
    seq = 0

    def feed(**fields: object) -> translate.Output:
        nonlocal seq
        seq += 1
        return translator.feed(_event({"seq": seq, "ts": 1000.0 + seq, **fields}))

    feed(type="session_start", agent="a")
    ended = []
    for i in range(translate.MAX_OPEN_CALLS + 10):
        ended += feed(type="tool_call", call_id=f"c{i}", tool="Bash", args={}).spans
    assert len(translator.calls) == translate.MAX_OPEN_CALLS
    assert len(ended) == 10
    assert {s.attributes["supervisor.tool.result"] for s in ended} == \
        {"none: too many calls open"}
    for i in range(translate.MAX_SPAN_EVENTS + 5):
        feed(type="detection", detector="d", level=1, signature="s", evidence=[1],
             message=f"m{i}")
    out = feed(type="session_end", status="completed")
    last = f"c{translate.MAX_OPEN_CALLS + 9}"  # the detections were about the latest call
    (span,) = [s for s in out.spans if s.attributes.get("gen_ai.tool.call.id") == last]
    assert len(span.events) == translate.MAX_SPAN_EVENTS
    assert span.attributes["supervisor.dropped_events"] == 5
    assert translator.calls == {} and translator.session is None


@pytest.mark.slow
def test_the_export_benchmark_runs_at_a_tiny_size() -> None:
    """benchmarks/bench_otel.py end to end at 1% (the figure itself is for benchmarks/run.py)."""
    import importlib.util

    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("bench_otel",
                                                      REPO / "benchmarks" / "bench_otel.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        figure, against_read = module.run(scale=0.01)
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    assert figure.baseline and figure.value > 0 and figure.max_ratio
    assert "spans sent" in figure.note and not figure.note.startswith("0 ")
    assert against_read.baseline and against_read.max_ratio is None


@pytest.mark.slow
def test_a_fleet_is_exported_from_redis_as_from_the_local_root(tmp_path: Path,
                                                                redis_server) -> None:
    """A relay ships a session to a real redis-server; `otel --store redis://` exports the same
    spans as `otel --root` on the agent's host (span ids aside: the session is `h1/NAME`)."""
    from supervisor.store.open import open_store
    from tests.redis_helpers import relay_process, wait_for
    from tests.test_fleet_e2e import stop_all

    root = private_root(tmp_path)
    (name,) = copy_samples(root, ["exact-repeat-approve"])
    relay = relay_process(root, redis_server.url(), "h1", log=tmp_path / "relay.log")
    store = open_store(redis_server.url())
    try:
        wait_for(lambda: store.exists(f"h1/{name}") and store.summary(f"h1/{name}").ended, 60,
                 "the relay to ship the session")
    finally:
        store.close()
        stop_all([relay])
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    with OtlpReceiver() as rx:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = rx.endpoint
        done = subprocess.run(
            [sys.executable, "-m", "supervisor", "otel", "--store", redis_server.url(),
             "--cursor", str(tmp_path / "fleet.json")],
            env=env, capture_output=True, text=True, timeout=120, cwd=REPO)
        assert done.returncode == 0, done.stderr
        fleet = rx.spans()
    with OtlpReceiver() as rx:
        assert otel(root, rx.endpoint, tmp_path / "local.json").returncode == 0
        local = rx.spans()

    def shape(spans: list[dict]) -> list[tuple]:
        return sorted((s["name"], s["attributes"].get("gen_ai.tool.call.id", ""),
                       s["start"], s["end"]) for s in spans)

    assert shape(fleet) == shape(local) and fleet
    (session,) = [s for s in fleet if s["name"].startswith("invoke_agent")]
    assert session["attributes"]["gen_ai.conversation.id"] == f"h1/{name}"
