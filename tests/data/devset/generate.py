"""Generate the synthetic part of the engine's labelled development set.

Each scenario writes one protocol `events.jsonl`-style file and a label: whether it contains a
loop, what kind, and `onset` — the 0-based tool-call step at which the loop becomes evident
(the second repetition of the repeated thing; the engine reacts at the third occurrence).
Loop-free scenarios are the traps the engine must stay quiet on. Run
`python tests/data/devset/generate.py` to rewrite the files; the output is deterministic.

`SessionBuilder` is also used by the tests to build event sequences.
"""

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


class SessionBuilder:
    """Builds a protocol event list: `call(tool, args, output, ok)` adds a call and its result."""

    def __init__(self, agent: str = "synthetic", t0: float = 1_700_000_000.0) -> None:
        self.events: list[dict[str, Any]] = []
        self.t = t0
        self.steps = 0
        self._emit("session_start", agent=agent, task="devset", cwd="/work/repo", pid=4242,
                   policy=None, heartbeat_s=None)

    def _emit(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.t += 1.5
        event = {"v": 1, "seq": len(self.events) + 1, "ts": round(self.t, 3), "type": kind,
                 **fields}
        self.events.append(event)
        return event

    def call(self, tool: str, args: dict[str, Any], output: str = "", ok: bool = True,
             error: str | None = None, cost: float | None = None,
             batch: str | None = None) -> int:
        """Add a tool call and its result; returns the call's 0-based step. `batch`: the
        calls of one model turn share it."""
        if cost is not None:
            self._emit("usage", input_tokens=1000, output_tokens=100, cost_usd=cost)
        step = self.steps
        cid = f"call-{step}"
        self._emit("tool_call", call_id=cid, tool=tool, args=args,
                   **({"batch": batch} if batch else {}))
        data = output.encode()
        self._emit("tool_result", call_id=cid, ok=ok, output=output, output_bytes=len(data),
                   output_hash=hashlib.sha256(data).hexdigest()[:16],
                   error=error if not ok else None, duration_ms=120.0)
        self.steps += 1
        return step

    def say(self, text: str, role: str = "assistant") -> None:
        self._emit("message", role=role, text=text)

    def end(self, status: str = "completed") -> list[dict[str, Any]]:
        self._emit("session_end", status=status, reason=None)
        return self.events


# --- building blocks ------------------------------------------------------------------------

def _code(rng: random.Random, name: str, lines: int = 12) -> str:
    body = [f"def {name}(x):", f"    \"\"\"{name} helper.\"\"\""]
    for i in range(lines):
        body.append(f"    v{i} = x * {rng.randint(2, 99)} + {i}")
    body.append(f"    return v{lines - 1}")
    return "\n".join(f"{n + 1:>4}\t{line}" for n, line in enumerate(body))


def normal_work(b: SessionBuilder, rng: random.Random, n: int, tag: str = "w") -> None:
    """`n` steps of ordinary, loop-free work: explore, read, edit, test, all different."""
    files = [f"src/{tag}_{rng.randint(100, 999)}_{i}.py" for i in range(n)]
    for i in range(n):
        kind = i % 5
        f = files[i]
        if kind == 0:
            b.call("Bash", {"command": f"ls src/ | head -{10 + i}"},
                   "\n".join([*rng.sample(files, min(len(files), 4)), f"extra_{i}.py"]))
        elif kind == 1:
            b.call("Read", {"file_path": f"/work/repo/{f}"}, _code(rng, f"fn_{tag}_{i}"))
        elif kind == 2:
            b.call("Grep", {"pattern": f"fn_{tag}_{i}", "path": "src"},
                   f"{f}:1:def fn_{tag}_{i}(x):")
        elif kind == 3:
            b.call("Edit", {"file_path": f"/work/repo/{f}", "old_str": f"v1 = x * {i}",
                            "new_str": f"v1 = x * {i + 1}"},
                   f"The file {f} has been updated.")
        else:
            b.call("Bash", {"command": f"python -m pytest tests/test_{tag}_{i}.py -q"},
                   f"{rng.randint(3, 30)} passed in {rng.random():.2f}s")


def _missing(path: str) -> str:
    return f"cat: {path}: No such file or directory"


# --- loop scenarios (label: loop=True, onset = step where the loop becomes evident) ---------

def loop_exact_error(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 12))
    cmd = {"command": "python scripts/migrate.py --apply"}
    out = ("Traceback (most recent call last):\n  File \"scripts/migrate.py\", line 3\n"
           "KeyError: 'DATABASE_URL'")
    onset = None
    for k in range(5):
        s = b.call("Bash", cmd, out, ok=False, error="exit code 1")
        onset = s if k == 1 else onset
    return b.end(), onset  # type: ignore[return-value]


def loop_exact_ok(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 12))
    onset = None
    for k in range(5):
        s = b.call("Grep", {"pattern": "class Config", "path": "."},
                   "src/config.py:12:class Config:\nsrc/old/config.py:3:class Config(Base):")
        onset = s if k == 1 else onset
    return b.end(), onset  # type: ignore[return-value]


def loop_interleaved(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """A X A Y A Z A: one interleaved call must not hide the repeat of A."""
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 10))
    onset = None
    for k in range(5):
        s = b.call("Bash", {"command": "npm run build"},
                   "ERROR in src/app.ts:14:3 TS2322: Type 'string' is not assignable to "
                   "type 'number'.", ok=False, error="exit code 2")
        onset = s if k == 1 else onset
        b.call("Bash", {"command": f"git log --oneline -n {k + 3}"},
               "\n".join(f"{rng.getrandbits(28):07x} commit {j}" for j in range(k + 3)))
    return b.end(), onset  # type: ignore[return-value]


def loop_similar_ok(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """Near-identical probes (like the EnIGMA curl loop) that all return the same page."""
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 10))
    onset = None
    for k in range(7):
        s = b.call("Bash", {"command": f'curl -s -X POST -F "file=@payload{k}.txt" '
                                       f'http://web.chal:8080/upload.php'},
                   "<html><body>Sorry, only images are allowed.</body></html>")
        onset = s if k == 1 else onset
    return b.end(), onset  # type: ignore[return-value]


def loop_similar_edit(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 10))
    onset = None
    base = "    return compute_total(items, tax_rate=0.2)"
    for k in range(6):
        old = base.replace("0.2", f"0.{2 + k % 3}") + " " * (k % 2)
        s = b.call("Edit", {"file_path": "/work/repo/src/billing.py", "old_string": old,
                            "new_string": "    return compute_total(items, tax_rate=rate)"},
                   "String to replace not found in file.", ok=False,
                   error="String to replace not found in file.")
        onset = s if k == 1 else onset
    return b.end(), onset  # type: ignore[return-value]


def loop_cycle2(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 10))
    onset = None
    for k in range(5):
        s = b.call("Bash", {"command": "cat setup.cfg | grep -n version"}, "3:version = 1.2.0")
        s2 = b.call("Bash", {"command": "python -c 'import pkg; print(pkg.__version__)'"},
                    "1.1.9")
        onset = s2 if k == 1 else onset  # the second period is complete
        del s
    return b.end(), onset  # type: ignore[return-value]


def loop_cycle3(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 10))
    onset = None
    for k in range(4):
        s = b.call("Bash", {"command": "git status --short"}, " M src/a.py\n?? notes.txt")
        b.call("Bash", {"command": "git diff --stat"}, " src/a.py | 2 +-\n 1 file changed")
        s3 = b.call("Bash", {"command": "python -m pytest tests/test_a.py -q"},
                    "F\nFAILED tests/test_a.py::test_total - assert 3 == 4\n1 failed in 0.12s",
                    ok=False, error="exit code 1")
        onset = s3 if k == 1 else onset  # the second period is complete
        del s
    return b.end(), onset  # type: ignore[return-value]


def loop_recurring_error(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """The seeds' 'search string not found' ×N with quite different arguments."""
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 10))
    olds = ["def parse(self, text):", "    tokens = text.split()", "return Result(tokens)",
            "class Parser(object):", "import re, sys", "    if not tokens: raise ValueError"]
    onset = None
    for k, old in enumerate(olds[: rng.randint(4, 6)]):
        s = b.call("str_replace_editor", {"command": "str_replace", "path": "/repo/parser.py",
                                          "old_str": old, "new_str": old + "  # fixed"},
                   f"No replacement was performed, old_str `{old}` did not appear verbatim "
                   f"in /repo/parser.py.", ok=False, error="search string not found")
        onset = s if k == 1 else onset
    return b.end(), onset  # type: ignore[return-value]


def loop_ineffective_edits(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """Edit the source, re-run the same script, the same traceback, again and again."""
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 8))
    b.call("Bash", {"command": "cat > reproduce.py << 'EOF'\nfrom app import total\n"
                               "print(total([1, 2]))\nEOF"}, "")
    fail = ("Traceback (most recent call last):\n  File \"reproduce.py\", line 2, in <module>"
            "\nTypeError: unsupported operand type(s) for +: 'int' and 'str'")
    onset = None
    for k in range(rng.randint(4, 6)):
        b.call("Edit", {"file_path": "/work/repo/app/core.py", "old_string": f"v{k}",
                        "new_string": f"v{k + 1}"}, "The file has been updated.")
        s = b.call("Bash", {"command": "python reproduce.py"}, fail, ok=False,
                   error="exit code 1")
        onset = s if k == 2 else onset  # the second round without effect
    return b.end(), onset  # type: ignore[return-value]


def loop_revert(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """Restore from a backup, try another rewrite, look, restore again: the edit/restore
    cycle of scripted fixes."""
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 8))
    b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
    onset = None
    for k in range(rng.randint(4, 5)):
        b.call("Bash", {"command": f"cat > fix{k}.py << 'EOF'\nsrc = open('pkg/mod.py').read()"
                                   f"\nopen('pkg/mod.py', 'w').write(src.replace('a', 'b{k}'))"
                                   f"\nEOF\npython fix{k}.py"}, f"patched {k}")
        b.call("Bash", {"command": "python -c 'import pkg.mod'"},
               f"  File \"pkg/mod.py\", line {40 + k}\nIndentationError: unexpected indent",
               ok=False, error="exit code 1")
        s = b.call("Bash", {"command": "cp pkg/mod.py.backup pkg/mod.py"}, "")
        onset = s if k == 1 else onset
    return b.end(), onset  # type: ignore[return-value]


def loop_error_rate(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 8))
    cmds = ["make build", "cargo build", "npm ci", "pip install -e .", "gradle build",
            "bazel build //...", "go build ./...", "cmake .", "meson setup b", "tox -e py311",
            "poetry install", "./configure"]
    errs = ["make: *** No rule to make target 'build'.  Stop.",
            "error: could not find `Cargo.toml`",
            "npm ERR! The `npm ci` command can only install with an existing package-lock.json",
            "ERROR: file:///repo does not appear to be a Python project",
            "bash: gradle: command not found", "ERROR: The 'build' command is only supported "
            "from within a workspace", "go: go.mod file not found in current directory",
            "CMake Error: The source directory does not appear to contain CMakeLists.txt",
            "ERROR: Neither source directory 'b' nor build directory contain a build file",
            "ERROR: tox config file (either pyproject.toml, tox.ini, setup.cfg) not found",
            "Poetry could not find a pyproject.toml file", "bash: ./configure: No such file"]
    onset = None
    start = b.steps
    for k, (c, e) in enumerate(zip(cmds, errs, strict=True)):
        if k == 6:
            b.call("Bash", {"command": "ls"}, "README.md\nsrc\ndocs\nLICENSE")
        b.call("Bash", {"command": c}, e, ok=False, error="exit code 1")
    onset = start + 6  # the failures are obviously systematic after a handful
    return b.end(), onset


def loop_no_progress(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """Different calls that only ever return things already seen: no change, nothing new."""
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 8))
    content = _code(rng, "settle")
    views = [("Bash", {"command": "cat src/settle.py"}), ("Bash", {"command": "nl src/settle.py"}),
             ("Bash", {"command": "head -100 src/settle.py"}),
             ("Bash", {"command": "less src/settle.py"}),
             ("Bash", {"command": "awk '{print}' src/settle.py"}),
             ("Bash", {"command": "sed -n '1,200p' src/settle.py"})]
    empty = [("Grep", {"pattern": p, "path": "src"}) for p in
             ("settle_all", "settlement", "SETTLE", "do_settle", "settle_v2", "settleNow")]
    b.call("Bash", {"command": "cat src/settle.py"}, content)
    b.call("Grep", {"pattern": "settle_ids", "path": "src"}, "No matches found")
    start = b.steps
    for k in range(16):
        tool, args = views[k % len(views)] if k % 2 == 0 else empty[(k // 2) % len(empty)]
        b.call(tool, {**args, **({"n": k} if k >= 12 else {})},
               content if tool == "Bash" else "No matches found")
    return b.end(), start + 5


def loop_repeated_text(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 8))
    plan = ("I will now fix the failing test by updating the tax calculation in billing.py. "
            "First I need to look at how compute_total handles the rate. Then I will run the "
            "tests again to confirm the fix works.")
    onset = b.steps - 1
    for _ in range(5):
        b.say(plan + "\n```python\nprint('debug')\n```")
    return b.end(), onset


def loop_polling_stuck(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 8))
    b.call("Bash", {"command": "npm run dev", "run_in_background": True},
           "Command running in background with ID: bash_1")
    onset = None
    for k in range(14):
        s = b.call("BashOutput", {"bash_id": "bash_1"},
                   "> app@1.0.0 dev\n> vite\n\n  waiting for file changes before restart...")
        onset = s if k == 5 else onset  # waiting a while is normal; stuck after ~6 polls
    return b.end(), onset  # type: ignore[return-value]


def loop_parallel_identical(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """Several identical calls issued together (before any result), then again."""
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(4, 8))
    start = b.steps
    out = "error: unable to resolve host api.internal: Name or service not known"
    for k in range(3):
        for j in range(2):
            b._emit("tool_call", call_id=f"p{k}{j}", tool="Bash",
                    args={"command": "curl -sf https://api.internal/v1/users"})
            b.steps += 1
        for j in range(2):
            b._emit("tool_result", call_id=f"p{k}{j}", ok=False, output=out,
                    output_bytes=len(out), output_hash="x", error="exit code 6",
                    duration_ms=30.0)
    return b.end(), start + 1


def loop_scroll_end(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """SWE-agent scrolling past the end of a file: the same window again and again."""
    b = SessionBuilder(agent="swe-agent")
    normal_work(b, rng, rng.randint(3, 8))
    b.call("open", {"path": "src/long.py"}, "[File: src/long.py (300 lines total)]\n1:import os")
    for k in range(3):
        b.call("scroll_down", {}, f"[File: src/long.py (300 lines total)]\n{(k + 1) * 100}:x")
    onset = None
    for k in range(4):
        s = b.call("scroll_down", {}, "[File: src/long.py (300 lines total)]\n"
                                      "(this is the end of the file)\n300:main()")
        onset = s if k == 1 else onset
    return b.end(), onset  # type: ignore[return-value]


def loop_mini_identical(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """mini-swe-agent re-running the same reproduction script with no change in between."""
    b = SessionBuilder(agent="mini-swe-agent")
    normal_work(b, rng, rng.randint(4, 10))
    onset = None
    for k in range(4):
        s = b.call("bash", {"command": "cd /testbed && python reproduce_issue.py"},
                   "<returncode>1</returncode>\n<output>\nAssertionError: expected 2, got 3\n"
                   "</output>", ok=False, error="exit code 1")
        onset = s if k == 1 else onset
        b.say(f"THOUGHT: The issue is still there. Let me run the script again to check. ({k})")
    return b.end(), onset  # type: ignore[return-value]


def loop_gemini_replace(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """Gemini CLI's replace tool failing to find its text, with different attempts."""
    b = SessionBuilder(agent="gemini-cli")
    normal_work(b, rng, rng.randint(3, 8))
    onset = None
    for k, old in enumerate(["const x = 1;", "let total = 0", "export default App",
                             "function render() {"]):
        s = b.call("replace", {"file_path": "/w/src/app.js", "old_string": old,
                               "new_string": old + " // fixed"},
                   "Failed to edit, 0 occurrences found for old_string in /w/src/app.js. No "
                   "edits made. The exact text in old_string was not found.", ok=False)
        onset = s if k == 1 else onset
    return b.end(), onset  # type: ignore[return-value]


def loop_codex_shell(rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """Codex re-running the same failing command list."""
    b = SessionBuilder(agent="codex")
    normal_work(b, rng, rng.randint(3, 8))
    onset = None
    for k in range(4):
        s = b.call("shell", {"command": ["bash", "-lc", "python hoge.py"], "workdir": "/w"},
                   "Exit code: 1\nWall time: 0.1 seconds\nOutput:\nModuleNotFoundError: "
                   "No module named 'requests'", ok=False)
        onset = s if k == 1 else onset
    return b.end(), onset  # type: ignore[return-value]


LOOPS = {
    "exact_error": loop_exact_error, "exact_ok": loop_exact_ok, "interleaved": loop_interleaved,
    "similar_ok": loop_similar_ok, "similar_edit": loop_similar_edit, "cycle2": loop_cycle2,
    "cycle3": loop_cycle3, "recurring_error": loop_recurring_error,
    "ineffective_edits": loop_ineffective_edits, "revert": loop_revert,
    "error_rate": loop_error_rate,
    "no_progress": loop_no_progress, "repeated_text": loop_repeated_text,
    "polling_stuck": loop_polling_stuck, "parallel_identical": loop_parallel_identical,
    "scroll_end": loop_scroll_end, "mini_identical": loop_mini_identical,
    "gemini_replace": loop_gemini_replace, "codex_shell": loop_codex_shell,
}


# --- traps: loop-free runs that look repetitive ---------------------------------------------

def trap_polling_changing(rng: random.Random) -> list[dict[str, Any]]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 8))
    b.call("Bash", {"command": "python train.py", "run_in_background": True},
           "Command running in background with ID: bash_2")
    for k in range(20):
        b.call("BashOutput", {"bash_id": "bash_2"},
               f"epoch {k // 4 + 1}/5  step {k * 50}/1000  loss={2.5 - k * 0.1:.3f}")
    b.call("Bash", {"command": "sleep 30 && tail -n 3 train.log"}, "training finished")
    for k in range(6):
        b.call("Bash", {"command": "curl -s localhost:8000/status"},
               json.dumps({"state": "running", "progress": k * 17}))
    return b.end()


def trap_tests_after_edits(rng: random.Random) -> list[dict[str, Any]]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 8))
    for k in range(7):  # each real edit changes what the test says
        b.call("Edit", {"file_path": "/work/repo/calc.py", "old_string": f"return a + {k}",
                        "new_string": f"return a + {k + 1}"}, "The file has been updated.")
        ok = k == 6
        fail = (f"F.\nFAILED tests/test_calc.py::test_add - assert {k + 1} == 7\n"
                "1 failed, 1 passed in 0.08s")
        b.call("Bash", {"command": "python -m pytest tests/test_calc.py -q"},
               "..\n2 passed in 0.05s" if ok else fail, ok=ok,
               error=None if ok else "exit code 1")
    return b.end()


def trap_reread_after_edit(rng: random.Random) -> list[dict[str, Any]]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 8))
    path = "/work/repo/src/views.py"
    for k in range(6):
        b.call("Read", {"file_path": path}, _code(random.Random(k), "view"))
        b.call("Edit", {"file_path": path, "old_string": f"x * {k}", "new_string": f"x * {k + 1}"},
               "The file has been updated.")
    b.call("Read", {"file_path": path}, _code(random.Random(99), "view"))
    return b.end()


def trap_similar_searches(rng: random.Random) -> list[dict[str, Any]]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 8))
    names = ["get_user", "get_users", "get_user_by_id", "get_user_name", "get_user_email",
             "get_user_role", "get_user_group", "get_user_token", "get_user_prefs", "get_user_age"]
    for k, name in enumerate(names):
        out = (f"src/users/{name}.py:{k + 3}:def {name}(session, uid):\n"
               f"tests/test_{name}.py:{k + 7}:    assert {name}(s, 1)")
        b.call("Grep", {"pattern": f"def {name}", "path": "src", "output_mode": "content"},
               out if k % 4 else f"src/users/api.py:{40 + k}:def {name}(uid):")
    for k in range(6):
        b.call("Bash", {"command": f"grep -rn 'TODO({k})' src"},
               f"src/mod{k}.py:{k * 3 + 1}:# TODO({k}) handle errors")
    return b.end()


def trap_normal_long(rng: random.Random) -> list[dict[str, Any]]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(30, 60), tag="long")
    b.say("All tests pass; the feature is implemented.")
    return b.end()


def trap_brief_wait(rng: random.Random) -> list[dict[str, Any]]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 8))
    b.call("Bash", {"command": "docker compose up -d db", "run_in_background": True},
           "Command running in background with ID: bash_3")
    for _ in range(5):
        b.call("BashOutput", {"bash_id": "bash_3"}, "Creating db ... waiting for healthcheck")
    b.call("BashOutput", {"bash_id": "bash_3"}, "Creating db ... done")
    normal_work(b, rng, 5, tag="after")
    return b.end()


def trap_similar_moves(rng: random.Random) -> list[dict[str, Any]]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 8))
    for k in range(12):
        b.call("Bash", {"command": f"git mv src/old/module_{k}.py src/new/module_{k}.py"}, "")
    b.call("Bash", {"command": "python -m pytest -q"}, "120 passed in 3.2s")
    return b.end()


def trap_short_thoughts(rng: random.Random) -> list[dict[str, Any]]:
    b = SessionBuilder()
    for k in range(12):
        b.say("Let me check the next file.")
        b.call("Read", {"file_path": f"/work/repo/pkg/m{k}.py"}, _code(rng, f"m{k}"))
    return b.end()


def trap_retry_transient(rng: random.Random) -> list[dict[str, Any]]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 8))
    b.call("Bash", {"command": "pip install requests"},
           "ERROR: Could not install packages due to an OSError: Read timed out.", ok=False,
           error="exit code 1")
    b.call("Bash", {"command": "pip install requests"}, "Successfully installed requests-2.32.3")
    normal_work(b, rng, 6, tag="post")
    return b.end()


def trap_git_status_after_edits(rng: random.Random) -> list[dict[str, Any]]:
    b = SessionBuilder()
    changed: list[str] = []
    for k in range(8):
        f = f"src/f{k}.py"
        b.call("Write", {"file_path": f"/work/repo/{f}", "content": f"X = {k}\n"},
               f"File created successfully at: /work/repo/{f}")
        changed.append(f)
        b.call("Bash", {"command": "git status --short"}, "\n".join(f"?? {c}" for c in changed))
    return b.end()


def trap_test_fix_cycle(rng: random.Random) -> list[dict[str, Any]]:
    """Edit / run test / read traceback, repeatedly, each time with a real change."""
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 6))
    for k in range(6):
        b.call("Bash", {"command": "python -m pytest tests/test_io.py -x -q"},
               f"E   ValueError: bad header at byte {k * 13}\n1 failed in 0.3s", ok=False,
               error="exit code 1")
        b.call("Read", {"file_path": "/work/repo/io.py"}, _code(random.Random(k + 50), "io"))
        b.call("Edit", {"file_path": "/work/repo/io.py", "old_string": f"+ {k}",
                        "new_string": f"+ {k + 1}"}, "The file has been updated.")
    b.call("Bash", {"command": "python -m pytest tests/test_io.py -x -q"}, "4 passed in 0.2s")
    return b.end()


def trap_grep_nomatch(rng: random.Random) -> list[dict[str, Any]]:
    """mini-swe-agent searching for names that do not exist: grep exits 1, nothing is wrong."""
    b = SessionBuilder(agent="mini-swe-agent")
    normal_work(b, rng, rng.randint(3, 6))
    for k, name in enumerate(["parse_header", "read_header", "HeaderParser", "header_bytes",
                              "decode_header", "HEADER_SIZE", "hdr_len", "get_hdr"]):
        found = k in (3, 7)
        b.call("bash", {"command": f"grep -rn '{name}' src/ | head -20"},
               f"src/io/h.py:{k + 10}:def {name}():" if found else "", ok=found,
               error=None if found else "exit code 1")
    normal_work(b, rng, 4, tag="found")
    return b.end()


def trap_guess_paths(rng: random.Random) -> list[dict[str, Any]]:
    """Guessing a path twice, with searches in between that each find something new (a third
    wrong guess would be the same error three times: a recurring error)."""
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 6))
    for k, guess in enumerate(["src/config.py", "lib/config.py"]):
        b.call("Read", {"file_path": f"/work/repo/{guess}"},
               f"<tool_use_error>File does not exist: /work/repo/{guess}</tool_use_error>",
               ok=False)
        b.call("Glob", {"pattern": f"**/*conf*{k}*"}, f"pkg/settings/conf_{k}.py")
    b.call("Read", {"file_path": "/work/repo/pkg/settings/conf_1.py"}, _code(rng, "conf"))
    return b.end()


def trap_timeout_retry(rng: random.Random) -> list[dict[str, Any]]:
    b = SessionBuilder()
    normal_work(b, rng, rng.randint(3, 6))
    for _ in range(2):
        b.call("Bash", {"command": "pip install -r requirements.txt"},
               "Command timed out after 120 seconds", ok=False, error="timeout")
    b.call("Bash", {"command": "pip install -r requirements.txt --timeout 300"},
           "Successfully installed 12 packages")
    normal_work(b, rng, 4, tag="later")
    return b.end()


def trap_swe_normal(rng: random.Random) -> list[dict[str, Any]]:
    """An ordinary SWE-agent run: open, scroll, search, edit (one syntax error), reproduce."""
    b = SessionBuilder(agent="swe-agent")
    b.say("Let's first reproduce the bug with a small script that calls the parser.")
    b.call("create", {"filename": "reproduce.py"}, "[File: /repo/reproduce.py (1 lines total)]")
    b.call("edit", {"start_line": 1, "end_line": 1, "replacement_text": "import pkg\nprint(1)"},
           "[File: /repo/reproduce.py (2 lines total)]\nFile updated.")
    b.call("python", {"command": "python reproduce.py"}, "Traceback...\nValueError: bad value",
           ok=False)
    b.call("search_dir", {"search_term": "bad value"}, "Found 2 matches for \"bad value\"")
    b.call("open", {"path": "pkg/core.py"}, _code(rng, "core"))
    for k in range(3):
        b.say("Let's scroll down to see the rest of the function that raises the error.")
        b.call("scroll_down", {}, _code(rng, f"part{k}"))
    b.call("edit", {"start_line": 40, "end_line": 41, "replacement_text": "  if x:\n return"},
           "Your proposed edit has introduced new syntax error(s).\nE999 IndentationError",
           ok=False)
    b.call("edit", {"start_line": 40, "end_line": 41, "replacement_text": "    if x:\n"
                    "        return"}, "[File: pkg/core.py (120 lines total)]\nFile updated.")
    b.call("python", {"command": "python reproduce.py"}, "1")
    b.call("submit", {}, "diff --git a/pkg/core.py b/pkg/core.py")
    return b.end()


def trap_mini_normal(rng: random.Random) -> list[dict[str, Any]]:
    """An ordinary mini-swe-agent run: edits through sed and inline Python, re-runs between."""
    b = SessionBuilder(agent="mini-swe-agent")
    fail = "<returncode>1</returncode>\n<output>\nAssertionError: 3 != 4\n</output>"
    b.call("bash", {"command": "ls -la /testbed"}, "README.md\nsrc\ntests")
    b.call("bash", {"command": "cat src/calc.py"}, _code(rng, "calc"))
    b.call("bash", {"command": "python reproduce.py"}, fail, ok=False)
    b.call("bash", {"command": "sed -i 's/a + 1/a + 2/' src/calc.py"}, "")
    b.call("bash", {"command": "python reproduce.py"}, fail, ok=False)
    b.call("bash", {"command": "python - <<'EOF'\np='src/calc.py'\ns=open(p).read()\n"
                               "open(p,'w').write(s.replace('+ 2','+ 3'))\nEOF"}, "")
    b.call("bash", {"command": "python reproduce.py"}, fail, ok=False)
    b.call("bash", {"command": "cat src/calc.py"}, _code(rng, "calc2"))
    b.call("bash", {"command": "sed -i 's/b - 1/b/' src/calc.py"}, "")
    b.call("bash", {"command": "python reproduce.py"}, "<returncode>0</returncode>\nok")
    b.call("bash", {"command": "git diff"}, "diff --git a/src/calc.py b/src/calc.py")
    return b.end()


TRAPS = {
    "polling_changing": trap_polling_changing, "tests_after_edits": trap_tests_after_edits,
    "reread_after_edit": trap_reread_after_edit, "similar_searches": trap_similar_searches,
    "normal_long": trap_normal_long, "brief_wait": trap_brief_wait,
    "similar_moves": trap_similar_moves, "short_thoughts": trap_short_thoughts,
    "retry_transient": trap_retry_transient, "git_status_after_edits": trap_git_status_after_edits,
    "test_fix_cycle": trap_test_fix_cycle, "grep_nomatch": trap_grep_nomatch,
    "guess_paths": trap_guess_paths, "timeout_retry": trap_timeout_retry,
    "swe_normal": trap_swe_normal, "mini_normal": trap_mini_normal,
}
VARIANTS = 3


def generate(out_dir: Path = HERE / "synthetic") -> dict[str, dict[str, Any]]:
    """Write every scenario's variants to `out_dir`; return their labels."""
    out_dir.mkdir(parents=True, exist_ok=True)
    labels: dict[str, dict[str, Any]] = {}
    for name, fn in LOOPS.items():
        for v in range(VARIANTS):
            events, onset = fn(random.Random(f"{name}-{v}"))
            file = f"loop-{name}-{v}.jsonl"
            _write(out_dir / file, events)
            labels[f"synthetic/{file}"] = {"loop": True, "kind": name, "onset": onset}
    for name, fn in TRAPS.items():
        for v in range(VARIANTS):
            events = fn(random.Random(f"{name}-{v}"))
            file = f"trap-{name}-{v}.jsonl"
            _write(out_dir / file, events)
            labels[f"synthetic/{file}"] = {"loop": False, "kind": name, "onset": None}
    return labels


def _write(path: Path, events: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for e in events:
            fh.write(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n")


def main() -> int:
    labels_path = HERE / "labels.json"
    existing = json.loads(labels_path.read_text()) if labels_path.exists() else {}
    labels = {k: v for k, v in existing.items() if not k.startswith("synthetic/")}
    labels.update(generate())
    labels_path.write_text(json.dumps(dict(sorted(labels.items())), indent=1) + "\n")
    print(f"wrote {len(labels)} labels to {labels_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
