"""What the agent is told: what repeated (steps, signature, outcome) and what to do instead.

A strategy per tool category and advice per known error class; detectors compose their
messages from these so every nudge, block and escalation is specific.
"""

ERROR_ADVICE: dict[str, str] = {
    "search_string_not_found": (
        "the text you are replacing is not in the file as written; re-read the exact lines "
        "first and copy them verbatim (whitespace included), or replace a smaller unique part"
    ),
    "read_first": (
        "the tool requires the file to be opened or read first; read it with the read/open "
        "tool, then make the edit"
    ),
    "not_found": (
        "the path or name does not exist; list the directory or search for the name "
        "(e.g. find/grep) instead of guessing it again"
    ),
    "permission_denied": (
        "you lack permission; use a path you own, or report that the action needs permission "
        "instead of retrying it"
    ),
    "syntax_error": (
        "the change or command has a syntax error; look at the exact line the error names, "
        "fix the indentation or brackets, and make a smaller edit"
    ),
    "command_not_found": (
        "that command is not installed here; check what is available (which, ls on bin dirs) "
        "or use another tool, e.g. python3 instead of python"
    ),
    "timeout": (
        "the command ran out of time; run a smaller piece, add a time limit, or run it in the "
        "background and check its output later"
    ),
    "module_not_found": (
        "a module is missing; check the environment (pip list) or the import path instead of "
        "re-running the same command"
    ),
    "test_failure": (
        "the tests fail the same way; read the failing assertion and change the code before "
        "running them again"
    ),
}

STRATEGY: dict[str, str] = {
    "mutate": "re-read the file to see its current content, then make a smaller, different edit",
    "read": "you already have this content; use it, or broaden the search (other names, "
            "other directories) instead of repeating it",
    "run": "running it again unchanged gives the same result; change the code or the command "
           "first, or break the problem into smaller steps",
    "poll": "the output has not changed for a long time; check whether the process is stuck, "
            "look at its logs, or stop waiting and do something else",
    "other": "step back, state what you learned so far, and choose a different approach",
}


def steps_text(steps: list[int]) -> str:
    """'steps 3, 5 and 7' (0-based step numbers, as `supervisor analyze` reports them)."""
    shown = [str(s) for s in steps[-6:]]
    if len(steps) > 6:
        shown.insert(0, "…")
    if len(shown) == 1:
        return f"step {shown[0]}"
    return "steps " + ", ".join(shown[:-1]) + " and " + shown[-1]


def outcome_text(ok: bool | None, error_class: str) -> str:
    if ok is None:
        return "no result yet"
    if ok:
        return "the same output each time"
    return f"the same error ({error_class or 'error'})"


def advice(category: str, error_class: str = "") -> str:
    """The specific advice for an error class, else the strategy of the tool category."""
    return ERROR_ADVICE.get(error_class) or STRATEGY.get(category, STRATEGY["other"])


def short_call(tool: str, canon: str, limit: int = 80) -> str:
    text = f"{tool} {canon}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def stale_read(path: str, step: int) -> str:
    """The exact SKIP message of a re-read of an unchanged file."""
    return (
        f"SKIP: File '{path}' was already opened in this session and has not changed since "
        f"step {step}. Use the content you already have."
    )
