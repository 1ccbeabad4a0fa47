"""Consensus ADMM training: one training problem split into blocks, each solved by an inner
algorithm of its own (:mod:`.consensus`)."""

from .consensus import ConsensusADMM
from .results import ConsensusRound, ConsensusSolution

__all__ = ["ConsensusADMM", "ConsensusRound", "ConsensusSolution"]
