"""A `split`'s sub-tasks as the operator gives them on the command line: as arguments, or one
per line of a plan file (`supervisor split`, `supervisor answer --split`).

Everything is checked before anything is written, with the protocol's own rule
(`protocol.decisions.plan_problem`), so a bad plan gets one clear line and the control channel
is left as it was.
"""

import re
from pathlib import Path

from supervisor.cli.common import CliError
from supervisor.protocol.decisions import plan_problem

_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
"""A list marker a plan file's line may start with (Markdown bullets, `1.` or `1)`)."""


def read_plan(steps: list[str] | None, file: str | None) -> list[str]:
    """The plan's sub-tasks, in order: `steps` as given, then the lines of `file` (blank lines
    and `#` comments skipped, a leading list marker removed). Raises `CliError` for an empty
    plan, an unreadable file, or a sub-task the protocol refuses."""
    tasks = [s.strip() for s in steps or []]
    if file is not None:
        try:
            text = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise CliError(f"cannot read the plan file {file}: {reason}; nothing was written")\
                from exc
        for line in text.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                tasks.append(_BULLET.sub("", line).strip())
    if not tasks or not any(tasks):
        raise CliError("the plan is empty: give at least one sub-task; nothing was written")
    problem = plan_problem(tasks)
    if problem:
        raise CliError(f"{problem}; nothing was written")
    return tasks
