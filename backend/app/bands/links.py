"""A mesh's links judged against their bands (app.mesh.verdict.BAND_JUDGE): the link's figure is the client's
(the driving host's) network_drive row for the op, so a band for it is declared or learned as for any figure of
that host (`judge`); no band: None, and the cell says NO BASELINE."""
from sqlalchemy.orm import Session

from app.bands.schemas import FigureKey
from app.bands.service import judge, peer_of
from app.hosts.models import Host
from app.mesh import verdict


def judge_link(session: Session, fig: verdict.Figure) -> tuple[str, str] | None:
    host = session.get(Host, fig.run.host_id)
    if host is None:
        return None
    sizes = (fig.run.params or {}).get("sizes") or []
    key = FigureKey(experiment=fig.run.experiment, op=fig.op, threads=1,
                    block_bytes=int(sizes[0]) if len(sizes) == 1 else None)
    j = judge(session, host, key, fig.value, unit=fig.unit, peer=peer_of(fig.run))
    if j.status == "no_baseline":
        return None
    far = f", {j.distance:+.0%} outside" if j.status == "fail" and j.distance is not None else ""
    return ("PASS" if j.status == "pass" else "FAIL"), f"{fig.op}: {fig.value:.4g} {fig.unit} ({j.reason}{far})"


def connect() -> None:
    verdict.BAND_JUDGE = judge_link
