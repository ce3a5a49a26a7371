"""docs/fleet.md cannot go stale where it matters: its ACL file is what the code generates (and
the tests run), and every command it names exists."""

import re

from supervisor.store.redis.layout import Layout
from tests.conftest import REPO

DOC = (REPO / "docs" / "fleet.md").read_text()


def test_the_acl_file_example_is_what_the_code_generates() -> None:
    users = dict(re.findall(r"^user (\S+) on >\S+ (.+)$", DOC, re.M))
    layout = Layout("sv")
    assert users == {
        "relay-ci-1": layout.acl_rules("relay", "ci-1"),
        "relay-ci-2": layout.acl_rules("relay", "ci-2"),
        "operator": layout.acl_rules("operator"),
    }


def test_every_fault_test_named_exists() -> None:
    named = set(re.findall(r"`(test_[a-z0-9_]+)`", DOC))
    sources = "".join(p.read_text() for p in (REPO / "tests").glob("test_fleet_*.py"))
    missing = [name for name in named if f"def {name}(" not in sources]
    assert named and not missing
