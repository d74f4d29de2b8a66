"""The relay route end to end on loopback: two `journal relay serve` behind one name (sharing their enrolments),
with a certificate for the relay's own name made here, a journal enrolled with its one-time credential and holding
a tunnel to each, and Debian's Pebble issuing the journal's certificate for alice.relay.test by TLS-ALPN-01 through
a relay (Pebble's validator is one more connection the relay passes by its server name). The official Python SDK
signs in through one relay and searches, a key works through the other, and a relay is killed and started again
mid-session: the journal dials back in by itself and serves again.
"""

import asyncio
import json
import os
import re
import signal
import ssl
import subprocess
import time

import httpx

from journal_helpers import JOURNAL, MemoryStorage, demo_journal, run, sign_in_and_search
from local_tls import free_port, to_loopback, write_tls
from test_domain import CAA_IDENTITY, acme  # noqa: F401 (the fixture: Pebble and its DNS)

HOST = "alice.relay.test"


class ToRelay(httpx.AsyncHTTPTransport):
    """Reaches the journal's name at one relay's port on 127.0.0.1, the name (and its port) kept in SNI and Host."""

    def __init__(self, port, **options):
        super().__init__(**options)
        self.port = port

    async def handle_async_request(self, request):
        if request.url.host == HOST:
            request.extensions = {**request.extensions, "sni_hostname": HOST}
            request.url = request.url.copy_with(host="127.0.0.1", port=self.port)
        return await super().handle_async_request(request)


def start_relay(folder, port, tls):
    process = subprocess.Popen(
        [JOURNAL, "relay", "serve", "--hostname", "relay.test", "--listen", f"127.0.0.1:{port}",
         "--cert", tls["cert"], "--key", tls["key"], "--data", os.path.join(folder, "relay")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    assert "the relay serves journals at NAME.relay.test" in line, line + process.stderr.read()
    return process


def wait_for(check, what, seconds=90):
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def test_a_journal_behind_a_relay_gets_its_certificate_serves_sign_ins_and_keys_and_survives_a_relay_restart(acme):
    folder = acme["folder"]
    port = acme["ports"]["route"]  # Pebble validates TLS-ALPN-01 at this port: the relay's.
    os.makedirs(os.path.join(folder, "relay-tls"), exist_ok=True)
    tls = write_tls(os.path.join(folder, "relay-tls"), ["relay.test"])
    relay = start_relay(folder, port, tls)
    other_port = free_port()
    other = start_relay(folder, other_port, tls)
    journal_dir = demo_journal(folder, days=3)
    local = free_port()
    server = None
    try:
        credential = run(journal_dir, "relay", "enrol", "alice", "--data", os.path.join(folder, "relay")).splitlines()[1]
        common = ["--relay", f"relay.test:{port}", "--name", "alice", "--relay-address", f"127.0.0.1:{port}",
                  "--relay-address", f"127.0.0.1:{other_port}",
                  "--relay-root", tls["ca"], "--acme-directory", acme["directory"], "--acme-root", acme["tls_ca"],
                  "--caa-identity", CAA_IDENTITY, "--email", "owner@example.org"]
        wrong = subprocess.run([JOURNAL, "--journal", journal_dir, "route", "enable", "relay", *common,
                                "--enrolment", "jre_wrong"], capture_output=True, text=True)
        assert wrong.returncode == 1 and "wrong or was used already" in wrong.stderr, wrong.stderr
        assert not os.path.exists(os.path.join(journal_dir, "journal.toml")), "a refused enable writes nothing"
        enabled = run(journal_dir, "route", "enable", "relay", *common, "--enrolment", credential)
        url = f"https://{HOST}:{port}/mcp"
        assert url in enabled, enabled
        assert "connected before" in run(journal_dir, "relay", "list", "--data", os.path.join(folder, "relay"))

        server = subprocess.Popen([JOURNAL, "--journal", journal_dir, "serve", "--local-addr", f"127.0.0.1:{local}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        listing = wait_for(lambda: (lambda text: text if "issued by CN=Pebble" in text.split("relay   on")[1] else None)(
            run(journal_dir, "route", "list")), "the relay route got no certificate")
        assert f"relay   on   {url}" in listing and f"connected to relay.test:{port}" in listing, listing

        trust = ssl.create_default_context(cafile=acme["issuing_root"])
        through_relay = lambda: to_loopback(HOST, verify=trust)  # noqa: E731

        async def sign_in():
            code = run(journal_dir, "mcp", "pairing", "generate", "--route", "relay").strip().splitlines()[-1]
            return await sign_in_and_search(url, code, ["transcripts"], MemoryStorage(), transport_factory=through_relay)

        tools, found = asyncio.run(sign_in())
        assert "search" in tools and not found.isError and found.structuredContent["results"]

        key = json.loads(run(journal_dir, "mcp", "token", "create", "--label", "relayed", "--json"))["key"]
        run(journal_dir, "mcp", "permission", "set", "--token", "relayed", "--category", "transcripts")

        async def initialize(relay_port=port):
            async with httpx.AsyncClient(transport=ToRelay(relay_port, verify=trust), timeout=10) as http:
                body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "t", "version": "1"}}}
                return await http.post(url, json=body, headers={"Authorization": f"Bearer {key}",
                                                                "Accept": "application/json, text/event-stream"})

        assert asyncio.run(initialize()).status_code == 200
        # The other relay behind the name reaches the journal too (its tunnel may come up a moment later).
        wait_for(lambda: _reachable(other_port) and asyncio.run(initialize(other_port)).status_code == 200,
                 "the journal is not reached through the other relay", seconds=30)

        # The relay dies and comes back: the journal dials in again by itself, with nothing re-enrolled.
        relay.send_signal(signal.SIGKILL)
        relay.wait(timeout=10)
        relay = start_relay(folder, port, tls)
        wait_for(lambda: asyncio.run(initialize()).status_code == 200 if _reachable(port) else False,
                 "the journal did not come back through the restarted relay", seconds=60)
        listing = run(journal_dir, "route", "list")
        assert re.search(r"last error: \S+ .*the tunnel to relay\.test:\d+ closed", listing), listing
    finally:
        if server:
            server.terminate()
            assert server.wait(timeout=15) == 0
        for process in (relay, other):
            process.terminate()
            process.wait(timeout=10)


def _reachable(port):
    """Whether the journal answers TLS through the relay at `port` now (a refused or reset connection is not yet)."""
    import socket
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=2)
    except OSError:
        return False
    try:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        with context.wrap_socket(raw, server_hostname=HOST):
            return True
    except OSError:
        return False
