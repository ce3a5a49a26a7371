"""A shell command line as the simple commands it runs: words, redirections, here-documents.

Enough of the shell grammar to say what a command line does to files (see `workspace.py`) and
which files a test or script run names as its own (`probe_files`): here-documents are cut out
first (`cat > fix.py << 'EOF' ... EOF`), the rest is split as `shlex` splits it (`_scanned`)
into simple commands at `&&`, `||`, `;`, `|` and newlines, with `VAR=x`, `sudo`, `timeout N`,
`env` ... prefixes dropped and `cd DIR` remembered. Anything it cannot parse (unbalanced
quotes) falls back to a split on white space: a wrong guess costs a missed detection, never an
exception.

It also says which run a line makes (`run_words`): the line without the pure output filters it
ends with, so `pytest -x 2>&1 | tail -20` is the run `pytest -x` is, seen through a filter.
"""

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
_SEPARATORS = frozenset({"&&", "||", ";", "|", "\n", "&", ";;", "(", ")", "|&"})
_SEPARATOR_CHARS = frozenset(";&|\n()")
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIX = frozenset({"sudo", "time", "nice", "nohup", "env", "command", "exec", "stdbuf",
                     "unbuffer", "do", "then", "else", "elif", "while", "until", "if", "{",
                     "!"})
_MAX_CHARS = 200_000


@dataclass(slots=True)
class Command:
    """One simple command: its words (prefixes dropped), the files its output is redirected
    to (`>` or `>>`, target), the here-document fed to its input, the directory of a `cd`
    before it in the same line, and whether it is piped into the next command."""

    words: list[str]
    redirects: list[tuple[str, str]] = field(default_factory=list)
    stdin: str | None = None
    cwd: str | None = None
    piped: bool = False

    @property
    def name(self) -> str:
        """The program's base name (`/usr/bin/python3` -> `python3`)."""
        return self.words[0].rsplit("/", 1)[-1] if self.words else ""


def commands(line: str) -> list[Command]:
    """The simple commands of a command line, in order (see the module docstring)."""
    return parse(line)[0]


def parse(line: str) -> tuple[list[Command], list[str]]:
    """The line's simple commands (`commands`) and the identity of its run (`run_words`),
    from one reading of it (the hook path reads each shell line once)."""
    if not isinstance(line, str) or not line.strip():
        return [], []
    text, docs = _cut_heredocs(line[:_MAX_CHARS])
    if "#" in text:
        text = _COMMENT.sub(_keep_unless_comment, text)
    tokens = _tokens(text)
    return _commands(tokens, docs), _run_words(tokens, docs, "|" in text)


_COMMENT = re.compile(r"\\.|'[^']*'|\"(?:[^\"\\]|\\.)*\"|(?<![^\s;&|()<>])#[^\n]*", re.S)
"""What decides whether a `#` starts a comment: an escaped character, a quoted string (either
skipped whole), or a `#` that starts a word (at the line's start, after white space or an
operator), which starts a comment to the end of its line. `grep '#include' x.c`,
`echo a#b`, `${#list[@]}` and `--body "## Summary"` hold no comment."""


def _keep_unless_comment(match: re.Match[str]) -> str:
    return "" if match.group(0).startswith("#") else match.group(0)


def _commands(tokens: list[str], docs: dict[str, str]) -> list[Command]:
    out: list[Command] = []
    current = Command([])
    cwd: str | None = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in _SEPARATORS or (tok and set(tok) <= _SEPARATOR_CHARS and "\n" in tok):
            if current.words or current.redirects:
                current.piped = tok in ("|", "|&")
                cwd = _after(current, cwd, out)
            current = Command([])
            i += 1
            continue
        if tok in _REDIRECTS or tok in ("<", "<<", "<<<", ">&", "<&"):
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if current.words and current.words[-1].isdigit() and tok in (">", ">>", ">&"):
                current.words.pop()  # "2>" names a file descriptor, not an argument
            if tok in _REDIRECTS and target and target not in _SEPARATORS:
                current.redirects.append((">>" if tok.endswith(">>") else ">", target))
            elif tok == "<<" and target in docs:
                current.stdin = docs[target]
            elif tok == "<<<":
                current.stdin = target
            i += 2
            continue
        if not current.words and (_ENV.match(tok) or tok in _PREFIX):
            i += 1
            while tok in _PREFIX and i < len(tokens) and tokens[i].startswith("-"):
                i += 1  # the prefix's own options (sudo -E, env -i, nice -n ...)
            continue
        if not current.words and tok == "timeout":
            i += 1
            while i < len(tokens) and tokens[i].startswith("-"):
                i += 1
            if i < len(tokens) and tokens[i][:1].isdigit():
                i += 1
            continue
        current.words.append(docs.get(tok, tok))
        i += 1
    if current.words or current.redirects:
        _after(current, cwd, out)
    return out


def _after(cmd: Command, cwd: str | None, out: list[Command]) -> str | None:
    """Record a finished command; return the working directory for the next one."""
    if cmd.name == "cd":
        target = cmd.words[1] if len(cmd.words) > 1 else None
        if target and not target.startswith("-"):
            return target if target.startswith("/") or cwd is None else f"{cwd}/{target}"
        return cwd
    cmd.cwd = cwd
    out.append(cmd)
    return cwd


def _cut_heredocs(line: str) -> tuple[str, dict[str, str]]:
    """The line with every here-document's body removed and its marker replaced by a token
    naming it; the bodies by token."""
    if "<<" not in line:  # (no here-document: most lines)
        return line, {}
    docs: dict[str, str] = {}
    lines = line.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        matches = list(_HEREDOC.finditer(lines[i]))
        pending = [(f"__heredoc_{len(docs) + n}__", m.group(3), m.group(1) == "-")
                   for n, m in enumerate(matches)]
        text = lines[i]
        for match, (token, _, _) in reversed(list(zip(matches, pending, strict=True))):
            text = f"{text[:match.start()]}<< {token}{text[match.end():]}"
        out.append(text)
        i += 1
        for token, delimiter, strip_tabs in pending:
            body: list[str] = []
            while i < len(lines):
                candidate = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                if candidate.strip() == delimiter:
                    break
                body.append(candidate)
            docs[token] = "\n".join(body)
    return "\n".join(out), docs


_PLAIN = re.compile(r"[^'\"\\;&|<>()\n]*")
"""A line `shlex` would only split at its blanks: no quote, escape or punctuation."""
_BLANKS = re.compile(r"[ \t\r]+")


def _tokens(text: str) -> list[str]:
    if _PLAIN.fullmatch(text):  # (as `_lexed` splits it, in a tenth of its time)
        return [word for word in _BLANKS.split(text) if word]
    words = _scanned(text)
    return words if words is not None else _lexed(text)


_TOKEN = re.compile(
    r"[ \t\r]+"                                  # blanks between tokens
    r"|([;&|<>()\n]+)"                           # a run of punctuation is one token
    r"|((?:[^ \t\r;&|<>()\n'\"\\]+|'[^']*'|\"(?:[^\"\\]|\\[\s\S])*\"|\\[\s\S])+)")  # a word
_PIECE = re.compile(r"'([^']*)'|\"((?:[^\"\\]|\\[\s\S])*)\"|\\([\s\S])|([^'\"\\]+)")
_ESCAPED = re.compile(r"\\([\s\S])")


def _scanned(text: str) -> list[str] | None:
    """The tokens `_lexed` makes of `text`, by one regular expression instead of `shlex`'s
    character-by-character loop (100 µs a quoted line, a tenth of a replayed step), or None
    when the text does not read to its end (an unclosed quote, a final backslash: `_lexed`
    then says what to do). It reads as `shlex` in POSIX mode with these settings does: a run
    of the punctuation characters is one token; a word runs to a blank or a punctuation
    character, its quotes and escapes taken off: single quotes keep everything, a backslash
    outside quotes keeps the character after it, inside double quotes only before `\\` or
    `"` (elsewhere it stays); an empty pair of quotes is an empty word."""
    words: list[str] = []
    pos, end = 0, len(text)
    while pos < end:
        found = _TOKEN.match(text, pos)
        if found is None:
            return None
        pos = found.end()
        punctuation, word = found.group(1, 2)
        if punctuation is not None:
            words.append(punctuation)
        elif word is not None:
            words.append(_unquoted(word) if "'" in word or '"' in word or "\\" in word
                         else word)
    return words


def _unquoted(word: str) -> str:
    out = []
    for single, double, escaped, plain in _PIECE.findall(word):
        if plain:
            out.append(plain)
        elif escaped:
            out.append(escaped)
        elif double:
            out.append(_ESCAPED.sub(lambda m: m[1] if m[1] in '\\"' else m[0], double))
        else:
            out.append(single)
    return "".join(out)


def _lexed(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>()\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: a rough split is better than nothing
        return re.findall(r"&&|\|\||[;|&\n<>()]|[^\s;|&<>()]+", text)


_SCRIPT_SUFFIXES = (".py", ".sh", ".js", ".ts", ".mjs", ".rb", ".pl", ".php", ".go", ".rs",
                    ".java", ".c", ".cpp", ".r", ".jl", ".lua", ".bats")
_INTERPRETERS = re.compile(r"^(?:python[0-9.]*|pypy[0-9.]*|node|deno|bun|ruby|perl|php|bash|sh|"
                           r"zsh|Rscript|julia|lua|go|pytest|py\.test|tox|nox|jest|vitest|"
                           r"mocha|bats|coverage)$")


def last_pipeline_head(cmds: list[Command]) -> Command | None:
    """The first command of the line's last pipeline: what `python t.py 2>&1 | tail -5` runs
    (the filters after a pipe only shape its output)."""
    head = None
    for i, cmd in enumerate(cmds):
        if i == 0 or not cmds[i - 1].piped:
            head = cmd
    return head


def program(cmd: Command) -> str:
    """What a command runs, as one name: the program (`make`, `pip install`, `git checkout`:
    a sub-command is part of it), the script an interpreter runs (`python reproduce.py`), or
    the interpreter with its inline code flag (`python3 -c`, `python -m pytest`); a dry run of
    a program is another one (`make --dry-run` for `make -n build`: `dry_run`)."""
    words = cmd.words
    if not words:
        return ""
    name = cmd.name
    rest = words[1:]
    if _INTERPRETERS.match(name):
        for i, word in enumerate(rest):
            if word in ("-c", "-e"):
                return f"{name} {word}"
            if word == "-m" and i + 1 < len(rest):
                return f"{name} -m {rest[i + 1]}"
            if not word.startswith("-"):
                return f"{name} {word.rsplit('/', 1)[-1]}"
        return name
    sub = next((w for w in rest if not w.startswith("-")), "")
    if sub and sub.isalpha() and name in _SUBCOMMANDS:
        name = f"{name} {sub}"
    return f"{name} --dry-run" if dry_run(name, rest) else name


def dry_run(name: str, args: Sequence[str]) -> bool:
    """Whether a command only says what it would do (`make -n`, `git clean -n`, `rsync -avn`,
    `--dry-run` of any program, not of a script an interpreter runs: those are the script's):
    a look at the real command, not another try of it, so it is another program than the real
    one (`program`). Options after `--` are the program's script's, not its own."""
    short = _DRY_RUN_SHORT.get(name)
    for word in args:
        if word == "--":
            break
        if word in _DRY_RUN_FLAGS or word.startswith("--dry-run="):
            return True
        if (short and word.startswith("-") and not word.startswith("--")
                and word[1:].isalpha() and short in word):
            return True
    return False


_DRY_RUN_FLAGS = frozenset({"--dry-run", "--dryrun", "--dry_run", "--just-print", "--recon",
                            "--simulate", "--no-act"})
"""Long options that make a program only say what it would do (make's `--just-print` and
`--recon`, apt-get's `--simulate` and `--no-act`; `--dry-run` most programs)."""
_DRY_RUN_SHORT = {"make": "n", "gmake": "n", "rsync": "n", "git clean": "n", "git add": "n",
                  "git rm": "n", "git mv": "n", "git push": "n"}
"""Programs whose short option (alone or in a cluster: `git clean -nd`, `rsync -avn`) asks
for a dry run; elsewhere `-n` means other things (`head -n`, `sort -n`)."""


_SUBCOMMANDS = frozenset({"git", "pip", "pip3", "npm", "yarn", "pnpm", "cargo", "go", "apt",
                          "apt-get", "conda", "docker", "kubectl", "uv", "poetry",
                          "brew", "gem", "bundle", "dotnet", "mvn", "gradle"})


def probe_files(line: str, cmds: Sequence[Command] | None = None) -> list[str]:
    """The files a test or script run names as its own: the script an interpreter runs
    (`python reproduce.py`, `bash t.sh`, `./run.sh`), and the test files given to a runner
    (`pytest tests/test_x.py::test_y`). Not the files the code under test lives in. `cmds`:
    the line's `commands`, when the caller parsed them already (`facts`)."""
    found: list[str] = []
    for cmd in (commands(line) if cmds is None else cmds):
        words = cmd.words
        if not words:
            continue
        if words[0].startswith("./") or words[0].endswith(_SCRIPT_SUFFIXES):
            found.append(words[0])
        if not _INTERPRETERS.match(cmd.name):
            continue
        for word in words[1:]:
            if word.startswith("-"):
                if word in ("-c", "-e"):
                    break  # inline code: it has no file of its own
                continue
            path = word.split("::", 1)[0]
            if path.endswith(_SCRIPT_SUFFIXES) or "/test" in path or path.startswith("test"):
                found.append(path)
    return list(dict.fromkeys(found))


_PIPES = frozenset({"|", "|&"})
_INPUTS = frozenset({"<", "<<", "<<<", ">&", "<&"})
_ENDS = frozenset(";\n")
_LISTS = frozenset({"&&", "||", ";", "&", ";;"})
_TALLY_FILTERS = frozenset({"head", "tail", "cat", "less", "more", "nl", "tac", "wc", "sort",
                            "uniq", "cut", "column", "fold", "expand"})
_SEARCH_FILTERS = frozenset({"grep", "egrep", "fgrep", "rg"})
_VALUED = {
    # options whose value is the next word, per filter (`head -n 20`, `grep -A 3`)
    "head": frozenset({"-n", "-c", "--lines", "--bytes"}),
    "tail": frozenset({"-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval"}),
    "sort": frozenset({"-k", "-t", "-S", "--key", "--field-separator", "--buffer-size"}),
    "uniq": frozenset({"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"}),
    "cut": frozenset({"-d", "-f", "-c", "-b", "--delimiter", "--fields", "--characters"}),
    "column": frozenset({"-t", "-s", "-c", "-o"}),
    "fold": frozenset({"-w", "--width"}),
    "nl": frozenset({"-b", "-w", "-s", "-v", "-i"}),
    "grep": frozenset({"-e", "-f", "-A", "-B", "-C", "-m", "--regexp", "--file",
                       "--after-context", "--before-context", "--context", "--max-count"}),
    "rg": frozenset({"-e", "-f", "-A", "-B", "-C", "-m", "-M", "--regexp", "--file",
                     "--after-context", "--before-context", "--context", "--max-count",
                     "--max-columns"}),
}
_SED_RANGE = re.compile(r"\d+(?:,(?:\d+|\$))?p")
_WRITES = frozenset({"-o", "--output", "--files0-from"})
"""Options by which a filter writes a file or reads other input (`sort -o out`): not pure."""


def output_filter(words: Sequence[str]) -> bool:
    """Whether a command that reads a pipe is a pure output filter: it only shapes what the
    command before it printed (`tail -20`, `head -n 50`, `grep -v Warning`, `grep -q passed`,
    `sort | uniq -c`, `wc -l`, `cat`, a pager), writes no file and reads no other input, so
    `python r.py | tail -20` runs what `python r.py` runs. Its exit status may differ (`grep`
    selecting nothing exits 1, `grep -q` says its verdict only by it), which is why a run's
    outcome stays its own (see `run_words`). Not filters: `tee` (it writes the file it names:
    the workspace follows that write; 5 lines of the corpora end so), `xargs` (it runs
    commands), `awk`, `jq` and `sed` other than a printed range of lines (`sed -n '1,80p'`,
    the fourth most common command after a pipe in the corpora, after `head`, `tail` and
    `grep`): their scripts compute, and `awk`'s and `sed`'s can write files; a filter given a
    file operand (it reads the file, not the pipe); a filter with a redirection."""
    if not words:
        return False
    name = words[0].rsplit("/", 1)[-1]
    name = "grep" if name in ("egrep", "fgrep") else name
    if name == "sed":  # only `sed -n '1,80p'`: a range of lines, as head and tail cut one
        return len(words) == 3 and words[1] == "-n" and bool(_SED_RANGE.fullmatch(words[2]))
    if name not in _TALLY_FILTERS and name not in _SEARCH_FILTERS:
        return False
    valued = _VALUED.get(name, frozenset())
    operands: list[str] = []
    patterns = False
    i = 1
    while i < len(words):
        word = words[i]
        key = word.split("=", 1)[0]
        if key in _WRITES:
            return False
        if word in ("-", "--"):
            pass
        elif word.startswith("-") or (word.startswith("+") and name == "tail"):
            patterns = patterns or key in ("-e", "-f", "--regexp", "--file")
            if key in valued and "=" not in word:
                i += 1  # the option's value
        elif word.isdigit():
            pass  # a count after an option (`tail -n 20` read as two words already)
        else:
            operands.append(word)
        i += 1
    if name in _SEARCH_FILTERS:
        return len(operands) == (0 if patterns else 1)  # a pattern, no file
    return not operands


def run_words(line: str) -> list[str]:
    """The identity of the run a shell line makes: its words and operators, without the pure
    output filters its last pipeline ends with (`output_filter`: `2>&1 | tail -20`,
    `| grep -v Warning | head -50`) and without a `2>&1` at its end, here-documents' bodies
    included. `python r.py`, `python r.py 2>&1 | tail -20` and `python r.py | grep FAIL` are
    one run, seen through three filters: the same check re-run, though each shows other lines
    of its output (so their outputs are compared only through the same filter). A line that
    cannot be parsed is its words (a wrong guess costs a missed detection)."""
    return parse(line)[1]


_RUN_ENDS = re.compile(r"[|;#\n]|2>&1")
"""Where the text of a line's run may end: before an output filter's pipe, a trailing `2>&1`,
`;`, comment or newline (`run_text`)."""
_RUN_CUTS = 16


def run_text(line: str, run: Sequence[str] | None = None) -> str:
    """The text of `line` that makes its run (`run_words`; `run`: those words, when the caller
    read them already), white space at its ends stripped: `pytest -x` of `pytest -x 2>&1 |
    tail -30`, as a person would write the command in a prompt or a project's memory would
    know it. It is the shortest start of the line that reads as the run's words; the line
    itself when no start does (a here-document, whose body the words hold; a line that does
    not end in a filter). Lines without a pipe, `;`, `#`, newline or `2>&1` (most) are not
    read again."""
    text = line.strip()
    if "<<" in text or not _RUN_ENDS.search(text):
        return text
    words = list(run_words(text) if run is None else run)
    if not words:
        return text
    for n, cut in enumerate(_RUN_ENDS.finditer(text)):
        if n == _RUN_CUTS:
            break
        head = text[:cut.start()]
        if _tokens(head) == words:
            return head.strip()
    return text


def _run_words(tokens: list[str], docs: dict[str, str], pipe: bool) -> list[str]:
    """`run_words` of a line read into `tokens`, its comments cut (`pipe`: whether its text
    holds a `|` at all; most lines do not, and the hook path reads every line)."""
    end = len(tokens)
    while end and set(tokens[end - 1]) <= _ENDS:
        end -= 1  # trailing newlines and `;`
    while pipe:
        start, depth = end, 0
        while start > 0:
            tok = tokens[start - 1]
            if tok == ")":
                depth += 1
            elif tok == "(":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and (tok in _PIPES or tok in _LISTS
                                 or ("\n" in tok and set(tok) <= _SEPARATOR_CHARS)):
                break
            start -= 1
        if (start == 0 or tokens[start - 1] not in _PIPES
                or not output_filter(tokens[start:end])
                or any(t in _REDIRECTS or t in _INPUTS for t in tokens[start:end])):
            break
        end = start - 1
    if tokens[max(0, end - 3):end] == ["2", ">&", "1"]:
        end -= 3
    return [docs.get(w, w) for w in tokens[:end]] if docs else tokens[:end]
