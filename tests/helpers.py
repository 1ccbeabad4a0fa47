"""Small problems shared by several test modules."""

import casadi as ca
import numpy as np

from collocnode import HybridModel, Parameter, TrainingProblem, Trajectory

RATE = 1.3  # the true decay rate k of x' = -k x


def decay_problem(n_trajectories: int = 4, **fields) -> TrainingProblem:
    """x' = -k x with k fitted (one parameter: the optimum is unique), noisy data from
    several initial states."""
    rng = np.random.default_rng(0)
    t = np.linspace(0.0, 2.0, 41)
    data = []
    for x0 in np.linspace(0.5, 2.0, n_trajectories):
        x = x0 * np.exp(-RATE * t) + 0.01 * rng.normal(size=t.size)
        data.append(Trajectory(t=t, x=x[:, None]))
    model = HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, b, p: ca.vertcat(-p["k"] * x[0]),
        parameters={"k": Parameter(0.5, fit=True)},
    )
    return TrainingProblem(model, data if n_trajectories > 1 else data[0], **fields)


def drawn_texts(fig) -> list:
    """The texts drawn on a matplotlib figure: the tick labels drawn (major and minor), axis
    labels, titles, annotations, the legends and the figure's title."""
    texts = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            texts += [tick.label1 for tick in axis._update_ticks()]  # the ticks drawn
            texts.append(axis.label)
        texts += [ax.title, *ax.texts]
    for legend in fig.legends:
        texts += legend.get_texts()
    if fig._suptitle is not None:
        texts.append(fig._suptitle)
    return [t for t in texts if t.get_visible() and t.get_text().strip()]


def labels_fit(fig) -> tuple[list, list]:
    """Draw ``fig`` at its own size (no tight bounding box) and return the texts that leave
    the figure and the pairs of texts that overlap: ``([], [])`` when every label fits."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    renderer, page = fig.canvas.get_renderer(), fig.bbox
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in drawn_texts(fig)]
    clipped = [
        text
        for text, b in boxes
        if not (page.x0 - 1 <= b.x0 and b.x1 <= page.x1 + 1)
        or not (page.y0 - 1 <= b.y0 and b.y1 <= page.y1 + 1)
    ]
    overlapping = [
        (a, b)
        for i, (a, box_a) in enumerate(boxes)
        for b, box_b in boxes[i + 1 :]
        if box_a.overlaps(box_b)
    ]
    return clipped, overlapping
