"""Recorded episodes as self-contained HTML: images embedded, no network, ← → to step through.

An episode page shows a timeline with reward and score sparklines, and per step: the code or tool
call (highlighted, with a diff against the previous step's), the feedback, the current and target
views side by side, the verifier's metrics and checks, and the sandbox's result. A run of several
episodes gets an index page: a sortable table of task, score, steps and outcome, with links.
"""

from __future__ import annotations

import base64
import difflib
import html
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import JsonLexer, PythonLexer

from toolgym.envs.recording.log import RecordedEpisode

# The page may load nothing: images are data: URIs, style and script inline.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 1.5em 2em; color: #222;
  overflow-anchor: none; }
h1 { font-size: 1.3em; margin: .8em 0 .2em; } h2 { font-size: 1.05em; margin: 1em 0 .3em; }
.muted { color: #777; } .problems { background: #fff3cd; padding: .5em 1em; }
.nav { position: sticky; top: 0; background: #fff; padding: .5em 0; border-bottom: 1px solid #ddd; }
.timeline button { min-width: 2.2em; margin: 1px; border: 1px solid #bbb; background: #f4f4f4;
  cursor: pointer; } .timeline button.error { background: #f8d0d0; }
.timeline button.passed { background: #cfeccf; }
.timeline button.current { outline: 2px solid #06c; }
.sparks { display: flex; gap: 2em; margin-top: .3em; } .sparks svg { background: #fafafa; }
.views { display: flex; gap: 1em; flex-wrap: wrap; }
.views figure { margin: 0; } .views img { width: 256px; image-rendering: pixelated;
  border: 1px solid #ccc; } figcaption { text-align: center; color: #555; }
pre { background: #f7f7f7; padding: .5em; overflow-x: auto; max-height: 30em; margin: .2em 0; }
.diff .add { background: #e6ffe6; display: block; }
.diff .del { background: #ffe6e6; display: block; }
.diff .hunk { color: #06c; display: block; }
table { border-collapse: collapse; } td, th { border: 1px solid #ddd; padding: 2px 8px; }
th[data-sort] { cursor: pointer; background: #f0f0f0; } .ok { color: #080; } .bad { color: #b00; }
.cols { display: flex; gap: 2em; flex-wrap: wrap; align-items: flex-start; }
"""
SCRIPT = """
const steps = document.querySelectorAll('section.step');
const buttons = document.querySelectorAll('.timeline button');
let current = 0;
function show(k) {
  if (!steps.length) return;
  current = Math.max(0, Math.min(steps.length - 1, k));
  steps.forEach((s, i) => { s.hidden = i !== current; });
  buttons.forEach((b, i) => b.classList.toggle('current', i === current));
  document.getElementById('step-current').textContent = String(current + 1);
  document.querySelectorAll('svg.spark').forEach(svg => {
    const xs = JSON.parse(svg.dataset.xs), ys = JSON.parse(svg.dataset.ys);
    const m = svg.querySelector('.marker');
    m.setAttribute('cx', xs[current]); m.setAttribute('cy', ys[current]);
  });
  history.replaceState(null, '', '#step-' + (current + 1));
}
document.addEventListener('keydown', e => {
  if (e.key === 'ArrowRight') { show(current + 1); e.preventDefault(); }
  if (e.key === 'ArrowLeft') { show(current - 1); e.preventDefault(); }
});
buttons.forEach((b, i) => b.addEventListener('click', () => show(i)));
document.getElementById('prev').addEventListener('click', () => show(current - 1));
document.getElementById('next').addEventListener('click', () => show(current + 1));
const m = /^#step-(\\d+)$/.exec(location.hash);
show(m ? Number(m[1]) - 1 : 0);
"""
SORT_SCRIPT = """
document.querySelectorAll('th[data-sort]').forEach((th, column) => {
  th.addEventListener('click', () => {
    const body = th.closest('table').tBodies[0];
    const up = th.dataset.dir !== 'up'; th.dataset.dir = up ? 'up' : 'down';
    const key = r => { const c = r.cells[column]; const v = c.dataset.value ?? c.textContent;
      const n = Number(v); return v !== '' && !isNaN(n) ? n : v; };
    const rows = Array.from(body.rows).sort((a, b) => {
      const x = key(a), y = key(b); const c = x < y ? -1 : x > y ? 1 : 0; return up ? c : -c; });
    rows.forEach(r => body.appendChild(r));
  });
});
"""


def write_report(episodes: list[RecordedEpisode], out: Path) -> list[Path]:
    """Write ``out``: the episode's page, or for several episodes an index page beside a folder
    ``<out stem>-episodes/`` of episode pages. Returns the files written, ``out`` first."""
    if len(episodes) == 1:
        out.write_text(episode_page(episodes[0]), encoding="utf-8")
        return [out]
    folder = out.with_name(f"{out.stem}-episodes")
    folder.mkdir(parents=True, exist_ok=True)
    links, written = [], [out]
    for episode in episodes:
        page = folder / f"{episode.name}.html"
        page.write_text(episode_page(episode, index=f"../{out.name}"), encoding="utf-8")
        links.append(f"{folder.name}/{page.name}")
        written.append(page)
    out.write_text(index_page(episodes, links), encoding="utf-8")
    return written


def episode_page(episode: RecordedEpisode, index: str | None = None) -> str:
    """One episode as a self-contained HTML page."""
    e = html.escape
    steps = episode.steps
    meta = episode.meta
    score = episode.score
    head = [
        f"<h1>{e(episode.task)} <span class='muted'>· {e(episode.outcome)} · score "
        f"{_fmt(score)} · {len(steps)} steps</span></h1>",
        f"<p>{e(episode.prompt)}</p>",
        f"<p class='muted'>{e(_meta_line(meta))}</p>",
    ]
    if index:
        head.insert(0, f"<p><a href='{e(index)}'>← all episodes</a></p>")
    if episode.problems:
        items = "".join(f"<li>{e(p)}</li>" for p in episode.problems)
        head.append(
            f"<div class='problems'><b>Problems reading this recording</b><ul>{items}</ul></div>"
        )
    timeline = "".join(
        f"<button class='{_step_class(line)}' title='reward {_fmt(line.get('reward'))}'>"
        f"{k + 1}</button>"
        for k, line in enumerate(steps)
    )
    nav = (
        "<div class='nav'><button id='prev'>←</button> step <b id='step-current'>1</b> of "
        f"<b id='step-total'>{len(steps)}</b> <button id='next'>→</button>"
        f"<div class='timeline'>{timeline}</div><div class='sparks'>"
        f"{_sparkline('reward', episode.rewards())}{_sparkline('score', episode.scores())}"
        "</div></div>"
    )
    images = _ImageCache(episode)
    sections = []
    previous = ""
    for k, line in enumerate(steps):
        action = _action_text(line.get("action"))
        sections.append(_step_section(k, line, action, previous, images))
        previous = action
    if not steps:
        sections.append("<p>No step was recorded.</p>")
    body = "\n".join([*head, nav, *sections])
    return _page(f"{episode.task}: replay", body, SCRIPT)


def index_page(episodes: list[RecordedEpisode], links: list[str]) -> str:
    """A sortable table of the episodes, each row linking to its page."""
    e = html.escape
    columns = ("#", "episode", "task", "score", "steps", "outcome", "problems")
    header = "".join(f"<th data-sort>{c}</th>" for c in columns)
    rows = []
    for k, (episode, link) in enumerate(zip(episodes, links, strict=True)):
        score = episode.score
        rows.append(
            "<tr>"
            f"<td>{k}</td><td><a href='{e(link)}'>{e(episode.name)}</a></td>"
            f"<td>{e(episode.task)}</td>"
            f"<td data-value='{'' if score is None else score}'>{_fmt(score)}</td>"
            f"<td>{len(episode.steps)}</td><td>{e(episode.outcome)}</td>"
            f"<td>{len(episode.problems)}</td></tr>"
        )
    scores = [ep.score or 0.0 for ep in episodes]
    passed = sum(ep.outcome == "passed" for ep in episodes)
    body = (
        f"<h1>{len(episodes)} episodes <span class='muted'>· mean score "
        f"{_fmt(sum(scores) / len(scores))} · {passed} passed</span></h1>"
        f"<p class='muted'>{e(_meta_line(episodes[0].meta))}</p>"
        f"<table id='episodes'><thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody>"
        "</table><p class='muted'>Click a column to sort.</p>"
    )
    return _page("toolgym run: replay index", body, SORT_SCRIPT)


# -- parts -----------------------------------------------------------------------------------------
def _step_section(
    k: int, line: dict[str, Any], action: str, previous: str, images: _ImageCache
) -> str:
    e = html.escape
    mode_json = isinstance(line.get("action"), dict) or action.lstrip().startswith("{")
    lexer = JsonLexer() if mode_json else PythonLexer()
    code = highlight(action, lexer, HtmlFormatter(nowrap=True)) if action else "(no action)"
    flags = [f"reward {_fmt(line.get('reward'))}"]
    flags += [name for name in ("terminated", "truncated") if line.get(name)]
    if isinstance(line.get("duration_s"), int | float):
        flags.append(f"{line['duration_s']:.2f} s")
    error = line.get("error")
    parts = [
        f"<section class='step' data-step='{k + 1}' hidden>",
        f"<h2>Step {k + 1} <span class='muted'>· {e(' · '.join(flags))}</span></h2>",
    ]
    if error:
        parts.append(f"<p class='bad'>error: {e(str(error))}</p>")
    if isinstance(line.get("agent"), dict):
        parts.append(_agent_section(line["agent"]))
    views = line.get("images") if isinstance(line.get("images"), dict) else {}
    figures = []
    start = images.uri(images.start_view()) if k == 0 else None
    if start:  # where the episode began, beside the first step's result
        figures.append(
            f"<figure><img alt='start' src='{start}'><figcaption>start (before step 1)"
            "</figcaption></figure>"
        )
    for key, caption in (("image", "agent"), ("target", "target")):
        uri = images.uri(views.get(key))
        if uri:
            figures.append(
                f"<figure><img alt='{caption}' src='{uri}'>"
                f"<figcaption>{caption}</figcaption></figure>"
            )
        elif key in views or key == "image":
            figures.append(
                f"<figure><figcaption>{caption}: no image recorded</figcaption></figure>"
            )
    parts.append(f"<div class='views'>{''.join(figures)}</div>")
    parts.append(f"<h2>Action</h2><pre class='code highlight'>{code}</pre>")
    if k > 0:
        parts.append(f"<h2>Change from step {k}</h2>{_diff(previous, action)}")
    parts.append(f"<h2>Feedback</h2><pre>{e(str(line.get('feedback') or ''))}</pre>")
    parts.append("<div class='cols'>")
    for title, report in (
        ("Verifier (step)", line.get("report")),
        ("Verifier (final)", line.get("final_report")),
    ):
        if isinstance(report, dict):
            parts.append(f"<div><h2>{title}</h2>{_report_table(report)}</div>")
    parts.append(f"<div><h2>Sandbox</h2>{_sandbox_table(line)}</div></div>")
    if line.get("artifact") or line.get("artifact_error"):
        what = line.get("artifact") or f"none ({line.get('artifact_error')})"
        parts.append(f"<p class='muted'>artifact: {e(str(what))}</p>")
    parts.append("</section>")
    return "\n".join(parts)


def _agent_section(agent: dict[str, Any], chars: int = 4000) -> str:
    """A language model's turns that led to the step (``agents/llm/openai_runner.py``): tokens,
    latency, attempts, and what it wrote besides its calls."""
    e = html.escape
    parts = ["<h2>Model</h2>"]
    if agent.get("stop"):
        error = f": {agent['error']}" if agent.get("error") else ""
        parts.append(f"<p class='muted'>ended: {e(str(agent['stop']) + str(error))}</p>")
    for turn in agent.get("turns") or []:
        if not isinstance(turn, dict):
            continue
        facts = [
            f"turn {turn.get('turn')}",
            f"{turn.get('prompt_tokens')} tokens in, {turn.get('completion_tokens')} out",
            f"{_fmt(turn.get('latency_s'))} s",
            f"{turn.get('attempts')} attempt(s)",
            str(turn.get("finish_reason")),
        ]
        parts.append(f"<p class='muted'>{e(' · '.join(facts))}</p>")
        replies = [m for m in turn.get("messages") or [] if isinstance(m, dict)]
        text = next(
            (m.get("content") for m in reversed(replies) if m.get("role") == "assistant"), None
        )
        if isinstance(text, str) and text.strip():
            parts.append(f"<pre>{e(text[:chars])}{'…' if len(text) > chars else ''}</pre>")
    return "\n".join(parts)


def _diff(before: str, after: str) -> str:
    if before == after:
        return "<p class='muted'>(same as the previous step)</p>"
    out = []
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=2)
    for text in list(lines)[2:]:  # no file headers
        cls = {"+": "add", "-": "del", "@": "hunk"}.get(text[:1], "")
        out.append(
            f"<span class='{cls}'>{html.escape(text) or ' '}</span>"
            if cls
            else html.escape(text) + "\n"
        )
    return f"<pre class='diff'>{''.join(out)}</pre>"


def _report_table(report: dict[str, Any]) -> str:
    e = html.escape
    rows = [
        f"<tr><th>score</th><td>{_fmt(report.get('score'))}</td></tr>",
        f"<tr><th>passed</th><td>{e(str(report.get('passed')))}</td></tr>",
    ]
    metrics = report.get("metrics") if isinstance(report.get("metrics"), dict) else {}
    rows += [f"<tr><td>{e(str(k))}</td><td>{_fmt(v)}</td></tr>" for k, v in metrics.items()]
    checks = report.get("checks") if isinstance(report.get("checks"), dict) else {}
    for name, check in checks.items():
        if not isinstance(check, dict):
            continue
        ok = check.get("ok")
        mark = (
            "<span class='ok'>✓</span>"
            if ok
            else "<span class='bad'>✗</span>"
            if ok is False
            else "–"
        )
        message = "" if ok else e(str(check.get("message", "")))
        rows.append(f"<tr><td>{mark} {e(str(name))}</td><td>{message}</td></tr>")
    for error in report.get("errors") or []:
        rows.append(f"<tr><td class='bad'>error</td><td>{e(str(error))}</td></tr>")
    return f"<table>{''.join(rows)}</table>"


def _sandbox_table(line: dict[str, Any]) -> str:
    e = html.escape
    sandbox = line.get("sandbox")
    if not isinstance(sandbox, dict) or not sandbox.get("ran", True):
        return "<p class='muted'>the action did not reach the sandbox</p>"
    rows = [f"<tr><th>ok</th><td>{e(str(sandbox.get('ok')))}</td></tr>"]
    if sandbox.get("error_kind"):
        rows.append(
            f"<tr><th>error</th><td>{e(str(sandbox['error_kind']))}: "
            f"{e(str(sandbox.get('error_message', '')))}</td></tr>"
        )
    for key, title in (("limit", "limit hit"), ("recovery", "recovery")):
        if sandbox.get(key):
            rows.append(f"<tr><th>{title}</th><td>{e(str(sandbox[key]))}</td></tr>")
    for key in ("duration_s", "wall_s"):
        if isinstance(sandbox.get(key), int | float):
            rows.append(f"<tr><th>{key}</th><td>{sandbox[key]:.3f}</td></tr>")
    for key, value in (line.get("timings") or {}).items():
        rows.append(f"<tr><th>{e(str(key))} s</th><td>{_fmt(value)}</td></tr>")
    if line.get("isolation"):
        rows.append(
            f"<tr><th>isolation</th><td>{e(', '.join(map(str, line['isolation'])))}</td></tr>"
        )
    table = f"<table>{''.join(rows)}</table>"
    for key in ("stdout", "stderr", "traceback"):
        if sandbox.get(key):
            dropped = sandbox.get(f"{key}_dropped")
            note = f" <span class='muted'>({dropped} bytes dropped)</span>" if dropped else ""
            table += f"<h2>{key}{note}</h2><pre>{e(str(sandbox[key]))}</pre>"
    return table


def _sparkline(title: str, values: list[float | None], width: int = 240, height: int = 36) -> str:
    known = [v for v in values if v is not None]
    low, high = (min(*known, 0.0), max(*known, 1.0)) if known else (0.0, 1.0)
    span = (high - low) or 1.0
    count = max(len(values), 1)
    xs = [round(4 + (width - 8) * (k / max(count - 1, 1)), 1) for k in range(count)]
    ys = [
        round(height - 4 - (height - 8) * (((v if v is not None else low) - low) / span), 1)
        for v in values
    ] or [height / 2]
    points = " ".join(f"{x},{y}" for x, y in zip(xs, ys, strict=False))
    label = f"{title} (last {_fmt(known[-1]) if known else '–'})"
    return (
        f"<div><div class='muted'>{html.escape(label)}</div>"
        f"<svg class='spark' width='{width}' height='{height}' data-xs='{json.dumps(xs)}' "
        f"data-ys='{json.dumps(ys)}'><polyline fill='none' stroke='#06c' stroke-width='1.5' "
        f"points='{points}'/><circle class='marker' r='3.5' fill='#d33' cx='{xs[0]}' cy='{ys[0]}'/>"
        "</svg></div>"
    )


class _ImageCache:
    """Data URIs of the episode's PNGs, each file read once."""

    def __init__(self, episode: RecordedEpisode) -> None:
        self.episode, self.uris = episode, {}

    def start_view(self) -> str | None:
        """The reset's agent views (the file's name), when recorded."""
        reset = self.episode.reset or {}
        views = reset.get("images") if isinstance(reset.get("images"), dict) else {}
        found = views.get("image")
        return found if isinstance(found, str) else None

    def uri(self, relative: Any) -> str | None:
        if not isinstance(relative, str):
            return None
        if relative not in self.uris:
            path = self.episode.file(relative)
            try:
                data = path.read_bytes() if path else None
            except OSError:
                data = None
            ok = data is not None and data.startswith(b"\x89PNG")
            self.uris[relative] = (
                "data:image/png;base64," + base64.b64encode(_labelled(data)).decode()
                if ok and data is not None
                else None
            )
        return self.uris[relative]


def _labelled(png: bytes) -> bytes:
    """The views of a recorded PNG with their names on them (as ``toolgym run --out`` draws
    them); the PNG as it is if it cannot be read."""
    from PIL import Image

    from toolgym.renderers.labels import readable

    try:
        with Image.open(io.BytesIO(png)) as image:
            views = np.asarray(image.convert("RGB"))
    except OSError:
        return png
    out = io.BytesIO()
    Image.fromarray(readable(views)).save(out, format="PNG")
    return out.getvalue()


def _action_text(action: Any) -> str:
    if action is None:
        return ""
    if isinstance(action, str):
        return action
    return json.dumps(action, indent=2, ensure_ascii=False)


def _step_class(line: dict[str, Any]) -> str:
    if line.get("error"):
        return "error"
    report = line.get("final_report") or line.get("report") or {}
    return "passed" if isinstance(report, dict) and report.get("passed") else ""


def _meta_line(meta: dict[str, Any]) -> str:
    tool = meta.get("tool") if isinstance(meta.get("tool"), dict) else {}
    parts = [
        str(meta.get("env_id") or meta.get("entry_point") or "unknown env"),
        f"seed {meta.get('seed')}",
        f"toolgym {meta.get('toolgym')}",
        f"{tool.get('name')} {tool.get('version')}",
        f"Python {meta.get('python')}",
    ]
    if meta.get("git_commit"):
        parts.append(f"commit {str(meta['git_commit'])[:10]}")
    return " · ".join(parts)


def _fmt(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "–" if value is None else str(value)
    return f"{value:.4g}"


def _page(title: str, body: str, script: str) -> str:
    css = HtmlFormatter().get_style_defs(".highlight")
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        f"<title>{html.escape(title)}</title><style>{STYLE}{css}</style></head>"
        f"<body>{body}<script>{script}</script></body></html>"
    )
