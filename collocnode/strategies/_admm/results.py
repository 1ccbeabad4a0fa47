"""What consensus ADMM returns: one record per round and the trained model of the whole
problem."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..._status import SolverStatus
from ...training import TrainingSolution


@dataclass
class ConsensusRound:
    """One ADMM round: ``rho`` used, residuals and their tolerances after it, the blocks'
    objectives (proximal terms excluded) summed, per block its IPOPT iterations and solve wall
    time [s], and the round's wall time [s]."""

    round: int
    rho: float
    primal_residual: float
    dual_residual: float
    eps_primal: float
    eps_dual: float
    objective: float
    iterations: list[int]
    block_s: list[float]
    wall_s: float


@dataclass
class ConsensusADMMRecord:
    """The result of consensus ADMM training.

    Attributes:
        solution: the trained model as an ordinary [`TrainingSolution`][collocnode.TrainingSolution]
            of the whole problem (parameters: the consensus value; states: the blocks' node states).
        rounds: one [`ConsensusRound`][collocnode.strategies.ConsensusRound] per round.
        converged: both residuals met their tolerances and every block's last solve converged.
        build_s: per block the wall time of building its NLP [s].
        events: what happened on the way (a lost worker and the rebuilt block).
    """

    wraps: ClassVar[bool] = True

    solution: TrainingSolution
    rounds: list[ConsensusRound]
    converged: bool
    build_s: list[float]
    events: list[str] = field(default_factory=list)

    @property
    def status(self) -> SolverStatus:
        return self.solution.status

    @property
    def iterations(self) -> int:
        """IPOPT iterations of every block solve of every round."""
        return int(sum(sum(r.iterations) for r in self.rounds))

    def describe(self) -> str:
        """The rounds, in one line."""
        verdict = "converged" if self.converged else "not converged"
        return f"ConsensusADMM: {len(self.build_s)} blocks, {len(self.rounds)} rounds, {verdict}"

    @property
    def wall_time(self) -> float:
        """Wall time of the build (the slowest block) and all rounds [s]."""
        return self.solution.timings["total"]

    @property
    def critical_path_s(self) -> float:
        """The wall time with one worker per block, projected from the blocks' own times [s]:
        the slowest build and, per round, the slowest block solve (the central updates and the
        traffic left out). A projection only where the blocks did not share cores."""
        return max(self.build_s) + sum(max(r.block_s) for r in self.rounds)

    def table(self) -> str:
        """The rounds as a text table."""
        head = f"{'round':>5} {'rho':>9} {'r':>9} {'eps_pri':>9} {'s':>9} {'eps_dual':>9} "
        head += f"{'objective':>11} {'iters':>9} {'wall s':>7}"
        rows = [head]
        for r in self.rounds:
            rows.append(
                f"{r.round:>5} {r.rho:>9.3g} {r.primal_residual:>9.2e} {r.eps_primal:>9.2e} "
                f"{r.dual_residual:>9.2e} {r.eps_dual:>9.2e} {r.objective:>11.5g} "
                f"{max(r.iterations):>9} {r.wall_s:>7.2f}"
            )
        return "\n".join(rows)
