"""The real runs of the development corpus all import, as valid protocol sessions.

The corpus lives beside the repository (`../shared/corpus`); without it these tests skip.
"""

from pathlib import Path

import pytest

from supervisor.importers import detect_format, load_runs
from tests.importer_helpers import CORPUS, check_protocol, steps

FOLDERS = {"swe-agent": "swe-agent", "mini-swe-agent": "mini-swe-agent",
           "openhands": "openhands", "claude-code": "claude-code", "codex": "codex",
           "gemini-cli": "gemini-cli"}
FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.parent.name in FOLDERS) \
    if CORPUS.is_dir() else []

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no corpus at {CORPUS}")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:60])
def test_corpus_file_imports(path: Path) -> None:
    assert detect_format(path) == FOLDERS[path.parent.name]
    runs = load_runs(path)
    assert runs
    for run in runs:
        check_protocol(run)


def corpus(name: str) -> Path:
    return CORPUS / name


def test_corpus_counts_match_sources() -> None:
    """The numbers SOURCES.md gives for each file, as imported."""
    def errors(path: str) -> list[str | None]:
        (run,) = load_runs(corpus(path))
        return [r["error"] for _, r in steps(run) if r and not r["ok"]]

    (enigma,) = load_runs(corpus("swe-agent/sweagent-enigma-ctf-i-got-id-repeated-curl.traj"))
    probe = 'curl -X POST -F "file=ARGV"'
    curls = [c for c, _ in steps(enigma)
             if c["tool"] == "bash" and c["args"]["command"].startswith(probe)]
    assert enigma.steps == 21 and len(curls) == 8
    assert errors("swe-agent/sweagent-gpt4-pydicom-1458-edit-syntax-retries.traj").count(
        "edit: syntax errors") == 3
    assert errors("swe-agent/sweagent-commit0-portalocker-no-file-open-errors.traj") == [
        "no file open", "no file open"]
    timeouts = [e for e in errors("mini-swe-agent/mswea-v1.1-toolcall-deepseek-pvlib-1707-"
                                  "cmd-timeouts-InternalServerError.traj.json")
                if "timed out" in (e or "")]
    assert len(timeouts) == 3
    (pydicom,) = load_runs(corpus("mini-swe-agent/mswea-v1.1-toolcall-deepseek-pydicom-901-"
                                  "Submitted.traj.json"))
    assert pydicom.steps == 38 and pydicom.events[-1]["status"] == "completed"
    rewrites = [c for c, _ in steps(pydicom)
                if c["args"]["command"].startswith("cat > pydicom/config.py << 'EOF'")]
    assert len(rewrites) == 2
    runs = load_runs(corpus("openhands/openhands-resolver-output-history-repeated-ipython.jsonl"))
    assert [r.steps for r in runs] == [4, 22]
    ipython = [c["tool"] for c, _ in steps(runs[1])]
    assert ipython.count("run_ipython") == 20
    assert len(load_runs(corpus("openhands/openhands-legacy-v1.5-eval-output-prontoqa-"
                                "history-pairs.jsonl"))) == 6
    big = corpus("claude-code/claude-code-viewer-fe5e1c67-LARGE-summary-23-tool-errors.jsonl")
    assert len(errors(str(big.relative_to(CORPUS)))) == 23
    (orchestrator,) = load_runs(corpus("claude-code/claude-code-viewer-5c0375b4-orchestrator-"
                                       "task-subagents.jsonl"))
    tools = [c["tool"] for c, _ in steps(orchestrator)]
    assert tools.count("Task") == 3 and "MultiEdit" in tools
