"""The detector registry drives the engine, the policy, `policy show` and the docs."""

import json
import re

from supervisor.engine import Policy
from supervisor.engine.detectors import BY_NAME, LOOP_DETECTORS, REGISTRY
from supervisor.engine.policy_file import dump_toml
from tests.conftest import REPO


def test_every_detector_is_complete_and_named_once() -> None:
    assert len(BY_NAME) == len(REGISTRY)
    for det in REGISTRY:
        assert re.fullmatch(r"[a-z_]+", det.name)
        assert det.summary and isinstance(det.defaults["enabled"], bool)
        json.dumps(det.memory())  # a memory is JSON values only
        assert det.__module__ == f"supervisor.engine.detectors.{det.name}"  # one per module
    assert "stale_read" not in LOOP_DETECTORS and "exact_repeat" in LOOP_DETECTORS


def test_the_policy_defaults_and_policy_show_come_from_the_registry() -> None:
    policy = Policy.profile("default")
    assert list(policy["detectors"]) == [d.name for d in REGISTRY]
    for det in REGISTRY:
        assert policy["detectors"][det.name] == det.defaults
    shown = dump_toml(policy)
    for det in REGISTRY:
        assert f"# {det.summary}\n[detectors.{det.name}]" in shown


def test_the_docs_table_lists_exactly_the_registered_detectors() -> None:
    doc = (REPO / "docs" / "engine.md").read_text()
    section = doc.split("## Detectors", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+)` \|", section, re.M)
    assert sorted(rows) == sorted(BY_NAME)


def test_a_fresh_engine_has_one_memory_per_detector() -> None:
    from supervisor.engine import Engine

    engine = Engine()
    assert set(engine.st.memory) == set(BY_NAME)
    restored = Engine.restore(json.loads(json.dumps(engine.snapshot())))
    assert restored.st.memory == engine.st.memory
