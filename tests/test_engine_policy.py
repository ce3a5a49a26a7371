"""Policies: profiles, dict round trips, TOML files with clear errors, `supervisor policy show`."""

import tomllib
from pathlib import Path

import pytest

from supervisor.engine import Policy
from supervisor.engine.policy_file import PolicyError, dump_toml, load_policy
from tests.conftest import run_cli


def test_profiles_and_round_trip() -> None:
    default = Policy.profile("default")
    strict = Policy.profile("seed-strict")
    assert strict.limit("consecutive_tool_calls") == (10.0, "pause")
    assert strict.limit("iterations_per_session") == (100.0, "stop")
    assert strict.limit("errors_per_session") == (5.0, "stop")
    assert strict.limit("iterations_per_cycle") == (25.0, "pause")
    assert strict.limit("duration_s") == (1800.0, "stop")
    assert strict.limit("resets_per_conversation") == (2.0, "stop")
    assert strict["detectors"]["exact_repeat"]["stop"] == 3
    assert default["detectors"]["similar_calls"]["threshold"] == 0.85
    assert Policy.from_dict(strict.to_dict()) == strict
    assert Policy.from_dict({}) == default
    with pytest.raises(ValueError, match="unknown profile"):
        Policy.profile("lax")
    with pytest.raises(ValueError, match="unknown detector"):
        Policy.from_dict({"detectors": {"nope": {}}})


def test_partial_dict_merges_onto_the_profile() -> None:
    policy = Policy.from_dict({"profile": "seed-strict",
                               "detectors": {"cycle": {"max_period": 6}}})
    assert policy["detectors"]["cycle"]["max_period"] == 6
    assert policy["detectors"]["cycle"]["min_period"] == 2
    assert policy.limit("iterations_per_session") == (100.0, "stop")


def test_toml_file_overrides(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[detectors.exact_repeat]\nnudge = 5\n\n[limits.tokens]\nlimit = 0\n\n'
                    '[tools."mcp__*"]\ncategory = "read"\n[tools.Bash.similar_calls]\n'
                    'enabled = false\n')
    policy = load_policy(path, "seed-strict")
    assert policy["detectors"]["exact_repeat"]["nudge"] == 5
    assert policy.limit("tokens") == (None, "pause")
    assert policy.params("Bash", "run")["similar_calls"]["enabled"] is False
    assert policy.params("Grep", "read")["similar_calls"]["enabled"] is True
    assert policy.tool_category("mcp__db__query") == "read"
    assert policy.name == "seed-strict"


@pytest.mark.parametrize(("text", "message"), [
    ("[detectors.exact_repet]\nnudge = 3", "unknown key 'detectors.exact_repet'"),
    ("[detectors.exact_repeat]\nnudge = 'x'", "'detectors.exact_repeat.nudge': Input should be"),
    ("window = ", "invalid TOML"),
    ("[limits.tokens]\naction = 'explode'", "'limits.tokens.action': Input should be 'pause'"),
    ("[detectors.similar_calls]\nthreshold = 1.5", "must be in (0, 1]"),
    ("profile = 'lax'", "unknown profile 'lax'"),
    ("[tools.Bash]\ncategory = 'weird'", "'tools.Bash.category'"),
    ("window = 0", "'window' must be at least 1"),
    ("[limits.tokens]\nlimit = -1", "must be >= 0"),
])
def test_bad_policy_files_give_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    assert str(path) in str(err.value)
    assert message in str(err.value)


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read policy file"):
        load_policy(tmp_path / "none.toml")
    (tmp_path / "b.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(PolicyError, match="not UTF-8"):
        load_policy(tmp_path / "b.toml")


def test_dump_toml_round_trips_every_profile() -> None:
    for name in ("default", "seed-strict"):
        policy = Policy.profile(name)
        parsed = tomllib.loads(dump_toml(policy))
        assert parsed["profile"] == name
        assert parsed["detectors"]["exact_repeat"] == policy["detectors"]["exact_repeat"]
        reloaded = Policy.from_dict(parsed)
        assert reloaded["limits"] == policy["limits"]
        assert reloaded["categories"] == policy["categories"]


@pytest.mark.slow
def test_policy_show_cli(tmp_path: Path) -> None:
    out = run_cli("policy", "show", "--profile", "seed-strict")
    assert out.returncode == 0, out.stderr
    data = tomllib.loads(out.stdout)
    assert data["limits"]["iterations_per_cycle"] == {"limit": 25, "action": "pause"}
    path = tmp_path / "p.toml"
    path.write_text("[detectors.polling]\nnudge = 20\n")
    out = run_cli("policy", "show", "--policy", str(path))
    assert tomllib.loads(out.stdout)["detectors"]["polling"]["nudge"] == 20
    path.write_text("[detectors.polling]\nnudge = true\nbogus = 1\n")
    bad = run_cli("policy", "show", "--policy", str(path))
    assert bad.returncode == 2
    assert bad.stderr.startswith("supervisor: error: ")
    assert "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict) and k not in ("categories", "limits"):
            out.update(_flat(v, f"{prefix}{k}."))
        elif k != "limits":
            out[prefix + k] = v
    return out


def test_every_default_is_documented() -> None:
    import json

    from tests.conftest import REPO

    doc = (REPO / "docs" / "policy.md").read_text()
    rows = {line.split("|")[1].strip(): line for line in doc.splitlines()
            if line.startswith("| `")}
    default = Policy.profile("default").to_dict()
    for key, value in _flat(default).items():
        if key.startswith("categories"):
            continue
        row = rows.get(f"`{key}`")
        assert row is not None, f"{key} is not documented"
        shown = json.dumps(value)
        assert f"`{shown}`" in row, f"{key}: default {shown} not in {row}"
    for name, spec in default["limits"].items():
        row = rows.get(f"`limits.{name}`")
        assert row is not None and f"`{spec['limit']}`, {spec['action']}" in row, name
    for category, patterns in default["categories"].items():
        row = rows.get(f"`{category}`")
        assert row is not None and " ".join(patterns) in row, category


def test_dump_toml_round_trips_overrides() -> None:
    policy = Policy.from_dict({
        "tools": {"mcp__*": {"category": "read"}, 'we"ird tool': {"exact_repeat": {"nudge": 7}}},
        "limits": {"tokens": {"limit": 0}},
        "ignore_arg_keys": ["description", "tab\there"],
    })
    again = Policy.from_dict(tomllib.loads(dump_toml(policy)))
    assert again["tools"] == policy["tools"]
    assert again["ignore_arg_keys"] == ["description", "tab\there"]
    assert again.limit("tokens") == (None, "pause")


@pytest.mark.slow
def test_guard_table_in_a_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text('[guard]\ncheckpoint_every = 10\nfallback = "abort"\n')
    policy = load_policy(path)
    assert policy.to_dict()["guard"] == {"checkpoint_every": 10, "fallback": "abort"}
    from supervisor.guard.settings import GuardSettings

    settings = GuardSettings.from_dict(policy.to_dict()["guard"])
    assert (settings.checkpoint_every, settings.fallback) == (10, "abort")
    shown = tomllib.loads(run_cli("policy", "show", "--policy", str(path)).stdout)
    assert shown["guard"]["checkpoint_every"] == 10
    assert shown["guard"]["escalation_deadline_s"] == 600.0  # the guard's default, filled in
    path.write_text('[guard]\nfallback = "explode"\n')
    with pytest.raises(PolicyError, match=r"guard\.fallback"):
        load_policy(path)
    path.write_text("[guard]\nnope = 1\n")
    with pytest.raises(PolicyError, match=r"unknown key 'guard\.nope'"):
        load_policy(path)
