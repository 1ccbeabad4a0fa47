"""The look shared by every figure: one colour per method, the colours of the truth and the data,
the figure sizes and font sizes.

A method keeps its colour in every figure of a run and across runs: the methods of the
comparison have fixed colours (from the Okabe-Ito palette, readable with colour-blindness, then
Tableau's), and any other name gets one of the spare colours chosen from its letters, never
from its position in a list. Nothing global is changed: the plotting functions pass these values
to matplotlib themselves.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import Any

#: the truth (solid lines) and the data (dots)
TRUTH = "black"
DATA = "0.6"
#: a learned model drawn alone (the experiments' figures) and its bands
LEARNED = "#D55E00"
#: the boundary between the training window and the extrapolation window, and its shading
BOUNDARY = "0.3"
TRAINING_SHADE = "0.92"

#: font sizes [pt] of tick labels, axis labels, legends and titles
TICK_SIZE = 8
LABEL_SIZE = 9
LEGEND_SIZE = 8
TITLE_SIZE = 10

#: width of a one-column-wide figure [in], and of each stacked panel's height
WIDTH = 7.0
PANEL_HEIGHT = 1.9

METHOD_COLORS: dict[str, str] = {
    "collocation": "#D55E00",  # vermillion
    "node": "#0072B2",  # blue
    "node_adjoint": "#56B4E9",  # sky blue
    "fnode": "#009E73",  # bluish green
    "mbdnode": "#CC79A7",  # reddish purple
    "lstm": "#E69F00",  # orange
    "fcnn": "#8C564B",  # brown
    "mnn": "#9467BD",  # purple
    "snde": "#17BECF",  # cyan
    "hnn": "#BCBD22",  # olive
    "lnn": "#7F7F7F",  # grey
}

#: colours for names without their own (none of them is in METHOD_COLORS)
SPARE_COLORS = ("#1F77B4", "#2CA02C", "#D62728", "#FF7F0E", "#E377C2", "#AEC7E8", "#98DF8A")


def method_color(name: str) -> str:
    """The colour of method ``name``: its own, or a spare one chosen from its letters."""
    own = METHOD_COLORS.get(name)
    if own is not None:
        return own
    return SPARE_COLORS[zlib.crc32(name.encode()) % len(SPARE_COLORS)]


def method_colors(names: Iterable[str]) -> dict[str, str]:
    """``{name: method_color(name)}`` for each of ``names``."""
    return {name: method_color(name) for name in names}


def axis(ax: Any) -> None:
    """Tick labels at `TICK_SIZE` on the axes ``ax``. A logarithmic axis labels only its
    major ticks: the decades, and 2 and 5 times each where it spans less than two decades
    (matplotlib would label every minor tick there, and those labels run into each other:
    3×10⁻¹ 4×10⁻¹ 6×10⁻¹ ...)."""
    import math

    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.tick_params(labelsize=TICK_SIZE)
    for scaled, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if scaled.get_scale() != "log":
            continue
        low, high = sorted(limits)
        narrow = low > 0 and math.log10(high / low) < 2
        scaled.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if narrow else (1.0,)))
        scaled.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        scaled.set_minor_formatter(NullFormatter())
