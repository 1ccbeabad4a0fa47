"""The one registry mechanism: names -> references loaded on first use, one clear error for an
unknown name, nothing imported until a name is used."""

import subprocess
import sys

import pytest

from collocnode.tools._registry import Registry


def test_a_reference_loads_on_first_use_with_its_metadata():
    reg = Registry("shape", {"disc": ("fractions:Fraction", {"sides": 0}), "e": "math:e"})
    assert reg.names() == ["disc", "e"] and "e" in reg and "pi" not in reg and len(reg) == 2
    assert reg.entry("disc").meta["sides"] == 0
    import fractions

    assert reg.load("disc") is fractions.Fraction
    assert reg.load("e") == pytest.approx(2.718281828)


@pytest.mark.parametrize(
    ("action", "error", "match"),
    [
        (lambda r: r.load("pi"), ValueError, "unknown shape 'pi'; valid: e"),
        (lambda r: r.register("e", "math:tau"), ValueError, "shape 'e' is registered already"),
        (lambda r: r.register("x", "math"), ValueError, "ref must read 'package.module:attr"),
        (lambda r: r.register("x", "os.system; print:x"), ValueError, "ref must read"),
        (lambda r: r.register("", "math:pi"), ValueError, "non-empty string"),
        (lambda r: r.replace_object("e", 1.0), ValueError, "reserved for the library"),
    ],
)
def test_bad_names_and_references_are_one_clear_error(action, error, match):
    with pytest.raises(error, match=match):
        action(Registry("shape", {"e": "math:e"}))


def test_objects_registered_at_run_time_may_replace_themselves():
    reg = Registry("builder")
    reg.register_object("mine", len)
    reg.replace_object("mine", max)
    assert reg.load("mine") is max and reg.entry("mine").ref is None


def test_importing_the_registries_imports_no_entry():
    code = (
        "import sys, collocnode, collocnode.problems, collocnode.recipes, collocnode._experiments\n"
        "from collocnode.serialize import builders\n"
        "assert collocnode.problems.available()[0] == 'cart_pole'\n"
        "loaded = [m for m in ('collocnode.problems._qvm', 'collocnode.recipes.qvm', "
        "'collocnode._experiments.vdp', 'collocnode.problems._slider_crank') if m in sys.modules]\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
