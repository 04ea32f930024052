"""The documentation site: every public name has a reference entry, the README is a front page
whose links land, and ``python3 dev.py docs`` builds with ``--strict`` (every internal link and
anchor resolves) into a site whose search finds the guides."""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stacks.launch import PROJECT_ROOT
from tests.documentation import DOCS, README

# The public API: the package and the subpackages a user imports.
PUBLIC_MODULES = (
    "quota_constructs",
    "quota_constructs.model",
    "quota_constructs.client",
    "quota_constructs.monitoring",
    "quota_constructs.simulation",
    "quota_constructs.simulation.workloads",
    "quota_constructs.simulation.report",
    "quota_constructs.usage",
)
# Public modules without __all__: documented whole, as modules.
PUBLIC_PLAIN_MODULES = (
    "quota_constructs.cli",
    "quota_constructs.deployments",
    "quota_constructs.nag_acknowledgments",
    "quota_constructs.nag_report",
    "quota_constructs.stack_outputs",
    "quota_constructs.live.status",
    "quota_constructs.live.explain",
    "quota_constructs.live.estimate",
    "quota_constructs.live.start_bounds",
    "quota_constructs.live.preview",
    "quota_constructs.live.history",
)


def reference_directives() -> set[str]:
    text = "\n".join(p.read_text() for p in sorted((DOCS / "reference").glob("*.md")))
    return set(re.findall(r"^::: (\S+)$", text, flags=re.MULTILINE))


def documented_names() -> set[str]:
    return {path.rsplit(".", 1)[1] for path in reference_directives()}


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_exported_name_has_a_reference_entry(module: str) -> None:
    exported = set(importlib.import_module(module).__all__)
    assert exported - documented_names() == set()


def test_every_public_module_without_all_is_documented_whole() -> None:
    assert set(PUBLIC_PLAIN_MODULES) <= reference_directives()


def github_anchor(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation but hyphens and spaces dropped."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(path: Path) -> set[str]:
    fenced = re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL)
    return {github_anchor(h) for h in re.findall(r"^#{1,6} (.+)$", fenced, flags=re.MULTILINE)}


def test_the_readme_is_a_front_page_of_at_most_250_lines() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 250
    assert "python3 dev.py synth" in lines and "python3 dev.py test" in lines


def test_the_readmes_relative_links_land_on_a_file_and_heading() -> None:
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text())
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert any(link.startswith("docs/") for link in relative)
    for link in relative:
        target, _, anchor = link.partition("#")
        path = PROJECT_ROOT / target if target else README
        assert path.is_file(), link
        if anchor:
            assert anchor in headings(path), link


def outside_fences(text: str) -> list[str]:
    return re.sub(r"^ *```.*?^ *```", "", text, flags=re.DOTALL | re.MULTILINE).splitlines()


def test_nested_lists_and_item_paragraphs_are_indented_as_the_site_reads_them() -> None:
    """Python-Markdown (the site) nests a list, or keeps a second paragraph in an item, only when
    it is indented four spaces; with two it flattens the list or merges every following item into
    that paragraph, although GitHub shows both right."""
    for path in DOCS.rglob("*.md"):
        lines = outside_fences(path.read_text())
        shallow = [line for line in lines if re.match(r" {1,3}([-*]|\d+\.) ", line)]
        assert shallow == [], path
        after_blank = [
            line for before, line in itertools.pairwise(lines)
            if before == "" and re.match(r" {1,3}\S", line)
        ]
        assert after_blank == [], path


def test_the_guides_say_npx_yes() -> None:
    for path in [README, *DOCS.rglob("*.md")]:
        assert not re.search(r"npx aws-cdk", path.read_text()), path


@pytest.mark.slow
def test_the_site_builds_strictly_with_search(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is in the dev extra")
    site = tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900, check=False,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
    )
    assert build.returncode == 0, build.stderr[-4000:]
    index = json.loads((site / "search" / "search_index.json").read_text())
    locations = {doc["location"].split("#", 1)[0] for doc in index["docs"]}
    assert {"operator.html", "planner.html", "team-lead.html", "platform/grants.html",
            "reference/constructs.html"} <= locations
    constructs = (site / "reference" / "constructs.html").read_text()
    assert 'id="quota_constructs.quota_share.QuotaShare"' in constructs
    # Inherited from the base shared with imported shares, still on the class's page.
    assert 'id="quota_constructs.quota_share.QuotaShare.grant_team"' in constructs
    # The docstrings' Sphinx roles are links (or code), never literal ``:class:`` text.
    for page in (site / "reference").glob("*.html"):
        assert not re.search(r":(class|meth|func|attr|data|mod|exc):<code>", page.read_text()), page
    monitoring = (site / "reference" / "monitoring.html").read_text()
    assert 'href="#quota_constructs.monitoring.stack_preemptions.StackPreemptions"' in monitoring
    assert_readable_from_disk_without_a_network(site)


def assert_readable_from_disk_without_a_network(site: Path) -> None:
    """The site is opened as files: the search index is a script the pages load (a file://
    page cannot fetch the JSON), the Web Worker shim the search needs is the site's own, no page
    loads anything from the network, and code blocks wrap inside a column wider than Material's
    default instead of running out of sight."""
    assert (site / "search" / "search_index.js").read_text().startswith("var __index = {")
    for page in site.rglob("*.html"):
        html = page.read_text()
        assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', html), page
    operator = (site / "operator.html").read_text()
    assert '<script src="javascripts/iframe-worker-shim.js"' in operator
    assert 'href="stylesheets/wide.css"' in operator
    css = (site / "stylesheets" / "wide.css").read_text()
    assert "white-space: pre-wrap" in css and "max-width: 100rem" in css


@pytest.mark.slow
def test_a_broken_anchor_fails_the_strict_build(tmp_path: Path) -> None:
    """--strict is what checks the links: a copy of the docs with one wrong anchor fails."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is in the dev extra")
    copy = tmp_path / "project"
    shutil.copytree(DOCS, copy / "docs")
    shutil.copy(PROJECT_ROOT / "mkdocs.yml", copy)
    shutil.copy(PROJECT_ROOT / "CHANGELOG.md", copy)
    # Only the guides: the reference pages need the package, which is not what this checks.
    config = (copy / "mkdocs.yml").read_text()
    (copy / "mkdocs.yml").write_text(config.replace("paths: [.]", f"paths: [{PROJECT_ROOT}]"))
    page = copy / "docs" / "team-lead.md"
    page.write_text(page.read_text() + "\nSee [nowhere](operator.md#no-such-heading).\n")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "s")],
        cwd=copy, capture_output=True, text=True, timeout=900, check=False,
        env=dict(os.environ, NO_MKDOCS_2_WARNING="1"),
    )
    assert build.returncode != 0
    assert "no-such-heading" in build.stderr
