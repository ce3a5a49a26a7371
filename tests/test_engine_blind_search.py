"""`blind_search`: searches that keep finding nothing for names of files the agent has just
opened or written (the search looks in the wrong place), and the near misses that are not
loops: checking that a removed name is gone, exploring names that do not exist, a search that
works again, a person's new prompt."""

from typing import Any

from supervisor.engine import Engine, Finding
from supervisor.engine.detectors.blind_search import search_names
from supervisor.engine.guidance import blind_search_nudge

SERVICE = "/repo/App/Services/ExerciseSubstitutionService.swift"
SOURCE = "struct ExerciseSubstitutionServiceFactory {\n    static func create() -> Service? {\n"


class Session:
    """One engine fed tool calls and their results, with the findings it answered."""

    def __init__(self) -> None:
        self.engine = Engine()
        self.i = 0
        self.found: list[Finding] = []

    def call(self, tool: str, args: dict[str, Any], output: str, ok: bool = True) -> None:
        self.i += 1
        call = {"call_id": f"c{self.i}", "tool": tool, "args": args}
        check = self.engine.check(call, float(self.i))
        self.found += [*check.findings, *self.engine.observe(
            {"type": "tool_result", "call_id": f"c{self.i}", "ok": ok, "output": output,
             "seq": 2 * self.i + 2}, float(self.i))]

    def grep(self, pattern: str, output: str = "No files found", **more: Any) -> None:
        self.call("Grep", {"pattern": pattern, "output_mode": "files_with_matches", **more},
                  output)

    def opened_and_edited(self) -> None:
        self.call("Read", {"file_path": SERVICE, "offset": 190, "limit": 20}, SOURCE)
        self.call("Edit", {"file_path": SERVICE, "old_string": "static func create()",
                           "new_string": "static func make()"},
                  f"The file {SERVICE} has been updated successfully.")

    def fired(self) -> list[Finding]:
        return [f for f in self.found if f.detector == "blind_search"]


def test_empty_searches_for_the_name_of_a_file_just_edited_are_a_loop() -> None:
    s = Session()
    s.opened_and_edited()
    for pattern in ("SubstitutionServiceFactory|ExerciseSubstitut", 'SubstitutionService"',
                    "ExerciseSubstitut"):
        s.grep(pattern, glob="*.swift")
    [f] = s.fired()
    assert (f.level, f.action, f.step) == (1, "nudge", 4)
    assert "exist" in f.message and "search from the project root" in f.message
    assert s.engine.check({"call_id": "next", "tool": "Grep",
                           "args": {"pattern": "ExerciseSubstitution"}}, 9.0).action != "block"


def test_the_nudge_names_the_searches_and_quotes_the_file() -> None:
    s = Session()
    s.call("Read", {"file_path": "/repo/src/billing_client\x1b[31m.py"}, "class BillingClient:\n")
    for pattern in ("BillingClient", "billing_client", "billingClient"):
        s.grep(pattern, output="No matches found")
    [f] = s.fired()
    assert f.evidence == [6, 8, 10]
    assert "\x1b" not in f.message  # the recovery turn, from the evidence
    alone = blind_search_nudge(3, "billing_client\x1b[31m.py")  # its fallback
    assert "“billing_client" in alone and "\x1b" not in alone and "3 searches" in alone
    assert "#" not in alone


def test_a_hunt_for_unused_modules_is_no_loop() -> None:
    """Names of several files the agent read, each searched once and not found: nothing
    imports them, which is what the agent wanted to know."""
    s = Session()
    for name in ("old_helpers", "legacy_utils", "compat_shim"):
        s.call("Read", {"file_path": f"/repo/src/{name}.py"}, "def f():\n    pass\n")
    for name in ("old_helpers", "legacy_utils", "compat_shim"):
        s.grep(f"import {name}|from {name}", output="No matches found")
    assert s.fired() == []


def test_checking_that_a_removed_name_is_gone_is_no_loop() -> None:
    """The person renamed a module's function and checks twice that no caller is left."""
    s = Session()
    s.opened_and_edited()
    s.grep("ExerciseSubstitutionService.create")
    s.grep("ExerciseSubstitutionService\\.create\\(", glob="*.swift")
    assert s.fired() == []


def test_exploring_names_that_no_file_is_named_after_is_no_loop() -> None:
    s = Session()
    s.opened_and_edited()
    for pattern in ("handleOpenAIError", "userFriendlyMessage", "fromUserKey", "ErrorMapper",
                    "missingAPIKey"):
        s.grep(pattern)
    assert s.fired() == []


def test_a_search_that_finds_something_ends_the_episode() -> None:
    s = Session()
    s.opened_and_edited()
    s.grep("ExerciseSubstitut")
    s.grep("SubstitutionService")
    s.grep("SubstitutionService", output=f"{SERVICE}\n", path="/repo")
    s.grep("ExerciseSubstitutionServ")
    s.grep("ExerciseSubstitutionS")
    assert s.fired() == []


def test_a_search_inside_the_file_itself_does_not_count() -> None:
    """Looking in a file for a name like the file's finds nothing: the name is not used there;
    that is not a search in the wrong place."""
    s = Session()
    s.opened_and_edited()
    for pattern in ("ExerciseSubstitutionServiceMock", "ExerciseSubstitutionServiceSpy",
                    "ExerciseSubstitutionServiceStub"):
        s.grep(pattern, output="No matches found", path=SERVICE)
    assert s.fired() == []


def test_a_persons_prompt_starts_afresh() -> None:
    s = Session()
    s.opened_and_edited()
    s.grep("ExerciseSubstitut")
    s.grep("SubstitutionService")
    s.engine.observe({"type": "message", "role": "user", "text": "now look for the mock"}, 20.0)
    s.grep("ExerciseSubstitutionServ")
    assert s.fired() == []


def test_files_the_agent_only_created_are_not_known() -> None:
    """Agents name their scripts after what they investigate: a search for that finding
    nothing says nothing about where the search looks."""
    s = Session()
    s.call("Write", {"file_path": "/repo/trace_where_node.py", "content": "print(1)\n"}, "ok")
    s.call("Bash", {"command": "python trace_where_node.py"}, "1\n")
    for pattern in ("WhereNode", "where_node", "WhereNodes"):
        s.grep(pattern)
    assert s.fired() == []


def test_files_opened_long_ago_are_not_known_any_more() -> None:
    s = Session()
    s.opened_and_edited()
    for i in range(21):
        s.call("Bash", {"command": f"echo {i} > /tmp/n{i}"}, "")
    for pattern in ("ExerciseSubstitut", "SubstitutionService", "ExerciseSubstitution"):
        s.grep(pattern)
    assert s.fired() == []


def test_search_names_leave_paths_globs_and_keys_out() -> None:
    assert search_names('{"glob":"*.swift","output_mode":"content","pattern":"ClientError"}',
                        6) == ["clienterror"]
    assert search_names('"output_mode":"files_with_matches","pattern":"ErrorMapp', 6) == [
        "errormapp"]  # arguments cut short are no JSON
    assert search_names('{"command":"grep -rn \\"def subfigures\\" lib/matplotlib/figure.py"}',
                        6) == ["subfigures"]


def test_shell_searches_that_exit_1_with_nothing_count_too() -> None:
    """`rg`/`grep -r` in a shell answer a search that finds nothing with exit code 1 and no
    output; after a `cd` into a sub-directory they miss the file the agent has open."""
    s = Session()
    s.call("Bash", {"command": "cat App/Services/ExerciseSubstitutionService.swift"}, SOURCE)
    s.call("Bash", {"command": "cd functions && npm run build"}, "> tsc\n")
    for pattern in ("ExerciseSubstitut", "SubstitutionService", "ExerciseSubstitutionService"):
        s.call("Bash", {"command": f"rg -n {pattern} ."}, "", ok=False)
    [f] = s.fired()
    assert f.step == 4
    s.call("Bash", {"command": "rg -n ExerciseSubstitution /repo"}, f"{SERVICE}:1:struct\n")
    for pattern in ("ExerciseSubstitutionServiceFactory", "SubstitutionServiceFactory"):
        s.call("Bash", {"command": f"rg -n {pattern} ."}, "", ok=False)
    assert len(s.fired()) == 1  # found once: a new episode, not yet three misses
