"""The fleet's headline figures for GET /api/metrics (prometheus-client): one gauge family per headline, the unit in its
name, one sample per host (its newest figure), and the figure's efficiency against its peak where there is one. A
scraper that asks for OpenMetrics (`Accept: application/openmetrics-text`) gets OpenMetrics, ending in `# EOF`; any
other gets the Prometheus text format 0.0.4."""
import re
from typing import get_args

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST, choose_encoder
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST as OPENMETRICS_CONTENT_TYPE
from prometheus_client.registry import Collector

from app.hosts.schemas import HostHealth
from app.trends.schemas import FleetPublic

HEALTH_VERDICTS = get_args(HostHealth.model_fields["verdict"].annotation)

CONTENT_TYPE = CONTENT_TYPE_LATEST.split(";")[0]
OPENMETRICS = OPENMETRICS_CONTENT_TYPE.split(";")[0]
# A unit as Prometheus names want it (base units where they exist; the prefixes say the scale)
UNIT_NAMES = {"GFLOP/s": "gigaflops", "GIOP/s": "gigaops_per_second", "MB/s": "megabytes_per_second",
              "Mbit/s": "megabits_per_second", "RT/s": "round_trips_per_second", "Mload/s": "megaloads_per_second",
              "GB/s": "gigabytes_per_second"}


def unit_name(unit: str) -> str:
    return UNIT_NAMES.get(unit) or re.sub(r"[^a-z0-9]+", "_", unit.lower()).strip("_") or "value"


class _Fleet(Collector):
    def __init__(self, fleet: FleetPublic):
        self.fleet = fleet

    def collect(self):  # type: ignore[no-untyped-def]
        labels = ["host", "host_id", "provider", "instance_type", "region", "threads", "verdict"]
        eff = GaugeMetricFamily("hostbench_headline_efficiency_ratio",
                                "Newest headline figure of each host / its theoretical peak (where one exists)",
                                labels=["metric", *labels])
        when = GaugeMetricFamily("hostbench_headline_run_finished_timestamp_seconds",
                                 "When the run behind each host's newest headline figure finished (UNIX seconds)",
                                 labels=["metric", *labels])
        for m in self.fleet.metrics:
            g = GaugeMetricFamily(f"hostbench_{m.key}_{unit_name(m.unit)}",
                                  f"{m.title}: the newest finished run's mean, in {m.unit} (one run per host)",
                                  labels=labels)
            for h in self.fleet.hosts:
                c = h.cells.get(m.key)
                if c is None:
                    continue
                values = [h.name, str(h.host_id), h.labels.get("provider", ""), h.labels.get("instance_type", ""),
                          h.labels.get("region", ""), str(c.threads), c.verdict]
                g.add_metric(values, c.value)
                when.add_metric([m.key, *values], c.at.timestamp())
                if c.efficiency is not None:
                    eff.add_metric([m.key, *values], c.efficiency)
            yield g
        yield eff
        yield when
        yield from self.health()

    def health(self):  # type: ignore[no-untyped-def]
        """A gauge per host and check (suite): 1 for the verdict it has, 0 for the others; and when it was judged."""
        labels = ["host", "host_id", "check", "verdict"]
        state = GaugeMetricFamily("hostbench_health_check_verdict",
                                  "Each host's latest verdict of each health check: 1 for the verdict it has",
                                  labels=labels)
        when = GaugeMetricFamily("hostbench_health_check_judged_timestamp_seconds",
                                 "When each host's latest verdict of each health check was given (UNIX seconds)",
                                 labels=labels[:3])
        for h in self.fleet.hosts:
            for c in h.health:
                for v in HEALTH_VERDICTS:
                    state.add_metric([h.name, str(h.host_id), c.suite, v], 1.0 if c.verdict == v else 0.0)
                when.add_metric([h.name, str(h.host_id), c.suite], c.at.timestamp())
        yield state
        yield when


def render(fleet: FleetPublic, accept: str = "") -> tuple[bytes, str]:
    """The body and its content type, in the format the scraper's Accept header asks for."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fleet(fleet))
    encode, content_type = choose_encoder(accept)
    return encode(registry), content_type
