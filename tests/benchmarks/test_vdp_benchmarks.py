"""The Van der Pol benchmarks' building blocks: the exact-model fit of
``benchmarks/vdp_parametric_floor.py`` and the K-trajectory run of
``benchmarks/multi_trajectory_vdp.py``."""

from __future__ import annotations

from load_benchmark import load_benchmark as _load


def test_exact_model_fit_recovers_mu_from_noise_free_data():
    sol = _load("vdp_parametric_floor").fit_mu(noise=0.0, seed=0, intervals=100)
    assert sol.success
    assert abs(sol.p[0] - 1.0) < 1e-6


def test_exact_model_fit_on_noisy_data_lands_near_mu():
    # σ = 0.1 on 201 samples: the 100-seed study found μ = 0.9996 ± 0.0035
    sol = _load("vdp_parametric_floor").fit_mu(noise=0.1, seed=3, intervals=100)
    assert sol.success
    assert abs(sol.p[0] - 1.0) < 0.02


def test_nlp_size_is_affine_in_the_number_of_trajectories():
    # K trajectories: K blocks of node variables, constraints and derivative nonzeros plus the
    # shared weights and their Hessian block, so the second difference over K vanishes
    run = _load("multi_trajectory_vdp").run
    rows = [run(k, intervals=10, iterations=2, jit=False) for k in (1, 2, 3)]
    for key in ("variables", "nnz_jacobian", "nnz_hessian"):
        a, b, c = (r[key] for r in rows)
        assert c - 2 * b + a == 0, key
        assert b > a
