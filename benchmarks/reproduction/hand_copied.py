"""The ledger of the report's hand-written numbers: every number of the text outside the
generated blocks of ``docs/results.md``, paragraph by paragraph, with where it comes from (see
:mod:`reproduction.prose`, which checks the two against each other)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """The numbers of one hand-written paragraph (list item, table) of ``docs/results.md``.

    Attributes:
        anchor: how the paragraph starts (its first characters, unique among the entries).
        numbers: its numbers as the text prints them, space-separated (order free, each as
            often as it occurs).
        stored: the stored runs (folders of ``benchmarks/results``) they were copied from.
        source: where the rest come from, where that is not a stored run (the paper, a
            setting of the runs, a command whose output is not stored).
    """

    anchor: str
    numbers: str
    stored: tuple[str, ...] = ()
    source: str = ""


HAND_COPIED: tuple[Entry, ...] = (
    Entry(
        "`--check` writes nothing, says",
        "1",
        source="the script's exit status",
    ),
    Entry(
        "**Hardware and software.** One",
        "2 64 24 3.11 3.8 3.14 5.8 2.13 12 20 12800 5070",
        source="the machine's software versions and the papers' hardware",
    ),
    Entry(
        "Two 2-5-5-1 sigmoid networks, 500",
        "2 5 5 1 500 5 1e-7 200",
        stored=("gdopt-table3-sigma0", "gdopt-table3-sigma0.1", "gdopt-table3-sigma0.5"),
        source="the runs' settings",
    ),
    Entry(
        "Two variants the paper's table",
        "5",
        source="`python benchmarks/vdp_timing.py --repeats 5`, output not stored",
    ),
    Entry(
        "| variant | λ | paper total / iterations",
        "0 7 7 20 0 1e-4 3.07 8 6.3e-3 8.2e-3 0 70 1e-4 1.2 0.43 36 6.3e-3 8.1e-3",
        source=(
            "`python benchmarks/vdp_timing.py --repeats 5`, output not stored; the paper's < 1.2 s"
        ),
    ),
    Entry(
        "The paper reports no numeric error,",
        "0",
        source="notation (x(0))",
    ),
    Entry(
        "**Robustness (paper appendix, Fig.",
        "100 0 0 32 0.1 5 2",
        source=(
            "the settings of `python scripts/train_collocation.py vdp --seeds 100`, "
            "output not stored"
        ),
    ),
    Entry(
        "| σ | start | IPOPT converged |",
        (
            "0.1 0.2 0.5 0 97 100 3 96 96 96 0.015 100 0 100 100 8 3.5 100 100 100 "
            "0.015 0.021 100 0.1 100 100 31 58 98 0.165 95"
        ),
        source=(
            "`python scripts/train_collocation.py vdp --seeds 100` (cold and "
            "`--warm-start`), output not stored; the paper's rates"
        ),
    ),
    Entry(
        "At σ = 0, 4 cold runs failed: 3",
        "0 4 3 100 100 0 0.1 0.1 99",
        source=(
            "`python scripts/train_collocation.py vdp --seeds 100`, output not "
            "stored; the paper's targets"
        ),
    ),
    Entry(
        "The data are not what limits this.",
        "100 100 0.9996 0.0035 0 32 0.008 90 0.021 102 20 20 0.1",
        source=(
            "`python benchmarks/vdp_parametric_floor.py --noise 0.1 --seeds 100`, output not stored"
        ),
    ),
    Entry(
        "| λ | success (≤ 0.1) | ≤ 0.2 |",
        (
            "0.1 0.2 90 1e-5 25 35 0.61 4.27 1e-4 40 55 0.18 0.34 1e-3 35 75 0.13 "
            "0.29 1e-2 0 0 0.68 0.80"
        ),
        source=(
            "`python scripts/train_collocation.py vdp --noise 0.1 --seeds 20 "
            "--warm-start --regularization λ`, output not stored"
        ),
    ),
    Entry(
        "Two 1-5-5-1 squareplus networks",
        "1 5 5 1 2,500 5 42 150 4.95 0.123 5.77 0.139",
        stored=(
            "gdopt-table1-I",
            "gdopt-table1-II",
            "gdopt-table1-III",
            "gdopt-table1-III-paper",
            "gdopt-table1-III-W-paper",
            "gdopt-table1-I-400",
            "gdopt-table1-II-noise5",
        ),
        source="the runs' settings; the calibration of `docs/qvm.md`; the paper's noise",
    ),
    Entry(
        "The runs use the experiment's defaults,",
        "1e-3 10 0 1 2 2",
        stored=(
            "gdopt-table1-I",
            "gdopt-table1-II",
            "gdopt-table1-III",
            "gdopt-table1-III-paper",
            "gdopt-table1-III-W-paper",
            "gdopt-table1-I-400",
            "gdopt-table1-II-noise5",
        ),
        source="the runs' stopping rule",
    ),
    Entry(
        "- **Strategy I** (random weights,",
        "9.9 11 9 13",
        stored=(
            "gdopt-table1-I",
            "gdopt-table1-II",
            "gdopt-table1-III",
            "gdopt-table1-III-paper",
            "gdopt-table1-III-W-paper",
            "gdopt-table1-I-400",
            "gdopt-table1-II-noise5",
        ),
    ),
    Entry(
        "- **Strategy II**: the pre-training",
        "150 65 103 6 6.2 6.6 0.7 1.5 5",
        stored=(
            "gdopt-table1-I",
            "gdopt-table1-II",
            "gdopt-table1-III",
            "gdopt-table1-III-paper",
            "gdopt-table1-III-W-paper",
            "gdopt-table1-I-400",
            "gdopt-table1-II-noise5",
        ),
        source="the paper's quality target",
    ),
    Entry(
        "- **Strategy III** converges to",
        (
            "30 2 21 7.7 4.2 0.30 0.30 0.92 32 39 25 78 5.1 39 64 0.45 70 0.7 6.4 63 69 68 1 "
            "31.7 0.91 35 5 5.3 1.3 13 1.85 1.33 10.2 35"
        ),
        stored=(
            "gdopt-table1-I",
            "gdopt-table1-II",
            "gdopt-table1-III",
            "gdopt-table1-III-paper",
            "gdopt-table1-III-W-paper",
            "gdopt-table1-I-400",
            "gdopt-table1-II-noise5",
        ),
        source=(
            "the paper's 35 s and 32 parameters; seed 2's IPOPT log: `python "
            "scripts/train_collocation.py qvm --strategy III --rational-form paper "
            "--no-road-as-input --settle-rtol 0 --seed 2 --print-level 5`, output not stored"
        ),
    ),
    Entry(
        "- **Strategy I with more iterations.",
        "400 400 238 266 854 1091 2.2 2.8 394 6 8 5.9 7.3 8.2 8.5 150",
        stored=(
            "gdopt-table1-I",
            "gdopt-table1-II",
            "gdopt-table1-III",
            "gdopt-table1-III-paper",
            "gdopt-table1-III-W-paper",
            "gdopt-table1-I-400",
            "gdopt-table1-II-noise5",
        ),
        source="the paper's 394 s",
    ),
    Entry(
        "- **Five times the noise.** The",
        "10 32 65 152 298 1.002 1.004 4.6 8.1 1.5 1.6 6.2 6.6 0.7 1.5 0.044 0.048 0.05",
        stored=(
            "gdopt-table1-I",
            "gdopt-table1-II",
            "gdopt-table1-III",
            "gdopt-table1-III-paper",
            "gdopt-table1-III-W-paper",
            "gdopt-table1-I-400",
            "gdopt-table1-II-noise5",
        ),
        source="the run's noise setting",
    ),
    Entry(
        "- Times: medians 1.3–7.3× the paper's",
        "1.3 7.3 20 0.91 8.5",
        stored=(
            "gdopt-table1-I",
            "gdopt-table1-II",
            "gdopt-table1-III",
            "gdopt-table1-III-paper",
            "gdopt-table1-III-W-paper",
            "gdopt-table1-I-400",
            "gdopt-table1-II-noise5",
        ),
        source="the paper's machine",
    ),
    Entry(
        "NLP size (strategy II): 62,597",
        (
            "62,597 2,787,582 5,941,778 2.7e6 4.73e6 2,700,062 4,729,278 1.026 1.029 "
            "3.6 3.9 0.4 0.6 64.5 5 156 167"
        ),
        stored=("gdopt-table1-II",),
        source=(
            "the paper; the four-state formulation and strategy W from "
            "`docs/performance.md` (not stored here)"
        ),
    ),
    Entry(
        "Both papers report the MSE over",
        "3 2 16",
        source="the methods' settings",
    ),
    Entry(
        "- **Data.** Each row names its",
        (
            "3 4 2 8e-7 2e-6 1.1e-2 5e-2 4.5e-7 2.7e-4 30 1.1e-6 4.8e-6 2 4 9.8 "
            "1.2e-6 2 1.4e-5 0.19 1 2.1e-3 8000 0.005 2 2"
        ),
        stored=("fnode-table13-authors-code",),
        source=(
            "the comments of `tests/problems/test_mbdnode_arrays.py` (which checks "
            "looser bounds); the presets' settings"
        ),
    ),
    Entry(
        "- **The authors' code, run here.",
        "0.26 0.62 1.3 0.26 5.8 6.2 0.25",
        stored=("fnode-table13-authors-code",),
        source="ours: the label table of `docs/pytorch_methods.md` (its snippet, not stored)",
    ),
    Entry(
        "- **The MBD-NODE authors' code,",
        "200 1e-4 256 1e-3",
        source="the settings of their code and of the paper's Table 6",
    ),
    Entry(
        "- **Initialisation.** The authors'",
        "1",
        source="notation",
    ),
    Entry(
        "- **Epochs and seeds.** Each row",
        "15",
        source="the earlier protocol's budget",
    ),
    Entry(
        "- **Machine.** Several runs shared",
        "2",
        source="the machine",
    ),
    Entry(
        "Our vehicle's rollout follows the",
        "15 8.5e-3 0.14 5 58 73 262,144",
        stored=("fnode-vehicle4dof",),
        source="the preset's windows; the paper's 262,144 instances",
    ),
    Entry(
        "- **The slider-crank of that release",
        (
            "0.63 1.1e-1 0.013 1.1e-2 10 2.0 6.3 10 14.5 46 8.2e-2 0.25 4.8 4.9 "
            "2.1e-2 13.4 1.1 51 47 12.9 0.066 13.4 1.1 14.5 1.4 0.31 0.17 0.39 0.11 "
            "0.082 0.25 0.62 5.0e-2 1.2 2.1e-2 1.1e-2 4.8 30 0.18 0.11 0.19 4.6e-2 "
            "3.0e-2 5.5e-2"
        ),
        stored=(
            "fnode-table13-authors-code-bb",
            "fnode-table13-authors-code",
            "fnode-table13-slider_crank",
            "fnode-table13-slider_crank-2025",
        ),
        source="the paper",
    ),
    Entry(
        "- **On the same data, their MBD-NODE",
        (
            "30 1 0.48 615 622 434 446 4.0e-2 0.24 0.44 11 0.52 1.4 0.48 4.9 7.7e-3 "
            "3.9e-2 8.7e-5 3.4e-4 1.6e-4 1.8e-3 0.62 5.0e-2 1.2 0.24 4.0e-2 0.44 2.6 "
            "0.31 0.17 0.39 0.52 0.48 1.4 0.6 0.002"
        ),
        stored=(
            "fnode-table13-authors-code-bb",
            "fnode-table13-authors-code-bb-exact",
            "fnode-table13-slider_crank",
        ),
        source="the preset's inputs",
    ),
    Entry(
        "- **The authors' committed arrays",
        "1.1 4.8",
        stored=("mbdnode-table4-authors-code",),
    ),
    Entry(
        "The ratios are in the tables above",
        "3",
        source="the report's threshold",
    ),
    Entry(
        "- **FNODE Table 13's slider-crank,",
        (
            "1 3.1e-1 1.7e-1 0.97 2.3 2.4 6.2e-1 8.7e-1 0.058 1.4 24 3.4 3.1 0.88 2.3"
            " 2.6 2.1e-2 6.1e-1 7.9e-2 2 9.3e-6 2.0e-5 0.91 0.23 1 0.5"
        ),
        stored=("fnode-table13-slider_crank", "fnode-table13-authors-code-bb"),
        source="the paper",
    ),
    Entry(
        "- **FNODE Table 13's slider-crank LSTM:",
        (
            "3.9 1.5 4.2 9.6 0.81 10 5.9 5.5 2.1 1.4 6.6 2.8 1.0 2 0.71 4.7 6.6 1 2 "
            "14.5 46 0.36 0.30 0.91 1.7 1.6 0.32 1.0 6.6 14.5 13.4 1.1 2.4 0.36 0.26 "
            "0.46 26 31 0.30 1.7 2.5 1.4 3.9 8.9e-7 9.9e-7 4500 0.1 3.0 3.2 1.3 0.38 "
            "2.9e1 2.5e1 3.3e1 0.1 0.05 0.06 9.7e-8 1.8e-7 16 0 5.3 5.3 5.5 0.1 1.1 "
            "1.65 1 0.5"
        ),
        stored=(
            "fnode-table13-slider_crank",
            "fnode-table13-slider_crank-2025",
            "fnode-table13-authors-code-bb",
            "fnode-table13-authors-code",
            "fnode-table13-slider_crank-lstm-partition",
            "fnode-table13-slider_crank-lstm-data-start",
        ),
        source=(
            "the paper; the times of the roll-outs' drift from `python "
            "benchmarks/rollout_drift.py`, output not stored"
        ),
    ),
    Entry(
        "- **FNODE Table 13's slider-crank of the authors' first release: our FNODE",
        (
            "1.4e-2 5.3e-2 3.5e-2 2 4.8e-3 3 11 333 356 5.7e-2 8.8e-2 5.7e-2 1.6 12 "
            "1e-3 0.98 1.8e-2 1.5e-2 6.6e-2"
        ),
        stored=(
            "fnode-table13-slider_crank-2025",
            "fnode-table13-slider_crank-2025-fnode-code",
            "fnode-table13-authors-code",
        ),
        source="their command's settings",
    ),
    Entry(
        "- **FNODE Table 13's slider-crank of the authors' first release: our FCNN",
        (
            "8.5 170 3.0e-2 4.6e-2 5.5e-2 9.5e-4 4.7e-3 1.0e-3 66 3.0 3.3 0.39 0 1 3 "
            "45 0.1 0.01 0 150 0.92 0.46 2.3 2.4 2.5 2.2 2.8 3.4 2.7 7.1 6.3"
        ),
        stored=(
            "fnode-table13-slider_crank-2025",
            "fnode-table13-slider_crank-2025-fcnn-time",
            "fnode-table13-slider_crank",
            "fnode-table13-slider_crank-fcnn-time",
            "fnode-table13-authors-code",
            "fnode-table13-authors-code-bb",
        ),
        source="the windows and their data's time column",
    ),
    Entry(
        '- **MBD-NODE Table 5, "Numerical,',
        "2.0e-3 2.0e-3 30 1e-14",
        stored=("mbdnode-table5-sms-rk4-code", "mbdnode-table5-sms-rk4"),
        source="the paper",
    ),
    Entry(
        '- **MBD-NODE Table 5, "MBD-NODE,',
        "9.2e-1 35 66",
        stored=("mbdnode-table5-sms-rk4-code",),
        source="the paper",
    ),
    Entry(
        "- **HNN on the single mass-spring",
        ("1.9e-2 2.5e-5 1.6e-5 2.5e-5 2.0e-3 30,000 6.1e-2 3.2 7.2e-4 2.5e-5 30 10 30 2999 0.01"),
        stored=("mbdnode-table4-sms", "mbdnode-table4-authors-code"),
        source="the paper; their script's settings and sampling",
    ),
    Entry(
        "- **Single pendulum (ours far below",
        "2.0e-3 0.01 0.01 2.7e-2 1.8e-6",
        stored=("mbdnode-table13-pendulum-euler", "mbdnode-table13-pendulum-midpoint"),
        source="the paper; its step",
    ),
    Entry(
        "- **Cart-pole LSTM: the start of",
        (
            "400 17 12 65 100 4.8e-4 4.5e-4 4.5e-3 2.5e-2 1.8e-2 8.6e-2 1.6e-3 16 "
            "1.3e-3 2.7e-4 2.4e-3 3.9 0.85 7.5 8.8 1 4.3 6.2e-3 9.4e-4 1.1e-2 1.2e-1 "
            "4.2e-2 1.6e-1 22 5.4e-3 3.9e-3 2.1e-2 6.9e-3 4.5e-3 2.0e-2 16 1.3e-3 "
            "2.7e-4 2.4e-3 4.1e-2 3.1e-2 4.7e-2 11"
        ),
        stored=(
            "mbdnode-table4-cart_pole",
            "mbdnode-table4-cart_pole-lstm-data-start",
            "mbdnode-table4-cart_pole-lstm-torch-init",
            "mbdnode-table4-cart_pole-lstm-start",
            "mbdnode-table4-cart_pole-fcnn-torch-bias",
        ),
        source="the paper; the settings",
    ),
    Entry(
        "- **FCNN: the biases.** The FCNN",
        (
            "1 4 8e-4 1.6e-3 0.19 0.29 0.26 0.32 0.32 0.50 1.2e-6 2.3e-6 1.3e-2 "
            "1.8e-2 0.73 0.44 0.95 2.1 2 2.2 0.63 2.9 2.4e-4 2.1 0.5 12 8.8 12"
        ),
        stored=(
            "mbdnode-table4-fcnn-seeds",
            "mbdnode-table4-smsd",
            "mbdnode-table4-tmsd",
            "mbdnode-table4-smsd-fcnn-torch-bias",
            "mbdnode-table4-tmsd-fcnn-torch-bias",
            "mbdnode-table4-cart_pole-fcnn-torch-bias",
            "mbdnode-table4-authors-code",
        ),
        source="the paper",
    ),
    Entry(
        "- **FNODE on the triple mass-spring-damper**",
        "3 2.2 19 6.7e-4 6.2 0.62 0.25 1.0e-3 1.5",
        stored=("fnode-table13-tmsd", "fnode-table13-tmsd-fnode-fd", "fnode-table13-authors-code"),
        source="ours' labels: the label table of `docs/pytorch_methods.md`, not stored",
    ),
    Entry(
        "- **FNODE_LF on the single mass-spring",
        (
            "9.7e-5 100 2.0 300 0.51 0.035 0 7.8e-3 7.9e-3 1e-3 1.9e-5 1.9e-5 9.4e-6 "
            "6.2e-5 0.1 0.64 0.05 0.46 5.7e-6 5.7e-7 0.01 9.9e-7 30 1e-14"
        ),
        stored=("fnode-fig2-sms-lf", "fnode-fig2-sms-lf-fd"),
        source=(
            "the paper; the label table of `docs/pytorch_methods.md` and the seed-0 "
            "runs of `python scripts/compare.py sms --methods fnode|numerical ...` "
            "named there, output not stored"
        ),
    ),
    Entry(
        "| run(s) | per seed |\n|---|---",
        "5.3 1000 500 1,044 1,477 1000 100 1000 191 229",
        stored=(
            "fnode-table13-slider_crank-2025",
            "snde-baselines-rigid_body",
            "snde-baselines-dcdc",
            "snde-table3-dcdc-1000",
        ),
        source="the papers' epochs",
    ),
    Entry(
        "Below the papers' protocol besides:",
        "1000 100 20 55 64 6 1000 1.6 10 45 32 54 55 14,000",
        stored=("snde-table3-two_body-seeds",),
        source=(
            "the paper; the one-epoch timings of `python "
            "benchmarks/snde_stable_time.py --trials 1 --epochs 1 --batch-size 1 "
            "--horizon 1`, output not stored, and the estimates from them"
        ),
    ),
    Entry(
        "MBD-NODE Table 4's cart-pole follows",
        "2",
        source="notation (θ'²)",
    ),
    Entry(
        "The default slider-crank preset",
        "3 0.002 0.2 0.2 1 1e-3 0.98 5e-4 0.99 1 2.1e-3 0.19 0.5 45 4.3 240",
        stored=("fnode-table13-authors-code", "fnode-table13-authors-code-bb"),
        source="the generators' settings and their commands",
    ),
    Entry(
        "`python scripts/compare.py vdp",
        "201 0 7 7 20 120 20 6 11",
        source="the command above, output not stored",
    ),
    Entry(
        "| method | train time | iterations / epochs | train",
        "500 5 2 5 5 1 11.1 32 4.3e-5 1.2e-4 11.1 2 256 120.8 916 0.459 2.64 2.15",
        source=(
            "`python scripts/compare.py vdp --methods collocation,node --budget 120`,"
            " output not stored"
        ),
    ),
    Entry(
        "The seed paper quotes 4.5 h for",
        "4.5 42 0.0109 2 1.03 116 2,700 20 2.2 11.9 2 0.73 2",
        stored=("compare-qvm",),
        source="Kamp et al.'s 4.5 h",
    ),
    Entry(
        "**Sequential NODE against collocation",
        "20 3 1 3 3 1e-3 2 128",
        source="the command below, output not stored",
    ),
    Entry(
        "| method | train time | iterations / epochs | test-road",
        "2 5.1 30 30 0.080 5.1 271 53 331 1.41 1.41 206",
        source=(
            "`python scripts/compare.py qvm --quick --methods collocation,node "
            "--budget 270 ...`, output not stored"
        ),
    ),
    Entry(
        "The NODE's test-road error fell",
        "2.54 1.41 2 270 20 102 2.28 20 1e-7 1e-9",
        source="the same run, output not stored; its tolerances",
    ),
    Entry(
        "Each PyTorch method of the multibody",
        "10",
        source="the benchmark's setting",
    ),
    Entry(
        "In the stored run (one core of",
        "2 0.52 0.78 0.91 0.99 1.20 1.23",
        stored=("epoch-time", "epoch-time-slider_crank"),
    ),
    Entry(
        "The papers trained on a GPU (FNODE's",
        "80 16 2.11 3",
        source="the machine of the table below",
    ),
    Entry(
        "| case | CUDA [s] | one CPU thread",
        (
            "0.99 1.46 0.68 1.21 2.27 0.53 0.60 1.00 0.61 0.35 0.23 1.52 1.14 0.47 "
            "2.43 0.28 0.15 1.87 1.03 0.54 1.88 0.34 0.14 2.42"
        ),
        source=(
            "`python benchmarks/epoch_time_devices.py --devices cuda,cpu ...` on an "
            "H100, output not stored"
        ),
    ),
    Entry(
        "At these rates one LSTM cell of",
        "300 400 300 5 8 2.11",
        source="the table above and the papers' epochs",
    ),
    Entry(
        "All twelve ran their 300 epochs",
        "300 258 395 1.3 0.99 1.4e-2 1.6e-2 6.8e-2 6.3e-2 2.3e-1 3.1e-1 3.8e-3 2.7e-3",
        stored=(
            "fnode-table13-smsd",
            "fnode-table13-tmsd",
            "fnode-table13-double_pendulum",
            "fnode-table13-cart_pole",
        ),
        source="the H100 table above",
    ),
    Entry(
        "With its training step captured",
        "16 2.11 3",
        stored=("epoch-time-cuda-graph",),
    ),
    Entry(
        "| case | eager CUDA step [s] |",
        "1.28 0.149 0.116 1.00 0.111 0.111",
        stored=("epoch-time-cuda-graph",),
    ),
    Entry(
        "(`benchmarks/results/epoch-time-cuda-graph/`.",
        "7e-8 2e-5 2e-2 3 4 1e-3 1e-5 1e-4",
        stored=("epoch-time-cuda-graph",),
        source="the tolerances of `tests/compare/test_graphed_step.py`",
    ),
    Entry(
        "The MBD-NODE Table 4 LSTMs (five",
        "400",
        source="the paper's epochs",
    ),
    Entry(
        "All fifteen ran their 400 epochs",
        (
            "400 316 352 60 712 1036 1.2e-2 1.3e-2 5.6e-2 5.9e-2 3.6e-3 3.5e-3 1.7e-1"
            " 1.5e-1 8.2e-3 5.4e-3"
        ),
        stored=(
            "mbdnode-table4-smsd",
            "mbdnode-table4-tmsd",
            "mbdnode-table4-pendulum",
            "mbdnode-table4-double_pendulum",
            "mbdnode-table4-cart_pole",
            "epoch-time-cuda-graph",
        ),
    ),
    Entry(
        "FNODE Table 13's slider-crank LSTM",
        "1500 300 18",
        source="the paper's settings",
    ),
    Entry(
        "All three trained their 300 epochs",
        (
            "300 361 364 2376 4191 6.6 2.8 1.0 5.9 5.5 2.1 1.1 2.1 4500 1.2e-6 1.3e-6"
            " 8.9e-7 9.9e-7 315 316 1.6 0.32 2295 0.30"
        ),
        stored=("fnode-table13-slider_crank", "fnode-table13-slider_crank-2025"),
    ),
    Entry(
        "On the H100 `python benchmarks/cuda_check.",
        "1e-6 5e-15 7.4e-13 3.3e-11 1e-15 131 1262 49 131 4e-16",
        source="`python benchmarks/cuda_check.py --epochs 2`, output not stored",
    ),
    Entry(
        "What the stable-time runs show",
        (
            "1000 1 60 88.9 121.7 100 12 60 11 20 100.7 113.9 1000 1.9e-3 2.4e-3 "
            "3.3e-3 3.9e-3 17 60 5 7 5 48.5 160 140.1 110.5 1583 1644 1000 29 46 20 "
            "1000 2 2979 2974 2646 3600 2.3e-3 2.2e-3 1.8e-3 893 987 48 60 20 60 160 "
            "1 62.5 75.3 50.0 46.7 38.7 45.2 7.1e-4 5.5e-4 3.7e-4 1.2e-2 6 60 3 629.6"
            " 1600 1600 341.7"
        ),
        stored=(
            "snde-table3-two_body-seeds",
            "snde-table3-dcdc-seeds",
            "snde-table3-dcdc-1000",
            "snde-table3-dcdc-1000-snode",
            "snde-table3-rigid_body-seeds",
        ),
        source="the paper",
    ),
    Entry(
        "The SNDE paper's other baselines",
        "40 2 2 1 2 2 0.5 2 2 2 2 0.13 0 1",
        source="the paper's Table 4 options and systems",
    ),
    Entry(
        "What the two-body run shows (three",
        "1000 10 200",
        stored=("snde-baselines-two_body",),
        source="the paper's trial length",
    ),
    Entry(
        "- **As the paper shows:** the SNODE",
        "30 7.2e-4 1.7e-2 1 47 94 41 44 0.84 200",
        stored=("snde-baselines-two_body",),
    ),
    Entry(
        "- **Not as the paper shows:** the ANODE",
        "26 30 51 36 73 30 54 18 182 112 182 18 68 200 0.25 5.1e-2 1 109 200 121.7 1 60 88.9",
        stored=("snde-baselines-two_body", "snde-table3-two_body-seeds"),
        source="the paper",
    ),
    Entry(
        "What the rigid-body run shows (three",
        "10 400 27 15",
        stored=("snde-baselines-rigid_body",),
        source="the training window",
    ),
    Entry(
        "- **As the paper shows:** the ANODE diverges in 26",
        ("26 30 10 7 9 252 84 348 1 66 1.5e-4 3.1e-4 1e-4 3.4e-3 1.6e-8 1e-10 0.81 0.60 1 314 390"),
        stored=("snde-baselines-rigid_body",),
        source="the paper's figures",
    ),
    Entry(
        "- **Not as the paper shows:** the SANODE",
        "7.1e-3 0.61 5 6 10 7 30 6 92 210 335 1 141 400 2.4e-2 6.9 1 293 1600 629.6",
        stored=("snde-baselines-rigid_body", "snde-table3-rigid_body-seeds"),
    ),
    Entry(
        "- **The (S)ANODE's loss.** The",
        "2e-7 400 35 43 0.49 0.49 32 0.0154 4.4e-4 2.6e-5 1.2e-4 400 1.8 7",
        source=(
            "`bash benchmarks/reproduce.sh snde-sanode-drift "
            "snde-sanode-drift-augmented-loss`, output not stored"
        ),
    ),
    Entry(
        "- **Why the SANODEs of seeds 1",
        (
            "0 3 0 0 0 400 3.23e-7 3.07e-7 4.06e-7 0 0 0.036 400 0.009 0.003 0.002 "
            "400 4.4e-4 1 0.014 0.38 100 86 200 335 0.51 400 2 0.15 0.75 50 2.8 2.9 "
            "100 4.5e4 4.3e6 200 214 214 234 1e-3 9 5 0.15 86 0.036 26.8 0.003 0.025 "
            "0 32 0 0"
        ),
        stored=("snde-baselines-rigid_body",),
        source=(
            "`bash benchmarks/reproduce.sh snde-sanode-drift-augmented-loss ...-seed1"
            " ...-seed2`, output not stored"
        ),
    ),
    Entry(
        "What the DC-DC run shows (three",
        "100 10 160",
        stored=("snde-baselines-dcdc",),
        source="the paper's trial length",
    ),
    Entry(
        "- **As the paper shows:** the ANODE diverges in 29",
        "29 30 74.8 24.5 153.1 1 8.3 0.13 2.6e-4 9.4e-3 0.18",
        stored=("snde-baselines-dcdc",),
    ),
    Entry(
        "- **Not as the paper shows:** the plain",
        "5 30 1 30.0 30.2 13.9 1.3 1.4 1.1 100 64 1000",
        stored=("snde-baselines-dcdc",),
        source="the paper's epochs",
    ),
    Entry(
        "What the HNN run shows (two-body",
        "1000 10 200 0.048 1000 2.8e-6 19 0.7 5.9 1.0e-5 1.4e-5 343 356",
        stored=("snde-hnn-two_body",),
        source="the run with `--models hnn_code`, output not stored",
    ),
    Entry(
        "- **As the paper shows:** the HNN",
        "27 30 1 12.3 4.8 29.6 200 47 4.9 39 7 1107 5.1e-2 7.2e-4 0.10 0.21 0.13 200",
        stored=("snde-hnn-two_body", "snde-baselines-two_body"),
    ),
    Entry(
        "- **Not as the paper shows:** no",
        "10 3 200 5 30 50",
        stored=("snde-hnn-two_body",),
        source="the paper's 50 s",
    ),
    Entry(
        "**§5.1, equation discovery** (`python",
        "1 0.1 8 8 12 12 500 3 40 2906 16",
        stored=("mnn-discovery",),
        source="the benchmark's settings",
    ),
    Entry(
        "On this trajectory (one run on",
        "729 0.16 0.9998 345 0.85 879 0.26 40,000 2 1024 5e-9 6.9e-8 3 3 4e-5 2e-14",
        stored=("mnn-two-body",),
        source="the paper",
    ),
    Entry(
        "On one CPU thread (median of three",
        "2 500 31 40 1.7 500 1000 0.49 3 300 9.7 300 323 1000 33 3.3 1 1.2 500",
        stored=("mnn-table2-cpu", "mnn-table2-gpu"),
    ),
)
