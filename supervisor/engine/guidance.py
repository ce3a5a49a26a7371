"""What the agent is told: what repeated, how often, how, and what to do instead.

A strategy per tool category and advice per known error class; every detector's message is
built here (the functions at the end), from what its finding saw, so every nudge, block and
escalation is specific and the texts can be extended in one place.

A message names what repeated by what the model can recognise: the call itself (its tool and
arguments), the file, the error line, and how many times. It never cites the supervisor's
event numbers (`#seq`): the model sees no such numbers and cannot resolve them (the operator's
screen shows a finding's evidence by them, `Finding.evidence`).
"""

from typing import Any

from supervisor.safetext import quote

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


def times_text(n: int) -> str:
    """'once', 'twice', '3 times': how often something happened, as every message says it."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


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


def stale_read(path: str) -> str:
    """The exact SKIP message of a re-read of an unchanged file."""
    return (
        f"SKIP: File '{path}' was already opened in this session and has not changed since "
        "you last read it. Use the content you already have."
    )


# --- the detectors' messages (one place, driven by what each finding saw) -------------------

_VERB = {2: "Blocked", 3: "Paused", 4: "Stopped"}


def exact_repeat_nudge(step: Any, same: list[Any]) -> str:
    return (
        f"Loop: you ran the identical call {short_call(step['tool'], step['args'])} "
        f"{times_text(len(same))} with {outcome_text(step['ok'], step['error'])} and nothing "
        f"changed in between. Do not repeat it: {advice(step['category'], step['error'])}."
    )


def exact_repeat_block(level: int, step: Any, run: list[Any]) -> str:
    ok, err = run[0]["ok"], run[0]["error"]
    return (
        f"{_VERB[level]}: this exact call ({short_call(step['tool'], step['args'])}) already "
        f"ran {times_text(len(run))} with {outcome_text(ok, err)}, and nothing changed "
        f"since. {advice(step['category'], err).capitalize()}."
    )


def reapplied_nudge(step: Any, same: list[Any]) -> str:
    return (
        f"Loop: you applied the identical change {short_call(step['tool'], step['args'])} "
        f"{times_text(len(same))}; each application changes the file again (the same text "
        f"once more), it does not fix it. Do not apply it again: re-read the file to see what "
        f"it holds now, then make one edit that leaves it as you want it."
    )


def reapplied_block(level: int, step: Any, run: list[Any]) -> str:
    return (
        f"{_VERB[level]}: this exact change ({short_call(step['tool'], step['args'])}) was "
        f"already applied {times_text(len(run))}, each time onto the result of the one "
        f"before. Re-read the file and repair it with one different edit."
    )


def similar_calls_nudge(step: Any, n: int, threshold: float) -> str:
    return (
        f"Loop: {n} near-identical {step['tool']} calls (arguments ≥ {threshold:.0%} alike) "
        f"all gave {outcome_text(step['ok'], step['error'])}. "
        f"Small variations will not help: {advice(step['category'], step['error'])}."
    )


def similar_calls_block(level: int, step: Any, flag: dict[str, Any]) -> str:
    return (
        f"{'Blocked' if level == 2 else 'Paused'}: {flag['size']} near-identical "
        f"{step['tool']} calls all gave "
        f"{outcome_text(flag['ok'], flag['error'])}; this is one more variation. "
        f"{advice(flag['category'], flag['error']).capitalize()}."
    )


def cycle_nudge(step: Any, period: int, tools: str, length: int) -> str:
    return (
        f"Loop: the same {period} calls ({tools}) repeat with identical results "
        f"{length / period:.3g} times in a row and nothing changed. "
        f"Break the cycle: {advice(step['category'], step['error'])}."
    )


def cycle_block(level: int, step: Any, cycle: dict[str, Any]) -> str:
    return (
        f"{'Blocked' if level == 2 else 'Paused'}: this call continues a cycle of "
        f"{cycle['period']} calls ({cycle.get('tools', '?')}) that repeated with identical "
        f"results and no change. "
        f"{advice(step['category']).capitalize()}."
    )


def _who(group: str) -> str:
    return f"edits of {group[5:]}" if group.startswith("edit:") else group


def recurring_error_nudge(step: Any, group: str, failures: list[Any]) -> str:
    return (
        f"Loop: {_who(group)} failed {len(failures)} times with the same error "
        f"({_quote(step['error_id'])}), with different "
        f"arguments each time. Varying the arguments does not fix it: "
        f"{advice(step['category'], step['error'])}."
    )


def recurring_error_block(level: int, step: Any, episode: dict[str, Any]) -> str:
    return (
        f"{_VERB[level]}: {_who(episode['group'])} failed {episode['count']} times with "
        f"{_quote(episode['error_id'])}; this looks like one "
        f"more variation of the same attempt. Do something else first: "
        f"{advice(episode['category'], episode['error'])}."
    )


def ineffective_edits_nudge(step: Any, rounds: int, edited: list[str]) -> str:
    return (
        f"Loop: your last {rounds} rounds of edits ({_files(edited)}) did not change the "
        f"output of {short_call(step['tool'], step['args'])}: the code "
        f"you edit may not be the code that runs. Check which file and function the run "
        f"really goes through (a traceback, a print, `python -c 'import m; "
        f"print(m.__file__)'`) before editing again."
    )


def ineffective_edits_block(level: int, step: Any, probe: dict[str, Any]) -> str:
    return (
        f"{_VERB[level]}: {probe['rounds']} rounds of edits ({_files(probe['edited'])}) left "
        f"the output of {short_call(step['tool'], step['args'])} unchanged; running it again "
        f"after one more such edit will not tell you anything new. Find out why your edits "
        f"have no effect first."
    )


def revert_nudge(file: str, returns: int) -> str:
    return (
        f"Loop: {file} went back to content it had before {times_text(returns)}: you are "
        f"undoing and redoing the same changes. Stop and compare the versions you tried; "
        f"decide what the change must do before writing it again."
    )


def revert_attempts_nudge(file: str, returns: int, attempts: int) -> str:
    return (
        f"Loop: {file} was restored to earlier content {times_text(returns)}, throwing away "
        f"{attempts} attempts at it: the same approach keeps failing. Stop and compare the "
        f"attempts you threw away; decide what the change must do before writing it again."
    )


def revert_block(level: int, file: str, returns: int) -> str:
    return (
        f"{_VERB[level]}: {file} has gone back and forth between versions "
        f"{times_text(returns)}; one more rewrite of it is refused. "
        f"Explain what differs between the versions you tried and why the next one will "
        f"work, then write it once."
    )


def error_rate_nudge(errors: list[Any], window: int) -> str:
    classes = sorted({s["error"] for s in errors})
    return (
        f"{len(errors)} of the last {window} calls failed ({', '.join(classes[:4])}). "
        f"Stop and re-plan: read the errors, check your assumptions about the environment, "
        f"and try a different approach."
    )


def no_progress_nudge(n: int) -> str:
    return (
        f"No progress in {n} calls: nothing changed in the "
        f"workspace and no call returned anything new. Summarise what you know, then change "
        f"strategy or ask for help."
    )


def blind_search_nudge(n: int, file: str) -> str:
    return (
        f"Loop: {n} searches for the name of {quote(file, 80)}, a file you have just read, "
        f"found nothing. The file exists, so check where the search looks "
        f"(the working directory, its path or glob) and search from the project root or in "
        f"that file's directory before searching again."
    )


def polling_nudge(step: Any, n: int, waited: float) -> str:
    return (
        f"Polling stuck: {short_call(step['tool'], step['args'])} returned the same output "
        f"{n} times in a row over {waited:.0f} s. "
        f"{STRATEGY['poll'].capitalize()}; if it is still working, wait longer between "
        f"checks."
    )


def polling_block(level: int, step: Any, n: int) -> str:
    return (
        f"{'Blocked' if level == 2 else 'Paused'}: polling with "
        f"{short_call(step['tool'], step['args'])} has returned the same output "
        f"{n} times. {STRATEGY['poll'].capitalize()}."
    )


def empty_replies_nudge(n: int) -> str:
    return (f"Your last {n} replies were empty and no tool was called. "
            "State the next concrete step and take it, or say what blocks you.")


def repeated_sentence_nudge(times: int) -> str:
    return (f"Your message repeats the same sentence {times} times. "
            "Stop generating, state the next concrete step, and take it.")


def repeated_text_nudge(n: int) -> str:
    return (f"You have written essentially the same message {n} times and nothing changed in "
            "between. Do not restate the plan again: take a different concrete step, or say "
            "what blocks you.")


def _quote(text: str, limit: int = 120) -> str:
    return quote(text, limit)  # agent text: it cannot close the quotation


def _files(keys: list[str]) -> str:
    shown = [k for k in keys if k != "*"][:3]
    if not shown:
        return "changes the calls did not name"
    return ", ".join(shown) + (" and others" if len(keys) > 3 else "")
