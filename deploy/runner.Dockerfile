# The runner image: the daemon and the native kernels, built here with Debian's gcc.
# It measures the machine it runs on (a container shares the host's CPUs, memory and kernel).
#   docker build -f deploy/runner.Dockerfile .
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
ARG DEBIAN_FRONTEND=noninteractive
# Reference tools the runner can run next to its kernels ("reference": true jobs); none by default, e.g.
#   --build-arg RUNNER_TOOLS="fio iperf3 sockperf hpcc libopenblas0-pthread iputils-ping"
ARG RUNNER_TOOLS=""
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc make libc6-dev python3 python3-venv ca-certificates \
       $RUNNER_TOOLS \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY requirements.lock /tmp/requirements.lock
COPY runner /opt/hostbench/runner
COPY common /opt/hostbench/common
RUN sed -e '/^ *#/d' -e '/^ *--hash/d' -e 's/ *\\$//' /tmp/requirements.lock > /tmp/constraints.txt \
    && make -C /opt/hostbench/runner/kernels \
    && pip install -c /tmp/constraints.txt /opt/hostbench/runner \
    && rm /tmp/requirements.lock /tmp/constraints.txt
COPY deploy/runner/entrypoint.sh /usr/local/bin/hostbench-runner-entrypoint
ENV HOSTBENCH_KERNEL_BIN=/opt/hostbench/runner/kernels/build/hbk \
    HOSTBENCH_RUNNER_STATE=/var/lib/hostbench-runner
VOLUME /var/lib/hostbench-runner
ENTRYPOINT ["/usr/local/bin/hostbench-runner-entrypoint"]
