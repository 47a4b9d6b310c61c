"""Standard sizes that several families share, each table written once.

Lengths in mm.
"""

from __future__ import annotations

#: ISO 273 clearance holes, medium series: the drilled diameter for each metric screw size.
ISO_273_MEDIUM: dict[str, float] = {
    "M2.5": 2.9,
    "M3": 3.4,
    "M4": 4.5,
    "M5": 5.5,
    "M6": 6.6,
    "M8": 9.0,
    "M10": 11.0,
    "M12": 13.5,
    "M16": 17.5,
    "M20": 22.0,
}


def clearance_holes(*screws: str) -> dict[str, float]:
    """The ISO 273 medium clearance hole of each screw size named, in the order named."""
    return {screw: ISO_273_MEDIUM[screw] for screw in screws}
