#!/usr/bin/env bash
# The certificates etcd's TLS needs (deploy/compose.yaml, deploy/k8s/etcd.yaml), made with
# openssl into DIR (default deploy/etcd-tls, which deploy/.gitignore keeps out of git):
#
#   ca.pem, ca-key.pem          a CA of this cluster's own: it signs every certificate below,
#                               and every member and node trusts only it. Keep ca-key.pem
#                               offline once the certificates are made.
#   etcd-N.pem, etcd-N-key.pem  member N's certificate (N = 1, 2, 3), for both its client
#                               port and its peer port: serverAuth for the clients and peers
#                               that connect to it, clientAuth for its connections to the
#                               other members (--peer-client-cert-auth checks them) and for
#                               etcd's own JSON gateway, which calls the member with it.
#                               Its names: etcd-N (the compose service), the Kubernetes
#                               pod's names, localhost and 127.0.0.1 (the health check).
#   node.pem, node-key.pem      the service nodes' client certificate (clientAuth only):
#                               --client-cert-auth refuses a client without one the CA signed.
#
#   bash deploy/etcd-certs.sh [DIR] [DAYS]       (DAYS: how long they are valid, 825 by default)
#
# Run it once; running it again over an existing DIR refuses (a new CA would lock out every
# member and node still holding the old one's certificates).
set -euo pipefail

dir=${1:-deploy/etcd-tls}
days=${2:-825}
if [ -e "$dir/ca.pem" ]; then
  echo "etcd-certs.sh: $dir/ca.pem exists; remove $dir first to make a new CA" >&2
  exit 1
fi
mkdir -p "$dir"
umask 077

openssl req -x509 -newkey rsa:3072 -sha256 -nodes -days "$days" \
  -keyout "$dir/ca-key.pem" -out "$dir/ca.pem" -subj "/CN=arena-stream etcd CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"

# sign NAME EXTENDED_KEY_USAGE SUBJECT_ALT_NAMES
sign() {
  local name=$1 usage=$2 names=$3 ext
  ext=$(mktemp)
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    if [ -n "$names" ]; then echo "subjectAltName=$names"; fi
  } > "$ext"
  openssl req -newkey rsa:3072 -sha256 -nodes -keyout "$dir/$name-key.pem" \
    -out "$dir/$name.csr" -subj "/CN=$name"
  openssl x509 -req -sha256 -days "$days" -in "$dir/$name.csr" -CA "$dir/ca.pem" \
    -CAkey "$dir/ca-key.pem" -CAcreateserial -extfile "$ext" -out "$dir/$name.pem"
  rm -f "$dir/$name.csr" "$ext"
}

for n in 1 2 3; do
  # compose: etcd-N; Kubernetes (deploy/k8s/etcd.yaml): the StatefulSet's pod etcd-(N-1)
  # behind the headless Service etcd.
  pod="etcd-$((n - 1)).etcd"
  sign "etcd-$n" serverAuth,clientAuth \
    "DNS:etcd-$n,DNS:$pod,DNS:$pod.default.svc,DNS:$pod.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1"
done
sign node clientAuth ""
rm -f "$dir/ca.srl"
chmod 0444 "$dir"/*.pem
chmod 0400 "$dir"/*-key.pem
echo "etcd-certs.sh: the CA and the certificates are in $dir"
