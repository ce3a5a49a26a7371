"""The store tripwire sees through a relative symbolic link (issue 41, low).

`ln -s ../store s` in the work tree, then `echo ... >> s/sessions/<sid>/control.jsonl`: the
command never names the store root in any of its spellings, so the call was allowed. Now every
path-like word of a shell command that writes is resolved from the session's directory (links
followed) and checked like a file tool's path. The real hook."""

import json
import os
from pathlib import Path

import pytest

from supervisor.store.writer import LineWriter, StoreError
from tests.adversarial.test_adv_self_supervision import FORGED, _denied, _hook
from tests.hook_helpers import payload


def test_a_relative_link_to_the_store_is_seen(tmp_path: Path) -> None:
    root, ws = tmp_path / "store", tmp_path / "ws"
    ws.mkdir()
    _hook(root, payload("SessionStart", cwd=ws, source="startup"))
    os.symlink("../store", ws / "st")  # what the agent made with an earlier call
    control = "st/sessions/loop-1/control.jsonl"
    reason = _denied(root, ws, "Bash", {"command": f"echo '{json.dumps(FORGED)}' >> {control}"})
    assert "which leads into the supervisor's store" in reason
    reason = _denied(root, ws, "Bash", {"command": "cd st && rm -rf ./sessions"}, n=1)
    assert "supervisor's store" in reason
    # reading through the link is still allowed
    out = _hook(root, payload("PreToolUse", cwd=ws, tool_name="Bash",
                              tool_input={"command": f"cat {control}"}, tool_use_id="toolu_r"))
    assert "deny" not in out


def test_a_log_planted_as_a_link_is_never_appended_through(tmp_path: Path) -> None:
    """A session's log replaced by a link to a file outside the store (with write access to the
    store, past the tripwire above): the supervisor's next line is refused with a clear error,
    and the file the link names is left as it was."""
    outside = tmp_path / "home" / ".bashrc"
    outside.parent.mkdir()
    outside.write_text("# mine\n")
    session = tmp_path / "store" / "sessions" / "s1"
    session.mkdir(parents=True)
    writer = LineWriter(session / "events.jsonl")
    writer.append({"type": "session_start", "session": "s1"})
    (session / "events.jsonl").unlink()
    os.symlink(outside, session / "events.jsonl")  # swapped while the writer holds the old one
    with pytest.raises(StoreError, match=r"events\.jsonl"):
        writer.append({"type": "message", "role": "assistant", "text": "x"})
    with pytest.raises(StoreError, match=r"events\.jsonl"):
        LineWriter(session / "events.jsonl").append({"type": "session_start", "session": "s1"})
    assert outside.read_text() == "# mine\n"
