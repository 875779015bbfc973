"""The repository stands alone: no file of it reaches for a folder beside the checkout."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Each spelling of a path into the folder beside the checkout; written in pieces so this
# file does not match itself.
SHARED = "sh" + "ared"
OUTSIDE = re.compile(rf"\.\./{SHARED}\b|\b{SHARED}/(?:traces|papers)\b")
# Build output and caches: not the project's files (.gitignore).
_TOP_NOT_SOURCE = {"target", "results", "dist", ".venv"}
_NOT_SOURCE = {".git", "__pycache__", ".pytest_cache"}


def walked_files(root: Path) -> list[Path]:
    """Every file under ``root`` but build output and caches (outside a git checkout)."""
    found = []
    for folder, dirs, files in os.walk(root):
        skip = _NOT_SOURCE | (_TOP_NOT_SOURCE if Path(folder) == root else set())
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.endswith(".egg-info"))
        found += [Path(folder) / f for f in sorted(files) if not f.endswith((".so", ".pyc"))]
    return found


def project_files() -> list[Path]:
    """The tracked files; every file but build output when this is no git checkout."""
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60
        )
    except (OSError, subprocess.CalledProcessError):
        return walked_files(REPO)
    return [REPO / name for name in done.stdout.decode().split("\0") if name]


def references(paths: list[Path], root: Path) -> list[str]:
    """``file:line`` of each line naming a path into the folder beside the checkout."""
    found = []
    for path in paths:
        if not path.is_file():
            continue  # deleted in the work tree, not yet committed
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        found += [
            f"{path.relative_to(root)}:{n}"
            for n, line in enumerate(text.splitlines(), 1)
            if OUTSIDE.search(line)
        ]
    return found


def test_no_file_refers_to_a_folder_beside_the_repository():
    found = references(project_files(), REPO)
    assert not found, f"a path beside the repository in: {', '.join(found)}"


def test_the_check_sees_each_spelling(tmp_path: Path):
    # The test above must be able to fail, in a checkout or not.
    for spelling in (f"../{SHARED}/x", f"/work/{SHARED}/traces/a.down", f"{SHARED}/papers/p.pdf"):
        (tmp_path / "docs").mkdir(exist_ok=True)
        (tmp_path / "docs" / "a.md").write_text(f"ok\nsee {spelling}\n", encoding="utf-8")
        (tmp_path / "target").mkdir(exist_ok=True)
        (tmp_path / "target" / "b.md").write_text(spelling, encoding="utf-8")  # build output
        assert references(walked_files(tmp_path), tmp_path) == ["docs/a.md:2"], spelling
    assert not OUTSIDE.search(f"{SHARED}_memory sharedtraces")
    tracked = {p for p in project_files() if p.is_file()}
    assert len(tracked) > 100
    assert tracked <= set(walked_files(REPO))  # outside git, the walk sees at least these
