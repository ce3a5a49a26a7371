"""What the workspace holds: a content id per file the agent touched, and the version of it all.

The engine judges repeats against the workspace: the same test after a real edit is progress,
after an edit that changed nothing it is not, and after an edit was undone it is a repeat of
what ran before. So the workspace version is derived from content, not counted: every file the
session touched has a content id, the version is a hash of them all (plus an epoch for changes
nobody can see into: `pip install`, a rollback, a new conversation), and a file that returns to
an earlier content brings the version back to the earlier value.

Where the ids come from:

- **live** (the guard, every hook target): after a mutating call the guard hashes the files it
  touched on disk and records them in the `tool_result` (`files`: path -> xxh3 digest, null for
  a missing file); those digests are the truth, so an edit that changed nothing is no change;
- **offline** (`supervisor analyze` of other frameworks' runs): from the call's arguments, where
  the format allows: whole-file writes and here-documents (`cat > f << EOF`) by their text,
  replacements (`str_replace`, `Edit`) by which regions now hold which text (undoing a
  replacement restores the id), `cp`/`mv` by the source's id, `git checkout -- f` by the
  file's first id, `sed -i` and scripts that write files (a script created in the session, or
  inline code) as a transformation of the files they name; anything else that mutates is a
  change of unknown content (a new epoch).

Pure: `apply` takes what a completed call did and returns the changes; the memory is the plain
dict `State.workspace`, bounded (`_FILES_KEPT` files, `_HISTORY_KEPT` ids each).
"""

import re
from collections.abc import Sequence
from typing import Any, TypedDict

import xxhash

from supervisor.engine import tools
from supervisor.engine.edits import Edit, edits_of
from supervisor.engine.shell import Command, commands

_FILES_KEPT = 128
_HISTORY_KEPT = 8
_REGIONS_KEPT = 16
_SCRIPTS_KEPT = 64
_CHANGES_KEPT = 64
_VERSIONS_KEPT = 64
_PATH_PARTS = 2
ABSENT = "absent"
UNKNOWN_FILE = "*"
"""The key of a change whose files are not known (it moves the epoch)."""
_SKIP_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_MENTION = re.compile(r"""['"]((?:[\w.-]+/)*[\w.-]+\.[A-Za-z]\w{0,6})['"]""")
_WRITES = re.compile(
    r"\.write(?:_text|_bytes|lines)?\(|open\([^)]*['\"][wax]b?\+?['\"]|shutil\.(?:copy|move)"
    r"|os\.(?:remove|rename|replace)|fileinput\.|\.truncate\(")
_INTERPRETER = re.compile(r"^(?:python[0-9.]*|pypy[0-9.]*|bash|sh|zsh|node|ruby|perl)$")
_SHEBANG = re.compile(r"#!\S*(?:/|env )(?:ba|z|da)?sh\b")
_BACKUP = re.compile(r"\.(?:bak|backup|orig|old|save|copy|tmp)\d*$|~$", re.I)


class Change(TypedDict):
    """One file's content changed by a call."""

    file: str
    """The file's key (the last path components: see `file_key`)."""
    kind: str
    """`create` (a whole file written where none was seen), `edit`, or `unknown`."""
    returned: bool
    """The new content is one the file had before (not the one just before): a revert."""


class _Changes:
    """What one call changed, judged on the files' content before and after the whole call
    (a restore followed by a patch in one command line is not a return)."""

    __slots__ = ("before", "created", "unknown")

    def __init__(self) -> None:
        self.before: dict[str, tuple[str, list[str]]] = {}
        self.created: set[str] = set()
        self.unknown = False

    def result(self, mem: dict[str, Any]) -> list[Change]:
        out: list[Change] = []
        for key, (old, history) in self.before.items():
            new = mem["files"][key]["id"] if key in mem["files"] else old
            if new == old:
                continue
            returned = not self.unknown and new in history
            out.append(Change(file=key, kind="create" if key in self.created else "edit",
                              returned=returned))
        if self.unknown:
            out.append(Change(file=UNKNOWN_FILE, kind="unknown", returned=False))
        return out


def file_key(path: str) -> str:
    """How files are named here: the last two components of the path, so
    `/testbed/pkg/a.py`, `pkg/a.py` and `./pkg/a.py` are one file whatever the working
    directory was (agents name one file from several directories; two files whose last two
    components agree are rare enough to be taken for one)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    return "/".join(parts[-_PATH_PARTS:])


def same_file(a: str, b: str) -> bool:
    """Whether two keys may name one file: equal, or one is the other with a directory in
    front (`reproduce.py` named from its directory, `r/reproduce.py` from above it)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def new_memory() -> dict[str, Any]:
    return {"files": {}, "scripts": {}, "changes": [], "xor": 0, "epoch": 0, "probes": [],
            "versions": []}


def is_new_version(mem: dict[str, Any]) -> bool:
    """Whether the current version is one the workspace has not had lately (a revert to an
    earlier state is a change, but not progress); remembers it."""
    current = version(mem)
    seen = mem["versions"]
    new = current not in seen
    if not new:
        seen.remove(current)
    seen.append(current)
    del seen[:-_VERSIONS_KEPT]
    return new


def version(mem: dict[str, Any]) -> str:
    """The workspace version: equal exactly when every tracked file has the same content and
    no change of unknown content happened in between."""
    return f"{mem['epoch']}.{mem['xor']:x}"


def _h(*parts: str) -> str:
    return xxhash.xxh3_64_hexdigest("\0".join(parts).encode("utf-8", "replace"))


def _initial(key: str) -> str:
    return f"init:{key}"


# --- what a call touches ---------------------------------------------------------------------

Effect = list[Any]
"""One thing a call does to files (JSON values, kept in a pending step until its result):
["write", path, content id, script], ["append", path, id], ["transform", path, id],
["replace", path, old id, new id], ["copy", src, dst], ["move", src, dst], ["delete", path],
["restore", path], ["restore_all"], ["undo", path], ["script", path],
["code", code id, writes, mentions], ["unknown"]. `script` is what a written file would write
if run ({"mentions": [...]}) or None."""


def plan(tool: str, args: Any, shell_tools: frozenset[str] | None = None,
         parsed: tuple[str | None, tuple[Command, ...], tuple[Edit, ...]] | None = None
         ) -> list[list[Effect]]:
    """What a call would do to files, one group per simple command (a shell line) or one
    group for any other tool; `apply` carries it out once the result is known. `parsed`: the
    call's shell line, its commands and its edits, when the caller read them already
    (`facts`)."""
    if not isinstance(args, dict):
        return []
    names = tools.vocabulary()
    if tool in (shell_tools or names.shell):
        line = parsed[0] if parsed is not None else names.line_of(args)
        if line is None:
            return []
        cmds = parsed[1] if parsed is not None else commands(line)
        return [group for group in (_command_effects(cmd) for cmd in cmds)]
    group: list[Effect] = []
    for edit in (parsed[2] if parsed is not None else edits_of(tool, args)):
        if edit.kind == "write":
            group.append(["write", edit.path, _h(edit.text), _script(edit.text, edit.path)])
        elif edit.kind == "replace" and edit.search is not None:
            group.append(["replace", edit.path, _h(edit.search), _h(edit.text)])
        else:
            group.append(["transform", edit.path, _h(edit.kind, str(edit.line), edit.text)])
    if args.get("command") == "undo_edit" and isinstance(args.get("path"), str):
        group.append(["undo", args["path"]])
    code = args.get("code")
    if isinstance(code, str) and not group and tool in ("run_ipython", "execute_ipython_cell"):
        group.append(_code(code))
    return [group] if group else []


def touched_paths(planned: list[list[Effect]]) -> list[str]:
    """The files a planned call may write, as the call names them (what the guard hashes after
    it, and what a refusal of a rewrite looks at). Files a script may write are included."""
    paths: list[str] = []
    for group in planned:
        for effect in group:
            kind = effect[0]
            if kind in ("write", "append", "transform", "delete", "restore", "replace", "undo"):
                paths.append(effect[1])
            elif kind == "copy":
                paths.append(effect[2])
            elif kind == "move":
                paths += [effect[1], effect[2]]
            elif kind == "code" and effect[2]:
                paths += effect[3]
    return list(dict.fromkeys(paths))


_VIEWERS = {"cat": 0, "nl": 0, "head": 0, "tail": 0, "sed": 1, "awk": 1, "grep": 1, "xxd": 0,
            "od": 0}
"""Commands that show one file, and how many operands come before it (a sed or awk script,
a grep pattern)."""


def viewed_path(path: str | None, cmds: Sequence[Command]) -> str | None:
    """The one file a read-only call shows (`path` for a file-read tool; for a shell line of
    commands `cmds`, the file of `cat f`, `sed -n '1,9p' f`, `grep -n x f`, ... possibly piped
    into a filter)."""
    if path:
        return path
    if not cmds or cmds[0].name not in _VIEWERS or any(not c.piped for c in cmds[:-1]):
        return None
    operands = [w for w in cmds[0].words[1:] if not w.startswith("-")]
    operands = operands[_VIEWERS[cmds[0].name]:]
    return operands[0] if len(operands) == 1 else None


def written_paths(mem: dict[str, Any], planned: list[list[Effect]]) -> list[str]:
    """The files a planned call may write, as named, with the files the scripts it runs
    write (known from the session, or from the script the same call writes first)."""
    paths = touched_paths(planned)
    written: dict[str, Any] = {}
    for group in planned:
        for effect in group:
            if effect[0] == "write":
                written[file_key(effect[1])] = effect[3]
            elif effect[0] == "script":
                key = file_key(effect[1])
                info = written.get(key) if key in written else mem["scripts"].get(key)
                paths += info["mentions"] if info else []
    return list(dict.fromkeys(paths))


def touched_keys(mem: dict[str, Any], planned: list[list[Effect]]) -> list[str]:
    """The keys of `written_paths`."""
    return list(dict.fromkeys(file_key(p) for p in written_paths(mem, planned)))


def _script(text: str | None, path: str = "") -> dict[str, Any] | None:
    """What a file with this text would write if it were run (None: nothing we can tell): a
    Python-like script that opens files for writing writes the files it names; a shell
    script (`*.sh`, or a `#!` line naming a shell) writes what its commands write."""
    if not text:
        return None
    if _WRITES.search(text):
        return {"mentions": _mentions(text)}
    if len(text) > 20_000 or not (path.endswith(".sh") or _SHEBANG.match(text)):
        return None
    written = touched_paths([_command_effects(cmd) for cmd in commands(text)])
    return {"mentions": written[:8]} if written else None


def _code(code: str) -> Effect:
    writes = bool(_WRITES.search(code))
    return ["code", _h("code", code), writes, _mentions(code) if writes else []]


def _command_effects(cmd: Command) -> list[Effect]:
    out: list[Effect] = []
    name, words = cmd.name, cmd.words
    args = [w for w in words[1:] if not w.startswith("-")]
    content = _h(cmd.stdin) if cmd.stdin is not None else _h(*words)
    for op, target in cmd.redirects:
        if target in _SKIP_TARGETS or target.startswith("&"):
            continue
        if op == ">>":
            out.append(["append", target, content])
        else:  # a file written with known text may be a script run later
            out.append(["write", target, content, _script(cmd.stdin, target)])
    if name in ("cp", "install") and len(args) >= 2:
        srcs, dst = args[:-1], args[-1]
        for src in srcs:
            if any(c in src for c in "*?["):
                return [["unknown"]]
            target = f"{dst.rstrip('/')}/{src.rsplit('/', 1)[-1]}" \
                if (len(srcs) > 1 or dst.endswith("/")) else dst
            out.append(["copy", src, target])
    elif name == "mv" and len(args) == 2:
        out.append(["move", args[0], args[1]])
    elif name == "rm":
        for path in args:
            out.append(["unknown"] if any(c in path for c in "*?[") else
                       ["delete", path])
    elif name in ("sed", "perl") and any(w.startswith("-i") or w == "--in-place"
                                         or w.startswith("-pi") for w in words[1:]):
        expr = next((w for w in words[1:] if not w.startswith("-")), "")
        for path in [w for w in words[1:] if not w.startswith("-")][1:]:
            out.append(["transform", path, _h("sed", expr)])
    elif name == "tee":
        for path in args:
            out.append(["write", path, content, None] if "-a" not in words
                       else ["append", path, content])
    elif name == "git":
        out += _git_effects(cmd, args)
    elif name in ("patch", "apply_patch", "applypatch"):
        out.append(["unknown"])
    elif words and (_INTERPRETER.match(name) or words[0].startswith("./")):
        code = _inline_code(cmd)
        if code is not None:
            out.append(_code(code))
        else:
            script = words[0] if words[0].startswith("./") else next(
                (w for w in words[1:] if not w.startswith("-")), None)
            if script:
                out.append(["script", script])
    return out


def _git_effects(cmd: Command, args: list[str]) -> list[Effect]:
    sub = args[0] if args else ""
    rest = [w for w in cmd.words[2:] if w != "--" and not w.startswith("-")]
    if sub in ("checkout", "restore"):
        files = [w for w in rest if "." in w.rsplit("/", 1)[-1] or "/" in w]
        if "." in rest or ("--" in cmd.words and not files):
            return [["restore_all"]]
        return [["restore", f] for f in files] if files else [["unknown"]]
    if sub == "reset" and "--hard" in cmd.words:
        return [["restore_all"]]
    if sub == "stash" and (len(args) == 1 or args[1] in ("push", "save")):
        return [["restore_all"]]
    if sub in ("stash", "apply", "am", "merge", "rebase", "pull", "cherry-pick", "revert",
               "switch", "clean"):
        return [["unknown"]] if sub != "stash" or args[1:2] in (["pop"], ["apply"]) else []
    return []


def _inline_code(cmd: Command) -> str | None:
    """The code an interpreter runs inline (`-c CODE`, `-e CODE`, or a here-document on its
    input with no script file named), else None."""
    words = cmd.words
    for i, word in enumerate(words[1:], 1):
        if word in ("-c", "-e") and i + 1 < len(words):
            return words[i + 1]
    named = [w for w in words[1:] if not w.startswith("-")]
    if cmd.stdin is not None and (not named or named == ["-"]):
        return cmd.stdin
    return None


# --- applying what a call did ----------------------------------------------------------------

def apply(mem: dict[str, Any], index: int, planned: list[list[Effect]], ok: bool,
          digests: dict[str, str | None] | None, mutating: bool) -> list[Change]:
    """Record what a completed call (step `index`) did; return the files it changed.

    `digests` (from the guard: path -> content digest, None for a missing file) are taken as
    the truth for those files, unless a successful call left a file it writes missing (the
    guard does not see the agent's files: another working directory, another machine).
    Otherwise the planned effects apply: all of them after a
    success, all but the last command's after a failure of a shell line (an `&&` chain ran up
    to the command that failed), none after a failed edit. A `mutating` call none of whose
    effects can be followed is a change of unknown content."""
    changes = _Changes()
    if digests and ok and any(d is None and file_key(p) not in _removed(planned)
                              for p, d in digests.items()):
        digests = None  # a file it wrote is missing: the guard does not see these files
    if digests:
        for path, digest in digests.items():
            key = file_key(path)
            new = ABSENT if digest is None else f"d:{digest}"
            entry = _entry(mem, key)
            _set(mem, key, entry, new, {}, changes, create=entry["id"] == _first(key, entry))
    else:
        for group in planned if ok else planned[:-1]:
            for effect in group:
                _apply_one(mem, effect, changes)
        if mutating and ok and not any(planned):
            _unknown(mem, changes)
    result = changes.result(mem)
    _log(mem, index, result)
    return result


def _removed(planned: list[list[Effect]]) -> set[str]:
    """Keys of the files a planned call removes (`rm`, the source of `mv`)."""
    return {file_key(e[1]) for group in planned for e in group if e[0] in ("delete", "move")}


def _apply_one(mem: dict[str, Any], effect: Effect, changes: _Changes) -> None:
    kind = effect[0]
    if kind == "unknown":
        _unknown(mem, changes)
    elif kind == "restore_all":
        for key in list(mem["files"]):
            entry = mem["files"][key]
            if entry["id"] != _first(key, entry):
                _set(mem, key, entry, _first(key, entry), {}, changes, create=False)
    elif kind in ("write", "append", "transform", "replace", "delete", "restore", "undo"):
        key = file_key(effect[1])
        entry = _entry(mem, key)
        was_new = key not in mem["files"]
        regions = dict(entry["regions"])
        if kind == "write":
            new, regions = f"w:{effect[2]}", {}
            _remember_script(mem, key, effect[3] if len(effect) > 3 else None)
        elif kind in ("append", "transform"):
            new, regions = _h(_current(key, entry), effect[2]), {}
        elif kind == "delete":
            new, regions = ABSENT, {}
        elif kind == "restore":
            new, regions = _first(key, entry), {}
        elif kind == "undo":
            history = [h for h in entry["history"] if h != entry["id"]]
            new, regions = (history[-1] if history else _first(key, entry)), {}
        else:  # replace: the region now holding `old` holds `new`
            old, text = effect[2], effect[3]
            if old in regions:
                origin = regions.pop(old)
            else:  # a first change of this text (a later occurrence of it, if one was made)
                origin = old
                copies = sum(1 for v in regions.values() if v.split("#")[0] == old)
                origin = f"{old}#{copies}" if copies else old
            if text != origin:
                regions[text if text not in regions else f"{text}#{len(regions)}"] = origin
            new = entry["base"] if not regions else _h(entry["base"], *sorted(
                f"{k}>{v}" for k, v in regions.items()))
            if len(regions) > _REGIONS_KEPT:
                regions = {}
        base = new if kind != "replace" else entry["base"]
        _set(mem, key, entry, new, regions, changes, create=was_new and kind == "write",
             base=base)
    elif kind in ("copy", "move"):
        src, dst = file_key(effect[1]), file_key(effect[2])
        source = _current(src, mem["files"].get(src))
        entry = _entry(mem, dst)
        was_new = dst not in mem["files"]
        _set(mem, dst, entry, source, {}, changes, create=was_new, base=source)
        if src in mem["scripts"]:
            mem["scripts"][dst] = mem["scripts"][src]
        if kind == "move":
            gone = _entry(mem, src)
            _set(mem, src, gone, ABSENT, {}, changes, create=False)
    elif kind == "script":
        key = file_key(effect[1])
        info = mem["scripts"].get(key)
        if info:
            code_id = _current(key, mem["files"].get(key))
            for other in info["mentions"]:
                if file_key(other) != key:
                    _transform(mem, file_key(other), code_id, changes)
    elif kind == "code" and effect[2]:
        for other in effect[3]:
            _transform(mem, file_key(other), effect[1], changes)


def _remember_script(mem: dict[str, Any], key: str, script: dict[str, Any] | None) -> None:
    """A file written with known text may be run later: remember what it would write."""
    scripts = mem["scripts"]
    scripts.pop(key, None)
    if script is None:
        return
    scripts[key] = script
    while len(scripts) > _SCRIPTS_KEPT:
        scripts.pop(next(iter(scripts)))


def _mentions(code: str) -> list[str]:
    found = _MENTION.findall(code[:100_000])
    return [m for m in dict.fromkeys(found) if not _BACKUP.search(m)][:8]


def _transform(mem: dict[str, Any], key: str, how: str, changes: _Changes) -> None:
    entry = _entry(mem, key)
    new = _h(_current(key, entry), how)
    _set(mem, key, entry, new, {}, changes, create=False, base=new)


def _unknown(mem: dict[str, Any], changes: _Changes) -> None:
    mem["epoch"] += 1
    changes.unknown = True


def _entry(mem: dict[str, Any], key: str) -> dict[str, Any]:
    entry = mem["files"].get(key)
    if entry is None:
        init = _initial(key)
        entry = {"id": init, "base": init, "regions": {}, "history": [init]}
    return entry


def _first(key: str, entry: dict[str, Any]) -> str:
    """The content a file had when the session first met it (its first digest, live)."""
    return entry.get("first") or _initial(key)


def _current(key: str, entry: dict[str, Any] | None) -> str:
    return entry["id"] if entry else _initial(key)


def _set(mem: dict[str, Any], key: str, entry: dict[str, Any], new: str,
         regions: dict[str, str], changes: _Changes, *, create: bool,
         base: str | None = None) -> None:
    files = mem["files"]
    files.pop(key, None)
    files[key] = entry
    while len(files) > _FILES_KEPT:
        files.pop(next(iter(files)))
    entry["regions"] = regions
    if base is not None:
        entry["base"] = base
    old = entry["id"]
    if new == old:
        return
    # the content it first had counts as seen before, however long ago
    changes.before.setdefault(key, (old, [_first(key, entry), *entry["history"]]))
    if create:
        changes.created.add(key)
    first = _first(key, entry)
    mem["xor"] ^= _part(key, old, first) ^ _part(key, new, first)
    history = entry["history"]
    entry["id"] = new
    if new in history:
        history.remove(new)
    history.append(new)
    del history[:-_HISTORY_KEPT]


def _part(key: str, content: str, first: str) -> int:
    """A file's share of the version: 0 while it holds its first content."""
    return 0 if content == first else int(_h(key, content), 16)


def _log(mem: dict[str, Any], index: int, changes: list[Change]) -> None:
    log = mem["changes"]
    for change in changes:
        log.append([index, change["file"], change["kind"]])
    del log[:-_CHANGES_KEPT]


def meet(mem: dict[str, Any], digests: dict[str, str | None]) -> None:
    """The guard's digests of files a call is about to write, taken before it: a file the
    session meets for the first time starts from its real content, so an undo of the call's
    edit is seen as a return to it."""
    files = mem["files"]
    for path, digest in digests.items():
        key = file_key(path)
        if key in files:
            continue
        first = ABSENT if digest is None else f"d:{digest}"
        files[key] = {"id": first, "base": first, "regions": {}, "history": [first],
                      "first": first}
        while len(files) > _FILES_KEPT:
            files.pop(next(iter(files)))


def observe_view(mem: dict[str, Any], index: int, path: str, signature: str, outcome: str
                 ) -> list[Change]:
    """A read-only look at one file (a read, `cat f`, `sed -n '1,9p' f`): when the same look
    gave another output before while the file's content id is the same, the file changed in a
    way its calls did not show (a script, an editor outside the agent): record that."""
    key = file_key(path)
    entry = mem["files"].get(key)
    current = entry["id"] if entry else _initial(key)
    views = mem.setdefault("views", {})
    seen = views.pop(f"{key}\0{signature}", None)
    views[f"{key}\0{signature}"] = [current, outcome]
    while len(views) > _FILES_KEPT:
        views.pop(next(iter(views)))
    if seen is None or seen[0] != current or seen[1] == outcome:
        return []
    changes = _Changes()
    _transform(mem, key, f"seen:{outcome}", changes)
    views[f"{key}\0{signature}"] = [mem["files"][key]["id"], outcome]
    result = changes.result(mem)
    _log(mem, index, result)
    return result


def changed_since(mem: dict[str, Any], index: int) -> list[list[Any]]:
    """The changes logged after step `index` ([step, file key, kind], oldest first)."""
    return [c for c in mem["changes"] if c[0] > index]


def note_probe(mem: dict[str, Any], paths: list[str]) -> list[str]:
    """Remember files a test or script run names as its own; return their keys."""
    keys = [file_key(p) for p in paths]
    probes = mem["probes"]
    for key in keys:
        if key in probes:
            probes.remove(key)
        probes.append(key)
    del probes[:-_SCRIPTS_KEPT]
    return keys


def is_backup(key: str) -> bool:
    """A copy kept aside (`x.py.bak`, `x.py.orig`, `x.py~`): not the code under work."""
    return bool(_BACKUP.search(key))


def bump(mem: dict[str, Any]) -> None:
    """A change nobody can see into (a new conversation, a rollback, a new task)."""
    mem["epoch"] += 1
