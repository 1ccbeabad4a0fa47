"""Small problems and local servers shared by several test modules."""

import contextlib
import http.server
import socket
import threading
from collections.abc import Iterator

import casadi as ca
import numpy as np

from collocnode import (
    DynamicOptimizationProblem,
    HybridModel,
    Parameter,
    TrainingProblem,
    Trajectory,
)

RATE = 1.3  # the true decay rate k of x' = -k x


def pendulum_swings(seed: int = 0) -> list[Trajectory]:
    """Three swings of a pendulum (g/L = 9.81 / 0.8, damping 0.3ω + 0.1ω|ω|) from (1, 0),
    (2, 0) and (0.5, 1), 61 samples on [0, 6], noise 0.01 rad on θ and 0.05 rad/s on ω."""
    from scipy.integrate import solve_ivp

    def rhs(_, z):
        return [z[1], -9.81 / 0.8 * np.sin(z[0]) - (0.3 * z[1] + 0.1 * z[1] * abs(z[1]))]

    t = np.linspace(0.0, 6.0, 61)
    rng = np.random.default_rng(seed)
    out = []
    for x0 in ([1.0, 0.0], [2.0, 0.0], [0.5, 1.0]):
        x = solve_ivp(rhs, (t[0], t[-1]), x0, t_eval=t, rtol=1e-10, atol=1e-10).y.T
        out.append(Trajectory(t, x + [0.01, 0.05] * rng.standard_normal((t.size, 2))))
    return out


def pendulum_model() -> HybridModel:
    """g/L fitted beside a learned damping d(ω) (a 1-6-1 tanh network)."""
    from collocnode.nn import MLP

    return HybridModel(
        n_states=2,
        blocks={"d": MLP((1, 6, 1), "tanh")},
        rhs=lambda x, u, t, b, p: [x[1], -p["gL"] * ca.sin(x[0]) - b["d"](x[1])],
        parameters={"gL": Parameter(10.0, fit=True, lb=1.0, ub=50.0)},
    )


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


def too_large_for_memory() -> DynamicOptimizationProblem:
    """Two states and 2,000,000 parameters: its NLP's derivative arrays fit no test machine."""
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -x * p[0],
        n_states=2,
        n_params=2_000_000,
        tspan=(0.0, 1.0),
        lagrange=lambda x, p, u, t: x[0] ** 2,
    )


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


# ---- servers that are not a Dask scheduler (for --scheduler and dask_executor) ---------------


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A port that accepts connections and keeps them open without a word, as a Dask
    dashboard does to Dask's binary handshake; yields the port."""
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.1)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(srv.accept()[0])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        srv.close()


@contextlib.contextmanager
def http_server(reply: bytes | None = None) -> Iterator[int]:
    """A local HTTP server (Python's own, answering 404 to everything), or with ``reply`` one
    that sends those bytes to whatever it receives and closes; yields the port."""
    if reply is None:

        class NotFound(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_error(404)

            def log_message(self, *args: object) -> None:
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
        thread = threading.Thread(target=srv.serve_forever, daemon=True)
        thread.start()
        try:
            yield srv.server_address[1]
        finally:
            srv.shutdown()
            srv.server_close()
        return
    raw = socket.create_server(("127.0.0.1", 0))
    raw.settimeout(0.1)
    stop = threading.Event()

    def answer() -> None:
        while not stop.is_set():
            try:
                conn, _ = raw.accept()
            except OSError:
                continue
            with conn, contextlib.suppress(OSError):
                conn.settimeout(2)
                conn.recv(4096)
                conn.sendall(reply)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        yield raw.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        raw.close()
