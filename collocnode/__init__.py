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

from ._data import Trajectory
from ._solve import solve
from ._status import SolveInterrupted, SolverStatus
from ._version import __version__
from .algorithm import Algorithm, SolveContext
from .models import HybridModel, NeuralODE, Parameter
from .models._control import LearnedDynamics, control_problem
from .models._simulate import SimulationError, simulate
from .strategies import (
    AdaptiveRefinement,
    Auto,
    ConsensusADMM,
    Discovered,
    DiscoveryWarning,
    Multistart,
    Pretrained,
    RegularizationPath,
    StopWhenSettled,
    StopWhenStagnant,
    TimeLimit,
    UntilConsistent,
    WarmStarted,
)
from .tools._moved import install as _install_moved
from .training import (
    BlockConstraint,
    ExtrapolationWarning,
    PathConstraint,
    TrainingProblem,
    TrainingSolution,
    UndeterminedStateWarning,
)
from .training._callbacks import (
    CallbackList,
    EarlyStopping,
    PhaseProgress,
    ProgressBar,
    StopOnStagnation,
)
from .training._consistency import ConsistencyCheck, ConsistencyReport, InconsistentModelWarning
from .training._discovery import ClosedForm, DiscoveryError, SparseRegression, discover
from .training._uncertainty import Uncertainty, UncertaintyWarning
from .transcription import (
    AlgebraicStates,
    Constraint,
    Controls,
    DynamicOptimizationProblem,
    FactorizationCostWarning,
    Inputs,
    IpoptOptions,
    Mesh,
    OrderingTrial,
    PartialQuasiNewton,
    Proximal,
    RadauIIA,
    Solution,
)

_install_moved()

__all__ = [
    "AdaptiveRefinement",
    "AlgebraicStates",
    "Algorithm",
    "Auto",
    "BlockConstraint",
    "CallbackList",
    "ClosedForm",
    "ConsensusADMM",
    "ConsistencyCheck",
    "ConsistencyReport",
    "Constraint",
    "Controls",
    "Discovered",
    "DiscoveryError",
    "DiscoveryWarning",
    "DynamicOptimizationProblem",
    "EarlyStopping",
    "ExtrapolationWarning",
    "FactorizationCostWarning",
    "HybridModel",
    "InconsistentModelWarning",
    "Inputs",
    "IpoptOptions",
    "LearnedDynamics",
    "Mesh",
    "Multistart",
    "NeuralODE",
    "OrderingTrial",
    "Parameter",
    "PartialQuasiNewton",
    "PathConstraint",
    "PhaseProgress",
    "Pretrained",
    "ProgressBar",
    "Proximal",
    "RadauIIA",
    "RegularizationPath",
    "SimulationError",
    "Solution",
    "SolveContext",
    "SolveInterrupted",
    "SolverStatus",
    "SparseRegression",
    "StopOnStagnation",
    "StopWhenSettled",
    "StopWhenStagnant",
    "TimeLimit",
    "TrainingProblem",
    "TrainingSolution",
    "Trajectory",
    "Uncertainty",
    "UncertaintyWarning",
    "UndeterminedStateWarning",
    "UntilConsistent",
    "WarmStarted",
    "__version__",
    "control_problem",
    "discover",
    "simulate",
    "solve",
]
