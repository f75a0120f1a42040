"""The taxonomy's class codes, in order, for the taxonomy and prompt tests."""

from __future__ import annotations

CODES = ["A1", "A2", "A3", "A4", "B1", "B2", "C", "D", "E1", "E2", "E3", "E4", "F1", "F2", "G1", "G2", "G3"]
