"""`mutate plot`: a campaign's curves over time, like afl-plot, from its plot_data.csv.

Four panels sharing the time axis: arcs of torch/_dynamo covered, corpus size (and its
favoured part), findings (distinct signatures, and hits), execs per second. Torch-free;
matplotlib draws off-screen (Agg).
"""

from __future__ import annotations

import csv
from pathlib import Path

COLUMNS = ("elapsed", "execs", "execs_per_sec", "corpus", "favoured", "arcs", "findings", "hits")


class PlotError(ValueError):
    """The campaign has nothing to plot; the message says what to do."""


def read_series(path: Path) -> dict[str, list[float]]:
    """The columns of plot_data.csv as floats; rows a kill cut short are skipped."""
    if not path.is_file():
        raise PlotError(f"{path}: not found; give a campaign directory that `mutate fuzz` has run in")
    series: dict[str, list[float]] = {name: [] for name in COLUMNS}
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            try:
                values = {name: float(row[name]) for name in COLUMNS}
            except (KeyError, TypeError, ValueError):
                continue
            for name, value in values.items():
                series[name].append(value)
    if len(series["elapsed"]) < 2:
        raise PlotError(f"{path}: fewer than two samples; let the campaign run longer")
    return series


def plot(campaigns: Path | list[Path], out: Path) -> Path:
    """The panels of one campaign, or of several (the instances of a synced campaign: a line
    each, named by its directory)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    campaigns = [campaigns] if isinstance(campaigns, Path) else list(campaigns)
    runs = [(campaign, read_series(campaign / "plot_data.csv")) for campaign in campaigns]
    figure, axes = plt.subplots(4, 1, figsize=(10, 11), sharex=True)
    panels = (
        ("arcs covered", [("arcs", "arcs")]),
        ("corpus", [("corpus", "programs"), ("favoured", "favoured")]),
        ("findings", [("findings", "signatures"), ("hits", "hits")]),
        ("execs / s", [("execs_per_sec", "execs/s")]),
    )
    for axis, (title, lines) in zip(axes, panels):
        for campaign, series in runs:
            minutes = [t / 60 for t in series["elapsed"]]
            for column, label in lines:
                name = f"{campaign.name}: {label}" if len(runs) > 1 else label
                axis.plot(minutes, series[column], label=name, linewidth=1.2)
        axis.set_ylabel(title)
        axis.grid(alpha=0.3)
        if len(lines) > 1 or len(runs) > 1:
            axis.legend(loc="upper left")
    axes[-1].set_xlabel("campaign time (minutes)")
    execs = sum(int(series["execs"][-1]) for _, series in runs)
    where = ", ".join(str(campaign) for campaign, _ in runs)
    figure.suptitle(f"mutate fuzz: {where} ({execs} execs)")
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=100)
    plt.close(figure)
    return out
