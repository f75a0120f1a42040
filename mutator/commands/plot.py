"""`mutate plot`: a campaign's curves as a PNG."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mutator.commands.common import EXIT_USAGE


@click.command()
@click.argument("campaign_dirs", nargs=-1, required=True,
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The PNG to write. Default: CAMPAIGN_DIR/plot.png (for several, plot.png beside the first).")
def plot(campaign_dirs: tuple[Path, ...], out: Path | None) -> None:
    """Arcs, corpus size, findings and execs/s over time, as a PNG (like afl-plot); several
    campaign directories (a synced campaign's instances) give a line each."""
    from mutator.campaign.plot import PlotError, plot as draw

    default = campaign_dirs[0] / "plot.png" if len(campaign_dirs) == 1 else campaign_dirs[0].parent / "plot.png"
    try:
        path = draw(list(campaign_dirs), out or default)
    except PlotError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(f"wrote {path}")
