# The backend image: API (uvicorn), Celery worker and beat, and the migrate job. Debian's Python (3.11 on
# bookworm), the Python dependencies from PyPI at the versions pinned in requirements.lock.
#   docker build -f deploy/backend.Dockerfile .          (the compose file builds it; context = the repo root)
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/venv \
    && useradd --system --uid 10001 --home-dir /var/lib/hostbench --create-home --shell /usr/sbin/nologin hostbench
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

# Dependencies first (their own layer: a code change does not reinstall them), at the lock's versions; our own
# packages (hostbench-common) come from the repository below, never from an index.
COPY requirements.lock /tmp/requirements.lock
COPY backend/pyproject.toml /tmp/backend-pyproject.toml
RUN sed -e '/^ *#/d' -e '/^ *--hash/d' -e 's/ *\\$//' /tmp/requirements.lock > /tmp/constraints.txt \
    && python3 -c "import tomllib; print('\n'.join(d for d in tomllib.load(open('/tmp/backend-pyproject.toml', 'rb'))['project']['dependencies'] if not d.startswith('hostbench-')))" > /tmp/requirements.txt \
    && pip install -c /tmp/constraints.txt -r /tmp/requirements.txt \
    && rm /tmp/requirements.lock /tmp/constraints.txt /tmp/requirements.txt /tmp/backend-pyproject.toml

# The common package (the experiment table, the kernels' schemas and the reference tools' parsers: stdlib only,
# imported from PYTHONPATH) and the runner's sources, which the installer hands to new hosts (RUNNER_SOURCE_DIR;
# the common package beside it goes into the same tarball).
COPY runner/pyproject.toml runner/README.md /app/runner/
COPY runner/hostbench_runner /app/runner/hostbench_runner
COPY common/hostbench_common /app/common/hostbench_common
COPY runner/kernels /app/runner/kernels
COPY migrations /app/migrations
COPY backend /app/backend
RUN pip install --no-deps /app/backend \
    && install -d -o hostbench -g hostbench -m 0700 /var/lib/hostbench-bootstrap
COPY deploy/backend/entrypoint.py /usr/local/bin/hostbench-entrypoint
COPY deploy/backend/migrate.sh /usr/local/bin/hostbench-migrate
COPY deploy/backend/hostbench.sh /usr/local/bin/hostbench
ENV PYTHONPATH=/app/common:/app/runner RUNNER_SOURCE_DIR=/app/runner
WORKDIR /app/backend
USER hostbench
ENTRYPOINT ["/usr/local/bin/hostbench-entrypoint"]
CMD ["uvicorn", "app.main:app", "--host", "0.0.0.0", "--port", "8000"]
