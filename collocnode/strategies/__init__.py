"""Solve strategies: algorithms that hold an inner algorithm (`collocnode.algorithm`) and
nest with any other -- refinement until consistent, adaptive refinement, training phases,
stopping rules and time limits, a regularization path, multistart, consensus ADMM over blocks
of the data, discovery of a block's closed form with its re-fit, and the defaults of a first
solve ([`Auto`][collocnode.Auto])."""

from ._adaptive import AdaptiveRefinement, AdaptiveRefinementRecord, RoundRecord
from ._admm import ConsensusADMM, ConsensusADMMRecord, ConsensusRound
from ._auto import Auto, AutoRecord
from ._discovery import Discovered, DiscoveredRecord, DiscoveryWarning
from ._limits import StopWhenSettled, StopWhenStagnant, TimeLimit
from ._multistart import Multistart, MultistartRecord, StartRecord
from ._phases import PhasedRecord, Pretrained, WarmStarted
from ._regularization import (
    NaivePredictorWarning,
    PathPoint,
    RegularizationPath,
    RegularizationPathRecord,
    UnverifiedChoiceWarning,
)
from ._until_consistent import ConsistencyRound, UntilConsistent, UntilConsistentRecord

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
