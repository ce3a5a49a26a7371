"""The store tripwire sees through a relative symbolic link (issue 41, low).

`ln -s ../store s` in the work tree, then `echo ... >> s/sessions/<sid>/control.jsonl`: the
command never names the store root in any of its spellings, so the call was allowed. Now every
path-like word of a shell command that writes is resolved from the session's directory (links
followed) and checked like a file tool's path. The real hook."""

import json
import os
from pathlib import Path

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
