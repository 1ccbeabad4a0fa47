"""Models to train: neural ODEs and physics-enhanced (hybrid) neural ODEs.

A [`HybridModel`][collocnode.HybridModel] is user physics that calls named parameterized blocks
(networks or other surrogates, Langenkamp et al. eq. 4):

    x' = φ(x, u, t, NN_p(...)),      y = ψ(x, u, t, NN_p(...))  (optional outputs)

The physics is a Python function written with CasADi operations. It receives the states, the known
inputs, the time, a `Blocks` object (``blocks["friction"](dv)`` evaluates that block with its
slice of the parameter vector) and the physical parameters by name. A plain neural ODE (eq. 5)
is the special case built by [`NeuralODE`][collocnode.NeuralODE].

Parameter vector layout: the blocks' flat weights in the order of ``blocks``, then the fitted
physical parameters in the order of ``parameters``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from numbers import Real
from typing import Any

import casadi as ca
import numpy as np

from .. import _validation as v
from ..nn._base import Block


@dataclass(frozen=True)
class Parameter:
    """A physical parameter of a hybrid model: its value, whether it is fitted, and its bounds.

    Args:
        value: the value (for a fitted parameter: the initial guess).
        fit: whether training fits it (an NLP variable in ``[lb, ub]``).
        lb, ub: its bounds (±inf for none).
        per_trajectory: a condition of each experiment (a feed concentration, a load) rather
            than a constant of the model: each trajectory takes its value from its own
            ``Trajectory.params[name]``; with ``fit=True`` each trajectory gets its own fitted
            value (starting from the trajectory's value if it gives one, else from ``value``).
            ``value`` is what the model uses where no trajectory says (e.g. a plain
            [`simulate`][collocnode.simulate] call). Such parameters are not part of the
            model's parameter vector ``p``.
    """

    value: float
    fit: bool = False
    lb: float = -np.inf
    ub: float = np.inf
    per_trajectory: bool = False

    def __post_init__(self) -> None:
        v.finite_float("value", self.value)
        for name in ("fit", "per_trajectory"):
            flag = getattr(self, name)
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        for name in ("lb", "ub"):
            bound = getattr(self, name)
            if isinstance(bound, bool) or not isinstance(bound, Real):
                raise TypeError(f"{name} must be a number or ±inf, got {bound!r:.60}")
            if np.isnan(bound):
                raise ValueError(f"{name} must be a number or ±inf, got {bound!r}")
        if self.lb > self.ub:
            raise ValueError(f"lb must be <= ub, got lb = {self.lb}, ub = {self.ub}")
        if not self.lb <= self.value <= self.ub:
            raise ValueError(
                f"parameter value {self.value} is outside its bounds [{self.lb}, {self.ub}]"
            )


class Blocks(Mapping):
    """Name -> callable that evaluates the block on an input column with its weight slice."""

    def __init__(self, blocks: Mapping[str, Block], weights: Mapping[str, Any]) -> None:
        self._blocks, self._weights = blocks, weights

    def __getitem__(self, name: str) -> Callable[..., Any]:
        if name not in self._blocks:
            raise KeyError(f"unknown block {name!r}; blocks: {', '.join(self._blocks)}")
        block, w = self._blocks[name], self._weights[name]

        def evaluate(*inputs: Any) -> Any:
            # one column, or its entries one argument each (blocks["f"](x[0], x[1]))
            z = ca.vertcat(*inputs)
            if z.shape != (block.n_in, 1):
                # a 1×1 input would broadcast against the first layer's weights without an error
                raise ValueError(
                    f"block {name!r} takes {block.n_in} inputs (a column), got shape {z.shape}"
                )
            return block.casadi(z, w)

        return evaluate

    def __iter__(self):
        return iter(self._blocks)

    def __len__(self) -> int:
        return len(self._blocks)


PhysicsFn = Callable[..., Any]


def _named(field_name: str, value: object, kind: type, kind_name: str) -> dict[str, Any]:
    """``value`` as a dict of name -> ``kind``; one clear error for anything else."""
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{field_name} must be a mapping of names to {kind_name}s, got {value!r:.60}"
        )
    for name, item in value.items():
        if not isinstance(name, str):
            raise TypeError(f"{field_name} names must be strings, got {name!r:.60}")
        if not isinstance(item, kind):
            raise TypeError(f"{field_name}[{name!r}] must be a {kind_name}, got {item!r:.60}")
    return dict(value)


def _column(name: str, value: Any, n: int) -> Any:
    """What the physics function ``name`` returned, as an (n, 1) CasADi column."""
    if value is None:
        raise TypeError(f"{name} must return {n} values (a CasADi expression or list), got None")
    try:
        col = ca.vertcat(*value) if isinstance(value, (list, tuple)) else ca.vertcat(value)
    except NotImplementedError:  # CasADi's "wrong number or type of arguments"
        raise TypeError(
            f"{name} must return {n} values (a CasADi expression or list), got {value!r:.60}"
        ) from None
    if col.shape != (n, 1):
        raise ValueError(f"{name} must return {n} values, got shape {col.shape}")
    return col


@dataclass(frozen=True)
class HybridModel:
    """A (physics-enhanced) neural ODE.

    Args:
        n_states: number of states.
        blocks: named parameterized blocks (e.g. [`collocnode.nn.MLP`][collocnode.nn.MLP]).
        rhs: ``rhs(x, u, t, blocks, params) -> x'`` (n_states,), CasADi operations; ``params`` maps
            physical parameter names to values or symbols.
        outputs: ``outputs(x, u, t, blocks, params) -> y`` (n_outputs,), or None.
        n_outputs: length of y.
        n_inputs: number of known inputs u(t).
        parameters: physical parameters by name ([`Parameter`][collocnode.Parameter]); those with
            ``fit=True`` become NLP variables with their bounds.
        state_names, input_names, output_names: labels.
        recipe: how to rebuild this model from data: ``("module:function", kwargs)`` such that
            ``function(**kwargs)`` returns an equal model. kwargs values are JSON-able, blocks
            ([`collocnode.nn.Block`][collocnode.nn.Block]) or systems
            (`collocnode.problems.System`). Models with a recipe can be saved to a file and loaded
            back (`collocnode.serialize`); the physics of a hand-written model is Python code,
            so it needs one.

    Examples:
        A mass on a spring whose friction law is a network (the model of the tutorial *Your own
        hybrid model*), evaluated with the network's weights at zero:

        ```python
        import numpy as np

        from collocnode import HybridModel, Parameter
        from collocnode.nn import MLP


        def physics(x, u, t, blocks, params):  # a mass on a spring, friction unknown
            q, v = x[0], x[1]
            return [v, (u[0] - params["k"] * q - blocks["friction"](v)) / params["m"]]


        model = HybridModel(
            n_states=2,
            n_inputs=1,
            blocks={"friction": MLP((1, 8, 1), "tanh")},
            rhs=physics,
            parameters={"m": Parameter(1.0), "k": Parameter(1.0, fit=True, lb=0.0, ub=10.0)},
            state_names=("q", "v"),
            input_names=("F",),
        )
        print(model.n_params, model.slices)  # the network's 25 weights, then k
        p = np.zeros(model.n_params)  # zero weights: no friction
        p[model.slices["k"]] = 2.0
        xdot, _ = model.function([0.5, 1.0], p, [1.0], 0.0)  # (x, p, u, t) -> (x', y)
        assert np.allclose(xdot.full().ravel(), [1.0, 1.0 - 2.0 * 0.5])
        ```
    """

    n_states: int
    blocks: Mapping[str, Block]
    rhs: PhysicsFn
    outputs: PhysicsFn | None = None
    n_outputs: int = 0
    n_inputs: int = 0
    parameters: Mapping[str, Parameter] = field(default_factory=dict)
    state_names: tuple[str, ...] = ()
    input_names: tuple[str, ...] = ()
    output_names: tuple[str, ...] = ()
    recipe: tuple[str, dict[str, Any]] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        v.fits_in_memory("n_states", v.positive_int("n_states", self.n_states), "states")
        v.nonnegative_int("n_outputs", self.n_outputs)
        v.nonnegative_int("n_inputs", self.n_inputs)
        if not callable(self.rhs):
            raise TypeError(f"rhs must be callable, got {self.rhs!r}")
        if self.outputs is not None and not callable(self.outputs):
            raise TypeError(f"outputs must be callable or None, got {self.outputs!r}")
        if (self.outputs is None) != (self.n_outputs == 0):
            raise ValueError("outputs and n_outputs must be given together")
        object.__setattr__(
            self, "blocks", _named("blocks", self.blocks, Block, "collocnode.nn.Block")
        )
        object.__setattr__(
            self, "parameters", _named("parameters", self.parameters, Parameter, "Parameter")
        )
        for name, width in (
            ("state_names", self.n_states),
            ("input_names", self.n_inputs),
            ("output_names", self.n_outputs),
        ):
            object.__setattr__(self, name, v.names(name, getattr(self, name), width))
        v.fits_in_memory("the model's parameter vector", self.n_params, "parameters")

    # ---- parameter vector layout ---------------------------------------------------------------
    @cached_property
    def slices(self) -> dict[str, slice]:
        """Slice of the parameter vector for each block and each fitted physical parameter."""
        out, k = {}, 0
        for name, block in self.blocks.items():
            out[name] = slice(k, k + block.n_params)
            k += block.n_params
        for name in self.fitted:
            out[name] = slice(k, k + 1)
            k += 1
        return out

    @property
    def fitted(self) -> list[str]:
        """The fitted physical parameters that belong to the parameter vector (all but the
        per-trajectory ones), in the order of ``parameters``."""
        return [n for n, p in self.parameters.items() if p.fit and not p.per_trajectory]

    @property
    def per_trajectory(self) -> tuple[str, ...]:
        """Names of the per-trajectory parameters (``Parameter(per_trajectory=True)``), in the
        order of ``parameters``: the order of the column ``c`` of
        [`symbolic`][collocnode.HybridModel.symbolic]."""
        return tuple(n for n, p in self.parameters.items() if p.per_trajectory)

    def per_trajectory_values(self, values: Mapping[str, float] | None = None) -> np.ndarray:
        """The column ``c`` of [`symbolic`][collocnode.HybridModel.symbolic], shape
        (n_per_trajectory,): ``values[name]`` where given (other names are ignored, so a
        trajectory's ``params`` can be passed as they are), each parameter's ``value`` elsewhere."""
        values = {} if values is None else values
        if not isinstance(values, Mapping):
            raise TypeError(
                f"trajectory_params must be a mapping of names to numbers, got {values!r:.60}"
            )
        return np.array(
            [
                v.finite_float(f"trajectory_params[{n!r}]", values[n])
                if n in values
                else self.parameters[n].value
                for n in self.per_trajectory
            ],
            dtype=float,
        )

    @property
    def n_weights(self) -> int:
        return sum(b.n_params for b in self.blocks.values())

    @property
    def n_params(self) -> int:
        """Length of the trainable parameter vector (block weights + fitted physical params)."""
        return self.n_weights + len(self.fitted)

    def param_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lb = np.full(self.n_params, -np.inf)
        ub = np.full(self.n_params, np.inf)
        for name in self.fitted:
            i = self.slices[name].start
            lb[i], ub[i] = self.parameters[name].lb, self.parameters[name].ub
        return lb, ub

    def init_params(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Random block weights (each block's own initialisation) and nominal physical values."""
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        parts = [b.init_weights(rng) for b in self.blocks.values()]
        parts += [np.array([self.parameters[n].value]) for n in self.fitted]
        return np.concatenate(parts) if parts else np.zeros(0)

    def split_params(self, p: np.ndarray) -> dict[str, np.ndarray | float]:
        """Block weights (arrays) and fitted physical parameters (floats) by name."""
        p = np.asarray(p, dtype=float)
        if p.shape != (self.n_params,):
            raise ValueError(f"parameter vector must have shape ({self.n_params},), got {p.shape}")
        out: dict[str, np.ndarray | float] = {}
        for name, s in self.slices.items():
            out[name] = p[s].copy() if name in self.blocks else float(p[s][0])
        return out

    # ---- evaluation ----------------------------------------------------------------------------
    def symbolic(self, x: Any, p: Any, u: Any, t: Any, c: Any = None) -> tuple[Any, Any]:
        """(x', y) as CasADi expressions of states x (n_states, 1), parameter vector p
        (n_params, 1), inputs u (n_inputs, 1), time t (1, 1) and the per-trajectory
        parameters c (n_per_trajectory, 1; None: their ``value``); x' is (n_states, 1), y is
        (n_outputs, 1)."""
        xdot = self.evaluate("rhs", self.rhs, self.n_states, x, p, u, t, c)
        y = ca.SX(0, 1) if isinstance(x, ca.SX) else ca.MX(0, 1)
        if self.outputs is not None:
            y = self.evaluate("outputs", self.outputs, self.n_outputs, x, p, u, t, c)
        return xdot, y

    def evaluate(
        self, name: str, fn: PhysicsFn, n: int, x: Any, p: Any, u: Any, t: Any, c: Any = None
    ) -> Any:
        """``fn(x, u, t, blocks, params)`` as an (n, 1) CasADi column, with the blocks and the
        physical parameters that the physics sees (arguments as in
        [`symbolic`][collocnode.HybridModel.symbolic]): the model's own functions and anything else
        written like them (path constraints)."""
        blocks, params = self._environment(x, p, u, c)
        return _column(name, fn(x, u, t, blocks, params), n)

    def _environment(self, x: Any, p: Any, u: Any, c: Any) -> tuple[Blocks, dict[str, Any]]:
        """The blocks (with their weight slices of p) and the parameters by name."""
        names = self.per_trajectory
        if c is None:
            c = ca.DM(self.per_trajectory_values())
        for label, value, n in (
            ("x", x, self.n_states),
            ("p", p, self.n_params),
            ("u", u, self.n_inputs),
            ("c", c, len(names)),
        ):
            if value.shape != (n, 1):
                raise ValueError(f"{label} must be a ({n}, 1) column, got shape {value.shape}")
        # split p by explicit offsets: slicing a (1, 1) symbol by a range can give a 1 x 0 row
        offsets = [0, *(s.stop for s in self.slices.values())]
        parts = dict(zip(self.slices, ca.vertsplit(p, offsets), strict=True))
        per_trajectory = dict(zip(names, ca.vertsplit(c, list(range(len(names) + 1))), strict=True))
        weights = {name: parts[name] for name in self.blocks}
        params: dict[str, Any] = {
            name: per_trajectory[name]
            if par.per_trajectory
            else (parts[name] if par.fit else par.value)
            for name, par in self.parameters.items()
        }
        return Blocks(self.blocks, weights), params

    def _cached(self, name: str, build: Callable[[], ca.Function]) -> ca.Function:
        """``build()`` once per state of the blocks' input normalisation: a network that takes
        it from the data (`collocnode.nn.MLP.set_input_normalization`) sets it after a function
        may have been built."""
        key = tuple(
            (getattr(b, "input_shift", None), getattr(b, "input_scale", None))
            for b in self.blocks.values()
        )
        cached = self.__dict__.get(name)
        if cached is None or cached[0] != key:
            cached = (key, build())
            self.__dict__[name] = cached  # a frozen dataclass's cache, as cached_property does
        return cached[1]

    @property
    def function(self) -> ca.Function:
        """``casadi.Function('model', [x, p, u, t], [xdot, y])`` (SX), the per-trajectory
        parameters at their ``value``."""
        return self._cached("_function", self._build_function)

    def _build_function(self) -> ca.Function:
        x = ca.SX.sym("x", self.n_states)
        p = ca.SX.sym("p", self.n_params)
        u = ca.SX.sym("u", self.n_inputs)
        t = ca.SX.sym("t")
        xdot, y = self.symbolic(x, p, u, t)
        return ca.Function("model", [x, p, u, t], [xdot, y], ["x", "p", "u", "t"], ["xdot", "y"])

    @property
    def per_trajectory_function(self) -> ca.Function:
        """``casadi.Function('model_c', [x, p, u, t, c], [xdot, y])`` (SX):
        [`function`][collocnode.HybridModel.function] with the per-trajectory parameters c
        (n_per_trajectory,) as an input."""
        return self._cached("_per_trajectory_function", self._build_per_trajectory_function)

    def _build_per_trajectory_function(self) -> ca.Function:
        x = ca.SX.sym("x", self.n_states)
        p = ca.SX.sym("p", self.n_params)
        u = ca.SX.sym("u", self.n_inputs)
        t = ca.SX.sym("t")
        c = ca.SX.sym("c", len(self.per_trajectory))
        xdot, y = self.symbolic(x, p, u, t, c)
        return ca.Function(
            "model_c", [x, p, u, t, c], [xdot, y], ["x", "p", "u", "t", "c"], ["xdot", "y"]
        )

    def check_smooth(self) -> None:
        """Raise ValueError if a block is not C² (IPOPT needs exact second derivatives)."""
        for block in self.blocks.values():
            block.check_smooth()


def NeuralODE(
    blocks: Block | list[Block] | Mapping[str, Block],
    n_inputs: int = 0,
    time_input: bool = False,
    second_order: bool = False,
    state_names: tuple[str, ...] = (),
) -> HybridModel:
    """A neural ODE x' = NN_p(x, u[, t]) (paper eq. 5) as a [`HybridModel`][collocnode.HybridModel].

    ``blocks`` may be one network with n_states outputs, or several networks whose outputs are
    stacked (the Van der Pol setup of the paper uses one 2-5-5-1 network per state). Every network
    sees the input ``[x, u]`` (and ``t`` if ``time_input``).

    With ``second_order`` the state is ``[q, q']`` and the networks give only the accelerations
    q'' = NN(q, q', u): x' = [q', NN(...)].

    Examples:
        A second-order neural ODE, evaluated at one state with its random initial weights:

        ```python
        from collocnode import NeuralODE
        from collocnode.nn import MLP

        # second order: the state is [q, q'] and the network gives only q'' = NN(q, q')
        model = NeuralODE(MLP((2, 8, 1), "tanh"), second_order=True, state_names=("q", "v"))
        p = model.init_params(0)  # random weights, seeded
        xdot, _ = model.function([1.0, 0.5], p, [], 0.0)  # (x, p, u, t) -> (x', y)
        xdot = xdot.full().ravel()
        assert xdot[0] == 0.5  # q' = v
        print(model.n_states, model.n_params, xdot)
        ```
    """
    if isinstance(blocks, Block):
        blocks = {"f": blocks}
    elif isinstance(blocks, (list, tuple)):
        blocks = {f"f{k}": b for k, b in enumerate(blocks)}
    blocks = _named("blocks", blocks, Block, "collocnode.nn.Block")
    if not blocks:
        raise ValueError("blocks must hold at least one network, got none")
    n_inputs = v.nonnegative_int("n_inputs", n_inputs)
    for name, flag in (("time_input", time_input), ("second_order", second_order)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, got {flag!r:.60}")
    n_out = sum(b.n_out for b in blocks.values())
    n_states = 2 * n_out if second_order else n_out
    n_in = n_states + n_inputs + (1 if time_input else 0)
    state_names = v.names("state_names", state_names, n_states)
    for name, b in blocks.items():
        if b.n_in != n_in:
            raise ValueError(
                f"block {name!r} takes {b.n_in} inputs, but the neural ODE feeds it {n_in} "
                f"(states{' + inputs' if n_inputs else ''}{' + time' if time_input else ''})"
            )

    def rhs(x: Any, u: Any, t: Any, nets: Blocks, params: Mapping[str, Any]) -> Any:
        z = ca.vertcat(x, u, t) if time_input else ca.vertcat(x, u)
        out = ca.vertcat(*[nets[name](z) for name in nets])
        return ca.vertcat(x[n_out:], out) if second_order else out

    recipe = (
        "collocnode.models:NeuralODE",
        {
            "blocks": dict(blocks),
            "n_inputs": n_inputs,
            "time_input": time_input,
            "second_order": second_order,
            "state_names": list(state_names),
        },
    )
    return HybridModel(
        n_states=n_states,
        blocks=blocks,
        rhs=rhs,
        n_inputs=n_inputs,
        state_names=tuple(state_names),
        recipe=recipe,
    )
