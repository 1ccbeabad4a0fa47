"""Bad PEtab input: one error naming the file (and row and column), nothing written."""

import shutil
from pathlib import Path

import pytest

pytest.importorskip("petab")
pytest.importorskip("libsbml")

from collocnode.petab import PetabError, import_petab

CASE = Path(__file__).parent / "data" / "petab_test_suite" / "0005"


@pytest.fixture
def case(tmp_path):
    folder = tmp_path / "case"
    shutil.copytree(CASE, folder)
    return folder


def files(folder):
    return sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir())


def test_missing_yaml(tmp_path):
    with pytest.raises(PetabError, match="no such PEtab problem file"):
        import_petab(tmp_path / "nothing.yaml")


def test_missing_table(case):
    (case / "_measurements.tsv").unlink()
    with pytest.raises(PetabError, match=r"measurement file '_measurements.tsv' does not exist"):
        import_petab(case / "_0005.yaml")


def test_unknown_id_in_the_condition_table_names_file_row_and_column(case):
    table = case / "_conditions.tsv"
    lines = table.read_text().splitlines()
    header = lines[0].split("\t")
    row = lines[2].split("\t")
    row[header.index("offset_A")] = "no_such_parameter"
    lines[2] = "\t".join(row)
    table.write_text("\n".join(lines) + "\n")
    before = files(case)
    with pytest.raises(PetabError) as error:
        import_petab(case / "_0005.yaml")
    assert str(error.value) == (
        "_conditions.tsv, row 3, column 'offset_A': 'no_such_parameter' is no parameter of the "
        "problem"
    )
    assert files(case) == before


def test_a_wrong_override_count_names_the_measurement_row(tmp_path):
    case = tmp_path / "case"
    shutil.copytree(CASE.parent / "0003", case)
    table = case / "_measurements.tsv"
    text = table.read_text().splitlines()
    header = text[0].split("\t")
    assert "observableParameters" in header
    row = text[1].split("\t")
    row[header.index("observableParameters")] = "1;2;3"
    text[1] = "\t".join(row)
    table.write_text("\n".join(text) + "\n")
    with pytest.raises(PetabError) as error:
        import_petab(case / "_0003.yaml")
    assert str(error.value).startswith("_measurements.tsv, row 2, column 'observableParameters'")


def test_an_sbml_event_is_refused_by_name(case):
    model = case / "_model.xml"
    text = model.read_text()
    event = (
        '<listOfEvents><event id="dose" useValuesFromTriggerTime="true"><trigger '
        'initialValue="false" persistent="true"><math xmlns="http://www.w3.org/1998/Math/MathML">'
        "<apply><gt/><ci> A </ci><cn> 0.5 </cn></apply></math></trigger><listOfEventAssignments>"
        '<eventAssignment variable="A"><math xmlns="http://www.w3.org/1998/Math/MathML"><cn> 1 '
        "</cn></math></eventAssignment></listOfEventAssignments></event></listOfEvents>"
    )
    model.write_text(text.replace("</model>", event + "</model>"))
    with pytest.raises(PetabError, match=r"_model.xml: the event 'dose'"):
        import_petab(case / "_0005.yaml")


def test_not_a_petab_file(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("just: a mapping\n")
    with pytest.raises(PetabError, match="no 'problems' entry"):
        import_petab(path)


def test_what_only_the_lint_finds_is_its_message(case):
    table = case / "_parameters.tsv"
    lines = table.read_text().splitlines()
    header = lines[0].split("\t")
    row = lines[1].split("\t")
    row[header.index("lowerBound")], row[header.index("upperBound")] = "20", "10"
    lines[1] = "\t".join(row)
    table.write_text("\n".join(lines) + "\n")
    with pytest.raises(PetabError, match="lowerBound greater than upperBound"):
        import_petab(case / "_0005.yaml")
