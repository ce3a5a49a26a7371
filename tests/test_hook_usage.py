"""Usage read from the agent's own record by the hook platform (in-process, real guard, real
files): Claude Code's transcript counted once per API message, priced from the price table,
sub-agent lines left to their own session, bad lines and rewritten transcripts counted as unknown
with one warning, a session's cost limit holding the next call, and, as the resident server runs
the steps, the transcript read on once a call's last hook is answered (off the agent's path)."""

import dataclasses
import json
import math
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from supervisor.hooks import claude_code
from supervisor.hooks.budget import Budget
from supervisor.hooks.claude_code.transcript import read_transcript
from supervisor.hooks.resident import Resident
from supervisor.hooks.runtime import handle, run_safely
from supervisor.hooks.usage import COUNTS, Spent, Tally, spent, token_count
from supervisor.protocol.charge import answer_of
from supervisor.protocol.charge import parts as parts_of
from tests.hook_helpers import payload
from tests.test_hook_platform import SESSION, Hook

SONNET = "claude-sonnet-4-5-20250929"


@pytest.fixture
def hook(tmp_path: Path) -> Hook:
    cwd = tmp_path / "ws"
    cwd.mkdir()
    root = tmp_path / "store"
    root.mkdir()
    (root / "policy.toml").write_text("[guard]\ncheckpoints = false\n")
    return Hook(root, cwd, tmp_path / "transcript.jsonl")


def answer(hook: Hook, message_id: str, usage: dict, *, model: object = SONNET,
           blocks: int = 2, sidechain: bool = False, end: str = "\n",
           asks: int | None = None) -> None:
    """An API message as Claude Code writes it: one line per content block, each with the
    message's usage; `asks`: the call (`call`'s `n`) its tool_use blocks ask for."""
    with hook.transcript.open("a") as handle:
        for index in range(blocks):
            tool_use = f"t{index}" if asks is None else f"toolu_{asks}"
            content = ([{"type": "text", "text": "Looking."}] if index == 0 else
                       [{"type": "tool_use", "id": tool_use, "name": "Read", "input": {}}])
            message = {"id": message_id, "role": "assistant", "type": "message",
                       "content": content, "usage": usage}
            if model is not None:
                message["model"] = model
            line = {"type": "assistant", "isSidechain": sidechain, "uuid": f"u{index}",
                    "message": message}
            handle.write(json.dumps(line) + (end if index == blocks - 1 else "\n"))


def call(hook: Hook, n: int) -> dict | None:
    return hook("PreToolUse", tool_name="Read", tool_input={"file_path": f"/w/f{n}.py"},
                tool_use_id=f"toolu_{n}")


def usages(hook: Hook) -> list[dict]:
    return hook.events("usage")


def warnings(hook: Hook) -> list[str]:
    return [e["message"] for e in hook.events("supervisor_error")]


USAGE = {"input_tokens": 1000, "output_tokens": 50, "cache_read_input_tokens": 5000,
         "cache_creation_input_tokens": 200}


def test_each_api_message_is_counted_once_and_priced(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    answer(hook, "msg_1", USAGE)
    call(hook, 1)
    answer(hook, "msg_1", USAGE, blocks=1)  # the same message, a line more: nothing new
    answer(hook, "msg_2", {**USAGE, "output_tokens": 70}, blocks=1)
    call(hook, 2)
    recorded = usages(hook)
    assert [(u["input_tokens"], u["output_tokens"], u["cache_read_tokens"],
             u["cache_write_tokens"], u["model"]) for u in recorded] == [
        (1000, 50, 5000, 200, SONNET), (1000, 70, 5000, 200, SONNET)]
    # $3/M input, $15/M output, $0.30/M cache reads, $3.75/M cache writes
    assert recorded[0]["cost_usd"] == pytest.approx(0.003 + 0.00075 + 0.0015 + 0.00075)
    verdicts = hook.events("verdict")
    assert verdicts[-1]["gauges"]["tokens"] == 1000 + 50 + 1000 + 70
    assert verdicts[-1]["gauges"]["cost_usd"] == pytest.approx(0.006 + 0.006 + 0.0003)
    assert warnings(hook) == []


def test_a_message_whose_counts_grow_records_the_growth(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    answer(hook, "msg_1", {**USAGE, "output_tokens": 3}, blocks=1)
    call(hook, 1)
    answer(hook, "msg_1", USAGE, blocks=1)  # streamed: the later line has the final count
    call(hook, 2)
    assert [(u["input_tokens"], u["output_tokens"]) for u in usages(hook)] == [
        (1000, 3), (0, 47)]


def test_an_unknown_model_counts_tokens_and_its_cost_is_unknown(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    answer(hook, "msg_1", USAGE, model="claude-from-the-future-9")
    call(hook, 1)
    (usage,) = usages(hook)
    assert usage["cost_usd"] is None and usage["input_tokens"] == 1000
    assert hook.events("verdict")[-1]["gauges"]["cost_usd"] == 0.0
    assert warnings(hook) == []  # a model the table does not know is no fault of the record


def test_sub_agent_lines_in_the_main_transcript_are_left_to_the_sub_agent(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    answer(hook, "msg_side", USAGE, sidechain=True)
    answer(hook, "msg_1", USAGE)
    call(hook, 1)
    assert len(usages(hook)) == 1


def test_a_partial_last_line_waits_for_its_end(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    answer(hook, "msg_1", USAGE, blocks=1, end="")
    call(hook, 1)
    assert usages(hook) == []
    with hook.transcript.open("a") as handle:
        handle.write("\n")
    call(hook, 2)
    assert len(usages(hook)) == 1


@pytest.mark.parametrize("bad", [-5, 10**15, "12", "NaN", 1.5, True, None, {"n": 1}])
def test_a_count_that_is_no_count_is_unknown_with_one_warning(hook: Hook, bad: object) -> None:
    """(A line with a bare NaN is no JSON: it is skipped like any other such line.)"""
    hook("SessionStart", source="startup")
    raw = json.dumps(bad)
    with hook.transcript.open("a") as handle:
        for n in (1, 2):
            handle.write(f'{{"type": "assistant", "message": {{"id": "m{n}", "model": "{SONNET}", '
                         '"role": "assistant", "content": [], "usage": {"input_tokens": 10, '
                         f'"output_tokens": {raw}}}}}}}\n')
    call(hook, 1)
    recorded = usages(hook)
    assert [(u["input_tokens"], u["output_tokens"], u["cost_usd"], u["unknown"])
            for u in recorded] == [(10, 0, None, ["output_tokens"])] * 2
    assert len(warnings(hook)) == 1 and "output_tokens" in warnings(hook)[0]
    assert hook.events("verdict")[-1]["gauges"]["tokens"] == 20


def test_a_missing_model_counts_tokens_with_one_warning(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    answer(hook, "msg_1", USAGE, model=None)
    answer(hook, "msg_2", USAGE, model=None)
    call(hook, 1)
    assert [u["cost_usd"] for u in usages(hook)] == [None, None]
    assert len(warnings(hook)) == 1 and "no model" in warnings(hook)[0]


def test_a_transcript_rewritten_under_the_reader_is_not_counted_twice(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    for n in range(3):
        answer(hook, f"msg_{n}", USAGE)
    call(hook, 1)
    assert len(usages(hook)) == 3
    text = hook.transcript.read_text()
    hook.transcript.write_text(text[: len(text) // 2])  # shortened
    call(hook, 2)
    hook.transcript.write_text(text + text)  # rewritten, longer than before
    call(hook, 3)
    answer(hook, "msg_new", USAGE)
    call(hook, 4)
    assert len(usages(hook)) == 4  # the three, and the one written after the rewrite
    assert len(warnings(hook)) == 1 and "rewritten" in warnings(hook)[0]


def test_a_rewrite_after_a_read_of_nothing_new_is_still_caught(hook: Hook) -> None:
    """A read that moved nothing keeps the mark it was checked with (two system calls fewer):
    the bytes it names are still those read, so a rewrite after it is caught all the same."""
    hook("SessionStart", source="startup")
    answer(hook, "msg_1", USAGE)
    call(hook, 1)
    call(hook, 2)  # nothing new: the mark kept
    text = hook.transcript.read_text()
    hook.transcript.write_text(text[:-20] + " " * 19 + "\n")  # rewritten, the same length
    call(hook, 3)
    assert len(usages(hook)) == 1
    assert len(warnings(hook)) == 1 and "rewritten" in warnings(hook)[0]


def test_a_session_cost_limit_holds_the_call_that_would_cross_it(hook: Hook) -> None:
    (hook.root / "policy.toml").write_text(
        "[limits.cost_usd]\nlimit = 0.01\naction = 'pause'\n"
        "[guard]\ncheckpoints = false\nescalation_deadline_s = 1\nfallback = 'skip'\n")
    hook("SessionStart", source="startup")
    answer(hook, "msg_1", USAGE)  # $0.006
    assert call(hook, 1) is None  # allowed
    answer(hook, "msg_2", USAGE)  # $0.012 spent: the next call waits for the operator
    refused = call(hook, 2)
    (escalation,) = hook.events("escalation")
    assert escalation["kind"] == "limit" and "cost_usd" in escalation["reason"]
    assert refused is not None
    assert refused["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_an_answer_written_after_its_call_was_judged_counts_at_the_next_call(hook: Hook) -> None:
    """Claude Code at times writes the answer asking for a call only after that call's
    PreToolUse ran. The hook reads what the transcript holds and does not wait for the rest:
    the late answer counts at the next hook, so the limit holds the next call (one late)."""
    (hook.root / "policy.toml").write_text(
        "[limits.cost_usd]\nlimit = 0.01\naction = 'pause'\n"
        "[guard]\ncheckpoints = false\nescalation_deadline_s = 1\nfallback = 'skip'\n")
    hook("SessionStart", source="startup")
    answer(hook, "msg_1", USAGE)  # $0.006
    assert call(hook, 1) is None
    assert call(hook, 2) is None  # its answer ($0.012 in all) is not in the transcript yet
    assert len(usages(hook)) == 1
    answer(hook, "msg_2", USAGE)  # written once call 2 was judged: counted at the next hook
    refused = call(hook, 3)
    assert len(usages(hook)) == 2
    (escalation,) = hook.events("escalation")
    assert escalation["call_id"] == "toolu_3" and "cost_usd" in escalation["reason"]
    assert refused is not None
    assert refused["hookSpecificOutput"]["permissionDecision"] == "deny"


class Served(Hook):
    """Hook calls as the resident server makes them: its `Resident` keeps the session's guard,
    and the work a step leaves for after its answer (`later`) waits for `answered` (or is
    dropped, as by a server killed right after answering)."""

    def __init__(self, hook: Hook) -> None:
        super().__init__(hook.root, hook.cwd, hook.transcript)
        self.resident = Resident()
        self.later: list = []

    def __call__(self, event: str, timeout: float = 60, **fields: object) -> dict | None:
        body = {**payload(event, session=SESSION, cwd=self.cwd, **fields),
                "transcript_path": str(self.transcript)}
        text = run_safely("claude-code", json.dumps(body).encode(), self.root, Budget(timeout),
                          self.complaints.append, resident=self.resident, later=self.later)
        assert self.complaints == []
        return json.loads(text) if text else None

    def answered(self) -> None:
        """The server sent the answer: it does what the step left for afterwards."""
        work, self.later = self.later, []
        for piece in work:
            piece()


def ran(hook: Hook, n: int) -> None:
    """Call `n`'s outcome, then its batch: Claude Code's last two hooks of a call."""
    response = {"file": {"content": "x"}}
    args = {"file_path": f"/w/f{n}.py"}
    assert hook("PostToolUse", tool_name="Read", tool_input=args, tool_response=response,
                tool_use_id=f"toolu_{n}") is None
    assert hook("PostToolBatch", tool_calls=[{"tool_name": "Read", "tool_input": args,
                                              "tool_use_id": f"toolu_{n}",
                                              "tool_response": response}]) is None


LIMIT = ("[limits.cost_usd]\nlimit = 0.01\naction = 'pause'\n"
         "[guard]\ncheckpoints = false\nescalation_deadline_s = 1\nfallback = 'skip'\n")


def test_the_server_reads_a_late_answer_once_the_calls_last_hook_is_answered(
    hook: Hook,
) -> None:
    """The answer asking for call 2, written after call 2's PreToolUse ran, was left to call
    3's PreToolUse to read and price on the agent's path; the server now reads it once call
    2's batch is answered. Counted once, and the limit holds call 3 as before."""
    (hook.root / "policy.toml").write_text(LIMIT)
    served = Served(hook)
    served("SessionStart", source="startup")
    answer(served, "msg_1", USAGE)  # $0.006
    assert call(served, 1) is None
    ran(served, 1)
    served.answered()
    assert call(served, 2) is None  # its answer is not in the transcript yet
    answer(served, "msg_2", USAGE)  # $0.012 in all
    ran(served, 2)
    assert len(usages(served)) == 1  # the batch's answer did not wait for the transcript
    served.answered()
    assert len(usages(served)) == 2  # read before call 3's hook runs
    refused = call(served, 3)
    assert len(usages(served)) == 2  # nothing counted twice
    (escalation,) = served.events("escalation")
    assert escalation["call_id"] == "toolu_3" and "cost_usd" in escalation["reason"]
    assert refused is not None
    assert refused["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_server_killed_before_it_read_on_leaves_the_answer_to_the_next_hook(
    hook: Hook,
) -> None:
    """What the server reads after an answer is safe to lose: the offset read to is saved
    with what was recorded, so a server killed first (its work dropped, its kept sessions
    gone) leaves the late answer to the next hook, which counts it once, before judging."""
    (hook.root / "policy.toml").write_text(LIMIT)
    served = Served(hook)
    served("SessionStart", source="startup")
    answer(served, "msg_1", USAGE)
    assert call(served, 1) is None
    assert call(served, 2) is None
    answer(served, "msg_2", USAGE)
    ran(served, 2)
    restarted = Served(hook)  # killed: nothing it left for after the answer was done
    refused = call(restarted, 3)
    assert len(usages(restarted)) == 2
    assert refused is not None
    assert refused["hookSpecificOutput"]["permissionDecision"] == "deny"


class Lagging(Hook):
    """Hook calls of Claude Code's target whose transcript gets the lines of `lands` (answers
    written there with `answer`) just after a hook's first read of it, when `armed`: the agent
    writing an answer while the hook runs. `reads`: the reads of the transcript by the last
    hook."""

    def __init__(self, hook: Hook, tmp_path: Path) -> None:
        super().__init__(hook.root, hook.cwd, hook.transcript)
        self.lands = Hook(hook.root, hook.cwd, tmp_path / "unwritten.jsonl")
        self.armed, self.reads = False, 0
        self.target = dataclasses.replace(claude_code.TARGET, transcript=self.read)

    def read(self, path: str, offset: int) -> tuple[list, int]:
        found = read_transcript(path, offset)
        self.reads += 1
        if self.armed and self.lands.transcript.exists():
            with self.transcript.open("a") as handle:
                handle.write(self.lands.transcript.read_text())
            self.lands.transcript.unlink()
        return found

    def __call__(self, event: str, timeout: float = 60, **fields: object) -> dict | None:
        self.reads = 0
        body = {**payload(event, session=SESSION, cwd=self.cwd, **fields),
                "transcript_path": str(self.transcript)}
        text = handle(self.target, json.dumps(body).encode(), self.root, Budget(timeout))
        return json.loads(text) if text else None


def test_a_call_waits_briefly_for_the_answer_that_asked_for_the_call_before(
    hook: Hook, tmp_path: Path
) -> None:
    """When calls come faster than an agent writes its transcript, the answer asking for a
    call can still be unwritten at the next call's PreToolUse (the CI rehearsal: Claude Code,
    the third call's at the fourth's, 9 runs of 12), and a limit held two calls late. The
    reader names the calls each answer issued, so a target that waits (`call_waits_s`: Qwen
    Code; here with Claude Code's reader) knows at that PreToolUse that the answer asking for
    the call before is unread and reads on until it lands (bounded): the limit holds the next
    call, at most one late. A call's own answer is never waited for (one read). Claude Code
    itself does not wait: it cost every call of its agent_cli benchmark 10 ms
    (docs/claude-code.md)."""
    assert claude_code.TARGET.call_waits_s == 0  # Claude Code: no wait (see above)
    (hook.root / "policy.toml").write_text(LIMIT)
    late = Lagging(hook, tmp_path)
    late.target = dataclasses.replace(late.target, call_waits_s=0.3)
    late("SessionStart", source="startup")
    answer(late, "msg_1", USAGE, asks=1)  # $0.006
    assert call(late, 1) is None
    ran(late, 1)
    assert call(late, 2) is None  # its own answer is unwritten: not waited for
    assert late.reads == 1 and len(usages(late)) == 1
    ran(late, 2)
    answer(late.lands, "msg_2", USAGE, asks=2)  # $0.012 in all, written during call 3's hook
    late.armed = True
    refused = call(late, 3)
    assert late.reads == 2 and len(usages(late)) == 2
    (escalation,) = late.events("escalation")
    assert escalation["call_id"] == "toolu_3" and "cost_usd" in escalation["reason"]
    assert refused is not None
    assert refused["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_an_answer_that_never_lands_is_waited_for_once_and_no_longer_than_the_target_says(
    hook: Hook, tmp_path: Path
) -> None:
    """The wait is bounded by the target's `call_waits_s`, then the call is judged with what
    was read; the answer given up on is not waited for again by the next call. A transcript
    that never named a call of the session (another file, another format) is not waited on."""
    late = Lagging(hook, tmp_path)
    late.target = dataclasses.replace(late.target, call_waits_s=0.2)
    late("SessionStart", source="startup")
    answer(late, "msg_1", USAGE, asks=1)
    call(late, 1)
    ran(late, 1)
    call(late, 2)  # its answer never lands
    ran(late, 2)
    started = time.monotonic()
    assert call(late, 3) is None
    assert 0.2 <= time.monotonic() - started < 10  # the cap, not a wait without end
    ran(late, 3)
    late.target = dataclasses.replace(late.target, call_waits_s=30)  # a wait would show
    started = time.monotonic()
    answer(late, "msg_3", USAGE, asks=3)
    call(late, 4)  # (call 3's answer came: call 4's own, unwritten, is the next to wait for)
    call(late, 5)  # call 4 still runs: a call of the same answer, whose answer is its own
    assert late.reads == 1 and time.monotonic() - started < 15
    assert [e["call_id"] for e in late.events("verdict")] == [f"toolu_{n}" for n in range(1, 6)]

    other = Lagging(Hook(tmp_path / "store-2", hook.cwd, tmp_path / "other.jsonl"), tmp_path)
    other.root.mkdir()
    other.target = dataclasses.replace(other.target, call_waits_s=30)
    other("SessionStart", source="startup")
    answer(other, "msg_1", USAGE)  # its calls are not this session's
    started = time.monotonic()
    for n in (1, 2, 3):
        call(other, n)
        ran(other, n)
    assert time.monotonic() - started < 15 and len(other.events("verdict")) == 3


def test_an_answer_read_at_once_is_one_usage_event_and_its_call_is_charged_all_of_it(
    hook: Hook,
) -> None:
    """Claude Code writes an answer as a line per content block, each with the usage so far
    (the first line's output a few tokens): read at once, they are one `usage` event with the
    answer's counts, and the call the answer asked for is charged all of it (it was charged
    the last line's growth alone: its output, not its input)."""
    hook("SessionStart", source="startup")
    with hook.transcript.open("a") as handle:
        for index, (block, output) in enumerate(
                [({"type": "thinking", "thinking": "..."}, 8),
                 ({"type": "text", "text": "Looking."}, 8),
                 ({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}, 436)]):
            handle.write(json.dumps({"type": "assistant", "uuid": f"u{index}", "message": {
                "id": "msg_1", "role": "assistant", "model": SONNET, "content": [block],
                "usage": {**USAGE, "output_tokens": output}}}) + "\n")
    call(hook, 1)
    (usage,) = usages(hook)
    assert (usage["input_tokens"], usage["output_tokens"], usage["cache_read_tokens"],
            usage["cache_write_tokens"]) == (1000, 436, 5000, 200)
    assert usage["cost_usd"] == pytest.approx(0.003 + 436 * 15e-6 + 0.0015 + 0.00075)
    (made,) = hook.events("tool_call")
    assert answer_of([usage["seq"]], made["seq"]) == 0



def test_an_answer_read_in_parts_charges_its_calls_every_part(hook: Hook) -> None:
    """An answer of two parallel calls whose second line is written after the first call's
    hook read the first: two `usage` events, the same `answer`, and each call is charged both
    (the second was charged the second part alone: 386 output tokens, none of the input)."""
    hook("SessionStart", source="startup")

    def line(tool_use: str, output: int) -> None:
        with hook.transcript.open("a") as handle:
            handle.write(json.dumps({"type": "assistant", "uuid": tool_use, "message": {
                "id": "msg_1", "role": "assistant", "model": SONNET, "content": [
                    {"type": "tool_use", "id": tool_use, "name": "Read", "input": {}}],
                "usage": {**USAGE, "output_tokens": output}}}) + "\n")

    line("toolu_1", 50)
    call(hook, 1)
    line("toolu_2", 436)
    call(hook, 2)
    parts = usages(hook)
    assert [(u["input_tokens"], u["output_tokens"], u["answer"]) for u in parts] == [
        (1000, 50, "msg_1"), (0, 386, "msg_1")]
    seqs, answers = [u["seq"] for u in parts], [u["answer"] for u in parts]
    for made in hook.events("tool_call"):
        assert parts_of(answers, answer_of(seqs, made["seq"])) == range(2)


counts = st.one_of(  # mostly the first n of COUNTS (as an answer's lines give them)
    st.integers(1, 4).flatmap(lambda n: st.fixed_dictionaries(
        {name: st.integers(0, 6) for name in COUNTS[:n]})),
    st.dictionaries(st.sampled_from(COUNTS), st.integers(0, 6), max_size=4))
entries = st.lists(st.one_of(
    st.builds(lambda key, model, counts, unknown: spent(key, model, {**counts, **unknown}),
              st.sampled_from("aab"), st.sampled_from(["m", "m", "m", None]), counts,
              st.sampled_from([{}, {}, {}, {}, {"output_tokens": -1}])),
    st.builds(lambda model: {"used_model": model}, st.sampled_from(["m", "n"])),
    st.just("a text")), max_size=10)


@settings(max_examples=600, deadline=None)
@example({}, [spent("a", "m", {"output_tokens": 5}), spent("a", None, {"output_tokens": 8})])
@example({}, [spent("a", "m", {"output_tokens": 5}), {"used_model": "m"},  # went down
              spent("a", "m", {"output_tokens": 3}), spent("a", "m", {"output_tokens": 4})])
@given(st.dictionaries(st.sampled_from("ab"), st.lists(st.integers(0, 6), min_size=4,
                                                         max_size=4)), entries)
def test_merged_entries_record_exactly_what_each_in_turn_would(
    kept: dict[str, list[int]], read: list) -> None:
    """`Tally.merged` leaves out only entries whose tokens the later entry of their key
    records anyway: the tokens counted per model they are priced as, the counts the tally keeps
    and every other entry are the same as when each entry is taken in turn."""
    def record(tally: Tally, taken: list) -> tuple[dict, dict, list]:
        model: str | None = None
        spent_by: dict[tuple[str | None, str], int] = {}
        for entry in taken:
            if isinstance(entry, dict) and "used_model" in entry:
                model = entry["used_model"]
            elif isinstance(entry, dict):
                for name, grown in tally.growth(entry).items():
                    if grown:
                        at = (entry["model"] or model, name)
                        spent_by[at] = spent_by.get(at, 0) + grown
        others = [e for e in taken if not (isinstance(e, dict) and "key" in e
                                           and not e["unknown"])]
        return spent_by, tally.dump(), others

    each = record(Tally({k: list(v) for k, v in kept.items()}), read)
    tally = Tally({k: list(v) for k, v in kept.items()})
    assert record(tally, tally.merged(read)) == each


def test_tally_counts_growth_and_never_goes_negative() -> None:
    tally = Tally()
    first: Spent = spent("k", "m", {"input_tokens": 10, "output_tokens": 5})
    assert tally.growth(first) == {"input_tokens": 10, "output_tokens": 5}
    assert tally.growth(first) == {"input_tokens": 0, "output_tokens": 0}
    assert tally.growth(spent("k", "m", {"input_tokens": 4})) == {"input_tokens": 0}
    assert tally.growth(spent("k", "m", {"input_tokens": 9})) == {"input_tokens": 5}
    assert [token_count(v) for v in (3, 3.0, -1, 2**40, "3", None, math.inf)] == [
        3, 3, None, None, None, None, None]


def test_the_session_start_says_whether_the_agent_has_a_usage_record(hook: Hook) -> None:
    hook("SessionStart", source="startup")
    assert hook.events("session_start")[0]["usage_record"] is True


def test_a_loop_says_what_it_has_cost_since_its_onset(hook: Hook) -> None:
    (hook.root / "policy.toml").write_text(
        "[detectors.exact_repeat]\nnudge = 2\nblock = 10\nescalate = 4\n"
        "[guard]\ncheckpoints = false\nescalation_deadline_s = 1\nfallback = 'skip'\n")
    hook("SessionStart", source="startup")
    answer(hook, "msg_before", USAGE)  # $0.006 before the loop began
    hook("PreToolUse", tool_name="Read", tool_input={"file_path": "/w/a.py"}, tool_use_id="r")
    answer(hook, "msg_reply", USAGE)  # an answer that asked for no call: in no loop's cost
    for n in range(4):
        answer(hook, f"msg_{n}", USAGE)
        refused = hook("PreToolUse", tool_name="Bash", tool_input={"command": "make"},
                       tool_use_id=f"b{n}")
        if refused is not None:  # held, then refused by the fallback: it never ran
            break
        hook("PostToolUse", tool_name="Bash", tool_input={"command": "make"},
             tool_use_id=f"b{n}", tool_response={"stdout": "make: *** no rule", "stderr": "",
                                                 "interrupted": False})
    (escalation,) = hook.events("escalation")
    spent = escalation["spent"]
    assert spent["cost_usd"] == pytest.approx(0.006 * 4) and not spent["at_least"]
    assert spent["tokens"] == 1050 * 4 and spent["calls"] == 4
    assert escalation["reason"].endswith("; this loop has cost $0.02 over 4 calls")
    nudges = [d for d in hook.events("detection") if d["detector"] == "exact_repeat"]
    assert nudges and nudges[0]["spent"]["cost_usd"] == pytest.approx(0.006 * 2)
    # `supervisor stats` sums it over the session's escalations
    from supervisor.guard.loop_cost import in_loops

    loops = in_loops(hook.events())
    assert loops is not None and loops["cost_usd"] == pytest.approx(0.006 * 4)
    assert loops["calls"] == 4
    # and `supervisor analyze` charges the loop's calls the same answers (`protocol.charge`:
    # it charged each call every usage since the call before, the reply's too)
    from supervisor.analysis.replay import analyze_events
    from supervisor.engine.policy_file import load_policy

    report = analyze_events(hook.events(), load_policy(hook.root / "policy.toml", None),
                            session="loop-1", source="hook")
    assert report.loop_steps == 4
    assert report.loop_cost_usd == pytest.approx(spent["cost_usd"])
    # and the notification's short reason says it
    from supervisor.notify.message import item_of
    from supervisor.store.local import LocalStore

    recorded = LocalStore(hook.root).read_all("loop-1").events
    item = item_of("loop-1", recorded, escalation["escalation_id"], None)
    assert item is not None and item.reason.endswith(" · $0.02 over 4 calls")


def test_a_state_found_unreadable_by_a_kept_session_is_kept_aside_and_reported(
    hook: Hook,
) -> None:
    """The resident server's kept guard takes in a state another process saved; one it cannot
    read is kept aside as `state.json.bad`, said once in the session, and supervision goes
    on."""
    served = Served(hook)
    assert call(served, 1) is None
    state = hook.root / "sessions" / SESSION / "state.json"
    state.write_bytes(b"\x00garbage{")  # (another process's save, unreadable)
    assert call(served, 2) is None
    assert call(served, 3) is None
    (error,) = served.events("supervisor_error")
    assert "state.json.bad" in error["message"]
    assert state.with_suffix(".json.bad").read_bytes() == b"\x00garbage{"
    assert [e["call_id"] for e in served.events("verdict")] == ["toolu_1", "toolu_2", "toolu_3"]
