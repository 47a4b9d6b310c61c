"""The reference rows of bench/LEADERBOARD.md: every baseline on one evaluation set, one run.

    .venv/bin/python bench/leaderboard.py [--set all-lite-v1] [--out runs/leaderboard]
        [--checkpoint runs/primitives-bc] [--agents oracle random copy keyword checkpoint scripted]

Each row is `toolgym bench run SET --agent ...` into OUT/<agent> (resumable: a row already
finished is read back, not played again), then the rows as one Markdown table with the command
that made each. ``scripted`` is a language model stood in for by a script (the keyword rule,
answering through ``toolgym.agents.llm.endpoint.ScriptedEndpoint`` on 127.0.0.1): the path a
real model takes (chat turns, tool calls, pictures, tokens), with nothing to download.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolgym.agents.baselines import KeywordAgent
from toolgym.agents.benchmark.report import leaderboard, scores_by
from toolgym.agents.benchmark.sets import PART_NAMES, TOOLS
from toolgym.agents.llm.endpoint import Reply, ScriptedEndpoint, completion, tool_call
from toolgym.envs.domains import domains
from toolgym.envs.episode.look import LOOK_CALL

TOOLGYM = str(Path(sys.executable).with_name("toolgym"))


class KeywordModel:
    """A scripted chat model: its first reply is the keyword rule's call on the request's
    words, its second says it is done. Usage: characters / 4, both ways."""

    def __init__(self) -> None:
        self.registries = [d.registry() for d in domains()]

    def __call__(self, body: dict[str, Any]) -> Reply:
        user = next(m for m in body["messages"] if m["role"] == "user")
        content = user["content"]
        prompt = content if isinstance(content, str) else content[0]["text"]
        answered = any(m["role"] == "assistant" for m in body["messages"])
        names = {t["function"]["name"] for t in body.get("tools", [])}
        offered = names - {"stop", LOOK_CALL}  # what every env offers beside its own tools
        registry = next((r for r in self.registries if offered <= set(r.tools)), None)
        if answered or registry is None:
            message: dict[str, Any] = {"content": "Done."}
        else:
            call = json.loads(KeywordAgent(registry).act({"prompt": prompt, "step": 0}))
            message = tool_call(call["name"], call["arguments"])
        data = completion(message, str(body.get("model", "scripted")))
        sent = len(json.dumps(body["messages"])) // 4
        data["usage"]["prompt_tokens"] = sent
        data["usage"]["total_tokens"] += sent
        return Reply(200, data)


def row_command(agent: str, args: argparse.Namespace, url: str | None) -> list[str]:
    command = [TOOLGYM, "bench", "run", args.set, "--out", str(args.out / agent)]
    command += ["--jobs", str(args.jobs)]
    if agent == "checkpoint":
        command += ["--agent", "checkpoint", "--checkpoint", str(args.checkpoint)]
    elif agent == "scripted":
        command += ["--agent", "openai", "--base-url", str(url), "--model", "keyword-script"]
        command += ["--action-mode", "tool", "--price-in", "0.15", "--price-out", "0.60"]
    else:
        command += ["--agent", agent]
    return command


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="all-lite-v1")
    parser.add_argument("--out", type=Path, default=Path("runs/leaderboard"))
    parser.add_argument("--checkpoint", type=Path, default=Path("runs/primitives-bc"))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["oracle", "random", "copy", "keyword", "checkpoint", "scripted"],
    )
    args = parser.parse_args()
    rows = []
    with ScriptedEndpoint(KeywordModel()) as endpoint:
        for agent in args.agents:
            command = row_command(agent, args, endpoint.url)
            print("$", shlex.join(command), flush=True)
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            report = json.loads((args.out / agent / "report.json").read_text())
            rows.append((agent, report, command))
    reports = [report for _, report, _ in rows]
    print()
    print(leaderboard(reports))
    print(scores_by(reports, "tool", TOOLS))
    print(scores_by(reports, "part", PART_NAMES))
    for agent, _, command in rows:
        print(f"- {agent}: `{shlex.join(command)}`")


if __name__ == "__main__":
    main()
