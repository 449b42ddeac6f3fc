"""The built-in suites are valid job bodies of the API (its generated models: bounds, kernel rules), each job within
the server's duration limit."""
import pytest
from hostbench_common.suites import BUILTIN, HostInfo, job_duration, plan
from pydantic import TypeAdapter

from app.core.config import get_settings
from app.jobs.schemas import JobCreate

BODY = TypeAdapter(JobCreate)


@pytest.mark.parametrize("suite_id", sorted(BUILTIN))
def test_every_item_of_a_builtin_suite_is_a_valid_job_body(suite_id):
    hosts = [HostInfo(1), HostInfo(2, {"gpus": [{"name": "any"}]})]
    jobs, skipped = plan(BUILTIN[suite_id].items, hosts)
    assert not skipped and len(jobs) == len(BUILTIN[suite_id].items)
    for job in jobs:
        body = BODY.validate_python({"host_ids": job.host_ids, "experiment": job.experiment, "params": job.params})
        # the API's model (defaults filled, kernel rules applied) and the table agree on the duration
        assert job_duration(job.experiment, body.params.model_dump()) == job_duration(job.experiment, job.params)
        assert job_duration(job.experiment, job.params) <= get_settings().max_job_duration_s, job
