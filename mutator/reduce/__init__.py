"""Reduction of findings: passes, the problem, the reducer, standalone reproducers."""
