"""What every ``toolgym`` command shares: the app, consoles, exit codes and argument checks."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from typer.core import TyperGroup

from toolgym._version import __version__

if TYPE_CHECKING:
    from toolgym.envs.domains import Domain
    from toolgym.envs.sandbox import Limits

# Options whose value may be left out, and the value they then take: `--ray` alone starts a
# local Ray (Typer has no optional-value options, so the command line is completed first).
BARE_OPTIONS = {"--ray": "local"}


class _Commands(TyperGroup):
    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, complete_bare_options(args))


def complete_bare_options(args: list[str]) -> list[str]:
    """``args`` with each of :data:`BARE_OPTIONS` given without a value (last, or followed by
    another option) given its default value: ``--ray --num-envs 4`` -> ``--ray=local ...``."""
    done: list[str] = []
    for k, arg in enumerate(args):
        if arg == "--":  # what follows is not options
            return done + args[k:]
        following = args[k + 1] if k + 1 < len(args) else None
        if arg in BARE_OPTIONS and (following is None or following.startswith("-")):
            arg = f"{arg}={BARE_OPTIONS[arg]}"
        done.append(arg)
    return done


app = typer.Typer(
    help="toolgym: agents that operate professional tools by writing scripts.",
    cls=_Commands,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
console = Console()
err_console = Console(stderr=True, soft_wrap=True)
EXIT_PASS, EXIT_FAIL, EXIT_ERROR = 0, 1, 2
MAX_WALL_S = 3600.0
WallSeconds = Annotated[
    float | None,
    typer.Option(
        "--wall-s",
        min=0.1,
        max=MAX_WALL_S,
        help="Wall-clock seconds per script or step in the sandbox (default 30); the CPU-time "
        "limit is set to the same.",
    ),
]


def limits_for(wall_s: float | None) -> Limits | None:
    """Sandbox limits with the wall-clock and CPU-time limits set to ``wall_s``."""
    from toolgym.envs.sandbox import Limits

    return None if wall_s is None else Limits(wall_s=wall_s, cpu_s=wall_s)


def _version(value: bool) -> None:
    if value:
        console.print(f"toolgym {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """toolgym: Gymnasium environments for CadQuery, Blender and a Panda3D game-scene runtime."""
    # Started with SIGINT ignored (`nohup ... &`, a parent's child), Ctrl-C would do nothing:
    # every command takes it as usual, and the batch ones stop cleanly on it.
    signal.signal(signal.SIGINT, signal.default_int_handler)


def check_writable_file(path: Path) -> None:
    """Exit 2 unless ``path`` can be written as a file (checked before any work is done)."""
    if path.is_dir():
        fail(f"{path} is a folder; give a file name")
    if not path.parent.is_dir():
        fail(f"{path}: the folder {path.parent} does not exist")
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        fail(f"{path}: not writable")


def check_writable_folder(path: Path, option: str = "--out", what: str = "the renders") -> None:
    """Exit 2 unless ``path`` is, or can be made, a writable folder (before any episode runs)."""
    if path.exists() and not path.is_dir():
        fail(f"{option} {path} is a file; give a folder for {what}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"{option} {path}: cannot make the folder: {exc.strerror or exc}")
    if not os.access(path, os.W_OK | os.X_OK):
        fail(f"{option} {path}: the folder is not writable")


def check_device(device: str) -> None:
    """Exit 2 unless ``--device`` names a device that works here (CUDA: one that really runs)."""
    if device not in ("auto", "cpu") and not device.startswith("cuda"):
        fail(f"--device must be auto, cpu or cuda, not {device!r}")
    if device.startswith("cuda"):
        import torch

        try:  # a driver too old for this torch, or a GPU in use elsewhere, fails only here
            torch.zeros(1, device=device).add_(1).cpu()
        except (RuntimeError, AssertionError, ValueError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            fail(f"CUDA not usable here ({reason}); use --device cpu")


def fail(message: str) -> NoReturn:
    err_console.print(f"[red]error:[/] {message}")
    raise typer.Exit(EXIT_ERROR)


def message(exc: BaseException) -> str:
    """An exception's message as written (a ``KeyError``'s without the quotes its ``str`` adds)."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def or_fail[T](lookup: Callable[[str], T], name: str) -> T:
    """``lookup(name)``, or exit 2 with its message (unknown suite, task, ...)."""
    try:
        return lookup(name)
    except (KeyError, ValueError) as exc:
        fail(message(exc))


def env_domain(env: str) -> Domain:
    """The domain behind an environment id, or exit 2 naming the known ids."""
    from toolgym.envs.domains import domain_of_env

    return or_fail(domain_of_env, env)
