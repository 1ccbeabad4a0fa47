"""RadauIIA: sizes beyond the collocation tables or this machine's memory are one clear error
at construction, before any array of that size is allocated."""

from __future__ import annotations

import pytest

from collocnode import RadauIIA
from collocnode import _validation as v
from collocnode.recipes import CollocationSettings


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: RadauIIA.spectral(1000), r"^nodes must be at most 200, got 1000$"),
        (lambda: RadauIIA.spectral(0), r"^nodes must be a positive integer, got 0$"),
        (lambda: RadauIIA(stages=201), r"^stages must be at most 200, got 201$"),
        (
            lambda: RadauIIA(10**12, 2),
            r"^intervals=1000000000000 × stages=2 needs 2000000000001 collocation nodes",
        ),
        (lambda: CollocationSettings(spectral=1000), r"^spectral must be at most 200 nodes"),
        (
            lambda: CollocationSettings(intervals=10**12),
            r"^intervals=1000000000000 × stages=3 needs 3000000000001 collocation nodes",
        ),
    ],
)
def test_sizes_past_the_tables_or_the_memory_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_the_memory_check_counts_intervals_times_stages(monkeypatch):
    monkeypatch.setattr(v, "physical_memory_bytes", lambda: 8 * 1000)
    assert RadauIIA(333, 3).intervals == 333  # 1000 nodes fit
    with pytest.raises(ValueError, match=r"^intervals=334 × stages=3 needs 1003 collocation"):
        RadauIIA(334, 3)


def test_spectral_keeps_one_interval():
    alg = RadauIIA.spectral(70)
    assert (alg.intervals, alg.stages) == (1, 70)
