import math
from datetime import datetime
from typing import Annotated, Literal

from hostbench_common.resultfields import THREADS
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.core.bounds import MAX_BYTES
from app.hosts.schemas import LABEL_KEY, LABEL_KEY_MAX, LABEL_KEY_PART

# A kind of host: `cpu=<CPU model>/<cores>` (the inventory's model string and physical core count), or any label
# `key=value` the host has (`rack=b12`, `instance_type=c7i.2xlarge`, `topology.kubernetes.io/zone=a`): a key as
# host labels take it (app.hosts.schemas), a value up to 191 characters (a CPU model string is the longest).
KIND_PATTERN = rf"^{LABEL_KEY_PART}=\S.{{0,190}}$"
KIND_MAX = LABEL_KEY_MAX + 1 + 191
Kind = Annotated[str, Field(min_length=3, max_length=KIND_MAX, pattern=KIND_PATTERN,
                            description="cpu=<model>/<cores>, or a label key=value")]
# What learned bands take siblings from: `cpu` (model and cores), or a label key.
KindBy = Annotated[str, Field(min_length=1, max_length=LABEL_KEY_MAX, pattern=LABEL_KEY,
                              description="the kind learned bands take siblings from: cpu (model and cores) or a "
                                          "label key")]
# A figure's threads: as the kernels bound them (hostbench_common.resultfields reads `--describe`); its block size
# as every block or buffer size is.
THREADS_MIN, THREADS_MAX = THREADS
OP_MAX = 32
FORMAT: Literal["hostbench.bands/1"] = "hostbench.bands/1"


def _finite(v: float | None) -> float | None:
    if v is not None and not math.isfinite(v):
        raise ValueError("must be a finite number")
    return v


class FigureKey(BaseModel):
    """Which figure: a run kind (the experiment table's, e.g. cpu, memory, disk, network_drive) and its row."""

    model_config = ConfigDict(frozen=True)

    experiment: str = Field(min_length=1, max_length=32)
    op: str | None = Field(None, max_length=OP_MAX)
    threads: int = Field(ge=THREADS_MIN, le=THREADS_MAX)
    block_bytes: int | None = Field(None, ge=0, le=MAX_BYTES)


class BandIn(FigureKey):
    """A declared band: lower and/or upper (one may be left out: one-sided), a target, in `unit`, or with `of_peak`
    as fractions of the row's theoretical peak; who set it is the caller."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Kind
    target: float | None = None
    lower: float | None = None
    upper: float | None = None
    of_peak: bool = False
    unit: str = Field("", max_length=16)
    note: str = Field("", max_length=2000)

    _f = field_validator("target", "lower", "upper")(_finite)

    @model_validator(mode="after")
    def _bounds(self) -> "BandIn":
        if self.lower is None and self.upper is None:
            raise ValueError("a band needs a lower or an upper bound (or both)")
        if self.lower is not None and self.upper is not None and self.lower > self.upper:
            raise ValueError(f"lower {self.lower} is above upper {self.upper}")
        if self.of_peak and any(v is not None and not 0 <= v <= 2 for v in (self.target, self.lower, self.upper)):
            raise ValueError("with of_peak, target, lower and upper are fractions of the peak (0 to 2)")
        return self


class BandRemove(FigureKey):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Kind


class BandPublic(BandIn):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: int
    version: int
    removed: bool = False
    set_by: str | None
    set_at: datetime


class BandsPublic(BaseModel):
    data: list[BandPublic]


class BandsFile(BaseModel):
    """The file a team keeps in git (GET /api/bands/export, POST /api/bands/import; YAML through the CLI)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["hostbench.bands/1"] = FORMAT
    bands: list[BandIn] = Field(max_length=5000)


class ImportOutcome(BaseModel):
    added: int
    changed: int
    unchanged: int
    removed: int


class Sibling(BaseModel):
    host_id: int
    host_name: str
    run_id: int
    value: float
    at: datetime


class BandUsed(BaseModel):
    """The band a figure was judged against, as it was then: declared (its id and version) or learned (its basis)."""

    source: Literal["declared", "learned"]
    kind: str
    lower: float | None
    upper: float | None
    target: float | None
    unit: str
    band_id: int | None = None
    version: int | None = None
    of_peak: bool = False
    note: str = ""
    set_by: str | None = None
    set_at: datetime | None = None
    # learned only: the median and robust spread (1.4826 x MAD) of the siblings' newest valid figures
    centre: float | None = None
    spread: float | None = None
    siblings: list[Sibling] = Field(default_factory=list)
    computed_at: datetime | None = None
    method: str | None = None


class Judgement(BaseModel):
    """One figure set against its band: pass, fail, or no_baseline (no declared band, too few siblings)."""

    status: Literal["pass", "fail", "no_baseline"]
    value: float
    unit: str
    band: BandUsed | None
    distance: float | None = Field(None, description="how far outside the band, as a fraction of the bound it "
                                                      "crossed (-0.4: 40 % below the lower bound); 0 inside")
    reason: str


class LearnedPublic(BaseModel):
    host_id: int
    kind: str
    figure: FigureKey
    band: BandUsed | None
    reason: str
