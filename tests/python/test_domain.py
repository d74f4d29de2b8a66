"""The own-domain route against a real ACME server: Debian's Pebble, with pebble-challtestsrv answering DNS
for the test hostname (A and CAA). Pebble's own HTTPS certificate is made here (a CA and a leaf).

`journal route enable domain` makes the ACME account and refuses while the hostname has no CAA record
naming it; with the record set, `journal serve` orders a certificate by TLS-ALPN-01 on its own listener and
serves /mcp over it. The official Python SDK signs in there and calls a tool. Pebble here issues certificates
valid for 20 days, fewer than the 30 that trigger renewal, so a SIGHUP (check now) renews: a connection
opened before keeps working on its old certificate while new handshakes get the new one. Then a CAA set that
names another account stops the route. Pebble itself does not check CAA; the route does.
"""

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time

import httpx
import pytest

from journal_helpers import JOURNAL, MemoryStorage, demo_journal, run, sign_in_and_search
from local_tls import free_port, to_loopback, wait_for_port, write_tls

HOST = "journal.test"
CAA_IDENTITY = "pebble.test"


def write_pebble_tls(folder):
    """A CA and a leaf for 127.0.0.1 and localhost: Pebble's HTTPS certificate, which rustls accepts."""
    return write_tls(folder, ["localhost"], ["127.0.0.1"])


class Challtestsrv:
    def __init__(self, port):
        self.url = f"http://127.0.0.1:{port}"

    def post(self, path, body):
        answer = httpx.post(f"{self.url}/{path}", json=body)
        assert answer.status_code == 200, answer.text

    def set_caa(self, value):
        self.post("clear-caa", {"host": HOST})
        self.post("add-caa", {"host": HOST, "policies": [{"tag": "issue", "value": value}]})


@pytest.fixture(scope="module")
def acme():
    if not (shutil.which("pebble") and shutil.which("pebble-challtestsrv")):
        if os.environ.get("CI"):
            pytest.fail("the ACME test needs Debian's pebble package; scripts/test installs it when run as root")
        pytest.skip("needs Debian's pebble package (apt-get install pebble)")
    with tempfile.TemporaryDirectory() as folder:
        tls = write_pebble_tls(folder)
        ports = {name: free_port() for name in ("acme", "management", "dns", "dns_management", "route", "local")}
        config = {"pebble": {
            "listenAddress": f"127.0.0.1:{ports['acme']}", "managementListenAddress": f"127.0.0.1:{ports['management']}",
            "certificate": tls["cert"], "privateKey": tls["key"], "httpPort": free_port(), "tlsPort": ports["route"],
            "ocspResponderURL": "", "externalAccountBindingRequired": False,
            # 20 days: fewer than the 30 that make the route renew, so every check renews.
            "certificateValidityPeriod": 20 * 86400}}
        config_path = os.path.join(folder, "pebble.json")
        with open(config_path, "w") as f:
            json.dump(config, f)
        processes = []
        try:
            processes.append(subprocess.Popen(
                ["pebble-challtestsrv", "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "",
                 "-dns01", f"127.0.0.1:{ports['dns']}", "-http01", "", "-https01", "", "-tlsalpn01", "",
                 "-management", f"127.0.0.1:{ports['dns_management']}"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            environment = {**os.environ, "PEBBLE_VA_NOSLEEP": "1", "PEBBLE_WFE_NONCEREJECT": "0"}
            processes.append(subprocess.Popen(["pebble", "-config", config_path, "-dnsserver", f"127.0.0.1:{ports['dns']}"],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment))
            wait_for_port(ports["dns_management"])
            wait_for_port(ports["acme"])
            wait_for_port(ports["management"])
            root = httpx.get(f"https://127.0.0.1:{ports['management']}/roots/0",
                             verify=ssl.create_default_context(cafile=tls["ca"])).text
            issuing_root = os.path.join(folder, "pebble-root.pem")
            with open(issuing_root, "w") as f:
                f.write(root)
            yield {"folder": folder, "ports": ports, "tls_ca": tls["ca"], "issuing_root": issuing_root,
                   "dns": Challtestsrv(ports["dns_management"]),
                   "directory": f"https://127.0.0.1:{ports['acme']}/dir"}
        finally:
            for process in processes:
                process.terminate()
                process.wait(timeout=10)


def enable(acme, journal_dir):
    return subprocess.run(
        [JOURNAL, "--journal", journal_dir, "route", "enable", "domain", "--hostname", HOST,
         "--listen", f"127.0.0.1:{acme['ports']['route']}", "--public-port", str(acme["ports"]["route"]),
         "--acme-directory", acme["directory"],
         "--acme-root", acme["tls_ca"], "--resolver", f"127.0.0.1:{acme['ports']['dns']}",
         "--caa-identity", CAA_IDENTITY, "--email", "owner@example.org"],
        capture_output=True, text=True)


def trusting_pebble(acme):
    return ssl.create_default_context(cafile=acme["issuing_root"])


def tls_connection(acme):
    raw = socket.create_connection(("127.0.0.1", acme["ports"]["route"]), timeout=10)
    return trusting_pebble(acme).wrap_socket(raw, server_hostname=HOST)


def get_over(connection, path="/.well-known/oauth-protected-resource"):
    """One keep-alive HTTP/1.1 GET on an open TLS connection; answers the status line."""
    port = connection.getpeername()[1]
    connection.sendall(f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(4096)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"content-length: (\d+)", head, re.IGNORECASE).group(1))
    while len(body) < length:
        body += connection.recv(4096)
    return head.split(b"\r\n")[0].decode()


def fingerprint(connection):
    return connection.getpeercert(binary_form=True)


def route_list(journal_dir):
    return run(journal_dir, "route", "list")


def test_a_certificate_from_a_real_acme_server_serves_sign_ins_renews_and_stops_on_caa_drift(acme):
    journal_dir = demo_journal(acme["folder"], days=3)

    # Without a CAA record the route is refused, with the record to set in the message.
    refused = enable(acme, journal_dir)
    assert refused.returncode == 1
    assert "it has no CAA record" in refused.stderr, refused.stderr
    record = re.search(r'set the record (journal\.test\. CAA 0 issue "([^"]+)")', refused.stderr)
    assert record, refused.stderr
    value = record.group(2)
    account = re.search(r"accounturi=([^;]+);", value).group(1)
    assert value == f"{CAA_IDENTITY}; accounturi={account}; validationmethods=tls-alpn-01"
    assert not os.path.exists(os.path.join(journal_dir, "journal.toml")), "a refused enable writes nothing"

    # A set that allows any account of the CA is refused too; the exact one is accepted.
    acme["dns"].set_caa(CAA_IDENTITY)
    assert "every account" in enable(acme, journal_dir).stderr
    acme["dns"].set_caa(value)
    enabled = enable(acme, journal_dir)
    assert enabled.returncode == 0, enabled.stderr
    assert f"https://{HOST}:{acme['ports']['route']}/mcp" in enabled.stdout

    process = subprocess.Popen([JOURNAL, "--journal", journal_dir, "serve", "--local-addr", f"127.0.0.1:{acme['ports']['local']}"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = None
        for _ in range(50):
            line = process.stdout.readline()
            match = re.search(r"the domain route serves at (https://\S+/mcp)", line)
            if match:
                url = match.group(1)
                break
            assert "not serving" not in line, line
        assert url == f"https://{HOST}:{acme['ports']['route']}/mcp"
        listed = route_list(journal_dir)
        assert f"domain  on   {url}" in listed and "issued by CN=Pebble Intermediate CA" in listed, listed

        sign_in_and_call(acme, journal_dir, url)
        a_key_is_refused(acme, journal_dir, url)
        renewal_keeps_open_connections(acme, journal_dir, process)
        caa_drift_stops_the_route(acme, journal_dir, process, value)
    finally:
        process.terminate()
        assert process.wait(timeout=15) == 0


def sign_in_and_call(acme, journal_dir, url):
    storage = MemoryStorage()

    async def go():
        pairing_code = run(journal_dir, "mcp", "pairing", "generate", "--route", "domain").strip().splitlines()[-1]
        return await sign_in_and_search(url, pairing_code, ["transcripts"], storage,
                                        transport_factory=lambda: to_loopback(HOST, verify=trusting_pebble(acme)))

    tools, found = asyncio.run(go())
    assert "search" in tools
    assert not found.isError and found.structuredContent["results"]
    assert "python-sdk" in run(journal_dir, "mcp", "oauth", "list")


def a_key_is_refused(acme, journal_dir, url):
    key = json.loads(run(journal_dir, "mcp", "token", "create", "--label", "script", "--json"))["key"]
    connection = tls_connection(acme)
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                           "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        port = acme["ports"]["route"]
        connection.sendall((f"POST /mcp HTTP/1.1\r\nHost: {HOST}:{port}\r\nAuthorization: Bearer {key}\r\n"
                            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                            f"Content-Length: {len(body)}\r\n\r\n{body}").encode())
        status = connection.recv(4096).split(b"\r\n")[0].decode()
        assert status == "HTTP/1.1 401 Unauthorized", status
    finally:
        connection.close()


def renewal_keeps_open_connections(acme, journal_dir, process):
    before = tls_connection(acme)
    try:
        assert get_over(before) == "HTTP/1.1 200 OK"
        old = fingerprint(before)
        old_listing = re.search(r"SHA-256 (\S+)", route_list(journal_dir).split("domain  on")[1]).group(1)
        process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 30
        while True:
            listing = route_list(journal_dir).split("domain  on")[1]
            if re.search(r"SHA-256 (\S+)", listing).group(1) != old_listing:
                break
            assert time.monotonic() < deadline, f"no renewal: {listing}"
            time.sleep(0.2)
        # The connection opened before renewal still answers.
        assert get_over(before) == "HTTP/1.1 200 OK"
        after = tls_connection(acme)
        try:
            assert fingerprint(after) != old, "new handshakes get the new certificate"
            assert get_over(after) == "HTTP/1.1 200 OK"
        finally:
            after.close()
    finally:
        before.close()


def caa_drift_stops_the_route(acme, journal_dir, process, value):
    other = re.sub(r"accounturi=[^;]+", "accounturi=https://127.0.0.1/my-account/someone-else", value)
    acme["dns"].set_caa(other)
    process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 30
    while True:
        try:
            tls_connection(acme).close()
        except OSError:
            break
        assert time.monotonic() < deadline, "the route kept serving"
        time.sleep(0.2)
    listed = route_list(journal_dir)
    assert "not serving (see the last error)" in listed, listed
    assert "its CAA set allows the account https://127.0.0.1/my-account/someone-else, not this journal's" in listed

    # Put right, it serves again.
    acme["dns"].set_caa(value)
    process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 30
    while True:
        try:
            connection = tls_connection(acme)
            break
        except OSError:
            assert time.monotonic() < deadline, "the route did not come back"
            time.sleep(0.2)
    try:
        assert get_over(connection) == "HTTP/1.1 200 OK"
    finally:
        connection.close()
