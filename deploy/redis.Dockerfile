# Redis from Debian's packages, for the compose deployment: a password (HOSTBENCH_DB_PASSWORD), append-only
# persistence, no eviction (a Celery broker must not drop messages), CONFIG disabled.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server redis-tools \
    && rm -rf /var/lib/apt/lists/* \
    && install -d -o redis -g redis -m 0700 /data
COPY deploy/redis/entrypoint.sh /usr/local/bin/hostbench-redis
VOLUME /data
EXPOSE 6379
ENTRYPOINT ["/usr/local/bin/hostbench-redis"]
