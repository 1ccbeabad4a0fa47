"""The PEtab test suite (v1, SBML): every case imported and scored at its nominal parameters
against the expected log-likelihood, chi² and simulation table."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("petab")
pytest.importorskip("libsbml")
yaml = pytest.importorskip("yaml")

from collocnode.petab import import_petab  # noqa: E402

SUITE = Path(__file__).parent / "data" / "petab_test_suite"
CASES = sorted(p.name for p in SUITE.iterdir() if p.is_dir())


def case(name: str) -> tuple[Path, dict]:
    folder = SUITE / name
    return folder / f"_{name}.yaml", yaml.safe_load((folder / f"_{name}_solution.yaml").read_text())


def test_the_suite_is_vendored_whole():
    assert CASES == [f"{k:04d}" for k in range(1, 21)]


@pytest.mark.parametrize("name", CASES)
def test_case_scores_as_expected(name):
    import pandas as pd

    path, solution = case(name)
    problem = import_petab(path)
    score = problem.score()
    assert score.llh == pytest.approx(solution["llh"], abs=solution["tol_llh"])
    assert score.chi2 == pytest.approx(solution["chi2"], abs=solution["tol_chi2"])
    expected = pd.read_csv(path.parent / solution["simulation_files"][0], sep="\t")
    simulated = problem.simulation_table()
    np.testing.assert_allclose(
        simulated["simulation"].to_numpy(),
        expected["simulation"].to_numpy(),
        atol=solution["tol_simulations"],
    )
