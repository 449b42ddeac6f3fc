import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.core.bounds import JsonNumber


class Peak(BaseModel):
    value: float
    unit: str
    formula: str
    source: Literal["computed", "reported", "user", "inferred"]
    since: datetime | None = None  # a peak entered by a person: when (it applies to every run of the host)


class HostHealth(BaseModel):
    """A host's latest verdict of one health check (suite), and its age (app.checks; hosts.health)."""

    suite: str
    verdict: Literal["PASS", "FAIL", "DISTURBED", "NO_BASELINE"]
    at: datetime
    age_s: float
    check_id: int


class HostPublic(BaseModel):
    id: int
    name: str
    hostname: str
    online: bool
    last_seen_at: datetime | None
    registered_at: datetime
    runner_version: str
    labels: dict[str, Any]
    inventory: dict[str, Any]
    peaks: dict[str, Peak | None]
    peak_notes: dict[str, str]
    revoked: bool = False
    revoked_at: datetime | None = None
    # The source address of the runner's latest call (what a two-host job's driver connects to).
    address: str | None = None
    server_version: str = ""
    version_mismatch: bool = False
    credential_rotation_pending: bool = False
    # The latest verdict of each health check the host had, newest first (app.checks).
    health: list[HostHealth] = Field(default_factory=list)


class HostsPublic(BaseModel):
    data: list[HostPublic]
    count: int


class HostLabelsUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: str | None = Field(None, max_length=64)
    instance_type: str | None = Field(None, max_length=64)
    region: str | None = Field(None, max_length=64)


PeakKey = Literal["cpu_fp64", "cpu_fp32", "cpu_int32", "memory_bw", "disk_bw", "nic_bw", "gpu_fp32", "gpu_fp64",
                  "gpu_bw"]
PEAK_UNITS = {"cpu_fp64": "GFLOP/s", "cpu_fp32": "GFLOP/s", "cpu_int32": "GIOP/s", "memory_bw": "MB/s",
              "disk_bw": "MB/s", "nic_bw": "Mbit/s", "gpu_fp32": "GFLOP/s", "gpu_fp64": "GFLOP/s", "gpu_bw": "GB/s"}


class PeakOverride(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: JsonNumber = Field(gt=0, le=1e12, description="the peak for the whole host, in the key's unit")
    note: str | None = Field(None, max_length=500, description="where the figure comes from (a datasheet, ...)")


# Labels a token gives every host that joins with it: bounded like the rest of a body.
TOKEN_LABELS_MAX = 32
LABEL_KEY_MAX = 64
LABEL_KEY_PART = rf"[A-Za-z0-9][A-Za-z0-9._/-]{{0,{LABEL_KEY_MAX - 1}}}"  # also in a key=value (checks, bands)
LABEL_KEY = rf"^{LABEL_KEY_PART}$"
LABEL_VALUE_MAX = 128
LabelValue = Annotated[str, Field(max_length=LABEL_VALUE_MAX)]


class RegistrationTokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ttl_s: JsonNumber = Field(900, ge=60, le=366 * 86400, description="how long the token may be used (seconds)")
    uses: int | None = Field(1, ge=1, le=1_000_000,
                             description="how many runners may join with it; null: unlimited (until it expires "
                                         "or is revoked). 1 is \"Add host\"")
    name: str | None = Field(None, min_length=1, max_length=128, description="what the token is for (\"rack 12\")")
    labels: dict[str, LabelValue] = Field(
        default_factory=dict, max_length=TOKEN_LABELS_MAX, description="labels given to every host that joins with it",
        json_schema_extra={"propertyNames": {"pattern": LABEL_KEY}})
    namespace: str | None = Field(None, pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
                           description="the Kubernetes manifest's namespace (default: hostbench)")
    image: str | None = Field(None, min_length=1, max_length=255, pattern=r"^[A-Za-z0-9][^\s]*$",
                       description="the Kubernetes manifest's runner image, built from the server's tarball "
                                   "(default: hostbench-runner:latest)")
    nodes: list[Annotated[str, Field(min_length=1, max_length=253, pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")]] = \
        Field(default_factory=list, max_length=1000,
              description="Kubernetes node names: the one-shot Job manifest has a Job for each (kubernetes_jobs)")


    @field_validator("labels")
    @classmethod
    def _label_keys(cls, labels: dict[str, str]) -> dict[str, str]:
        bad = [k for k in labels if not re.match(LABEL_KEY, k)]
        if bad:
            raise ValueError(f"label keys are letters, digits and . _ / - (up to 64, a letter or digit first): {bad}")
        return labels


class InstallForms(BaseModel):
    install_command: str = Field(description="paste on the target host: installs, registers and starts the runner")
    container_command: str = Field(description="the same as a container, for hosts that prefer one")
    shell_command: str = Field(description="for configuration management: idempotent, a second run does nothing")
    cloud_init: str = Field(description="#cloud-config user data running the installer at first boot")
    kubernetes_manifest: str = Field(description="Namespace, Secret, ServiceAccount and DaemonSet (YAML)")
    kubernetes_jobs: str = Field("", description="a one-shot runner Job per node of `nodes` (YAML; empty "
                                                 "without nodes)")


class RegistrationTokenPublic(BaseModel):
    id: int
    name: str | None
    created_at: datetime
    created_by: str | None
    expires_at: datetime
    max_uses: int | None = Field(description="null: unlimited")
    uses_left: int | None = Field(description="null: unlimited")
    uses: int
    labels: dict[str, Any]
    revoked_at: datetime | None
    usable: bool = Field(description="not revoked, not expired, a use left")


class RegistrationTokensPublic(BaseModel):
    data: list[RegistrationTokenPublic]
    count: int


class RegistrationTokenCreated(InstallForms):
    token: str = Field(description="shown once; only its hash is kept")
    expires_at: datetime
    info: RegistrationTokenPublic
