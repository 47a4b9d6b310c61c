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

# (class, pattern on the error message and traceback), first match wins.
CLASSES = [
    ("needs a file", r"No such file|FileNotFoundError|filepath|cannot open|Cannot read file|"
                     r"IsADirectoryError|not found in .*\.blend|\.(png|jpg|exr|hdr|obj|fbx|csv)"),
    ("needs the GUI", r"context is incorrect|poll\(\) failed|space_data|\.area\b|\.screen\b|"
                      r"region|window_manager\.windows|'NoneType' object has no attribute '(type|"
                      r"data|name|select_set|modifiers|location|mode)'|ops\.view3d|ops\.screen|"
                      r"edit_object|selected_objects|active_object"),
    ("needs an add-on", r"could not be found|unknown operator|No module named|addon|"
                        r"bpy\.ops\.\w+\.\w+.*not found"),
    ("older Blender API", r"has no attribute|key \".*\" not found|bpy_prop_collection\[key\]|"
                          r"expected .* got|enum .* not found|unexpected keyword|invalid keyword|"
                          r"SyntaxError|takes \d+ positional|is read-only|not a valid"),
    ("sandbox refused", r"sandbox|not allowed|refused|PermissionError|Operation not permitted|"
                        r"read-only file system"),
    ("limit", r"timed out|time limit|memory|killed|SIG"),
]


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
            rows.append({
                "script": path.name, "runs": ok,
                "class": None if ok else classify(message),
                "message": "" if ok else message.strip().splitlines()[-1][:200],
                "seconds": round(time.perf_counter() - started, 2),
            })  # fmt: skip
            session.rollback(0)
    finally:
        session.close()
        reader.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=pathlib.Path, help="a folder of bpy scripts (*.py)")
    parser.add_argument("--start", choices=("empty", "default"), default="empty",
                        help="the scene each script starts from: the sandbox's empty one, or "
                        "Blender's factory startup scene (Cube, Camera, Light)")  # fmt: skip
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
    print(f"{ran}/{len(rows)} scripts ran ({ran / max(len(rows), 1):.0%}); failures by class: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])))  # fmt: skip


if __name__ == "__main__":
    main()
