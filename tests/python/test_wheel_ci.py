"""CI checks the wheel: `.ci/run` calls scripts/check_wheel.sh, which fails loudly."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from rtcc.scenario import toml_module

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "check_wheel.sh"


def commands(script: Path) -> list[str]:
    """The script's lines that run something: no blanks, comments or shebang."""
    lines = (line.split("#", 1)[0].strip() for line in script.read_text().splitlines())
    return [line for line in lines if line]


def test_ci_runs_the_tests_then_the_wheel_check():
    run = commands(ROOT / ".ci" / "run")
    assert "set -euo pipefail" in run  # a failing step fails CI
    # The README's test command first: it installs libvpx/OpenH264, which the wheel links.
    assert run.index("bash scripts/test.sh") < run.index("bash scripts/check_wheel.sh")


def test_check_wheel_parses_and_stops_at_the_first_failure():
    subprocess.run(["bash", "-n", str(CHECK)], check=True)
    assert commands(CHECK)[0] == "set -euo pipefail"


def copy_with(tmp_path: Path, traces: list[str] | None) -> Path:
    """A tree holding only the check script and, if given, bundled trace files."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(CHECK, tmp_path / "scripts" / CHECK.name)
    if traces is not None:
        folder = tmp_path / "python" / "rtcc" / "data" / "traces"
        folder.mkdir(parents=True)
        for name in traces:
            (folder / name).write_text("1\n")
    return tmp_path / "scripts" / CHECK.name


def test_check_wheel_fails_without_bundled_traces(tmp_path: Path):
    for traces, reason in ((None, "no such folder"), ([], "no trace to bundle")):
        tree = tmp_path / str(traces)
        tree.mkdir()
        done = subprocess.run(
            ["bash", str(copy_with(tree, traces))], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 1
        assert done.stderr.strip() == f"check_wheel: python/rtcc/data/traces: {reason}"


def test_plain_maturin_build_links_system_codecs():
    # manylinux tags would make `maturin build --release` copy libvpx/OpenH264 into the
    # wheel (and fail without patchelf); the plain linux tag links the system's.
    toml = toml_module()
    assert toml is not None
    config = toml.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["maturin"]["compatibility"] == "linux"


class _MissingLibrary:
    """Loads rtcc._rtcc as a wheel does on a machine without libvpx."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "rtcc._rtcc":
            raise ImportError(
                "libvpx.so.7: cannot open shared object file: No such file or directory"
            )


def test_a_missing_system_library_is_named(monkeypatch, capsys, tmp_path: Path):
    import sys

    import rtcc
    from rtcc import cli

    monkeypatch.delitem(sys.modules, "rtcc._rtcc", raising=False)
    monkeypatch.delattr(rtcc, "_rtcc", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_MissingLibrary(), *sys.meta_path])
    scenario = tmp_path / "s.toml"
    scenario.write_text('duration = "1s"\n[link]\ncapacity = "1Mbps"\n[[flow]]\n')
    assert cli.main(["validate", str(scenario)]) == 2
    err = capsys.readouterr().err
    assert err == (
        "rtcc: error: rtcc's native module rtcc._rtcc cannot load: "
        "libvpx.so.7: cannot open shared object file: No such file or directory\n"
    )
