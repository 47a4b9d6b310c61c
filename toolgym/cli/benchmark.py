"""``toolgym bench``: evaluation sets, runs of any agent on them, reports and comparisons."""

from __future__ import annotations

import json
import math
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from toolgym.cli.common import (
    WallSeconds,
    check_device,
    check_writable_folder,
    console,
    err_console,
    fail,
    message,
    or_fail,
)
from toolgym.cli.common import app as root
from toolgym.cli.distributed import RayAddress, connect
from toolgym.cli.llm import ApiKeyEnv, BaseUrl, ImageSize, ModelName, api_key_from

if TYPE_CHECKING:
    from toolgym.agents.benchmark.players import AgentSpec

bench = typer.Typer(
    help="Benchmark any agent on versioned evaluation sets: list, run, report, compare.",
    no_args_is_help=True,
)
root.add_typer(bench, name="bench")

Price = Annotated[
    str | None,
    typer.Option(metavar="DOLLARS", help="Dollars per million tokens, for the cost column."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


@bench.command(name="list")
def list_sets(
    set_name: Annotated[
        str | None,
        typer.Argument(metavar="[SET]", help="A set: list its entries instead of the sets."),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """The evaluation sets (name, content hash, tasks by part), or one set's entries."""
    from toolgym.agents.benchmark.sets import PART_NAMES, get_set, set_names

    if set_name is not None:
        entries = or_fail(get_set, set_name).entries
        if as_json:
            for entry in entries:
                print(json.dumps(entry.to_dict()))
            return
        table = Table(title=f"{set_name}: {len(entries)} entries")
        for column in ("entry", "tier", "family", "style", "max steps"):
            table.add_column(column, no_wrap=column == "entry")
        for entry in entries:
            table.add_row(
                entry.id, str(entry.tier), entry.family, entry.style, str(entry.max_steps)
            )
        console.print(table)
        return
    summaries = [get_set(name).summary() for name in set_names()]
    if as_json:
        print(json.dumps(summaries))
        return
    table = Table(title="evaluation sets (toolgym bench run SET)")
    for column in ("set", "hash", "tasks", *PART_NAMES):
        table.add_column(column, no_wrap=column in ("set", "hash"))
    for summary in summaries:
        parts: dict[str, int] = {}
        for counts in summary["counts"].values():
            for part, count in counts.items():
                parts[part] = parts.get(part, 0) + count
        row = [summary["name"], summary["hash"], str(summary["entries"])]
        table.add_row(*row, *(str(parts.get(p, 0)) for p in PART_NAMES))
    console.print(table)


@bench.command(name="run")
def run_set(
    set_name: Annotated[str, typer.Argument(metavar="SET", help="An evaluation set (bench list).")],
    agent: Annotated[
        str, typer.Option(help="oracle, random, copy, keyword, template, checkpoint or openai.")
    ] = "oracle",
    out: Annotated[
        Path | None,
        typer.Option(help="Run folder (results, report); default runs/bench/SET-AGENT."),
    ] = None,
    samples: Annotated[int, typer.Option(min=1, max=100, help="Episodes per task (pass@k).")] = 1,
    jobs: Annotated[int, typer.Option(min=1, max=64, help="Episodes played at once.")] = 1,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the set's first N entries (a quick look).")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the first episode.")] = 0,
    action_mode: Annotated[
        str | None, typer.Option(help="code or tool (default: code; tool for the rules).")
    ] = None,
    checkpoint: Annotated[
        Path | None, typer.Option(help="--agent checkpoint: a `toolgym train` checkpoint.")
    ] = None,
    device: Annotated[str, typer.Option(help="--agent checkpoint: cpu or cuda.")] = "cpu",
    base_url: BaseUrl = None,
    model: ModelName = None,
    api_key_env: ApiKeyEnv = None,
    image_size: ImageSize = 256,
    price_in: Price = None,
    price_out: Price = None,
    record: Annotated[
        Path | None, typer.Option(help="Record every episode here; see `toolgym replay`.")
    ] = None,
    wall_s: WallSeconds = None,
    ray: RayAddress = None,
    as_json: AsJson = False,
) -> None:
    """Run an agent on a set; finished episodes are kept, so the same command resumes."""
    from toolgym.agents.benchmark.runner import Plan, run_plan
    from toolgym.agents.benchmark.sets import get_set

    prices = _prices(price_in, price_out)
    eval_set = or_fail(get_set, set_name)
    try:
        spec = _agent_spec(
            agent, action_mode, checkpoint, device, base_url, model, api_key_env, image_size
        )
    except ValueError as exc:
        fail(message(exc))
    out = out or Path("runs") / "bench" / f"{set_name}-{agent}"
    check_writable_folder(out, "--out", "the run")
    if record is not None:
        check_writable_folder(record, "--record", "the recording")
    connect(ray)
    plan = Plan(eval_set, spec, samples, seed, limit, wall_s)
    total = len(plan.entries) * samples
    from rich.progress import Progress

    try:
        with Progress(console=err_console, transient=True, disable=as_json) as progress:
            bar = progress.add_task(f"{spec.label()} on {set_name}", total=total)
            run_plan(
                plan,
                out,
                jobs=jobs,
                ray=ray,
                record=record,
                on_episode=lambda _: progress.advance(bar),
            )
    except ValueError as exc:
        fail(message(exc))
    except KeyboardInterrupt:
        again = shlex.join(sys.argv[1:])
        err_console.print(
            f"interrupted; finished episodes are kept in {escape(str(out))}; resume with: "
            f"toolgym {escape(again)}"
        )
        raise typer.Exit(130) from None
    report = _write_report(out, prices)
    if as_json:
        print(json.dumps({k: v for k, v in report.items() if k != "tasks"}))
        return
    _print_report(report, out)


@bench.command()
def report(
    run: Annotated[Path, typer.Argument(help="A run folder of `toolgym bench run`.")],
    price_in: Price = None,
    price_out: Price = None,
    as_json: AsJson = False,
) -> None:
    """Write a run's report again (report.json, report.md, report.png), with prices."""
    prices = _prices(price_in, price_out)
    result = _write_report(run, prices)
    if as_json:
        print(json.dumps({k: v for k, v in result.items() if k != "tasks"}))
        return
    _print_report(result, run)


@bench.command(name="compare")
def compare_runs(
    a: Annotated[Path, typer.Argument(help="A run folder or its report.json.")],
    b: Annotated[Path, typer.Argument(help="Another run of the same set.")],
    as_json: AsJson = False,
) -> None:
    """B minus A on the tasks both played, with 95 % bootstrap intervals over tasks."""
    from toolgym.agents.benchmark.players import agent_label
    from toolgym.agents.benchmark.report import compare

    first, second = _read_report(a), _read_report(b)
    try:
        result = compare(first, second)
    except ValueError as exc:
        fail(message(exc))
    if as_json:
        print(json.dumps(result))
        return
    a_name, b_name = (agent_label(r["run"]["agent"]) for r in (first, second))
    names = f"{a_name} (A) -> {b_name} (B)"
    table = Table(title=f"{names} on {first['run']['set']}, {result['tasks']} tasks")
    for column in ("group", "metric", "tasks", "A", "B", "B - A", "95 % interval"):
        table.add_column(column)
    for row in result["rows"]:
        low, high = row["ci95"]
        sure = "" if low <= 0 <= high else " *"
        table.add_row(
            f"{row['group']} {row['value']}".strip(),
            row["metric"],
            str(row["tasks"]),
            f"{row['a']:.3f}",
            f"{row['b']:.3f}",
            f"{row['difference']:+.3f}{sure}",
            f"[{low:+.3f}, {high:+.3f}]",
        )
    console.print(table)
    console.print("*: the interval leaves out 0")


def _agent_spec(
    agent: str,
    action_mode: str | None,
    checkpoint: Path | None,
    device: str,
    base_url: str | None,
    model: str | None,
    api_key_env: str | None,
    image_size: int,
) -> AgentSpec:
    """The agent's spec, or ``ValueError`` saying what is wrong or missing."""
    from toolgym.agents.benchmark.players import TOOL_ONLY, AgentSpec

    mode = action_mode or ("tool" if agent in TOOL_ONLY else "code")
    options: dict[str, Any] = {}
    if agent == "checkpoint":
        if checkpoint is None:
            raise ValueError("--agent checkpoint needs --checkpoint")
        from toolgym.cli.training import checkpoint_file

        check_device(device)
        options = {"checkpoint": str(checkpoint_file(checkpoint).resolve()), "device": device}
    if agent == "openai":
        if not base_url or not model:
            raise ValueError("--agent openai needs --base-url and --model")
        options = {"base_url": base_url, "model": model, "image_size": image_size}
        if api_key_env:
            options["api_key"] = api_key_from(api_key_env)
    return AgentSpec(agent, mode, options)


def _prices(price_in: str | None, price_out: str | None) -> tuple[float, float] | None:
    """``--price-in``/``--price-out`` as numbers (dollars per million tokens), or exit 2."""
    if price_in is None and price_out is None:
        return None
    values = []
    for option, text in (("--price-in", price_in), ("--price-out", price_out)):
        try:
            value = float(text if text is not None else "0")
        except ValueError:
            fail(f"{option} must be a number of dollars per million tokens, not {text!r}")
        if not math.isfinite(value) or value < 0:
            fail(f"{option} must be a number of dollars per million tokens ≥ 0, not {text!r}")
        values.append(value)
    return values[0], values[1]


def _write_report(run: Path, prices: tuple[float, float] | None) -> dict[str, Any]:
    """Summarise ``run`` into report.json, report.md and report.png; exit 2 if it is no run
    or its set has changed since."""
    from toolgym.agents.benchmark.report import markdown, summarize
    from toolgym.agents.benchmark.runner import read_run
    from toolgym.agents.benchmark.sets import get_set
    from toolgym.renderers.benchmark_plot import plot_report

    header, episodes = or_fail(read_run, run)
    eval_set = or_fail(get_set, str(header.get("set")))
    if eval_set.hash != header["set_hash"]:
        fail(
            f"{run} measured {eval_set.name} {header['set_hash']}; that set is "
            f"{eval_set.hash} in this version, so its tasks cannot be named"
        )
    result = summarize(header, episodes, eval_set.head(header.get("limit")), prices)
    (run / "report.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (run / "report.md").write_text(markdown(result), encoding="utf-8")
    if result["tasks"]:
        plot_report(result, run / "report.png")
    return result


def _read_report(path: Path) -> dict[str, Any]:
    """A report from a run folder (its report.json) or the file; exit 2 if it is neither."""
    file = path / "report.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        fail(
            f"{path}: no benchmark report there ({type(exc).__name__}); run `toolgym bench "
            "report RUN` first"
        )
    if not isinstance(data, dict) or "run" not in data or "tasks" not in data:
        fail(f"{path}: not a benchmark report")
    return data


def _print_report(result: dict[str, Any], run: Path) -> None:
    from toolgym.agents.benchmark.report import markdown

    console.print(markdown(result), highlight=False, soft_wrap=True)
    console.print(
        f"report in {escape(str(run))}: report.json, report.md, report.png", soft_wrap=True
    )
