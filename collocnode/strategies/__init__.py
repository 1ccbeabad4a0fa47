"""Solve strategies: algorithms that hold an inner algorithm (:mod:`collocnode.algorithm`) and
nest with any other -- refinement until consistent, adaptive refinement, training phases,
stopping rules and time limits, consensus ADMM over blocks of the data, and discovery of a
block's closed form with its re-fit."""

from .adaptive import AdaptiveRefinement, AdaptiveSolution, RoundRecord
from .admm import ConsensusADMM, ConsensusRound, ConsensusSolution
from .discovery import Discovered, DiscoverySolution, DiscoveryWarning
from .limits import StopWhenStagnant, TimeLimit
from .phases import PhasedSolution, Pretrained, WarmStarted
from .until_consistent import ConsistencyRound, ConsistentSolution, UntilConsistent

__all__ = [
    "AdaptiveRefinement",
    "AdaptiveSolution",
    "ConsensusADMM",
    "ConsensusRound",
    "ConsensusSolution",
    "ConsistencyRound",
    "ConsistentSolution",
    "Discovered",
    "DiscoverySolution",
    "DiscoveryWarning",
    "PhasedSolution",
    "Pretrained",
    "RoundRecord",
    "StopWhenStagnant",
    "TimeLimit",
    "UntilConsistent",
    "WarmStarted",
]
