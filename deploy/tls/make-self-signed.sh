#!/bin/sh
# A self-signed certificate for hostbench's nginx (deploy/compose.tls.yml): deploy/tls/fullchain.pem and
# privkey.pem, valid 825 days, for the names and addresses given (the first is the subject).
#   deploy/tls/make-self-signed.sh bench.example.org 192.0.2.10
# Browsers warn about a self-signed certificate; runners need it trusted: copy fullchain.pem to the runner
# host's /usr/local/share/ca-certificates/hostbench.crt and run update-ca-certificates.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 NAME [NAME|IP ...]" >&2; exit 2; }
dir="${HOSTBENCH_TLS_DIR:-$(dirname "$0")}"
san=""
for n in "$@"; do
    case "$n" in
        *[!0-9.]*) case "$n" in *:*) san="$san,IP:$n" ;; *) san="$san,DNS:$n" ;; esac ;;
        *) san="$san,IP:$n" ;;
    esac
done
umask 077
openssl req -x509 -newkey rsa:2048 -sha256 -nodes -days 825 -subj "/CN=$1" -addext "subjectAltName=${san#,}" \
    -keyout "$dir/privkey.pem" -out "$dir/fullchain.pem" 2>/dev/null
chmod 0644 "$dir/fullchain.pem"
echo "wrote $dir/fullchain.pem and $dir/privkey.pem for ${san#,}"
