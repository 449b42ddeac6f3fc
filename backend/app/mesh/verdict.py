"""The verdict of one cell of a mesh's matrix (one link, client to server).

A cell is judged on each of its figures (Mbit/s, round-trip µs). First its validity (app.results.verdict): a
figure whose run's verdict is not usable is DISTURBED (the measurement was not valid: rerun it, do not blame the
link); a cpu_bound one (its client's own CPU quota throttled it) is NO BASELINE, not judged as the link's. A
valid figure is then judged against its expected band by BAND_JUDGE, when one is connected: the expected
bands (app.bands, issue 29 items 1 and 2) answer PASS or FAIL with the band and the distance in words, or None when
they hold no band for that figure. Without a judge, or without a band, the cell is NO BASELINE. The cell's verdict
is the worst of its figures': DISTURBED, FAIL, NO BASELINE, PASS."""
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.jobs.models import Run
from app.results.verdict import usable


@dataclass(frozen=True)
class Figure:
    """One figure of a link, as a band judge needs it: the driving run (its host is the client), the serving
    host, the op (tcp_stream, tcp_rr), the value and its unit ("Mbit/s"; "us" for a round trip, lower is better)."""

    run: Run
    server_host_id: int
    op: str
    value: float
    unit: str


# (verdict, reason) for a figure that has a band, PASS or FAIL; None when there is no band for it.
BandJudge = Callable[[Session, Figure], tuple[str, str] | None]

# Connected by the expected bands when they land (app.bands): None until then, so every valid cell is NO BASELINE.
BAND_JUDGE: BandJudge | None = None

_ORDER = ("DISTURBED", "FAIL", "NO BASELINE", "PASS")


def judge(session: Session, figures: list[tuple[Figure, str | None]]) -> tuple[str | None, str | None]:
    """The cell's verdict and its reason from its figures, each with its run's validity verdict; (None, None)
    while it has no figure."""
    if not figures:
        return None, None
    found: list[tuple[str, str]] = []
    for fig, validity in figures:
        if validity == "cpu_bound":  # the client's own CPU quota throttled it: the quota's figure, not the link's
            found.append(("NO BASELINE", f"{fig.op}: CPU-bound (the client's CPU quota throttled it): not judged as "
                                         "the link's figure"))
            continue
        if not usable(validity):
            found.append(("DISTURBED", f"{fig.op}: the measurement is {validity or 'not judged'}; rerun it, do not "
                                       "blame the link"))
            continue
        band = BAND_JUDGE(session, fig) if BAND_JUDGE is not None else None
        found.append(band if band is not None else ("NO BASELINE", f"{fig.op}: no expected band for this link"))
    worst = min(found, key=lambda vr: _ORDER.index(vr[0]) if vr[0] in _ORDER else 0)
    return worst[0], "; ".join(r for v, r in found if v == worst[0])
