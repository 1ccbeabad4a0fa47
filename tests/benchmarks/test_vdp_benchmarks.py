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


def test_width_crossover_runs_every_path_on_a_tiny_cell():
    import argparse

    mod = _load("width_crossover")
    assert [mod.n_weights(h) for h in (5, 16, 32)] == [102, 674, 2370]
    args = argparse.Namespace(
        widths=[2],
        ks=[2],
        paths=list(mod.PATHS),
        intervals=2,
        blocks=2,
        iterations=3,
        repeats=1,
        skip_s=60.0,
        max_work=1e9,
        ordering="auto",
    )
    rows = mod.grid(args)
    assert [r["path"] for r in rows] == list(mod.PATHS)
    for r in rows:
        assert r["nodes"] == 12 and r["weights"] == mod.n_weights(2)
        assert r["s_per_iteration"] > 0
    args.max_work = 0  # every path but limited-memory skipped
    skipped = [r["path"] for r in mod.grid(args) if "skipped" in r]
    assert skipped == ["exact", "bfgs", "admm"]
