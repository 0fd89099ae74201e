"""Certificates for an etcd cluster with TLS, made with ``openssl`` (Debian's) in a directory:
a CA, the certificate its members serve and present to each other (``SAN IP:127.0.0.1``,
server and client use), and two client certificates:

* ``client``: the store's, and the harness's calls to the JSON gateway. It has no Common
  Name: with etcd's authentication on and ``--client-cert-auth``, etcd 3.4's gateway
  refuses (HTTP 400) a client certificate that carries one.
* ``admin``: ``etcdctl``'s (gRPC), Common Name ``root``: once authentication is on, etcd
  takes a gRPC client's Common Name as its user, so ``etcdctl`` acts as root without a
  password.

EC P-256 keys, valid for a day: enough for a test, never for a deployment."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TLSFiles", "make_ca", "make_tls"]

#: How long one ``openssl`` call may take.
OPENSSL_TIMEOUT_S = 30.0
_CLIENT_USE = "extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n"


@dataclass(frozen=True)
class TLSFiles:
    """PEM files: the CA, the members' certificate and key, the client's and ``etcdctl``'s."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    admin_cert: Path
    admin_key: Path

    def client_context(self) -> ssl.SSLContext:
        """A client's TLS context: the CA trusted, the client certificate presented."""
        context = ssl.create_default_context(cafile=str(self.ca))
        context.load_cert_chain(str(self.client_cert), str(self.client_key))
        return context

    def etcdctl_flags(self) -> list[str]:
        return [f"--cacert={self.ca}", f"--cert={self.admin_cert}", f"--key={self.admin_key}"]


def _openssl(*args: str | Path, cwd: Path) -> None:
    program = shutil.which("openssl")
    if program is None:
        raise FileNotFoundError("openssl is not installed (Debian's openssl)")
    done = subprocess.run([program, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=OPENSSL_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(map(str, args))} exited {done.returncode}: "
                           f"{done.stderr.strip()}")


def _key(path: Path, work: Path) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path, cwd=work)


def make_ca(work: Path, name: str = "ca") -> tuple[Path, Path]:
    """A self-signed CA in ``work``: (its certificate, its key)."""
    work.mkdir(parents=True, exist_ok=True)
    cert, key = work / f"{name}.pem", work / f"{name}-key.pem"
    _key(key, work)
    _openssl("req", "-x509", "-new", "-key", key, "-out", cert, "-days", "1",
             "-subj", f"/CN=arena-test-{name}", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=work)
    return cert, key


def signed(work: Path, name: str, subject: str, extensions: str, ca: tuple[Path, Path]) -> tuple[Path, Path]:
    """A key and a certificate for ``subject`` that ``ca`` signs, with ``extensions``."""
    cert, key, csr, ext = (work / f"{name}.pem", work / f"{name}-key.pem", work / f"{name}.csr",
                           work / f"{name}.ext")
    _key(key, work)
    _openssl("req", "-new", "-key", key, "-out", csr, "-subj", subject, cwd=work)
    ext.write_text(extensions)
    _openssl("x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-CAcreateserial", "-out", cert,
             "-days", "1", "-extfile", ext, cwd=work)
    return cert, key


def make_tls(work: Path) -> TLSFiles:
    """A CA and the certificates signed by it (the module docstring), in ``work``."""
    ca = make_ca(work)
    server = signed(work, "member", "/CN=etcd-member",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                    "extendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature\n", ca)
    client = signed(work, "client", "/O=arena-stream", _CLIENT_USE, ca)
    admin = signed(work, "admin", "/CN=root", _CLIENT_USE, ca)
    return TLSFiles(ca=ca[0], server_cert=server[0], server_key=server[1], client_cert=client[0],
                    client_key=client[1], admin_cert=admin[0], admin_key=admin[1])
