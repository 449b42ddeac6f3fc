#!/bin/sh
# The backend's admin commands inside a backend container, with the database found as the services find it:
#   docker compose exec api hostbench user-add NAME --role admin      (password on stdin; none: a sign-in link)
#   docker compose exec api hostbench api-token NAME | token | sign-in-link NAME | routes
# (`docker compose exec` skips the image's entrypoint, which builds DATABASE_URL and REDIS_URL.)
HOSTBENCH_WAIT=0 exec /usr/local/bin/hostbench-entrypoint python -m app.cli "$@"
