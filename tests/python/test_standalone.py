"""The repository stands alone: no tracked file reaches for a folder beside the checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Spelled in two pieces so this file does not match itself.
OUTSIDE = "../" + "shared"


def tracked_files() -> list[Path]:
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60
        )
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [REPO / name for name in done.stdout.decode().split("\0") if name]


def test_no_tracked_file_refers_to_a_folder_beside_the_repository():
    found = []
    for path in tracked_files():
        if not path.is_file():
            continue  # deleted in the work tree, not yet committed
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        found += [
            f"{path.relative_to(REPO)}:{n}"
            for n, line in enumerate(text.splitlines(), 1)
            if OUTSIDE in line
        ]
    assert not found, f"{OUTSIDE} in: {', '.join(found)}"


def test_the_check_sees_a_reference():
    # The test above must be able to fail: the pattern is found where it is written.
    assert OUTSIDE in f"see {OUTSIDE}/traces"
    assert len(tracked_files()) > 100
