"""The shipped examples: every sweep spec in sweeps/ and every scenario in scenarios/ is
accepted by the simulator as it stands, and the sweeps stay small enough to try; the
README keeps its two commands first and its links into docs/ resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import requires_native

import rtcc
from rtcc import cli
from rtcc.scenario import dumps_toml
from rtcc.sweeprun import prepare
from rtcc.sweepspec import load_spec

pytestmark = requires_native

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted((ROOT / "sweeps").glob("*.toml"))
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))
# A spec stays a quick try (under a minute on two cores): runs x simulated seconds. The
# largest, lte-controllers, is 9,000 s.
MAX_SIMULATED_S = 10_000


def test_the_example_folders_are_not_empty():
    assert len(SPECS) >= 4, SPECS
    assert len(SCENARIOS) >= 6, SCENARIOS


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_sweep_spec_builds_every_run(path: Path):
    spec = load_spec(path)
    assert spec.name == path.stem  # the results folder is named after the file
    simulated = 0.0
    for run in spec.runs:
        text = dumps_toml(prepare(run, spec.analysis))
        sim = rtcc.native().Simulation(text, run.source)  # raises on any refused field
        simulated += sim.duration_s
    assert simulated <= MAX_SIMULATED_S, f"{path.name}: {simulated:g} simulated seconds"


def test_every_shipped_scenario_validates(capsys: pytest.CaptureFixture[str]):
    assert cli.main(["validate", *map(str, SCENARIOS)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": ok (")[0] for line in out] == list(map(str, SCENARIOS))


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.M | re.S)
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def test_readme_and_docs_links_resolve():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(pages) >= 9
    linked = set()
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if "://" in target:
                continue
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            assert dest.is_file(), f"{page.name}: {target}: no such file"
            if anchor:
                assert anchor in _anchors(dest), f"{page.name}: {target}: no such heading"
            linked.add(dest)
    # Every docs page is reachable from the README.
    assert set(pages[1:]) <= linked


def test_readme_opens_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert lines[2] == "```sh"
    assert lines[3].startswith("pip install . && rtcc run ")
    assert lines[4].startswith("bash scripts/test.sh ")
    assert lines[5] == "```"
    # Then straight into the tutorial, whose sweep names its traces by set, not by a path
    # into the package's source.
    assert lines[6:8] == ["", "## Tutorial: my controller against gcc on the LTE traces"]
    assert "data/traces" not in (ROOT / "sweeps" / "lte-controllers.toml").read_text()
