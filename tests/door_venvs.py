"""Virtual environments of their own for the doors whose libraries' pins clash with toolgym's
(NeMo Gym pins openai 2.44; toolgym's venv has openai 3). Built once per requirement set under
``~/.cache/toolgym/door-venvs`` (``TOOLGYM_DOOR_VENVS`` to move it), reused after; the slow
tests that need one build it, from the package index setup uses."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path


def door_venv(name: str, requirements: list[str], pip_args: tuple[str, ...] = ()) -> Path:
    """The ``bin`` folder of a venv with ``requirements`` (and pytest), Python as this one's."""
    key = hashlib.sha256(repr((requirements, pip_args, sys.version)).encode()).hexdigest()[:12]
    default = Path.home() / ".cache" / "toolgym" / "door-venvs"
    root = Path(os.environ.get("TOOLGYM_DOOR_VENVS", default)) / f"{name}-{key}"
    stamp = root / ".installed"
    if not stamp.exists():
        base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
        subprocess.run([str(base), "-m", "venv", "--clear", str(root)], check=True)
        pip = [str(root / "bin" / "python"), "-m", "pip", "install", "-q", *pip_args]
        done = subprocess.run([*pip, *requirements], capture_output=True, text=True)
        assert done.returncode == 0, f"{name}: pip install failed:\n{done.stderr[-3000:]}"
        stamp.write_text("\n".join(requirements))
    return root / "bin"
