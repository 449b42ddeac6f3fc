#!/bin/sh
# nginx of the compose deployment: the TLS server when a certificate is mounted, then nginx in the foreground.
set -eu
if [ -f /etc/nginx/tls/fullchain.pem ] && [ -f /etc/nginx/tls/privkey.pem ]; then
    ln -sf /etc/nginx/hostbench/tls.conf /etc/nginx/hostbench.d/tls.conf
    echo "hostbench-nginx: TLS on 443 with /etc/nginx/tls/fullchain.pem"
else
    rm -f /etc/nginx/hostbench.d/tls.conf
fi
# The container engine's DNS server (Docker: 127.0.0.11, podman: the network's gateway), for the api's name: the
# first nameserver only (podman lists the host's after its own, and nginx would ask them in turn).
ns=$(awk '$1 == "nameserver" { a = $2; if (a ~ /:/) a = "[" a "]"; print a; exit }' /etc/resolv.conf)
[ -n "$ns" ] || ns=127.0.0.11
echo "resolver $ns valid=5s ipv6=off;" > /etc/nginx/hostbench.d/resolver.conf
echo "hostbench-nginx: the api is resolved through $ns"
nginx -t -q
exec nginx -g 'daemon off;'
