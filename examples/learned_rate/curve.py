"""The training curve: ``curve.csv`` written by ``train.py``, drawn as ``learning_curve.png``.

    python examples/learned_rate/curve.py out/curve.csv          # -> out/learning_curve.png

One row per finished training episode (``kind = episode``: its summed reward) and one per
evaluation (``kind = eval``: the deterministic policy's mean episode reward over the same
held-out episodes each time), with the environment steps taken so far and the wall time.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path
from typing import TextIO

FIELDS = ["steps", "kind", "reward", "wall_s"]
KINDS = ("episode", "eval")


class CurveLog:
    """Appends rows to a curve CSV, flushed per row so a cut run keeps its curve."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: TextIO = path.open("w", newline="")
        self._writer = csv.writer(self._file)
        self._writer.writerow(FIELDS)

    def add(self, steps: int, kind: str, reward: float, wall_s: float) -> None:
        if kind not in KINDS:
            raise ValueError(f"{self.path}: kind {kind!r} is not one of {', '.join(KINDS)}")
        self._writer.writerow([int(steps), kind, f"{reward:.6g}", f"{wall_s:.1f}"])
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def read_curve(path: Path) -> dict[str, list[tuple[int, float]]]:
    """``{kind: [(steps, reward), ...]}``; a malformed row is refused naming line and field."""
    rows: dict[str, list[tuple[int, float]]] = {k: [] for k in KINDS}
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in FIELDS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}")
        for line, row in enumerate(reader, start=2):
            if row["kind"] not in KINDS:
                raise ValueError(f"{path}:{line}: kind {row['kind']!r} is not episode or eval")
            try:
                steps, reward = int(row["steps"]), float(row["reward"])
            except (TypeError, ValueError):
                raise ValueError(
                    f"{path}:{line}: steps {row['steps']!r} / reward {row['reward']!r} "
                    "are not numbers"
                ) from None
            if not math.isfinite(reward):
                raise ValueError(f"{path}:{line}: reward {row['reward']!r} is not finite")
            rows[row["kind"]].append((steps, reward))
    return rows


def rolling_mean(values: list[float], window: int) -> list[float]:
    """The mean of the last ``window`` values at each point (fewer at the start)."""
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def plot_curve(csv_path: Path, png_path: Path, window: int = 20) -> Path:
    """Training episodes (each, and a rolling mean over ``window``) and evaluations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_curve(csv_path)
    if not rows["episode"] and not rows["eval"]:
        raise ValueError(f"{csv_path}: no episode or eval rows to plot")
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    if rows["episode"]:
        steps, reward = zip(*rows["episode"], strict=True)
        ax.plot(steps, reward, ".", color="0.75", ms=2, label="training episode")
        ax.plot(steps, rolling_mean(list(reward), window), color="C0",
                label=f"training, mean of last {window}")  # fmt: skip
    if rows["eval"]:
        steps, reward = zip(*rows["eval"], strict=True)
        ax.plot(steps, reward, "o-", color="C3", ms=4, label="held-out evaluation")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("episode reward (sum over steps)")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
    return png_path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print("usage: curve.py CURVE.csv [OUT.png]", file=sys.stderr)
        return 2
    src = Path(args[0])
    dst = Path(args[1]) if len(args) == 2 else src.with_name("learning_curve.png")
    try:
        plot_curve(src, dst)
    except (OSError, ValueError) as exc:
        print(f"curve.py: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
