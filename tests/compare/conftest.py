"""Shared fixtures of the PyTorch-side tests: tiny systems and fast settings."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode.problems._base import System

torch = pytest.importorskip("torch")


@pytest.fixture(scope="session", autouse=True)
def _one_thread():
    # tiny networks: thread start-up costs more than it saves on a shared 2-core machine
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


class Circle(System):
    """Rotation ``x' = −ω y, y' = ω x`` with the invariant circle ``g = x² + y² − r²`` (exact
    solution known): the smallest constrained first-order system for SNDE tests."""

    name = "circle"
    state_names = ("x", "y")
    PRESETS = {"default": {"omega": 1.0, "radius": 1.0}}
    dt = 0.1
    n_steps = 60
    n_train = 40

    @property
    def x0(self) -> np.ndarray:
        return np.array([self.params["radius"], 0.0])

    def rhs(self, t, x, u=None):
        w = self.params["omega"]
        x = np.asarray(x, dtype=float)
        return np.stack([-w * x[..., 1], w * x[..., 0]], axis=-1)

    @property
    def n_constraints(self) -> int:
        return 1

    def constraints(self, x, t=0.0):
        x = np.asarray(x, dtype=float)
        return (x[..., 0] ** 2 + x[..., 1] ** 2 - self.params["radius"] ** 2)[..., None]

    def constraint_jacobian(self, x, t=0.0):
        x = np.asarray(x, dtype=float)
        return np.array([[2.0 * x[0], 2.0 * x[1]]])

    def exact_solution(self, t, x0):
        w = self.params["omega"]
        c, s = np.cos(w * (t - t[0])), np.sin(w * (t - t[0]))
        return np.stack([c * x0[0] - s * x0[1], s * x0[0] + c * x0[1]], axis=-1)


class Oscillator(System):
    """Damped oscillator ``q'' = −k q − c q' + u`` with an optional force input and a
    parameter ``c`` (second order, exact accelerations available)."""

    name = "oscillator"
    state_names = ("q", "v")
    input_names = ("F",)
    n_coords = 1
    PRESETS = {"default": {"k": 4.0, "c": 0.2}}
    dt = 0.05
    n_steps = 80
    n_train = 60

    @property
    def x0(self) -> np.ndarray:
        return np.array([1.0, 0.0])

    def inputs(self, t):
        t = np.asarray(t, dtype=float)
        return (0.5 * np.sin(1.3 * t))[..., None]

    def rhs(self, t, x, u=None):
        x = np.asarray(x, dtype=float)
        f = 0.0 if u is None else np.asarray(u, dtype=float)[..., 0]
        a = -self.params["k"] * x[..., 0] - self.params["c"] * x[..., 1] + f
        return np.stack([x[..., 1], a], axis=-1)


@pytest.fixture
def circle():
    return Circle()


@pytest.fixture
def oscillator():
    return Oscillator()
