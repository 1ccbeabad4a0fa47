"""Consensus ADMM training: one training problem split into blocks, each solved by an inner
algorithm of its own (`collocnode.strategies._admm.consensus`)."""

from .consensus import ConsensusADMM
from .results import ConsensusADMMRecord, ConsensusRound

__all__ = ["ConsensusADMM", "ConsensusADMMRecord", "ConsensusRound"]
