"""Each procedural CAD family's envelope: the box that holds every part it draws, for the fixed
view frame of ``toolgym.envs.cadquery.framing.ENVELOPES``.

Run::

    python bench/family_envelopes.py            # the families that have no envelope yet
    python bench/family_envelopes.py --all      # every family

Builds the reference of 2 × 12 seeds (train and test) of each family in one sandbox session and
prints the ``ENVELOPES`` entries (corners in mm, to 0.25 mm, outwards) to paste into framing.py.
"""

from __future__ import annotations

import argparse
import math

from toolgym.envs.cadquery.families import FAMILIES
from toolgym.envs.cadquery.framing import ENVELOPES
from toolgym.envs.sandbox import Limits, Session


def envelope(name: str, session: Session, seeds: int = 12) -> tuple[tuple[float, ...], ...]:
    low, high = [math.inf] * 3, [-math.inf] * 3
    for split in ("train", "test"):
        for seed in range(seeds):
            session.clear()
            task = FAMILIES[name].task(seed, split)
            ran = session.run(task.reference, filename=f"<{task.id}>")
            described = session.request("describe") if ran.ok else ran
            if not described.ok or not described.value:
                raise RuntimeError(f"{task.id}: {described.feedback()}")
            box = described.value["bbox_mm"]
            low = [min(a, b) for a, b in zip(low, box[:3], strict=True)]
            high = [max(a, b) for a, b in zip(high, box[3:], strict=True)]
    return (
        tuple(math.floor(v * 4) / 4 for v in low),
        tuple(math.ceil(v * 4) / 4 for v in high),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--all", action="store_true", help="every family, not only new ones")
    args = parser.parse_args()
    names = [n for n in FAMILIES if args.all or n not in ENVELOPES]
    with Session("cadquery", Limits(wall_s=120)) as session:
        for name in names:
            low, high = envelope(name, session)
            print(f'    "{name}": ({low}, {high}),', flush=True)


if __name__ == "__main__":
    main()
