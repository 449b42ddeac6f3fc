"""Synthetic series with known change points, noisy like a shared VM, to count the detector's false alarms and misses
(app.trends.evaluate, backend/tests/test_trends_detector.py, docs/methodology/trends.md).

A point is one run's mean: level x (1 + N(0, cv)), cv between 3 % and 10 %; with probability OUTLIER_P a point is an
outlier instead: a run that lost its CPU to a neighbour (level x U(0.55, 0.85)) or, one time in four, a lucky one
(level x U(1.10, 1.25)). A change multiplies the level from its index on."""
import random
from collections.abc import Sequence
from dataclasses import dataclass

OUTLIER_P = 0.03


@dataclass(frozen=True)
class Series:
    values: list[float]
    changes: list[tuple[int, float]]  # (index, relative step: -0.10 = the level fell 10 % there)
    cv: float


def series(rng: random.Random, n: int, cv: float, changes: Sequence[tuple[int, float]] = (),
           level: float = 100.0, outlier_p: float = OUTLIER_P) -> Series:
    steps = sorted(changes)
    out: list[float] = []
    current = level
    for i in range(n):
        for at, step in steps:
            if at == i:
                current *= 1 + step
        if rng.random() < outlier_p:
            factor = rng.uniform(1.10, 1.25) if rng.random() < 0.25 else rng.uniform(0.55, 0.85)
            out.append(current * factor)
        else:
            out.append(max(current * 1e-3, current * (1 + rng.gauss(0, cv))))
    return Series(values=out, changes=list(steps), cv=cv)
