"""The quality benchmark's parts: the rubric's scoring, the OpenHands SDK importer, and the
labelled corpus read with the step numbering of its STEPS.md (when it is on this machine)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from supervisor.analysis.rubric import Fire, load_labels, miss_reason, run_name, score
from supervisor.importers import load_runs
from tests.conftest import REPO, cli_env

LABELS = [
    {"run": "fw/a", "steps": 20, "loop": True,
     "episodes": [{"onset": 5, "evident": 7, "end": 9, "kind": "cycle", "why": "x"},
                  {"onset": 14, "evident": 15, "end": 16, "kind": "same-error", "why": "y"}]},
    {"run": "fw/b", "steps": 10, "loop": False, "episodes": []},
    {"run": "other/c", "steps": 10, "loop": False, "episodes": []},
]


def test_an_episode_is_caught_in_onset_to_end_plus_two_and_a_clean_run_fires_not() -> None:
    fires = {"fw/a": [Fire(4, 2, "cycle"), Fire(11, 1, "revert"), Fire(30, 3, "x")],
             "fw/b": [Fire(3, 1, "exact_repeat")], "other/c": []}
    one = score(LABELS, fires, 1)
    assert [e.caught for e in one.episodes] == [True, False]  # 11 = end + 2 of the first
    assert one.episodes[0].by == "revert"
    assert one.recall == 0.5 and one.false_alarm_rate == 0.5  # fw/b at level 1
    two = score(LABELS, fires, 2)
    assert [e.caught for e in two.episodes] == [False, False] and two.false_alarm_rate == 0.0
    assert miss_reason(two.episodes[1]) == "nothing in [14, 18]; nearest: cycle@4, x@30"
    assert one.by("framework") == {"fw": (1, 2)} and one.by("kind")["cycle"] == (1, 1)


def test_run_names_follow_the_labels() -> None:
    assert run_name("/c/mini-swe-agent/x-1.traj.json") == "mini-swe-agent/x-1"
    assert run_name("/c/openhands/o.output.jsonl#inst-3") == "openhands/o@inst-3"
    assert run_name("/c/swe-agent/s.traj") == "swe-agent/s"


def _sdk_record() -> dict:
    def action(i: int, kind: str, tool: str, fields: dict, batch: str) -> dict:
        return {"kind": "ActionEvent", "id": f"a{i}", "timestamp": f"2025-10-30T13:48:0{i}",
                "source": "agent", "thought": [{"type": "text", "text": f"thinking {i}"}],
                "action": {"kind": kind, **fields}, "tool_name": tool,
                "tool_call_id": f"call_{i}", "llm_response_id": batch}

    def observed(i: int, fields: dict) -> dict:
        return {"kind": "ObservationEvent", "id": f"o{i}", "tool_call_id": f"call_{i}",
                "timestamp": f"2025-10-30T13:48:0{i}", "observation": fields}

    history = [
        {"kind": "MessageEvent", "id": "m0", "source": "user",
         "llm_message": {"role": "user", "content": [{"type": "text", "text": "Do the task"}]}},
        action(1, "ExecuteBashAction", "execute_bash", {"command": "ls", "is_input": False},
               "resp-1"),
        action(2, "BrowserClickAction", "browser_click", {"index": 7}, "resp-1"),
        observed(1, {"kind": "ExecuteBashObservation", "output": "a.py\n",
                     "metadata": {"exit_code": 0}}),
        observed(2, {"kind": "BrowserObservation", "output": "",
                     "error": "Element with index 7 not found"}),
        action(3, "ExecuteBashAction", "execute_bash", {"command": "make"}, "resp-2"),
        observed(3, {"kind": "ExecuteBashObservation", "output": "make: *** Error 2",
                     "metadata": {"exit_code": 2}}),
        action(4, "FileEditorAction", "str_replace_editor",
               {"command": "view", "path": "/w/a.py"}, "resp-3"),
        {"kind": "AgentErrorEvent", "id": "e4", "tool_call_id": "call_4",
         "error": "Tool crashed"},
        action(5, "FinishAction", "finish", {"message": "done"}, "resp-4"),
    ]
    return {"instance_id": "inst-1", "history": history, "metrics": {}, "error": None}


def test_the_openhands_sdk_format_is_one_call_per_action_event(tmp_path: Path) -> None:
    path = tmp_path / "run.output.jsonl"
    path.write_text(json.dumps(_sdk_record()) + "\n")
    run = load_runs(path)[0]
    calls = [e for e in run.events if e["type"] == "tool_call"]
    results = {e["call_id"]: e for e in run.events if e["type"] == "tool_result"}
    assert [c["tool"] for c in calls] == ["execute_bash", "browser_click", "execute_bash",
                                          "str_replace_editor", "finish"]
    assert calls[0]["args"] == {"command": "ls", "is_input": False}
    assert calls[0]["batch"] == calls[1]["batch"] == "resp-1" != calls[2]["batch"]
    assert results["call_1"]["ok"] and not results["call_2"]["ok"]
    assert results["call_2"]["error"] == "Element with index 7 not found"
    assert results["call_3"]["error"] == "exit code 2"
    assert results["call_4"]["output"] == "Tool crashed" and not results["call_4"]["ok"]
    assert "call_5" not in results  # the run's last action has no outcome
    assert run.events[0]["task"] == "Do the task" and run.meta["variant"] == "sdk-history"


CORPUS = Path("/work/shared/corpus-labelled")


@pytest.mark.slow
@pytest.mark.skipif(not (CORPUS / "labels.jsonl").is_file(),
                    reason="the labelled corpus is not on this machine")
def test_the_labelled_corpus_imports_with_its_step_numbering() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_quality import load_corpus
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    corpus = load_corpus(CORPUS)
    labels = {lab["run"]: lab for lab in load_labels(CORPUS / "labels.jsonl")}
    assert set(corpus.runs) == set(labels)
    for name, events in corpus.runs.items():
        steps = sum(1 for e in events if e["type"] == "tool_call")
        assert steps == labels[name]["steps"], name


def test_the_quality_benchmark_without_the_corpus_says_so(tmp_path: Path) -> None:
    env = {**cli_env(), "SUPERVISOR_LABELLED_CORPUS": str(tmp_path / "nowhere"),
           "SUPERVISOR_CORPUS": str(tmp_path / "nowhere")}
    # neither corpus (the labelled one, nor the development one of the closest-match section)
    code = ("import sys; sys.path[:0] = [sys.argv[1]]; import bench_quality as b; "
            "import quality_closest as q; b.corpus_dirs = lambda: []; q.corpora = lambda: []; "
            "print(b.run())")
    done = subprocess.run([sys.executable, "-c", code, str(REPO / "benchmarks")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "is not on this machine" in done.stdout and done.stdout.strip().endswith("[]")


def test_parallel_tool_uses_of_one_claude_code_response_share_a_batch(tmp_path: Path) -> None:
    def line(kind: str, message: dict) -> str:
        return json.dumps({"type": kind, "sessionId": "s-1", "cwd": "/w", "version": "2.1.3",
                           "timestamp": "2026-01-01T10:00:00Z", "message": message})

    def use(i: int) -> dict:
        return {"type": "tool_use", "id": f"toolu_{i}", "name": "Read",
                "input": {"file_path": f"/w/f{i}.py"}}

    def result(i: int) -> dict:
        return {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x"}

    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([
        line("user", {"role": "user", "content": "look at the files"}),
        line("assistant", {"id": "msg_1", "role": "assistant", "content": [use(1)]}),
        line("assistant", {"id": "msg_1", "role": "assistant", "content": [use(2)]}),
        line("user", {"role": "user", "content": [result(1), result(2)]}),
        line("assistant", {"id": "msg_2", "role": "assistant", "content": [use(3)]}),
        line("user", {"role": "user", "content": [result(3)]}),
    ]) + "\n")
    calls = [e for e in load_runs(path)[0].events if e["type"] == "tool_call"]
    assert [c["batch"] for c in calls] == ["msg_1", "msg_1", "msg_2"]


def test_labelled_runs_without_their_files_are_named_not_scored(tmp_path: Path) -> None:
    """A label whose run file is not on the machine is missing, not a miss (issue 35); an
    interactive label is told apart from an autonomous one."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_quality import is_interactive, load_corpus
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    (tmp_path / "claude-code").mkdir()
    (tmp_path / "claude-code" / "here.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        {"type": "user", "sessionId": "s1", "timestamp": "2026-01-01T10:00:00Z",
         "message": {"role": "user", "content": "list the files"}},
        {"type": "assistant", "sessionId": "s1", "timestamp": "2026-01-01T10:00:01Z",
         "message": {"id": "m1", "role": "assistant", "content": [
             {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "sessionId": "s1", "timestamp": "2026-01-01T10:00:02Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]}},
    ]))
    labels = [{"run": "claude-code/here", "steps": 1, "loop": False, "episodes": [],
               "interactive": True},
              {"run": "claude-code/gone", "steps": 9, "loop": True, "episodes": [
                  {"onset": 1, "evident": 3, "end": 5, "kind": "cycle", "why": "x"}]}]
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(lab) + "\n" for lab in labels))
    corpus = load_corpus(tmp_path)
    assert [lab["run"] for lab in corpus.labels] == ["claude-code/here"]
    assert corpus.missing == {str(tmp_path): ["claude-code/gone"]}
    assert is_interactive(corpus.labels[0]) and not is_interactive(labels[1])
    assert score(corpus.labels, {}, 1).recall == 1.0  # nothing to miss: the loop is not here


def test_a_corpus_restored_elsewhere_is_not_scored_again_as_its_labels_only_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The repository's `benchmarks/corpus-labelled/` holds only labels; restored into another
    folder and named in SUPERVISOR_LABELLED_CORPUS, the corpus is that folder alone (before,
    the labels-only copy was reported as 40 runs 'not on this machine' and every run name
    got a folder prefix)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_quality import corpus_dirs
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    own = REPO / "benchmarks" / "corpus-labelled"
    restored, other = tmp_path / "restored", tmp_path / "other"
    restored.mkdir()
    other.mkdir()
    (restored / "labels.jsonl").write_bytes((own / "labels.jsonl").read_bytes())
    (other / "labels.jsonl").write_text('{"run": "fw/x"}\n', encoding="utf-8")
    monkeypatch.setenv("SUPERVISOR_LABELLED_CORPUS", str(restored))
    assert corpus_dirs() == [restored]
    monkeypatch.setenv("SUPERVISOR_LABELLED_CORPUS", str(other))
    assert corpus_dirs() == [other, own]


def test_corpus_folders_beside_each_other_are_scored_apart() -> None:
    """Interactive batches live side by side (`corpus-interactive`, `corpus-interactive-2`
    under one parent): each gets its own prefix, so the per-folder scores are each folder's
    own (with the parent's name for all of them, every folder was scored as all of them)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from bench_quality import corpus_prefix
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    bases = [Path("/c/shared/corpus-labelled"), Path("/c/corpus-interactive"),
             Path("/c/corpus-interactive-2"), Path("/r/benchmarks/corpus-labelled")]
    assert [corpus_prefix(b, bases) for b in bases] == [
        "shared:", "corpus-interactive:", "corpus-interactive-2:", "benchmarks:"]
    assert corpus_prefix(bases[0], bases[:1]) == ""
