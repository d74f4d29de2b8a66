"""The proxy route behind a real reverse proxy: Debian's Caddy terminates TLS for the test hostname with a
certificate made here and forwards to the journal's loopback port, as Tailscale Funnel, Cloudflare Tunnel or
the owner's own Caddy would. The official Python SDK signs in through it and searches; a key is refused there;
the journal answers only the public name; and what a client writes into X-Forwarded-For is not believed (Caddy
sets the header afresh for a client it does not trust, and the journal counts the entry its forwarder added).
"""

import asyncio
import json
import os
import re
import shutil
import sqlite3
import ssl
import subprocess
import tempfile

import httpx
import pytest

from journal_helpers import JOURNAL, MemoryStorage, demo_journal, run, sign_in_and_search
from local_tls import free_port, to_loopback, wait_for_port, write_tls

HOST = "journal.test"


@pytest.fixture(scope="module")
def proxied():
    if not shutil.which("caddy"):
        if os.environ.get("CI"):
            pytest.fail("the proxy route's test needs Debian's caddy package; scripts/test installs it when run as root")
        pytest.skip("needs Debian's caddy package (apt-get install caddy)")
    with tempfile.TemporaryDirectory() as folder:
        tls = write_tls(folder, [HOST])
        public, journal_port, local = free_port(), free_port(), free_port()
        caddyfile = os.path.join(folder, "Caddyfile")
        with open(caddyfile, "w") as f:
            f.write(f"""{{
	admin off
	auto_https off
	storage file_system {folder}/caddy
}}
https://{HOST}:{public} {{
	bind 127.0.0.1
	tls {tls['cert']} {tls['key']}
	reverse_proxy 127.0.0.1:{journal_port}
}}
""")
        environment = {**os.environ, "HOME": folder, "XDG_DATA_HOME": folder, "XDG_CONFIG_HOME": folder}
        caddy = subprocess.Popen(["caddy", "run", "--config", caddyfile, "--adapter", "caddyfile"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=environment)
        journal_dir = demo_journal(folder, days=3)
        enabled = run(journal_dir, "route", "enable", "proxy", "--public-url", f"https://{HOST}:{public}",
                      "--listen", f"127.0.0.1:{journal_port}")
        assert f"https://{HOST}:{public}/mcp" in enabled, enabled
        server = subprocess.Popen([JOURNAL, "--journal", journal_dir, "serve", "--local-addr", f"127.0.0.1:{local}"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url = None
            for _ in range(50):
                match = re.search(r"the proxy route serves at (https://\S+/mcp)", server.stdout.readline())
                if match:
                    url = match.group(1)
                    break
            assert url == f"https://{HOST}:{public}/mcp"
            try:
                wait_for_port(public)
            except AssertionError:
                caddy.terminate()
                raise AssertionError(f"Caddy did not start: {caddy.communicate(timeout=10)[1]}")
            yield {"journal_dir": journal_dir, "url": url, "ca": tls["ca"], "public": public,
                   "journal_port": journal_port}
        finally:
            server.terminate()
            caddy.terminate()
            assert server.wait(timeout=15) == 0
            caddy.wait(timeout=10)


def trusting(proxied):
    return ssl.create_default_context(cafile=proxied["ca"])


def through_caddy(proxied):
    return to_loopback(HOST, verify=trusting(proxied))


def test_the_sdk_signs_in_through_the_reverse_proxy_and_searches(proxied):
    journal_dir, url = proxied["journal_dir"], proxied["url"]
    listed = run(journal_dir, "route", "list")
    assert f"proxy   on   {url}" in listed and f"serving on http://127.0.0.1:{proxied['journal_port']}" in listed, listed

    async def go():
        pairing_code = run(journal_dir, "mcp", "pairing", "generate", "--route", "proxy").strip().splitlines()[-1]
        return await sign_in_and_search(url, pairing_code, ["transcripts"], MemoryStorage(),
                                        transport_factory=lambda: through_caddy(proxied))

    tools, found = asyncio.run(go())
    assert "search" in tools
    assert not found.isError and found.structuredContent["results"]
    signed_in = run(journal_dir, "mcp", "oauth", "list")
    assert "python-sdk" in signed_in and "proxy" in signed_in, signed_in


def test_a_key_the_wrong_name_and_a_forged_forwarded_for_get_nothing(proxied):
    journal_dir, url = proxied["journal_dir"], proxied["url"]
    key = json.loads(run(journal_dir, "mcp", "token", "create", "--label", "proxied-script", "--json"))["key"]

    async def go():
        async with httpx.AsyncClient(transport=through_caddy(proxied), timeout=10) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "t", "version": "1"}}}
            keyed = await http.post(url, json=body, headers={"Authorization": f"Bearer {key}",
                                                            "Accept": "application/json, text/event-stream"})
            metadata = await http.get(f"https://{HOST}:{proxied['public']}/.well-known/oauth-authorization-server")
            run(journal_dir, "mcp", "pairing", "generate", "--route", "proxy")
            registered = await http.post(f"https://{HOST}:{proxied['public']}/register",
                                         json={"client_name": "forged", "redirect_uris": ["http://127.0.0.1/cb"]},
                                         headers={"X-Forwarded-For": "203.0.113.99"})
        # Around the proxy, at the journal's own port, the Host is not the public name.
        direct = httpx.get(f"http://127.0.0.1:{proxied['journal_port']}/.well-known/oauth-authorization-server")
        return keyed, metadata, registered, direct

    keyed, metadata, registered, direct = asyncio.run(go())
    assert keyed.status_code == 401, keyed.text
    assert f'resource_metadata="https://{HOST}:{proxied["public"]}/.well-known/oauth-protected-resource"' in \
        keyed.headers["www-authenticate"]
    assert metadata.json()["issuer"] == f"https://{HOST}:{proxied['public']}"
    assert registered.status_code == 201, registered.text
    assert direct.status_code == 403 and direct.json()["error"] == "host_not_allowed", direct.text
    # The forged entry never became the client's source: Caddy named the real one, this machine.
    with sqlite3.connect(os.path.join(journal_dir, "journal.db")) as db:
        sources = [row[0] for row in db.execute("SELECT source FROM oauth_clients WHERE client_name = 'forged'")]
    assert sources == ["127.0.0.1"], sources
