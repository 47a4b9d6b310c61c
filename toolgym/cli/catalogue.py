"""``toolgym tasks``, ``show`` and ``tools``: what there is to do, and with what."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import gymnasium as gym
import typer
from gymnasium.envs.registration import load_env_creator
from rich.markup import escape
from rich.table import Table

from toolgym.cli.common import app, check_writable_file, console, env_domain, fail, or_fail
from toolgym.envs.episode.look import MAX_ZOOM
from toolgym.envs.tasks.model import SPLITS, WRITTEN_SPLIT

if TYPE_CHECKING:
    from toolgym.envs.tasks.model import Task


@app.command()
def tasks(
    suite: Annotated[str | None, typer.Argument(help="List this suite's tasks.")] = None,
    difficulty: Annotated[
        int | None, typer.Option(min=1, max=5, help="Only tasks of this tier (1-5).")
    ] = None,
    split: Annotated[str | None, typer.Option(help="Only train or test tasks.")] = None,
    family: Annotated[
        str | None, typer.Option(help="Only tasks of this procedural family.")
    ] = None,
    families: Annotated[
        bool,
        typer.Option(
            "--families", help="List the procedural families: tier, features, tools, splits."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the task suites, or the tasks of one suite (of every suite, with a filter)."""
    from toolgym.envs.domains import domains
    from toolgym.envs.tasks.suites import get_suite, suites

    if split is not None and split not in SPLITS:
        fail(f"--split must be train or test, got {split!r}")
    if families:  # a table per tool: each has its own suites and columns
        tables = [(d.name, d.family_table()) for d in domains() if d.family_table]
        if as_json:
            rows = [{"domain": name, **row} for name, found in tables for row in found]
            print(json.dumps(rows, indent=2, ensure_ascii=False))
            return
        for name, found in tables:
            title = f"{name} procedural families (tasks per suite: train/test)"
            _print_rows(found, title, False, skip=("summary", "features", "styles"))
        return
    known = {name for d in domains() for name in d.families}
    if family is not None and family not in known:
        fail(f"--family: unknown family {family!r}; see `toolgym tasks --families`")
    if suite is None and difficulty is None and split is None and family is None:
        _list_suites(list(suites().values()), as_json)
        return
    if suite is None:
        unique = {t.id: t for found in suites().values() for t in found.tasks}
        chosen, title = list(unique.values()), "every suite"
    else:
        found = or_fail(get_suite, suite)
        chosen, title = list(found.tasks), f"suite {found.name}"
    chosen = [
        t
        for t in chosen
        if (difficulty is None or t.difficulty == difficulty)
        and (split is None or t.split == split)
        and (family is None or t.family == family)
    ]
    if as_json:
        print(json.dumps([_task_summary(t) for t in chosen], indent=2, ensure_ascii=False))
        return
    table = Table(title=f"{title}: {len(chosen)} tasks")
    # Task ids are never wrapped: they are meant to be copied into --task.
    table.add_column("task", no_wrap=True, min_width=max((len(t.id) for t in chosen), default=4))
    table.add_column("difficulty")
    table.add_column("split")
    table.add_column("prompt", overflow="fold")
    for task in chosen:
        table.add_row(task.id, str(task.difficulty), task.split, escape(task.prompt))
    console.print(table)


def _list_suites(found: list[Any], as_json: bool) -> None:
    rows = [
        {
            "suite": s.name,
            "domain": s.domain,
            "tasks": len(s.tasks),
            "train": len(s.split("train")),
            "test": len(s.split("test")),
            "description": s.description,
            "split_rule": s.split_rule,
        }
        for s in found
    ]
    _print_rows(rows, "task suites", as_json, skip=("split_rule",))
    if not as_json:  # the rules are long: one line each, under the table
        for s in found:
            if s.split_rule != WRITTEN_SPLIT:
                console.print(f"[bold]{escape(s.name)}[/] split rule: {escape(s.split_rule)}")


def _print_rows(
    rows: list[dict[str, Any]], title: str, as_json: bool, skip: tuple[str, ...] = ()
) -> None:
    """Rows as JSON, or as a table without the ``skip`` columns (long prose, nested detail:
    the JSON has them)."""
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = Table(title=title)
    columns = [c for c in (rows[0] if rows else ()) if c not in skip]
    for column in columns:
        table.add_column(column, no_wrap=column in ("suite", "family", "tools"))
    for row in rows:
        cells = (row.get(c, "") for c in columns)
        table.add_row(*(escape(" ".join(v) if isinstance(v, list) else str(v)) for v in cells))
    console.print(table)


def _task_summary(task: Task) -> dict[str, Any]:
    """What a user needs to pick a task: no reference program (that is the answer)."""
    return {
        "id": task.id,
        "domain": task.domain,
        "difficulty": task.difficulty,
        "split": task.split,
        "family": task.family,
        "style": task.style,
        "prompt": task.prompt,
    }


@app.command()
def show(
    task: Annotated[str, typer.Argument(help="Task id, e.g. curated/plate-four-holes.")],
    image: Annotated[Path | None, typer.Option(help="Write the target's views here (PNG).")] = None,
    export: Annotated[
        Path | None,
        typer.Option(
            help="Write the target here; the suffix picks the format (CAD: .step, "
            ".stl, .brep or .glb)."
        ),
    ] = None,
) -> None:
    """Show a task: its prompt and details; write its target's views and the target itself."""
    from toolgym.envs.domains import get_domain
    from toolgym.envs.tasks.suites import get_task

    found = or_fail(get_task, task)
    domain = get_domain(found.domain)
    fmt = export.suffix.lower().lstrip(".") if export else None
    if export is not None and fmt not in domain.export_formats:
        names = ", ".join(f".{f}" for f in domain.export_formats)
        fail(f"--export {export}: {found.domain} targets export as {names}")
    for path in (image, export):
        if path is not None:
            check_writable_file(path)
    console.print(
        f"[bold]{escape(found.id)}[/]  ({found.domain}, difficulty {found.difficulty}, "
        f"{found.split} split)"
    )
    console.print(escape(found.prompt), soft_wrap=True)
    if image is None and export is None:
        console.print(
            f"Add --image target.png to see the target, --export target.{domain.export_formats[0]}"
            " to get it."
        )
        return
    try:
        _write_target(found, image, export, fmt)
    except (RuntimeError, ValueError, OSError) as exc:
        fail(str(exc))


def _write_target(task: Task, image: Path | None, export: Path | None, fmt: str | None) -> None:
    from toolgym.envs.domains import get_domain

    domain = get_domain(task.domain)
    if image is not None:
        from PIL import Image

        from toolgym.renderers.labels import captioned

        views = domain.target_image(task, 256)
        Image.fromarray(captioned({"target": views})).save(image, format="PNG")
        console.print(f"target views in {escape(str(image))}", soft_wrap=True)
    if export is not None:
        export.write_bytes(domain.export_reference(task, str(fmt)))
        console.print(f"target ({str(fmt).upper()}) in {escape(str(export))}", soft_wrap=True)


@app.command()
def tools(
    env: Annotated[str, typer.Option(help="Environment id.")] = "toolgym/CadQuery-v0",
    as_json: Annotated[bool, typer.Option("--json", help="Function-calling JSON schemas.")] = False,
    grammar: Annotated[
        bool, typer.Option(help="Grammar metadata (ranges, units, steps) as JSON.")
    ] = False,
) -> None:
    """List an environment's tools, or print their function-calling schemas."""
    registry = env_domain(env).registry()
    if as_json or grammar:
        print(json.dumps(registry.grammar() if grammar else registry.json_schemas(), indent=2))
        return
    table = Table(title=f"{env} tools")
    for column in ("tool", "parameters", "description"):
        table.add_column(column, overflow="fold")
    for tool in registry.tools.values():
        params = "\n".join(_param_line(p) for p in tool.params)
        table.add_row(tool.name, escape(params), escape(tool.description))
    console.print(table)
    console.print("name? : optional (default in brackets); --json for the full schemas")
    looks = load_env_creator(gym.spec(env).entry_point).look_center
    if looks:  # the env's own call, beside the registry's tools (README: "A closer look")
        axes, unit = looks
        center = ", ".join("xyz"[:axes])
        call = f'{{"name": "look", "arguments": {{"center": [{center}], "zoom": 1..{MAX_ZOOM:g}}}}}'
        console.print(
            escape(
                f"also {call} ({unit}): the env's own call, not a tool (so not in --json): "
                "every view reframed, a step, no reward"
            ),
            soft_wrap=True,
        )


def _param_line(param: Any) -> str:
    """``radius? 0.1..250 mm [5]``: the name, its range or choices, unit and default."""
    c = param.constraint
    if c.choices:
        values = "|".join(c.choices)
    elif c.min is not None or c.max is not None:
        low = "" if c.min is None else f"{c.min:g}"
        high = "" if c.max is None else f"{c.max:g}"
        values = f"{low}..{high}" + (" whole" if param.kind == "integer" else "")
        if param.kind == "points":
            values = f"[x, y] points, each {values}"
    else:
        values = {"string": "text", "points": "[x, y] points"}.get(param.kind, param.kind)
    unit = f" {c.unit}" if c.unit else ""
    shown = f"{param.default:g}" if isinstance(param.default, float) else param.default
    default = "" if param.required else f" [{shown}]"
    return f"{param.name}{'' if param.required else '?'} {values}{unit}{default}"
