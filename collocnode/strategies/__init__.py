"""Solve strategies: algorithms that hold an inner algorithm (`collocnode.algorithm`) and
nest with any other -- refinement until consistent, adaptive refinement, training phases,
stopping rules and time limits, a regularization path, multistart, consensus ADMM over blocks
of the data, discovery of a block's closed form with its re-fit, and the defaults of a first
solve ([`Auto`][collocnode.Auto])."""

from .adaptive import AdaptiveRefinement, AdaptiveRefinementRecord, RoundRecord
from .admm import ConsensusADMM, ConsensusADMMRecord, ConsensusRound
from .auto import Auto, AutoRecord
from .discovery import Discovered, DiscoveredRecord, DiscoveryWarning
from .limits import StopWhenSettled, StopWhenStagnant, TimeLimit
from .multistart import Multistart, MultistartRecord, StartRecord
from .phases import PhasedRecord, Pretrained, WarmStarted
from .regularization import (
    NaivePredictorWarning,
    PathPoint,
    RegularizationPath,
    RegularizationPathRecord,
    UnverifiedChoiceWarning,
)
from .until_consistent import ConsistencyRound, UntilConsistent, UntilConsistentRecord

__all__ = [
    "AdaptiveRefinement",
    "AdaptiveRefinementRecord",
    "Auto",
    "AutoRecord",
    "ConsensusADMM",
    "ConsensusADMMRecord",
    "ConsensusRound",
    "ConsistencyRound",
    "Discovered",
    "DiscoveredRecord",
    "DiscoveryWarning",
    "Multistart",
    "MultistartRecord",
    "NaivePredictorWarning",
    "PathPoint",
    "PhasedRecord",
    "Pretrained",
    "RegularizationPath",
    "RegularizationPathRecord",
    "RoundRecord",
    "StartRecord",
    "StopWhenSettled",
    "StopWhenStagnant",
    "TimeLimit",
    "UntilConsistent",
    "UntilConsistentRecord",
    "UnverifiedChoiceWarning",
    "WarmStarted",
]
