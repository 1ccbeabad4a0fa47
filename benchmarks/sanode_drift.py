#!/usr/bin/env python
"""Where the SANODE's drift off the rigid body's sphere comes from (SNDE Fig. 2 and 8 draw the
SANODE on the sphere, beside the SNODE).

Trains the SANODE of ``snde_stable_time.py --models sanode`` on the rigid body (the same data,
options and seed, ``--seed``; 500 epochs in batches of 64, as the stored run
``snde-baselines-rigid_body``), rolls it out from the first ``--trials`` test states of that
seed over ``--horizon`` seconds, and reports at a few times of each rollout (up to its
divergence, if it diverges):

* the drift ``g(u) − g(u0)`` of the constraint the SNDE stabilizes (the Casimir),
* the learned field's component across the constraint's level set, ``G f_θ``: the SNDE
  right-hand side is ``u' = f_θ − γ G⁺ (g − g0)`` (SNDE eq. 12), so ``f_θ = u' + γ G⁺ (g − g0)``,
* ``G f_θ / γ``, the drift at which the stabilization balances that component (``d(g − g0)/dt
  = G f_θ − γ (g − g0)``),
* the norm of the augmented states ``|a|`` (they start at 0 and are fitted to 0 over the 3-step
  training chunks, each of which starts them at 0 again) and ``G f_θ`` at the same real state
  with ``a = 0``: what of the component across comes from ``a`` leaving 0,
* the kinetic energy ``H = Σ u_i² / (2 I_i)`` of the rollout and of the truth,

and, at the end of each rollout, the state and the speed ``|u'|``.

    python benchmarks/sanode_drift.py [--seed 0] [--epochs 500] [--batch-size 64] [--trials 3]
        [--horizon 400] [--augmented-loss] [--json FILE]

``--augmented-loss`` trains the SANODE with its augmented states fitted to zero in the loss
(``NODEOptions.augmented_loss``), as the SNDE code's loss does with its zero-padded data.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import snde_stable_time as sst

from collocnode.tools._io import write_json
from collocnode.tools._machine import run_record

TIMES = (0.0, 5.0, 15.0, 25.0, 50.0, 100.0, 200.0, 400.0)


def along(trainer: Any, system: Any, t: np.ndarray, truth: np.ndarray) -> dict[str, np.ndarray]:
    """The rollout from ``truth[0]`` over ``t`` (``x``, ``dx``: its right-hand side), the
    drift ``g − g0`` of the first constraint, ``G f_θ`` of the module docstring, and the
    kinetic energy of the rollout and of the truth; each ``(n,)`` but ``x``, ``dx``
    ``(n, n_states)``. A rollout that diverges is cut before the sample where it did:
    ``n`` is then smaller than ``t.size`` (1 for a divergence at the first step), and
    ``diverged_at`` (else None) is the earliest time [s] a rollout diverged at."""
    import torch

    from collocnode.compare import DivergenceError
    from collocnode.compare.methods.snde import constraint_functions, stabilization

    funcs = constraint_functions(system)
    diverged_at = None
    while True:
        try:
            x, dx = trainer.predict_with_derivatives(t, truth[0])
            break
        except DivergenceError as exc:
            if t.size == 1:
                raise
            # an adaptive solver's rollout over the shorter grid takes other steps and may
            # diverge earlier: cut again (each cut is shorter, and the first sample, the
            # finite initial state, always stays)
            diverged_at = exc.t if diverged_at is None else min(diverged_at, exc.t)
            keep = max(1, min(exc.step, t.size - 1))
            t, truth = t[:keep], truth[:keep]
    ref = funcs[0](truth[:1], t[:1])  # (1, n_constraints): the constraints at the start
    refs = np.broadcast_to(ref, (t.size, ref.shape[1]))
    gamma = trainer.options.gamma
    field = dx + gamma * stabilization(funcs, x, t, refs, trainer.options.stabilizer)
    augmented = trainer.augmented_states(t, truth[0])
    # the learned field at the same real states with the augmented ones at their start, 0: the
    # rigid body has no inputs or parameters, and its model state is the whole state
    with torch.no_grad():
        za = torch.as_tensor(np.hstack([x, np.zeros_like(augmented)]), dtype=trainer.dtype)
        empty = torch.zeros((t.size, 0), dtype=trainer.dtype)
        at_zero = trainer.field(za, empty, torch.zeros(0, dtype=trainer.dtype)).numpy()
    jacobian = funcs[1](x, t)
    inertia = system.inertia
    return {
        "x": x,
        "dx": dx,
        "augmented": np.linalg.norm(augmented, axis=1),
        "drift": (funcs[0](x, t) - refs)[:, 0],
        "G_f": np.einsum("kmn,kn->km", jacobian, field)[:, 0],
        "G_f_at_a0": np.einsum("kmn,kn->km", jacobian, at_zero[:, : x.shape[1]])[:, 0],
        "energy": 0.5 * (x * x / inertia).sum(axis=1),
        "energy_true": 0.5 * (truth * truth / inertia).sum(axis=1),
        "diverged_at": diverged_at,
    }


def analyse(trainer: Any, system: Any, t: np.ndarray, truth: np.ndarray) -> dict[str, Any]:
    """The figures of :func:`along` at ``TIMES``, the state and speed at the end."""
    a = along(trainer, system, t, truth)
    gamma, t = trainer.options.gamma, t[: len(a["x"])]
    rows = []
    for when in TIMES:
        if when > t[-1]:
            break
        k = int(np.argmin(np.abs(t - when)))
        rows.append(
            {
                "t": float(t[k]),
                "drift": float(a["drift"][k]),
                "G_f": float(a["G_f"][k]),
                "G_f_over_gamma": float(a["G_f"][k] / gamma),
                "G_f_at_a0": float(a["G_f_at_a0"][k]),
                "augmented": float(a["augmented"][k]),
                "energy": float(a["energy"][k]),
                "energy_true": float(a["energy_true"][k]),
            }
        )
    return {
        "times": rows,
        "state_end": a["x"][-1].tolist(),
        "speed_end": float(np.linalg.norm(a["dx"][-1])),
        "diverged_at": a["diverged_at"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0, help="the seed of snde_stable_time's unit")
    p.add_argument("--epochs", type=int, default=500)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--horizon", type=float, default=400.0)
    p.add_argument(
        "--augmented-loss",
        action="store_true",
        help="fit the augmented states to zero in the loss, as the SNDE code does",
    )
    p.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = p.parse_args(argv)
    header = run_record("benchmarks/sanode_drift.py", argv)

    import torch

    from collocnode import problems

    torch.set_num_threads(1)
    cfg = sst.Config(
        systems=("rigid_body",),
        trials=args.trials,
        epochs=(("rigid_body", args.epochs),),
        batch_size=args.batch_size,
        horizon=args.horizon,
        models=("sanode",),
    )
    system = problems.get("rigid_body")
    # the data and test states of snde_stable_time.run_unit with this seed
    data = sst.training_data(system, cfg.n_train, np.random.default_rng([args.seed, 0]))
    rng = np.random.default_rng([args.seed, 1])
    t, truths = sst.test_trials(system, cfg.trials, cfg.horizon, rng)
    # the SANODE of snde_stable_time.make_models, with the loss asked for (its own fits the
    # augmented states to zero, as --augmented-loss does)
    trainer = sst.make_models("rigid_body", cfg, seed=args.seed)["SANODE"]
    trainer.options = replace(trainer.options, augmented_loss=args.augmented_loss)
    fit = trainer.fit(system, data)
    print(f"SANODE: {fit.status}, {fit.message}, {fit.train_time_s:.0f} s", flush=True)
    out = {
        **header,
        "seed": args.seed,
        "gamma": trainer.options.gamma,
        "augment": trainer.options.augment,
        "augmented_loss": trainer.options.augmented_loss,
        "train_time_s": fit.train_time_s,
        "trials": [analyse(trainer, system, t, truth) for truth in truths],
    }
    for k, trial in enumerate(out["trials"]):
        cut = trial["diverged_at"]
        print(
            f"trial {k}: state at the end {np.round(trial['state_end'], 6).tolist()}, "
            f"speed {trial['speed_end']:.2g}"
            + ("" if cut is None else f" (diverged at {cut:.1f} s)")
        )
        print("  t [s]   g - g0     G f_θ    G f_θ / γ  G f_θ(a=0)  |a|      H       H (truth)")
        for r in trial["times"]:
            print(
                f"  {r['t']:5.0f}  {r['drift']:9.3g}  {r['G_f']:8.3g}  {r['G_f_over_gamma']:9.3g}"
                f"  {r['G_f_at_a0']:9.3g}  {r['augmented']:8.3g}"
                f"  {r['energy']:6.3f}  {r['energy_true']:6.3f}"
            )
    if args.json is not None:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
