"""The import paths and keywords of 0.2 keep working for one release, each with a
DeprecationWarning naming the new home."""

import importlib
import subprocess
import sys

import pytest

import collocnode
from collocnode import RadauIIA, UntilConsistent


def fresh(code: str) -> subprocess.CompletedProcess:
    """``code`` in a new interpreter with DeprecationWarnings shown (a module is imported
    once per process, and so warns once)."""
    return subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("old", "name", "new"),
    [
        ("collocnode.admm", "ConsensusADMM", "collocnode.strategies._admm"),
        ("collocnode.consistency", "UntilConsistent", "collocnode.strategies._until_consistent"),
        ("collocnode.consistency", "check_consistency", "collocnode.training._consistency"),
        ("collocnode.callbacks", "EarlyStopping", "collocnode.training._callbacks"),
        ("collocnode.warmstart", "fit_initial_guess", "collocnode.training._warmstart"),
        ("collocnode.io", "write_json", "collocnode.tools._io"),
        ("collocnode.tasks", "run_tasks", "collocnode.tools.tasks"),
        ("collocnode.transcription.ipopt_options", "IpoptOptions", "collocnode.transcription"),
        ("collocnode.transcription.algorithm", "RadauIIA", "collocnode.transcription"),
        ("collocnode.cli.main", "train_collocation", "collocnode._cli"),
        ("collocnode.cli.main", "sigterm_as_interrupt", "collocnode._cli.signals"),
        ("collocnode.cli.main", "OutputDirectory", "collocnode._cli.output"),
        (
            "collocnode.transcription.nlp",
            "StructuredNLP",
            "collocnode.transcription._nlp.structured",
        ),
        (
            "collocnode.transcription.ipopt",
            "solve_ipopt",
            "collocnode.transcription._ipopt.backends",
        ),
        ("collocnode.problems.vdp", "VanDerPol", "collocnode.problems._vdp"),
        ("collocnode.experiments.qvm", "train", "collocnode._experiments.qvm"),
        ("collocnode.solve", "solve", "collocnode._solve"),
    ],
)
def test_an_old_module_path_gives_the_new_object_and_warns(old, name, new):
    out = fresh(
        f"import importlib, {new.split('.')[0]}\n"
        f"old = getattr(importlib.import_module({old!r}), {name!r})\n"
        f"assert old is getattr(importlib.import_module({new!r}), {name!r})\n"
    )
    assert out.returncode == 0, out.stderr
    assert f"{old} moved to" in out.stderr and "DeprecationWarning" in out.stderr


def test_names_that_left_a_package_warn_on_use():
    for package, name in [
        ("collocnode.transcription", "AdaptiveRefinement"),
    ]:
        with pytest.warns(DeprecationWarning, match=f"{package}.{name} moved to"):
            getattr(importlib.import_module(package), name)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = collocnode.transcription.nothing


def test_the_old_simulate_module_leaves_the_function_callable():
    out = fresh(
        "import numpy as np, collocnode\n"
        "from collocnode.simulate import SimulationError\n"
        "import collocnode.simulate\n"
        "m = collocnode.NeuralODE([collocnode.nn.MLP((1, 2, 1), 'tanh')])\n"
        "x = collocnode.simulate(m, m.init_params(np.random.default_rng(0)), [0, 1], [1.0]).x\n"
        "assert x.shape == (2, 1)\n"
    )
    assert out.returncode == 0, out.stderr


def test_the_old_keyword_of_a_wrappers_inner_algorithm_warns():
    leaf = RadauIIA(10, 2)
    with pytest.warns(DeprecationWarning, match=r"UntilConsistent\(alg=...\) is now"):
        alg = UntilConsistent(alg=leaf)
    assert alg.inner is leaf


def test_an_unknown_old_name_is_an_attribute_error():
    out = fresh(
        "import collocnode.admm as a\ntry:\n    a.nothing\nexcept AttributeError as e:\n"
        "    print(e)\n"
    )
    assert "has no 'nothing'" in out.stdout, out.stderr
