"""How many ``bpy`` scripts written outside the project run in the Blender sandbox, and why the
others don't.

Run::

    python bench/outside_scripts.py FOLDER          # a table of failures and the rate
    python bench/outside_scripts.py FOLDER --json   # one JSON line per script
    python bench/outside_scripts.py FOLDER --start default  # from Blender's startup scene

Each ``*.py`` file in ``FOLDER`` runs as one code-mode step runs it: in a Blender sandbox session
(from the empty start scene), then its scene is saved and read back by the trusted reader, as
every step's is. Between scripts the session goes back to its first snapshot. A script *runs*
when both succeed. A failure is put in a class by its message, so the ones that are the
sandbox's fault stand apart from those a headless sandbox cannot help (a script that needs a
file, an add-on, the GUI, or an older Blender's API).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re
import time

from toolgym.envs.blender.verification import SceneReader
from toolgym.envs.sandbox import Session

# (class, pattern on the error's last line), first match wins. The first is the sandbox's fault
# (what Blender itself would run); the others are what no headless sandbox could help.
CLASSES = [
    (
        "sandbox's fault",
        r"__file__|OIDN|Permission|not permitted|read-only file system|"
        r"cannot open shared object",
    ),
    ("over the step's time", r"timeout|ran past|time limit"),
    (
        "needs a file",
        r"No such file|FileNotFoundError|Cannot read file|Cannot save blend file|"
        r"filepath",
    ),
    ("needs its other files or a package", r"No module named|ModuleNotFoundError"),
    (
        "needs the scene it was written for",
        r"'NoneType' object has no attribute|"
        r"key \".*\" not found|no camera|"
        r"Context missing active object",
    ),
    ("needs the GUI", r"context is incorrect|poll\(\) failed|space_data|\.area\b|\.screen\b"),
    (
        "older Blender or Python API",
        r"has no attribute|undefined|enum .* not found|SyntaxError|"
        r"cannot import name|Registering|only in Blender|"
        r"unexpected keyword",
    ),
]


def _last_line(message: str) -> str:
    lines = [line for line in message.strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error (")]
    return (errors or lines or [""])[-1][:200]


def classify(message: str) -> str:
    for name, pattern in CLASSES:
        if re.search(pattern, message, re.IGNORECASE):
            return name
    return "other"


# Blender's factory startup scene, which most scripts are written against: a selected, active
# Cube, a Camera and a Light (the sandbox itself starts empty).
DEFAULT_SCENE = """
import bpy
bpy.ops.mesh.primitive_cube_add()
for kind, data in (('Camera', bpy.data.cameras), ('Light', bpy.data.lights)):
    made = data.new(kind) if kind == 'Camera' else data.new(kind, 'POINT')
    bpy.context.scene.collection.objects.link(bpy.data.objects.new(kind, made))
bpy.context.scene.camera = bpy.data.objects['Camera']
"""


def run_scripts(folder: pathlib.Path, start: str = "") -> list[dict]:
    rows = []
    reader = SceneReader()
    session = Session("blender")
    try:
        for path in sorted(folder.glob("*.py")):
            started = time.perf_counter()
            ran = session.run(start, filename="<start>")
            if ran.ok:
                ran = session.run(path.read_text(errors="replace"), filename=path.name)
            if ran.ok:
                scene, why = reader.save_and_read(session)
                ok, message = scene is not None, why
            else:
                ok, message = False, ran.feedback()
            rows.append(
                {
                    "script": path.name,
                    "runs": ok,
                    "class": None if ok else classify(message),
                    "message": "" if ok else _last_line(message),
                    "seconds": round(time.perf_counter() - started, 2),
                }
            )
            session.rollback(0)
    finally:
        session.close()
        reader.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=pathlib.Path, help="a folder of bpy scripts (*.py)")
    parser.add_argument(
        "--start",
        choices=("empty", "default"),
        default="empty",
        help="the scene each script starts from: the sandbox's empty one, or "
        "Blender's factory startup scene (Cube, Camera, Light)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = run_scripts(args.folder, DEFAULT_SCENE if args.start == "default" else "")
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        print("| script | class | last line of the error |\n|---|---|---|")
        for row in rows:
            if not row["runs"]:
                print(f"| {row['script']} | {row['class']} | {row['message']} |")
    counts: dict[str, int] = {}
    for row in rows:
        if not row["runs"]:
            counts[row["class"]] = counts.get(row["class"], 0) + 1
    ran = sum(r["runs"] for r in rows)
    classes = sorted(counts.items(), key=lambda kv: -kv[1])
    print(
        f"{ran}/{len(rows)} scripts ran ({ran / max(len(rows), 1):.0%}); failures by class: "
        + ", ".join(f"{k} {v}" for k, v in classes)
    )


if __name__ == "__main__":
    main()
