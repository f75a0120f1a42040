"""`mutate plot`: a campaign's curves as a PNG."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mutator.commands.common import EXIT_USAGE


@click.command()
@click.argument("campaign_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The PNG to write. Default: CAMPAIGN_DIR/plot.png.")
def plot(campaign_dir: Path, out: Path | None) -> None:
    """Arcs, corpus size, findings and execs/s over time, as a PNG (like afl-plot)."""
    from mutator.plot import PlotError, plot as draw

    try:
        path = draw(campaign_dir, out or campaign_dir / "plot.png")
    except PlotError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(f"wrote {path}")
