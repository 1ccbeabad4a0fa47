"""collocnode: learn dynamics from trajectory data by direct collocation and NLP.

Training a (physics-enhanced) neural ODE is posed as one dynamic optimization problem,
transcribed with Radau IIA collocation at flipped Legendre-Gauss-Radau points and solved by IPOPT
with exact sparse Hessians::

    from collocnode import NeuralODE, TrainingProblem, RadauIIA, solve, problems
    from collocnode.nn import MLP

    system = problems.get("vdp")
    data = system.generate(noise=0.1, seed=0).train
    model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
    sol = solve(TrainingProblem(model, data, regularization=1e-4), RadauIIA(100, 3), seed=0)
    sol.status, sol(3.5), sol.simulate(data.t)
"""

from ._version import __version__
from .admm import ConsensusADMM, ConsensusRound, ConsensusSolution
from .callbacks import CallbackList, EarlyStopping, ProgressBar, StopOnStagnation
from .consistency import (
    ConsistencyCheck,
    ConsistencyReport,
    ConsistentSolution,
    InconsistentModelWarning,
    UntilConsistent,
)
from .control import LearnedDynamics, control_problem
from .data import Trajectory
from .models import HybridModel, NeuralODE, Parameter
from .simulate import SimulationError, simulate
from .solve import solve
from .status import SolveInterrupted, SolverStatus
from .training import BlockConstraint, TrainingProblem, TrainingSolution
from .transcription import (
    AdaptiveRefinement,
    AdaptiveSolution,
    AlgebraicStates,
    Constraint,
    Controls,
    DynamicOptimizationProblem,
    Inputs,
    IpoptOptions,
    Mesh,
    OrderingTrial,
    PartialQuasiNewton,
    RadauIIA,
    Solution,
)

__all__ = [
    "AdaptiveRefinement",
    "AdaptiveSolution",
    "AlgebraicStates",
    "BlockConstraint",
    "CallbackList",
    "ConsensusADMM",
    "ConsensusRound",
    "ConsensusSolution",
    "ConsistencyCheck",
    "ConsistencyReport",
    "ConsistentSolution",
    "Constraint",
    "Controls",
    "DynamicOptimizationProblem",
    "EarlyStopping",
    "HybridModel",
    "InconsistentModelWarning",
    "Inputs",
    "IpoptOptions",
    "LearnedDynamics",
    "Mesh",
    "NeuralODE",
    "OrderingTrial",
    "Parameter",
    "PartialQuasiNewton",
    "ProgressBar",
    "RadauIIA",
    "SimulationError",
    "Solution",
    "SolveInterrupted",
    "SolverStatus",
    "StopOnStagnation",
    "TrainingProblem",
    "TrainingSolution",
    "Trajectory",
    "UntilConsistent",
    "__version__",
    "control_problem",
    "simulate",
    "solve",
]
