"""Which kind of tool a call is: read-only, mutating, test/run, poll, or other.

Names are matched against the policy's patterns; shell tools (Bash, bash, execute_bash, run,
exec_command, ...: the policy's `shell_tools`, by default the tool vocabulary's) are classified
by their command argument (the vocabulary's command keys: `command`, Codex's `cmd`), and
editor tools (str_replace_editor) by their `command` sub-action. The classification decides
what counts as a workspace change (a successful `mutate` call), which thresholds apply, and
which file reads the cache may skip.
"""

import fnmatch
import re
from typing import Any

from supervisor.engine import tools
from supervisor.engine.policy import Policy
from supervisor.engine.shell import Command, commands

_SPLIT = re.compile(r"&&|\|\||;|\n|(?<![|>])\|(?!\|)")
_PIPE = re.compile(r"(?<![|])\|(?![|])")
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")

_READ = frozenset({
    "cat", "grep", "egrep", "fgrep", "rg", "ag", "ls", "ll", "find", "head", "less", "more",
    "wc", "tree", "pwd", "echo", "printf", "which", "type", "file", "stat", "du", "df", "nl",
    "awk", "diff", "cmp", "realpath", "dirname", "basename", "env", "printenv", "whoami",
    "uname", "date", "id", "hostname", "sort", "uniq", "cut", "tr", "jq", "xxd", "od",
    "strings", "readlink", "locate", "fd", "bat", "true", "false", "test", "[", "column",
})
_MUTATE = frozenset({
    "mv", "rm", "cp", "mkdir", "rmdir", "touch", "chmod", "chown", "ln", "patch", "tee",
    "truncate", "install", "unzip", "tar", "dd", "rsync", "apply_patch", "applypatch", "ed",
})
_RUN = frozenset({
    "pytest", "python", "python3", "py.test", "make", "node", "npm", "npx", "yarn", "pnpm",
    "cargo", "go", "tox", "nox", "ruby", "rake", "bundle", "java", "javac", "mvn", "gradle",
    "gcc", "g++", "clang", "cmake", "ctest", "dotnet", "php", "perl", "bash", "sh", "zsh",
    "deno", "bun", "rustc", "pip", "pip3", "uv", "poetry", "conda", "apt", "apt-get",
    "docker", "kubectl", "mypy", "ruff", "flake8", "black", "eslint", "tsc", "jest", "vitest",
    "unittest", "coverage", "git", "curl", "wget", "ipython", "sympy", "julia", "R", "Rscript",
})
_POLL = frozenset({"sleep", "ps", "wait", "watch", "jobs", "pgrep", "top", "htop", "uptime"})
_PREFIX = frozenset({"sudo", "time", "timeout", "nice", "nohup", "env", "command", "exec",
                     "xargs", "stdbuf", "unbuffer", "do", "then", "else", "elif", "while",
                     "until", "if", "{", "("})
_NEUTRAL = frozenset({"cd", "export", "source", ".", "set", "unset", "alias", "clear", "done",
                      "fi", "esac", "}", ")", "trap", "shopt", "local", "declare"})
_GIT_READ = frozenset({"status", "diff", "log", "show", "branch", "remote", "blame", "grep",
                       "ls-files", "rev-parse", "describe", "shortlog", "config", "tag"})
_GIT_MUTATE = frozenset({"apply", "commit", "checkout", "reset", "stash", "am", "merge",
                         "rebase", "add", "rm", "mv", "restore", "switch", "cherry-pick",
                         "revert", "clean", "pull", "init", "clone"})
_STATUS_URL = re.compile(r"(status|health|healthz|ready|readyz|ping|jobs?/|progress)", re.I)


def _words(segment: str) -> list[str]:
    words = segment.strip().split()
    while words and (_ENV.match(words[0]) or words[0] in _PREFIX or words[0] == "!"):
        head = words.pop(0)
        if head == "timeout" and words and words[0][:1].isdigit():
            words.pop(0)
    return words


def _command_kind(words: list[str], segment: str) -> str:
    """The category of one simple command (the first command of a pipeline)."""
    if not words:
        return "other"
    name = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if name in _NEUTRAL:
        return "other"
    if name in ("sed", "perl") and any(w.startswith("-i") or w == "--in-place" for w in rest):
        return "mutate"
    if name in ("sed",):
        return "read"
    if name == "git":
        sub = next((w for w in rest if not w.startswith("-")), "")
        if sub in _GIT_READ:
            return "read"
        if sub in _GIT_MUTATE:
            return "mutate"
        return "run"
    if name in ("npm", "yarn", "pnpm") and rest[:1] in (["install"], ["i"], ["add"]):
        return "mutate"
    if name in ("tail",):
        return "poll" if ("-f" in rest or "-F" in rest or "--follow" in rest) else "read"
    if name in ("curl", "wget") and _STATUS_URL.search(segment):
        return "poll"
    if name == "for" and "sleep" in segment:
        return "poll"
    if name in _POLL:
        return "poll"
    if name in _MUTATE:
        return "mutate"
    if name in _READ:
        return "read"
    if name in _RUN or name.startswith(("python", "./", "pytest")):
        return "run"
    return "run"


_HEREDOC_SCRIPT = re.compile(
    r"^\s*(?:\S+/)?(?:python[0-9.]*|perl|ruby|node|bash|sh)\b[^\n|]*<<-?\s*['\"]?\w+", re.M)
_WRITES_FILE = re.compile(
    r"\.write(?:_text|_bytes|lines)?\(|open\([^)]*['\"][wax]b?\+?['\"]|shutil\.(?:copy|move)"
    r"|os\.(?:remove|rename|replace|unlink)|\.unlink\(|\.rename\(")
_CODE_EDIT = re.compile(
    r"\b(?:edit_file\w*|create_file|append_file|insert_content\w*|replace_\w+)\s*\(")
_CODE_READ = re.compile(
    r"^\s*(?:print\()?\s*(?:open_file|goto_line|scroll_(?:up|down)|search_dir|search_file|"
    r"find_file)\s*\(")


def code_category(code: str) -> str:
    """Classify code run by an interpreter tool (OpenHands' IPython cell with its file helpers)."""
    if _CODE_EDIT.search(code) or _WRITES_FILE.search(code):
        return "mutate"
    if _CODE_READ.match(code):
        return "read"
    return "run"


def shell_category(command: str, cmds: tuple[Command, ...] | None = None) -> str:
    """Classify a shell command line: `mutate` > `poll` > `run` > `read` over its commands.

    A pipeline is classified by its first command (the rest are filters such as `| head`);
    any redirection into a file, `tee`, `sed -i` or a mutating git verb makes it `mutate`.
    `cmds`: the line's `commands`, when the caller parsed them already (`facts`).
    """
    if not command.strip():
        return "other"
    if ">" in command and any(target not in _NOT_FILES and not target.startswith("&")
                              for cmd in (commands(command) if cmds is None else cmds)
                              for _, target in cmd.redirects):
        return "mutate"
    if _HEREDOC_SCRIPT.search(command) or (
        ("python" in command or "perl" in command) and _WRITES_FILE.search(command)
    ):
        return "mutate"  # a script fed inline that edits files (common in SWE agents)
    kinds = set()
    for part in _SPLIT.split(command):
        pipeline = _PIPE.split(part)
        kinds.add(_command_kind(_words(pipeline[0]), part))
        for later in pipeline[1:]:
            words = _words(later)
            if words and (words[0] in ("tee", "xargs") or (
                words[0] == "sed" and any(w.startswith("-i") for w in words[1:])
            )):
                kinds.add("mutate")
    for kind in ("mutate", "poll", "run", "read"):
        if kind in kinds:
            return kind
    return "other"


_ACP_PREFIX = "mcp__acp__"


def native_tool(tool: str) -> str:
    """The tool a call is: an agent's own tool re-exposed over MCP by Zed's Agent Client
    Protocol adapter (`mcp__acp__Bash`, `mcp__acp__Read`, `mcp__acp__Edit`) is that tool
    (`Bash`, `Read`, `Edit`), so its shell line, its file and its edits are read as such."""
    if tool.startswith(_ACP_PREFIX) and len(tool) > len(_ACP_PREFIX):
        return tool[len(_ACP_PREFIX):]
    return tool


def _match(tool: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        if pattern == tool or (("*" in pattern or "?" in pattern or "[" in pattern)
                               and fnmatch.fnmatchcase(tool, pattern)):
            return True
    return False


def classify(tool: str, args: dict[str, Any], policy: Policy,
             shell: tuple[str | None, tuple[Command, ...]] | None = None) -> str:
    """The category of one call (see module docstring). `shell`: a shell tool's line and its
    commands, when the caller read them already (`facts`)."""
    forced = policy.tool_category(tool)
    if forced:
        return forced
    if tool in policy["shell_tools"]:
        # `command`, Codex's `cmd` or argv list
        line, cmds = shell if shell is not None else (tools.vocabulary().line_of(args), None)
        if line is not None:
            return shell_category(line, cmds)
    if tool in policy["code_tools"] and isinstance(args, dict):
        code = args.get("code")
        if isinstance(code, str):
            return code_category(code)
    if tool in policy["editor_tools"] and isinstance(args, dict):
        sub = args.get("command")
        if sub == "view":
            return "read"
        if isinstance(sub, str):
            return "mutate"
    cats = policy["categories"]
    for name in ("other", "poll", "read", "mutate", "run"):
        if _match(tool, cats.get(name, [])):
            if name == "poll" and tools.vocabulary().types_input(args):
                return "run"  # input typed into the process polled: an action
            return name
    return "run"


def file_path(tool: str, args: dict[str, Any], policy: Policy) -> str | None:
    """The file a call reads or writes, when its arguments name one."""
    if not isinstance(args, dict):
        return None
    for key in policy["path_args"]:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def is_file_read(tool: str, args: dict[str, Any], policy: Policy) -> bool:
    """True for calls whose output is a file's content that the file cache may hand back."""
    names = policy["file_read_tools"]
    if tool in names:
        return True
    sub = args.get("command") if isinstance(args, dict) else None
    return isinstance(sub, str) and f"{tool}:{sub}" in names
