"""The documentation site's configuration: every page of the navigation exists, the API reference
covers the public surface, the pages' LaTeX becomes MathML, and the built site fetches nothing from
other hosts. CI builds the site with ``mkdocs build --strict`` (.ci/run); these checks need no
build (a page's Markdown is rendered with the site's extensions and hooks)."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

import collocnode

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
yaml = pytest.importorskip("yaml")


def config() -> dict:
    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may hold !!python/name tags (the theme's extensions); none are needed here
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *_: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)


def nav_pages(nav) -> list[str]:
    out = []
    for entry in nav:
        if isinstance(entry, str):
            out.append(entry)
        else:
            for value in entry.values():
                out += nav_pages(value) if isinstance(value, list) else [value]
    return out


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_page_of_the_navigation_exists():
    missing = []
    for page in nav_pages(config()["nav"]):
        if page.startswith("notebooks/"):  # executed copies of examples/ (execute_notebooks.py)
            if not (ROOT / "examples" / Path(page).name).is_file():
                missing.append(f"examples/{Path(page).name}")
        elif not (DOCS / page).is_file():
            missing.append(f"docs/{page}")
    assert not missing, f"mkdocs.yml's nav names pages that do not exist: {missing}"


def test_every_notebook_of_the_examples_is_on_the_site():
    pages = set(nav_pages(config()["nav"]))
    for nb in (ROOT / "examples").glob("*.ipynb"):
        assert f"notebooks/{nb.name}" in pages, f"examples/{nb.name} is not in mkdocs.yml's nav"


def test_the_api_reference_covers_the_public_surface():
    text = "\n".join(p.read_text() for p in (DOCS / "reference").glob("*.md"))
    documented = set()
    for path in re.findall(r"^::: collocnode\.([\w.]+)\s*$", text, flags=re.M):
        *modules, name = path.split(".")
        if modules:  # collocnode.nn.MLP: a name of a public package
            owner = importlib.import_module(".".join(["collocnode", *modules]))
            if getattr(owner, name) is not getattr(collocnode, name, None):
                continue  # documents something else (collocnode.nn.MLP)
        documented.add(name)
    public = {name for name in collocnode.__all__ if not name.startswith("_")}
    assert public - documented == set(), "add these to a page of docs/reference/"
    assert documented - public == set(), "these are not in collocnode.__all__"


def test_the_site_loads_no_web_fonts():
    assert config()["theme"].get("font") is False


@pytest.mark.parametrize(
    ("html", "fetched"),
    [
        ('<script src="https://cdn.example.org/x.js"></script>', True),
        ('<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">', True),
        ("<style>@font-face { src: url(https://example.org/f.woff2) }</style>", True),
        ('<img src="//example.org/a.png">', True),
        ('<link rel="canonical" href="https://example.org/page.html">', False),
        ('<a href="https://example.org">a link a reader may follow</a>', False),
        ('<script src="assets/javascripts/bundle.js"></script>', False),
    ],
)
def test_the_site_check_finds_what_a_browser_would_fetch(html, fetched):
    assert bool(load_script("check_site").external(html)) is fetched


def test_the_ci_sized_notebooks_set_what_they_shrink():
    execute = load_script("execute_notebooks")
    nbformat = pytest.importorskip("nbformat")
    for name, settings in execute.CI_SIZE.items():
        nb = nbformat.read(ROOT / "examples" / name, as_version=4)
        smaller = execute.sized(nb, settings)
        source = smaller.cells[2].source  # the settings cell, after the note
        for key, value in settings.items():
            assert re.search(rf"^{key} = {re.escape(value)}\b", source, flags=re.M), key
        assert "reduced size" in smaller.cells[1].source


def rendered(page: str) -> str:
    """``docs/page`` as the site's build renders its Markdown: mkdocs.yml's extensions, with
    those its hooks add (the math hook: MathML)."""
    pytest.importorskip("latex2mathml")
    markdown = pytest.importorskip("markdown")
    mkdocs_config = pytest.importorskip("mkdocs.config")
    cfg = mkdocs_config.load_config(str(ROOT / "mkdocs.yml"))
    cfg = load_script("mkdocs_mathml").on_config(cfg)
    md = markdown.Markdown(extensions=cfg.markdown_extensions, extension_configs=cfg.mdx_configs)
    return md.convert((DOCS / page).read_text())


def test_the_method_page_shows_its_equations_as_mathml():
    html = rendered("explanations/method.md")
    assert html.count('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block"') >= 5
    assert 'display="inline"' in html
    assert "$$" not in html and "\\[" not in html and "\\(" not in html
    assert "<script" not in html  # no MathJax or KaTeX: the browser renders MathML


def test_the_math_hook_refuses_what_latex2mathml_cannot_convert():
    pytest.importorskip("latex2mathml")
    mathml = load_script("mkdocs_mathml").mathml
    assert mathml(r"\dot x = f(x)", display=True).startswith("<math")
    with pytest.raises(ValueError, match="environment"):
        mathml(r"\begin{aligned} a &= b \end{aligned}", display=True)
    with pytest.raises(ValueError, match="empty"):
        mathml(r"\begin{array}{ll} a & b \\ c & \end{array}", display=True)
    assert "<mi>c</mi>" in mathml(r"\begin{array}{ll} a & b \\ c & {} \end{array}", True)
    with pytest.raises(ValueError, match="displaystyle"):
        mathml(r"\begin{array}{l} \displaystyle \int f \end{array}", display=True)


def test_the_site_and_the_citation_name_the_version_of_pyproject():
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert collocnode.__version__ == version
    assert f"collocnode {version}" in config()["copyright"]  # every page's footer
    assert f"collocnode {version}" in (DOCS / "index.md").read_text()
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert str(citation["version"]) == version
    assert citation["title"] == "collocnode"
    assert "Langenkamp" in str(citation["references"])


def test_the_changelog_is_on_the_site():
    assert "changelog.md" in nav_pages(config()["nav"])
    assert '--8<-- "CHANGELOG.md"' in (DOCS / "changelog.md").read_text()
