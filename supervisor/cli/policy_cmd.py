"""`supervisor policy show [--profile NAME] [--policy FILE]`: print the effective policy (TOML).

The output is a complete policy file: every detector threshold, limit and tool category, and the
guard's `[guard]` table, with the file's changes merged onto the profile. Limits shown as 0 are
off.
"""

import argparse
import sys
from pathlib import Path

from supervisor.cli.common import CliError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="policy_command", metavar="ACTION", required=True)
    show = sub.add_parser("show", help="print the effective policy as TOML",
                          description="print the effective policy as TOML")
    show.add_argument("--profile", metavar="NAME",
                      help="the profile to start from (default, seed-strict)")
    show.add_argument("--policy", metavar="FILE", help="a policy TOML file merged onto it")


def run(args: argparse.Namespace) -> int:
    from supervisor.engine import Policy
    from supervisor.engine.policy_file import PolicyError, dump_toml, load_policy
    from supervisor.guard.settings import GuardSettings

    try:
        policy = load_policy(Path(args.policy) if args.policy else None, args.profile)
        data = policy.to_dict()
        data["guard"] = GuardSettings.from_dict(data.get("guard") or {}).to_dict()
    except (PolicyError, ValueError) as exc:
        raise CliError(str(exc)) from None
    print(dump_toml(Policy(data)), end="")
    from supervisor.protocol.policy_audit import switched_off

    for warning in switched_off(data):  # valid, but the operator must know
        print(f"supervisor: warning: this policy leaves agents unsupervised: {warning}",
              file=sys.stderr)
    return 0
