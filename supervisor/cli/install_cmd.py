"""`supervisor install TARGET` / `supervisor uninstall TARGET`: the hook entries in an agent's
settings, for every target of the hook platform (docs/hooks.md, docs/claude-code.md)."""

import argparse
import math
from pathlib import Path
from typing import Any

from supervisor.cli.common import CliError
from supervisor.hooks.plugin_file import PluginFile
from supervisor.hooks.targets import names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", choices=names(), help="the agent to (un)install the hooks of")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--user", action="store_true",
        help="the user's settings (the default; for claude-code ~/.claude/settings.json, or "
        "$CLAUDE_CONFIG_DIR/settings.json when that is set)",
    )
    scope.add_argument(
        "--project", metavar="DIR",
        help="a project's shared settings (for claude-code DIR/.claude/settings.json; with "
        "--transport http DIR/.claude/settings.local.json, which is not committed)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the change as a diff; write nothing"
    )
    parser.add_argument(
        "--root", metavar="DIR",
        help="(install) bake this store root into the hook command (default: the hook "
        "resolves $SUPERVISOR_HOME or the user state directory at run time)",
    )
    parser.add_argument(
        "--transport", choices=("command", "http"), default="command",
        help="(install) how the agent reaches the supervisor for every tool call: a command "
        "(the default: it starts the resident server when it is down) or HTTP to the resident "
        "server on 127.0.0.1 (faster; calls made while the server is down go unsupervised)",
    )
    parser.add_argument(
        "--port", type=int, metavar="PORT",
        help="(install --transport http) the server's port on 127.0.0.1 (default: the one "
        "already configured for the root, else a free one)",
    )
    parser.add_argument(
        "--timeout", type=int, metavar="SECONDS",
        help="(install) the timeout of the hooks that may hold a call for the operator "
        "(default: the policy's hold time plus a margin)",
    )


def run(args: argparse.Namespace) -> int:
    from supervisor.hooks import settings_file as installer
    from supervisor.hooks.policy import PolicyError
    from supervisor.hooks.targets import load

    target = load(args.target)
    spec = target.settings
    path = spec.project_path(Path(args.project)) if args.project else spec.user_path()
    if args.project:  # the project's files are the agent's: never written through a link out
        try:
            installer.require_in_project(path, Path(args.project))
            private = getattr(spec, "project_private_path", None)  # a plugin file has none
            if private is not None:
                installer.require_in_project(private(Path(args.project)), Path(args.project))
        except installer.InstallError as exc:
            raise CliError(str(exc)) from exc
    if isinstance(spec, PluginFile):
        return _run_plugin(args, target, spec, path)
    # The project's other settings file: our entries there go too, so that one transport is
    # installed at a time (an HTTP install after a command one must not record every call twice).
    other: Path | None = None
    if args.project and spec.project_private_path is not None:
        private = spec.project_private_path(Path(args.project))
        if args.command == "install" and args.transport == "http":
            path, other = private, path  # the token never goes into the settings a team commits
        else:
            other = private
    elif args.project and args.command == "install" and args.transport == "http":
        raise CliError(f"an HTTP install for a project would put the hook token into {path}, "
                       "which is shared (teams commit it): install for the user (--user), or "
                       "with --transport command")
    try:
        if args.command == "install":
            timeout = args.timeout if args.timeout is not None else _default_timeout(args)
            if timeout < 10:
                raise CliError("--timeout must be at least 10 seconds")
            root = Path(args.root).expanduser().resolve() if args.root else None
            http = None
            if args.transport == "http":
                root, http = _http(args, target)
            def command(seconds: float, root: Path | None = root) -> str:
                return installer.hook_command(target.name, seconds, root)

            plan = installer.plan_install(spec, path, command, timeout, http,
                                          project=bool(args.project))
        else:
            plan = installer.plan_uninstall(spec, path)
        if args.dry_run:
            print(plan.diff() if plan.changed else f"no change to {path}", end="")
            if not plan.changed:
                print()
            if other is not None and other.exists():
                _uninstall_too(args, spec, other)
            return 0
        backup = installer.apply(plan)
    except (installer.InstallError, PolicyError) as exc:
        raise CliError(str(exc)) from exc
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from exc
    _report(args.command, target, path, plan, backup)
    if other is not None and other.exists():
        _uninstall_too(args, spec, other)
    return 0


def _uninstall_too(args: argparse.Namespace, spec: Any, path: Path) -> None:
    """Remove our entries from the project's other settings file: the private one on
    `uninstall` or a command install (an HTTP install put them there), the shared one on an
    HTTP install (a command install put them there)."""
    from supervisor.hooks import settings_file as installer

    try:
        plan = installer.plan_uninstall(spec, path)
        if plan.changed and not args.dry_run:
            installer.apply(plan)
            print(f"removed the supervisor's hooks from {path}")
        elif plan.changed:
            print(plan.diff(), end="")
    except installer.InstallError as exc:
        raise CliError(str(exc)) from exc
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _run_plugin(args: argparse.Namespace, target: Any, spec: PluginFile, path: Path) -> int:
    """(Un)install the plugin file of an agent without command hooks (`plugin_file`)."""
    from supervisor.hooks import plugin_file
    from supervisor.hooks.policy import PolicyError
    from supervisor.hooks.settings_file import InstallError

    try:
        if args.command == "install":
            if args.transport != "command":
                raise CliError(f"{target.label} has no HTTP hooks; its plugin runs the hook "
                               "client")
            timeout = args.timeout if args.timeout is not None else _default_timeout(args)
            if timeout < 10:
                raise CliError("--timeout must be at least 10 seconds")
            root = Path(args.root).expanduser().resolve() if args.root else None
            plan = plugin_file.plan_install(spec, path, timeout, root)
        else:
            plan = plugin_file.plan_uninstall(spec, path)
        if args.dry_run:
            print(plan.diff() if plan.changed else f"no change to {path}", end="")
            if not plan.changed:
                print()
            return 0
        plugin_file.apply(plan)
    except (InstallError, PolicyError) as exc:
        raise CliError(str(exc)) from exc
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from exc
    if not plan.changed:
        done = "already installed:" if args.command == "install" else "no supervisor plugin at"
        print(f"{done} {path}; nothing changed")
    elif args.command == "install":
        print(f"installed the {target.label} plugin as {path}")
        for note in spec.notes:
            print(note)
    else:
        print(f"removed the supervisor's {target.label} plugin {path}")
    return 0


def _http(args: argparse.Namespace, target: Any) -> tuple[Path, Any]:
    """(the store root, its HTTP configuration, made now if needed). The root is baked into
    the command entries too: the server they start must be the one the HTTP entries reach."""
    from supervisor.hooks.http_transport import ensure_config
    from supervisor.store.paths import resolve_root

    if not target.settings.http_events:
        raise CliError(f"the supervisor has no HTTP hooks for {target.label} (yet); use "
                       "--transport command")
    if args.port is not None and not 0 < args.port < 65536:
        raise CliError("--port must be between 1 and 65535")
    root = resolve_root(args.root)
    if args.dry_run:
        from supervisor.hooks.http_transport import HttpConfig, load_config

        current = load_config(root)
        if current is not None and args.port in (None, current.port):
            return root, current
        print(f"(a real install picks {'the port and ' if args.port is None else ''}a new "
              f"secret token and writes them to {root}/hooks-http.json)")
        token = current.token if current else "<a new secret token>"
        return root, HttpConfig(args.port or 0, token)
    return root, ensure_config(root, args.port)


def _default_timeout(args: argparse.Namespace) -> int:
    """The policy's hold time (what the hook lets an operator take) plus the margin."""
    from supervisor.hooks import settings_file as installer
    from supervisor.hooks.policy import hold_seconds, load_policy
    from supervisor.store.paths import resolve_root

    policy, _source = load_policy(resolve_root(args.root))
    return math.ceil(hold_seconds(policy)) + installer.HOLD_MARGIN_S


def _warn_environment(target: str) -> None:
    """The hooks run this Python environment by its absolute path: say so when it is a virtual
    environment, which is easily removed or moved (every tool call's hook would then fail)."""
    import sys

    if sys.prefix != sys.base_prefix:
        print(f"warning: every hook runs {sys.prefix} (this virtual environment) by its path; "
              f"if you remove or move it, the hooks fail: install the supervisor where it "
              f"stays (e.g. pipx), or run `supervisor install {target}` again after a move "
              "(`supervisor doctor` tells)")


def _report(command: str, target: Any, path: Path, plan: Any, backup: Path | None) -> None:
    if not plan.changed:
        done = "already installed in" if command == "install" else "no supervisor hooks in"
        print(f"{done} {path}; nothing changed")
        return
    if command == "install":
        print(f"installed the {target.label} hooks into {path}")
        for note in target.settings.notes:
            print(note)
        _warn_environment(target.name)
        print(f"next: start {target.label} as usual; its sessions appear in `supervisor "
              "dashboard` (and `supervisor sessions`). `supervisor doctor` checks the hooks "
              "any time.")
    else:
        print(f"removed the supervisor's {target.label} hooks from {path}")
    if plan.new_text is None:
        print(f"removed {path} (the installer had created it)")
    if backup is not None:
        print(f"previous content kept in {backup}")
