"""Import a script of `bench/` in a test without leaving `bench/` on `sys.path`: a folder of
scripts named like libraries first on the path would shadow them for every later test."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench_script(name: str) -> ModuleType:
    """The bench script `bench/<name>.py` as a module (the scripts it imports come with it)."""
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))
