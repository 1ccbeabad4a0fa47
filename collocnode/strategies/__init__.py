"""Solve strategies: algorithms that hold an inner algorithm (:mod:`collocnode.algorithm`) and
nest with any other -- refinement until consistent, adaptive refinement, training phases,
stopping rules and time limits, a regularization path, multistart, consensus ADMM over blocks
of the data, discovery of a block's closed form with its re-fit, and the defaults of a first
solve (:class:`Auto`)."""

from .adaptive import AdaptiveRefinement, AdaptiveSolution, RoundRecord
from .admm import ConsensusADMM, ConsensusRound, ConsensusSolution
from .auto import Auto, AutoSolution
from .discovery import Discovered, DiscoverySolution, DiscoveryWarning
from .limits import StopWhenSettled, StopWhenStagnant, TimeLimit
from .multistart import Multistart, MultistartSolution, StartRecord
from .phases import PhasedSolution, Pretrained, WarmStarted
from .regularization import (
    PathPoint,
    RegularizationPath,
    RegularizationSolution,
    UnverifiedChoiceWarning,
)
from .until_consistent import ConsistencyRound, ConsistentSolution, UntilConsistent

__all__ = [
    "AdaptiveRefinement",
    "AdaptiveSolution",
    "Auto",
    "AutoSolution",
    "ConsensusADMM",
    "ConsensusRound",
    "ConsensusSolution",
    "ConsistencyRound",
    "ConsistentSolution",
    "Discovered",
    "DiscoverySolution",
    "DiscoveryWarning",
    "Multistart",
    "MultistartSolution",
    "PathPoint",
    "PhasedSolution",
    "Pretrained",
    "RegularizationPath",
    "RegularizationSolution",
    "RoundRecord",
    "StartRecord",
    "StopWhenSettled",
    "StopWhenStagnant",
    "TimeLimit",
    "UntilConsistent",
    "UnverifiedChoiceWarning",
    "WarmStarted",
]
