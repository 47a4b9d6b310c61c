"""``toolgym fuzz``: play every generic cheat against task references, beside honest near misses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from toolgym.cli.common import (
    EXIT_FAIL,
    EXIT_PASS,
    app,
    check_writable_file,
    console,
    err_console,
    fail,
    message,
    or_fail,
)
from toolgym.envs.tasks.model import SPLITS

if TYPE_CHECKING:
    from toolgym.envs.verification.fuzzing import FuzzReport


@app.command()
def fuzz(
    domain: Annotated[
        list[str] | None,
        typer.Option(
            metavar="DOMAIN", help="Domain to fuzz (cadquery, blender, scene); repeat for several."
        ),
    ] = None,
    task: Annotated[
        list[str] | None,
        typer.Option(metavar="ID", help="Task id to fuzz instead; repeat for several."),
    ] = None,
    per_family: Annotated[
        int, typer.Option(min=1, max=1000, help="Tasks per family (procedural or suite).")
    ] = 1,
    split: Annotated[str, typer.Option(help="Split the tasks come from: train or test.")] = "test",
    cheat: Annotated[
        list[str] | None,
        typer.Option(metavar="NAME", help="Only this cheat (by name); repeat for several."),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write every trial and the totals here.")
    ] = None,
) -> None:
    """Play each domain's generic cheats (a part with its features removed, geometry mirrored
    by a negative scale, motion between sampled frames, ...) on task references, as one-step
    episodes scored per step and at the exact tier, beside an honest near miss of each task.
    Exit 0 when every cheat is caught, 1 when one escapes or a cheat's script is broken, 2 on
    bad input."""
    from toolgym.envs.domains import get_domain
    from toolgym.envs.registration import domain_names
    from toolgym.envs.tasks.suites import get_task
    from toolgym.envs.verification import fuzzing

    if split not in SPLITS:
        fail(f"--split must be train or test, not {split!r}")
    if json_out is not None:
        check_writable_file(json_out)
    if task and domain:
        fail("give --task or --domain, not both")
    tasks = [or_fail(get_task, name) for name in task or ()]
    if not tasks:
        for name in domain or domain_names():
            if name not in domain_names():
                fail(f"unknown domain {name!r}; known: {', '.join(domain_names())}")
            tasks += fuzzing.family_sample(name, per_family, split)
    cheats = {one.domain: {c.name: c for c in get_domain(one.domain).cheats()} for one in tasks}
    unknown = sorted(set(cheat or ()) - {name for known in cheats.values() for name in known})
    if unknown:
        fail(f"no domain here has the cheat {', '.join(unknown)}")
    report = fuzzing.FuzzReport()
    for one in tasks:
        known = cheats[one.domain]
        chosen = [known[name] for name in cheat if name in known] if cheat else known.values()
        try:
            report.trials.extend(
                fuzzing.fuzz_task(
                    one, chosen, lambda t: console.print(t.line(), soft_wrap=True, markup=False)
                )
            )
        except fuzzing.FuzzSetupError as exc:
            fail(message(exc))
    if not report.trials:
        fail("no cheat applies to these tasks")
    _print_totals(report)
    if json_out is not None:
        json_out.write_text(json.dumps(report.to_dict(), indent=1) + "\n", encoding="utf-8")
    if report.escaped or report.broken:
        err_console.print(
            f"{len(report.escaped)} cheats escaped, {len(report.broken)} broken (listed above)"
        )
        raise typer.Exit(EXIT_FAIL)
    raise typer.Exit(EXIT_PASS)


def _print_totals(report: FuzzReport) -> None:
    for key, title in (("family", "by family"), ("cheat", "by cheat")):
        table = Table(title=f"cheats {title}")
        for column in (key, "tried", "caught"):
            table.add_column(column)
        for name, (tried, caught) in report.by(key).items():
            table.add_row(name, str(tried), str(caught))
        console.print(table)
