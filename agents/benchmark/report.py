"""What a benchmark run measured: scores, pass@k, rates and costs by tool, part, family, tier
and prompt form; the Markdown leaderboard row; and comparing two runs.

A task's figures are means over its samples; a group's are means over its tasks (each task
counts once however many samples it has). ``pass@k`` is the unbiased estimator of Chen et al.
(2021): with ``n`` samples of which ``c`` passed, ``1 - C(n - c, k) / C(n, k)``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from toolgym.agents.benchmark.players import agent_label
from toolgym.agents.benchmark.sets import PART_NAMES

GROUPS = ("tool", "part", "family", "tier", "prompt_form")
BOOTSTRAP_SAMPLES = 2000


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` samples drawn without replacement from ``n``, of
    which ``c`` passed, passes (unbiased; ``k <= n``)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def task_rows(episodes: Iterable[dict[str, Any]], entries: Sequence[Any]) -> list[dict[str, Any]]:
    """Per entry: its groups and its samples' figures (``n``, ``c`` passed, mean score...)."""
    by_entry: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in {(r["entry"], r["sample"]): r for r in episodes}.values():  # each sample once
        by_entry[row["entry"]].append(row)
    rows = []
    for entry in entries:
        samples = by_entry.get(entry.id, [])
        if not samples:
            continue
        steps = sum(s["steps"] for s in samples)
        rows.append(
            {
                "entry": entry.id,
                **{g: getattr(entry, g) for g in GROUPS},
                "n": len(samples),
                "c": sum(bool(s["passed"]) for s in samples),
                "score": float(np.mean([s["score"] or 0.0 for s in samples])),
                "errors": sum(s["error"] is not None for s in samples),
                "steps": steps / len(samples),
                "turns": sum(s["turns"] for s in samples) / len(samples),
                "executed": sum(s["executed"] for s in samples),
                "invalid": sum(s["invalid"] for s in samples),
                "call_count": sum(s["calls"] for s in samples),
                "prompt_tokens": sum(s["prompt_tokens"] for s in samples),
                "completion_tokens": sum(s["completion_tokens"] for s in samples),
                "seconds": sum(s["seconds"] for s in samples),
                "stops": dict(Counter(s["stop"] for s in samples)),
            }
        )
    return rows


def figures(
    rows: list[dict[str, Any]], k: int, prices: tuple[float, float] | None
) -> dict[str, Any]:
    """A group's figures: mean exact score, pass@1, pass@k, execution and invalid-call rates
    (of all calls sent), mean steps and turns per episode, tokens, wall time, cost, episodes that
    could not be played (``errors``) and why episodes ended (``stops``)."""
    if not rows:
        return {"tasks": 0}
    episodes = sum(r["n"] for r in rows)
    calls = sum(r["call_count"] for r in rows)
    tokens_in = sum(r["prompt_tokens"] for r in rows)
    tokens_out = sum(r["completion_tokens"] for r in rows)
    out = {
        "tasks": len(rows),
        "episodes": episodes,
        "score": float(np.mean([r["score"] for r in rows])),
        "pass@1": float(np.mean([pass_at_k(r["n"], r["c"], 1) for r in rows])),
        f"pass@{k}": float(np.mean([pass_at_k(r["n"], r["c"], min(k, r["n"])) for r in rows])),
        "execution_rate": sum(r["executed"] for r in rows) / calls if calls else None,
        "invalid_call_rate": sum(r["invalid"] for r in rows) / calls if calls else None,
        "steps": float(np.mean([r["steps"] for r in rows])),
        "turns": float(np.mean([r["turns"] for r in rows])),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "seconds": sum(r["seconds"] for r in rows),
        "errors": sum(r["errors"] for r in rows),
        "stops": dict(sum((Counter(r["stops"]) for r in rows), Counter())),
    }
    if prices is not None:  # dollars per million tokens, in and out
        out["cost"] = (tokens_in * prices[0] + tokens_out * prices[1]) / 1e6
    return out


def summarize(
    header: dict[str, Any],
    episodes: Iterable[dict[str, Any]],
    entries: Sequence[Any],
    prices: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """The report of a run: its header, overall figures, figures by each of :data:`GROUPS`,
    and the per-task rows ``compare`` resamples."""
    rows = task_rows(episodes, entries)
    k = int(header["samples"])
    report: dict[str, Any] = {
        "run": header,
        "complete": len(rows) == len(entries) and all(r["n"] == k for r in rows),
        "prices_per_million_tokens": list(prices) if prices else None,
        "overall": figures(rows, k, prices),
        "by": {},
        "tasks": rows,
    }
    for group in GROUPS:
        values: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            values[row[group]].append(row)
        report["by"][group] = {str(v): figures(values[v], k, prices) for v in sorted(values)}
    return report


def leaderboard(reports: Sequence[dict[str, Any]]) -> str:
    """One Markdown row per run (runs of one set): agent, tasks, score, pass@1, pass@k where a
    run has more samples, rates, steps, tokens, cost where priced, wall time and errors."""
    ks = sorted({r["run"]["samples"] for r in reports if r["run"]["samples"] > 1})
    priced = any(r["overall"].get("cost") is not None for r in reports)
    header = ["agent", "tasks", "score", "pass@1", *(f"pass@{k}" for k in ks)]
    header += ["exec rate", "invalid calls", "steps", "tokens in/out"]
    header += ["cost $"] * priced + ["wall s", "errors"]
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for report in reports:
        o = report["overall"]
        cells = [agent_label(report["run"]["agent"]), str(o["tasks"]), f"{o['score']:.3f}"]
        cells += [f"{o['pass@1']:.3f}", *(_cell(o.get(f"pass@{k}")) for k in ks)]
        cells += [_cell(o["execution_rate"], 2), _cell(o["invalid_call_rate"], 2)]
        cells += [f"{o['steps']:.1f}", f"{o['tokens_in']}/{o['tokens_out']}"]
        cells += [_cell(o.get("cost"), 4)] * priced + [f"{o['seconds']:.0f}", str(o["errors"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def scores_by(reports: Sequence[dict[str, Any]], group: str, values: Sequence[str]) -> str:
    """A Markdown table: each run's mean exact score in each of ``values`` of ``group``."""
    lines = [f"| agent | {' | '.join(values)} |", "|---" * (len(values) + 1) + "|"]
    for report in reports:
        by = report["by"][group]
        cells = [f"{by[v]['score']:.3f}" if v in by else "-" for v in values]
        lines.append(f"| {agent_label(report['run']['agent'])} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def markdown(report: dict[str, Any]) -> str:
    """The run as a leaderboard row (with its header) and a table by tool and part."""
    run, k = report["run"], report["run"]["samples"]
    lines = [
        f"Set `{run['set']}` (hash `{run['set_hash']}`"
        + (f", first {run['limit']} entries" if run["limit"] else "")
        + f"), {k} sample(s) per task, agent `{agent_label(run['agent'])}` "
        + f"({run['agent']['action_mode']} mode)"
        + ("" if report["complete"] else " **(incomplete)**"),
        "",
        leaderboard([report]),
        "| tool | part | tasks | score | pass@1 |",
        "|---|---|---|---|---|",
    ]
    by_tool_part: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in report["tasks"]:
        by_tool_part[(row["tool"], row["part"])].append(row)
    for (tool, part), rows in sorted(
        by_tool_part.items(), key=lambda item: (item[0][0], _order(PART_NAMES, item[0][1]))
    ):
        group = figures(rows, k, None)
        lines.append(
            f"| {tool} | {part} | {group['tasks']} | {group['score']:.3f} | {group['pass@1']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def _order(known: tuple[str, ...], value: str) -> int:
    return known.index(value) if value in known else len(known)


def _cell(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def compare(a: dict[str, Any], b: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """``b`` minus ``a`` on the tasks both played: mean score and pass@1, overall and by tool
    and part, each with a 95 % paired bootstrap interval over tasks. Raises ``ValueError`` when
    the two runs measured different sets (hashes) or different entries."""
    for key, what in (("set_hash", "set"), ("entries_hash", "entries (--limit)")):
        if a["run"][key] != b["run"][key]:
            raise ValueError(
                f"the runs measured different {what}: {a['run']['set']} {a['run'][key]} and "
                f"{b['run']['set']} {b['run'][key]}; only runs of one set compare"
            )
    rows_a = {r["entry"]: r for r in a["tasks"]}
    rows_b = {r["entry"]: r for r in b["tasks"]}
    shared = [e for e in rows_a if e in rows_b]
    if not shared:
        raise ValueError("the runs share no finished task")
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {"tasks": len(shared), "rows": []}
    groups = [("overall", "", shared)]
    for group in ("tool", "part"):
        for value in sorted({rows_a[e][group] for e in shared}):
            groups.append((group, value, [e for e in shared if rows_a[e][group] == value]))
    for group, value, entries in groups:
        for metric in ("score", "pass@1"):
            x = np.array([_metric(rows_a[e], metric) for e in entries])
            y = np.array([_metric(rows_b[e], metric) for e in entries])
            diff = y - x
            picks = rng.integers(0, len(diff), (BOOTSTRAP_SAMPLES, len(diff)))
            means = diff[picks].mean(axis=1)
            low, high = np.percentile(means, [2.5, 97.5])
            out["rows"].append(
                {
                    "group": group,
                    "value": value,
                    "metric": metric,
                    "tasks": len(entries),
                    "a": float(x.mean()),
                    "b": float(y.mean()),
                    "difference": float(diff.mean()),
                    "ci95": [float(low), float(high)],
                }
            )
    return out


def _metric(row: dict[str, Any], metric: str) -> float:
    return row["score"] if metric == "score" else pass_at_k(row["n"], row["c"], 1)
