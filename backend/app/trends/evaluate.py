"""Count the regression detector's false alarms and misses on synthetic series (app.trends.synthetic):

    cd backend && python -m app.trends.evaluate [--series 200] [--seed 1]

False alarms: flags on series with no change, per 1,000 points, at each noise level. Misses: series with one step
of 5, 10 or 20 % (down and up) at point 30, where no change of that sign was flagged within WITHIN points of it
(detected_at in [step, step + WITHIN)). The last line is one JSON object with every figure."""
import argparse
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.trends.detector import Change, detect
from app.trends.synthetic import series

CVS = (0.03, 0.05, 0.10)
EFFECTS = (0.05, 0.10, 0.20)
WITHIN = 10
QUIET_LENGTH = 200  # points per change-free series
STEP_AT = 30
STEP_LENGTH = STEP_AT + 30

Detector = Callable[[Sequence[float]], list[Change]]


@dataclass
class Rates:
    false_alarms_per_1000: dict[float, float]  # by cv
    miss_rate: dict[tuple[float, float], float]  # by (cv, |effect|): misses / trials, drops and rises together
    wrong_way: int  # steps flagged in the opposite direction within the window
    series: int

    def as_json(self) -> dict:
        return {"false_alarms_per_1000_points": {f"cv={cv:.2f}": round(v, 3) for cv, v in
                                                 self.false_alarms_per_1000.items()},
                "miss_rate": {f"cv={cv:.2f},step={e:.2f}": round(v, 4) for (cv, e), v in self.miss_rate.items()},
                "within_points": WITHIN, "series_per_cell": self.series, "wrong_way": self.wrong_way}


def evaluate(detector: Detector = detect, n_series: int = 200, seed: int = 1) -> Rates:
    rng = random.Random(seed)  # noqa: S311 - synthetic noise, reproducible by seed
    fa: dict[float, float] = {}
    miss: dict[tuple[float, float], float] = {}
    wrong = 0
    for cv in CVS:
        flags = 0
        for _ in range(n_series):
            flags += len(detector(series(rng, QUIET_LENGTH, cv).values))
        fa[cv] = 1000 * flags / (n_series * QUIET_LENGTH)
        for effect in EFFECTS:
            missed = 0
            for i in range(n_series):
                step = -effect if i % 2 == 0 else effect  # half drops, half rises
                found = detector(series(rng, STEP_LENGTH, cv, [(STEP_AT, step)]).values)
                near = [c for c in found if STEP_AT <= c.detected_at < STEP_AT + WITHIN]
                if not any((c.effect < 0) == (step < 0) for c in near):
                    missed += 1
                    wrong += any((c.effect < 0) != (step < 0) for c in near)
            miss[(cv, effect)] = missed / n_series
    return Rates(false_alarms_per_1000=fa, miss_rate=miss, wrong_way=wrong, series=n_series)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--series", type=int, default=200, help="series per noise level and per step size")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    r = evaluate(n_series=a.series, seed=a.seed)
    print(f"false alarms per 1,000 change-free points ({a.series} series x {QUIET_LENGTH} points per noise level)")
    for cv, v in r.false_alarms_per_1000.items():
        print(f"  cv {cv:4.0%}: {v:6.2f}")
    print(f"misses: steps not flagged within {WITHIN} points ({a.series} series per cell, half down, half up)")
    print("  " + " " * 9 + "".join(f"step {e:4.0%} " for e in EFFECTS))
    for cv in CVS:
        print(f"  cv {cv:4.0%}:" + "".join(f"   {r.miss_rate[(cv, e)]:6.1%}  " for e in EFFECTS))
    print(json.dumps(r.as_json()))


if __name__ == "__main__":
    main()
