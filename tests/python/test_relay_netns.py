"""The relay route across real networks: three places, as on the internet. This test's own namespace is the
agent's network; a namespace made here is the relay's server (`journal relay serve` on port 443, with Pebble and
its DNS beside it); another, behind it, is the owner's computer, which can dial out to the relay but which nothing
can reach (the relay's server does not forward, and the journal listens on loopback only).

The journal enrols, gets its certificate from Pebble through the relay, and the official Python SDK signs in from
the agent's network and calls a tool; a key works there too. A capture of every byte the relay's server carried
holds the journal's name in the TLS hellos but not one byte of the tool call, its answer or the key. Needs root and
iproute2 (CI runs as root).
"""

import asyncio
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time

import httpx
import pytest

from journal_helpers import JOURNAL, MemoryStorage, demo_journal, run, sign_in_and_search
from local_tls import write_tls
from test_domain import CAA_IDENTITY

TAG = f"jr{os.getpid() % 100000}"
SUBNET = 10 + os.getpid() % 200
AGENT_IP, RELAY_OUTSIDE = f"10.214.{SUBNET}.1", f"10.214.{SUBNET}.2"
RELAY_INSIDE, JOURNAL_IP = f"10.215.{SUBNET}.1", f"10.215.{SUBNET}.2"
HOST = "alice.relay.test"
URL = f"https://{HOST}/mcp"
MARKER = "quarterly lease renewal"


def ip(*args, netns=None):
    prefix = ["ip", "netns", "exec", netns] if netns else []
    subprocess.run([*prefix, "ip", *args], check=True, capture_output=True)


def in_namespace(netns, command, **options):
    return subprocess.Popen(["ip", "netns", "exec", netns, *command], **options)


def wait_in(netns, port, host="127.0.0.1", seconds=15):
    deadline = time.monotonic() + seconds
    probe = f"import socket; socket.create_connection(('{host}', {port}), timeout=1).close()"
    while subprocess.run(["ip", "netns", "exec", netns, "python3", "-c", probe], capture_output=True).returncode:
        assert time.monotonic() < deadline, f"nothing listens on {host}:{port} in {netns}"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def networks():
    if os.geteuid() != 0 or not shutil.which("ip"):
        if os.environ.get("CI"):
            pytest.fail("the relay's network test needs root and iproute2; CI runs as root")
        pytest.skip("needs root and iproute2 (network namespaces)")
    if not (shutil.which("pebble") and shutil.which("pebble-challtestsrv")):
        if os.environ.get("CI"):
            pytest.fail("the relay's network test needs Debian's pebble package")
        pytest.skip("needs Debian's pebble package")
    relay_ns, journal_ns = f"{TAG}r", f"{TAG}j"
    processes = []
    with tempfile.TemporaryDirectory() as folder:
        try:
            ip("netns", "add", relay_ns)
            ip("netns", "add", journal_ns)
            ip("link", "add", f"{TAG}a", "type", "veth", "peer", "name", f"{TAG}b")
            ip("link", "set", f"{TAG}b", "netns", relay_ns)
            ip("addr", "add", f"{AGENT_IP}/24", "dev", f"{TAG}a")
            ip("link", "set", f"{TAG}a", "up")
            ip("addr", "add", f"{RELAY_OUTSIDE}/24", "dev", f"{TAG}b", netns=relay_ns)
            ip("link", "set", f"{TAG}b", "up", netns=relay_ns)
            ip("link", "add", f"{TAG}c", "type", "veth", "peer", "name", f"{TAG}d", netns=relay_ns)
            ip("link", "set", f"{TAG}d", "netns", journal_ns, netns=relay_ns)
            ip("addr", "add", f"{RELAY_INSIDE}/24", "dev", f"{TAG}c", netns=relay_ns)
            ip("link", "set", f"{TAG}c", "up", netns=relay_ns)
            ip("addr", "add", f"{JOURNAL_IP}/24", "dev", f"{TAG}d", netns=journal_ns)
            ip("link", "set", f"{TAG}d", "up", netns=journal_ns)
            for netns in (relay_ns, journal_ns):
                ip("link", "set", "lo", "up", netns=netns)

            # Pebble on the relay's server, with its DNS answering every name with the relay's address.
            pebble_tls = write_tls(folder, ["localhost"], ["127.0.0.1", RELAY_INSIDE])
            config = {"pebble": {
                "listenAddress": "0.0.0.0:14000", "managementListenAddress": "127.0.0.1:15000",
                "certificate": pebble_tls["cert"], "privateKey": pebble_tls["key"], "httpPort": 5002, "tlsPort": 443,
                "ocspResponderURL": "", "externalAccountBindingRequired": False}}
            with open(os.path.join(folder, "pebble.json"), "w") as f:
                json.dump(config, f)
            processes.append(in_namespace(relay_ns, [
                "pebble-challtestsrv", "-defaultIPv4", RELAY_OUTSIDE, "-defaultIPv6", "", "-dns01", "127.0.0.1:8053",
                "-http01", "", "-https01", "", "-tlsalpn01", "", "-management", "127.0.0.1:8055"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            processes.append(in_namespace(relay_ns, [
                "pebble", "-config", os.path.join(folder, "pebble.json"), "-dnsserver", "127.0.0.1:8053"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env={**os.environ, "PEBBLE_VA_NOSLEEP": "1", "PEBBLE_WFE_NONCEREJECT": "0"}))
            wait_in(relay_ns, 14000)
            wait_in(relay_ns, 15000)
            root = subprocess.run(["ip", "netns", "exec", relay_ns, "python3", "-c",
                                   "import ssl, urllib.request, sys; "
                                   f"c = ssl.create_default_context(cafile='{pebble_tls['ca']}'); "
                                   "sys.stdout.write(urllib.request.urlopen('https://127.0.0.1:15000/roots/0', "
                                   "context=c).read().decode())"], capture_output=True, text=True, check=True).stdout
            issuing_root = os.path.join(folder, "pebble-root.pem")
            with open(issuing_root, "w") as f:
                f.write(root)

            # The relay, on port 443 of its server, with a certificate for its own name.
            relay_tls_dir = os.path.join(folder, "relay-tls")
            os.makedirs(relay_tls_dir)
            relay_tls = write_tls(relay_tls_dir, ["relay.test"])
            relay_data = os.path.join(folder, "relay")
            relay = in_namespace(relay_ns, [
                JOURNAL, "relay", "serve", "--hostname", "relay.test", "--listen", "0.0.0.0:443",
                "--cert", relay_tls["cert"], "--key", relay_tls["key"], "--data", relay_data],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            processes.append(relay)
            assert "the relay serves journals" in relay.stdout.readline()
            credential = run(folder, "relay", "enrol", "alice", "--data", relay_data).splitlines()[1]

            # The owner's computer: the journal enrols (dialling out), then serves.
            journal_dir = demo_journal(folder, days=3)
            enabled = subprocess.run(["ip", "netns", "exec", journal_ns, JOURNAL, "--journal", journal_dir, "route",
                                      "enable", "relay", "--relay", "relay.test", "--name", "alice", "--enrolment",
                                      credential, "--relay-address", f"{RELAY_INSIDE}:443", "--relay-root",
                                      relay_tls["ca"], "--acme-directory", f"https://{RELAY_INSIDE}:14000/dir",
                                      "--acme-root", pebble_tls["ca"], "--caa-identity", CAA_IDENTITY],
                                     capture_output=True, text=True)
            assert enabled.returncode == 0, enabled.stderr
            journal = in_namespace(journal_ns, [JOURNAL, "--journal", journal_dir, "serve"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            processes.append(journal)
            deadline = time.monotonic() + 90
            while "issued by CN=Pebble" not in run(journal_dir, "route", "list").split("relay   on")[1]:
                assert time.monotonic() < deadline, run(journal_dir, "route", "list")
                time.sleep(0.2)
            yield {"folder": folder, "journal_dir": journal_dir, "issuing_root": issuing_root, "relay_ns": relay_ns,
                   "journal_ns": journal_ns}
        finally:
            for process in reversed(processes):
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
            subprocess.run(["ip", "netns", "del", journal_ns], capture_output=True)
            subprocess.run(["ip", "netns", "del", relay_ns], capture_output=True)
            subprocess.run(["ip", "link", "del", f"{TAG}a"], capture_output=True)


class ToTheRelay(httpx.AsyncHTTPTransport):
    """Reaches the journal's name at the relay's address (as the relay's DNS would answer)."""

    async def handle_async_request(self, request):
        if request.url.host == HOST:
            request.extensions = {**request.extensions, "sni_hostname": HOST}
            request.url = request.url.copy_with(host=RELAY_OUTSIDE)
        return await super().handle_async_request(request)


def test_the_sdk_reaches_a_journal_nothing_can_reach_and_the_relay_sees_only_ciphertext(networks):
    journal_dir = networks["journal_dir"]
    trust = ssl.create_default_context(cafile=networks["issuing_root"])

    # Nothing reaches the owner's computer: even from the relay's server, the one machine with a path to it, a
    # connection is refused, since the journal listens on loopback only.
    probe = subprocess.run(["ip", "netns", "exec", networks["relay_ns"], "python3", "-c",
                            f"import socket; socket.create_connection(('{JOURNAL_IP}', 7659), timeout=2)"],
                           capture_output=True, text=True)
    assert "ConnectionRefusedError" in probe.stderr, probe.stderr
    listening = subprocess.run(["ip", "netns", "exec", networks["journal_ns"], "ss", "-ltnH"],
                               capture_output=True, text=True).stdout
    assert listening.strip(), "ss showed no listener at all"
    for line in listening.splitlines():
        local = line.split()[3]
        assert local.startswith(("127.", "[::1]", "::1")), f"the journal listens beyond loopback: {line}"

    capture_file = os.path.join(networks["folder"], "relay.capture")
    capture = in_namespace(networks["relay_ns"], [
        sys.executable, os.path.join(os.path.dirname(__file__), "packet_capture.py"), capture_file],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert capture.stdout.readline().strip() == "capturing", capture.stderr.read()
    key = json.loads(run(journal_dir, "mcp", "token", "create", "--label", "relayed", "--json"))["key"]
    run(journal_dir, "mcp", "permission", "set", "--token", "relayed", "--category", "transcripts")
    try:
        async def go():
            code = run(journal_dir, "mcp", "pairing", "generate", "--route", "relay").strip().splitlines()[-1]
            tools, found = await sign_in_and_search(URL, code, ["transcripts"], MemoryStorage(),
                                                    transport_factory=lambda: ToTheRelay(verify=trust))
            async with httpx.AsyncClient(transport=ToTheRelay(verify=trust), timeout=10) as http:
                body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": MARKER, "version": "1"}}}
                keyed = await http.post(URL, json=body, headers={"Authorization": f"Bearer {key}",
                                                                 "Accept": "application/json, text/event-stream"})
            return tools, found, keyed

        tools, found, keyed = asyncio.run(go())
        assert "search" in tools and not found.isError and found.structuredContent["results"]
        assert keyed.status_code == 200, keyed.text
    finally:
        capture.send_signal(signal.SIGTERM)
        capture.wait(timeout=15)
    with open(capture_file, "rb") as f:
        seen = f.read()
    # The capture saw the traffic: the journal's name travels in the clear in each TLS hello (SNI).
    assert HOST.encode() in seen, f"the capture holds none of the traffic ({len(seen)} bytes)"
    assert len(seen) > 20_000, len(seen)
    # And none of what the agents and the journal said: not the key, the client's name, or the answer.
    for secret in (key.encode(), MARKER.encode(), b"lease renewal", b"search", b"jsonrpc", b"Bearer",
                   found.structuredContent["results"][0]["snippet"][:40].encode()):
        assert secret not in seen, f"the relay's server carried {secret!r} in the clear"
    assert re.search(rb"POST /mcp", seen) is None
