"""The MBD-NODE presets reproduce the ground-truth arrays the MBD-NODE authors committed with
their code (public repository uwsbel/sbel-reproducibility, folder 2024/MNODE-code/saved_data,
"Ground_truth for <case> ..." files; float32, shape (n, bodies, [x, v])).

The values below are a small extract of those arrays, reordered to our state layout
[q..., q'...]. They are redistributed under the folder's BSD 3-Clause licence:
Copyright (c) 2024, Simulation-Based Engineering Lab at the University of Wisconsin-Madison.
"""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import problems

# sample index -> state, from the authors' arrays
DOUBLE_PENDULUM = {  # 400 samples, their grid linspace(0, 400 * 0.01, 400)
    0: (1.5707963705062866, 0.7853981852531433, 0.0, 0.0),
    1: (1.5703037977218628, 0.7853983044624329, -0.0982617437839508, 4.561732566799037e-05),
    100: (-0.41286468505859375, -1.3209105730056763, -1.5029070377349854, -3.8951900005340576),
    200: (-0.528756320476532, -0.5721737146377563, 1.1314808130264282, 4.801105976104736),
    300: (1.0043009519577026, 1.7117966413497925, -1.7629801034927368, 1.3949575424194336),
    399: (-0.5054740309715271, -1.6896862983703613, -2.7446036338806152, -0.9947144389152527),
}
SINGLE_MASS_SPRING = {  # 3000 samples at Δt = 0.01 s
    0: (1.0, 0.0),
    1: (0.999750018119812, -0.04999583214521408),
    300: (0.9110339283943176, -0.921987771987915),
    1000: (-0.932506263256073, 0.8075288534164429),
    2999: (-0.4659290909767151, 1.978502631187439),
}

SINGLE_MASS_SPRING_DAMPER = {  # 400 samples at Δt = 0.01 s
    0: (1.0, 0.0),
    1: (0.9997912645339966, -0.05005405470728874),
    100: (-0.5268226861953735, -1.5981967449188232),
    300: (0.6937295794487, -0.6856350302696228),
    399: (-0.5769332051277161, -0.7341468334197998),
}
TRIPLE_MASS_SPRING_DAMPER = {  # 400 samples at Δt = 0.01 s
    0: (1.0, 2.0, 3.0, 0.0, 0.0, 0.0),
    1: (
        0.9999791383743286,
        2.0,
        2.9979166984558105,
        -0.0049532498233020306,
        -0.0004629186005331576,
        -0.49541664123535156,
    ),
    100: (
        0.9078313708305359,
        0.46809324622154236,
        0.6025547981262207,
        -0.31394249200820923,
        -1.7067627906799316,
        -3.8770837783813477,
    ),
    300: (
        -0.5083972811698914,
        0.12656408548355103,
        0.15590617060661316,
        -0.5763638019561768,
        -1.3158559799194336,
        -1.3498636484146118,
    ),
    399: (
        -0.8768936395645142,
        -1.5415220260620117,
        -1.6132184267044067,
        -0.24313244223594666,
        -1.0105215311050415,
        -1.0061964988708496,
    ),
}


def _check(system, extract, t, atol):
    x = system.simulate(t).x
    for i, state in extract.items():
        np.testing.assert_allclose(x[i], state, atol=atol, err_msg=f"sample {i}")


def test_double_pendulum_preset_mbdnode_matches_the_authors_arrays():
    # their code samples linspace(0, N dt, N): a spacing of N dt / (N - 1), not dt. Over the
    # chaotic 4 s the arrays agree with our ground truth to 4.5e-7 (float32 rounding)
    system = problems.get("double_pendulum", "mbdnode")
    _check(system, DOUBLE_PENDULUM, np.linspace(0.0, 4.0, 400), atol=2e-6)


def test_double_pendulum_text_preset_is_another_experiment():
    system = problems.get("double_pendulum")  # the papers' text: θ(0) = (3π/7, 3π/4)
    x = system.simulate(np.linspace(0.0, 4.0, 400)).x
    assert np.abs(x[100] - DOUBLE_PENDULUM[100]).max() > 0.1


def test_single_mass_spring_matches_the_authors_arrays():
    # the arrays are float32 and drift from the exact solution x = cos(√5 t) by up to 2.7e-4
    # over 30 s (measured); a wrong ω or Δt would be off by O(1) at t = 30 s
    system = problems.get("sms")
    _check(system, SINGLE_MASS_SPRING, system.time_grid(), atol=5e-4)


@pytest.mark.parametrize("index", [300, 1000, 2999])
def test_a_one_percent_frequency_error_would_be_caught(index):
    system = problems.get("sms", k=50.0 * 1.01**2)
    x = system.simulate(system.time_grid()).x
    assert np.abs(x[index] - SINGLE_MASS_SPRING[index]).max() > 0.1  # measured 0.15 to 0.65


@pytest.mark.parametrize(
    ("problem", "extract"),
    [("smsd", SINGLE_MASS_SPRING_DAMPER), ("tmsd", TRIPLE_MASS_SPRING_DAMPER)],
)
def test_the_mass_spring_dampers_arrays_are_the_code_rk4s_solution(problem, extract):
    # the authors integrated these two with their code's first-order "RK4" at Δt = 0.01 s;
    # the mbdnode_arrays presets do the same (measured: 8.2e-7 and 2.1e-6, float32 rounding)
    arrays = problems.get(problem, "mbdnode_arrays")
    assert arrays.generator == "rk4_mbdnode_code"
    _check(arrays, extract, arrays.time_grid(), atol=5e-6)
    # the ODE's own solution (the code's system, exact ground truth) is another data set
    preset = "mbdnode_cubic" if problem == "smsd" else "mbdnode_code"
    ode = problems.get(problem, preset).simulate(arrays.time_grid()).x
    assert max(np.abs(ode[i] - x).max() for i, x in extract.items()) > 1e-3


def test_a_generator_that_blows_up_is_a_simulation_error():
    from collocnode.tools._ivp import SimulationError

    stiff = problems.get("smsd", "mbdnode_arrays", k=1e8)  # far beyond the scheme's stability
    with pytest.raises(SimulationError, match="rk4_mbdnode_code"):
        stiff.simulate(stiff.time_grid())
