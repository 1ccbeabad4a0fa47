"""Consensus ADMM training: one training problem split into blocks, each an NLP of its own.

A training problem's data is split into K blocks (Langenkamp et al. §2.5.3; Boyd et al. 2011
§7.2, general form consensus):

- ``split="trajectories"``: groups of whole trajectories; the blocks share the parameters.
- ``split="windows"``: one trajectory cut at mesh-interval boundaries into K time windows; the
  blocks share the parameters and, at each join, the states there (the end of window k and the
  start of window k + 1 are copies of one global state).

Each round (scaled form, one penalty rho for every shared unknown):

    x_k ← argmin f_k(x_k) + rho/2 |x_k − z_k + u_k|²     (the block NLPs, warm-started)
    z   ← the mean over copies of x_k + u_k               (consensus, central and cheap)
    u_k ← u_k + x_k − z_k                                 (scaled multipliers)

f_k is the block's training objective with the weight penalty λ/K (so Σ_k f_k is the whole
problem's objective at consensus). The block NLPs are built once, rho and z_k − u_k enter as NLP
parameters (`collocnode.transcription._proximal`). Stopping: primal residual r = |x − z| and
dual residual s = rho |z − z_prev| (over all copies) below eps_pri = sqrt(n) eps_abs + eps_rel
max(|x|, |z|) and eps_dual = sqrt(n) eps_abs + eps_rel |rho u|; rho is rebalanced when one
residual exceeds the other by ``balance`` (Boyd et al. §3.4.1, the scaled u rescaled with it).
The training problem is not convex, so ADMM is a heuristic here: its result is measured against
the single NLP in ``benchmarks/admm_consensus.py``.

The blocks run in this process one after another, or with ``client`` (a Dask
``distributed.Client``) each as a Dask actor pinned to a worker, where its NLP stays built
between rounds; a round then solves the blocks in parallel.

Any algorithm solves the blocks (``inner``): a [`RadauIIA`][collocnode.RadauIIA] builds each block's
NLP once and re-solves it with new proximal values (`collocnode.strategies._admm.blocks`); any other
algorithm (e.g. ``UntilConsistent(WarmStarted(RadauIIA(...)))``) solves the block's training problem
with the pull as a [`Proximal`][collocnode.Proximal] term every round, started from the block's
last result on its last meshes.

Modules: `collocnode.strategies._admm.split` (the blocks of a problem),
`collocnode.strategies._admm.blocks` (where and how a block is solved),
`collocnode.strategies._admm.rounds` (the ADMM iteration and the assembled solution).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ... import _validation as v
from ...algorithm import Algorithm, SolveContext, Wrapper, check_inner, final
from ...transcription._collocation import RadauIIA
from .blocks import runners_for
from .results import ConsensusADMMRecord
from .rounds import run_rounds
from .split import check_split, split

SPLITS = ("trajectories", "windows")


@dataclass(frozen=True)
class ConsensusADMM(Wrapper):
    """Train by consensus ADMM over K blocks of the data (see the module docstring).

    Args:
        inner: the algorithm of every block solve (default ``RadauIIA()``; any algorithm of
            `collocnode.algorithm` nests here). With ``split="windows"`` its leaf's mesh is
            the whole horizon's, cut into the windows.
        blocks: K, the number of blocks (at most the number of trajectories, or of mesh
            intervals for windows).
        split: "trajectories" or "windows".
        rho: the initial penalty (> 0), in units of the objective per squared unknown (states
            in the NLP's scaled units).
        max_rounds: the most rounds.
        eps_abs, eps_rel: the stopping tolerances of the residuals.
        balance, factor: rebalance rho by ``factor`` when one residual exceeds the other
            ``balance`` times; ``balance=0`` keeps rho fixed.
        relaxation: α of over-relaxation (Boyd et al. §3.4.3), in (0, 2); 1 is plain ADMM.
        acceleration: Nesterov momentum on the consensus value and the multipliers with
            restart (Goldstein et al. 2014, "Fast alternating direction optimization
            methods", Alg. 8): the blocks' next centre is extrapolated from the last two
            rounds while the combined residual ρ(|u − û|² + |z − ẑ|²) falls below ``restart``
            times its last value; otherwise the momentum restarts from the last round (the
            paper's Alg. 8 goes back one round further). A change of ρ by the balancing also
            restarts it. Needs ``relaxation=1``.
        restart: η of that restart test, in (0, 1).
        warm_start: first solve block 0 alone (no proximal term, recorded as round -1) and
            start every block from its parameters: the blocks then begin in one basin of the
            non-convex objective, instead of each falling into its own from the random
            initial weights.
        client: a ``distributed.Client``, or a scheduler address such as
            ``"tcp://host:8786"`` (connected to and checked first, closed at the end): each
            block is an actor on one of its workers (round robin); None: the blocks run in this
            process.
    """

    # each block re-solves from its last solution on its last meshes
    hands_down: ClassVar[frozenset[str]] = frozenset({"meshes", "warm"})
    # a warm start gives the consensus start; a deadline ends the rounds
    honours: ClassVar[frozenset[str]] = frozenset({"warm", "deadline"})
    passes_on: ClassVar[frozenset[str]] = frozenset()
    record_type: ClassVar[type] = ConsensusADMMRecord

    problem_kinds: ClassVar[frozenset[str]] = frozenset({"training"})
    takes_callback: ClassVar[bool] = False
    no_callback_why: ClassVar[str] = (
        " (its block solves run in parallel); read the rounds from the solution's rounds"
    )

    inner: Algorithm = field(default_factory=RadauIIA)
    blocks: int = 2
    split: str = "trajectories"
    rho: float = 0.1
    max_rounds: int = 50
    eps_abs: float = 1e-4
    eps_rel: float = 1e-3
    balance: float = 10.0
    factor: float = 2.0
    relaxation: float = 1.0
    acceleration: bool = False
    restart: float = 0.999
    warm_start: bool = True
    client: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        client = self.client
        if not (client is None or isinstance(client, str) or hasattr(client, "submit")):
            raise TypeError(
                f"client must be a distributed.Client, a scheduler address or None, got "
                f"{client!r:.80}"
            )
        check_inner(self, self.inner)
        v.positive_int("blocks", self.blocks)
        v.choice("split", self.split, SPLITS)
        v.positive_float("rho", self.rho)
        v.positive_int("max_rounds", self.max_rounds)
        v.positive_float("eps_abs", self.eps_abs)
        v.nonnegative_float("eps_rel", self.eps_rel)
        balance = v.nonnegative_float("balance", self.balance)
        if 0 < balance <= 1:
            raise ValueError(f"balance must be 0 (fixed rho) or > 1, got {self.balance!r}")
        if v.positive_float("factor", self.factor) <= 1:
            raise ValueError(f"factor must be > 1, got {self.factor!r}")
        if not isinstance(self.warm_start, bool):
            raise TypeError(f"warm_start must be True or False, got {self.warm_start!r}")
        if not 0 < v.positive_float("relaxation", self.relaxation) < 2:
            raise ValueError(f"relaxation must lie in (0, 2), got {self.relaxation!r}")
        if not isinstance(self.acceleration, bool):
            raise TypeError(f"acceleration must be True or False, got {self.acceleration!r}")
        if not 0 < v.positive_float("restart", self.restart) < 1:
            raise ValueError(f"restart must lie in (0, 1), got {self.restart!r}")
        if self.acceleration and self.relaxation != 1:
            raise ValueError(
                f"acceleration needs relaxation = 1 (Goldstein et al.'s scheme has no "
                f"over-relaxation), got relaxation = {self.relaxation!r}"
            )

    def validate(self, problem: Any, context: SolveContext) -> None:
        super().validate(problem, context)
        self.needs_the_model_kept()  # the blocks exchange the model's parameters
        check_split(problem, self)

    def solve_problem(self, problem: Any, context: SolveContext) -> ConsensusADMMRecord:
        """Train ``problem`` by consensus ADMM from the parameters of ``context.warm``, else
        from its ``params_guess``, else from the draw of ``context.seed`` (every block starts
        there); the rounds end at ``context.deadline`` (a round under way finishes). Raises
        ValueError before any work when the client's workers cannot run the blocks."""
        p0 = problem.params_guess
        if context.warm is not None:
            p0 = final(context.warm).p
        elif p0 is None:
            p0 = problem.model.init_params(np.random.default_rng(context.seed))
        blocks = split(problem, self, np.asarray(p0, dtype=float))
        runners = runners_for(blocks, self, context)
        try:
            return run_rounds(problem, self, blocks, runners, context.deadline)
        finally:
            runners.close()
