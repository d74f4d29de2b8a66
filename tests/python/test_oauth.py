"""The official MCP Python SDK's OAuth client against a real `journal serve`.

The SDK discovers the authorization server from the 401, registers, and hands the authorization URL to
the redirect handler; the test plays the owner's browser over HTTP: it reads the consent page, types
the pairing code the CLI printed, chooses a grant and follows the redirect back. Then the SDK exchanges
the code, calls tools within the chosen grant, and the refresh token is rotated.
"""

import asyncio
import json
import os
import re
import subprocess
import tempfile

import httpx
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from journal_helpers import JOURNAL, MemoryStorage, demo_journal, owner_approves, run


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory() as parent:
        journal_dir = demo_journal(parent, days=3)
        process = subprocess.Popen([JOURNAL, "--journal", journal_dir, "serve", "--local-addr", "127.0.0.1:0"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url = None
            for _ in range(50):
                match = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", process.stdout.readline())
                if match:
                    url = match.group(1)
                    break
            assert url, "the server printed its address"
            yield {"url": url, "dir": journal_dir}
        finally:
            process.terminate()
            assert process.wait(timeout=10) == 0


async def sign_in_and_use(server, storage):
    pairing_code = run(server["dir"], "mcp", "pairing", "generate").strip().splitlines()[-1]
    captured = {}

    async def callback():
        return captured["code"], captured["state"]

    metadata = OAuthClientMetadata(
        client_name="python-sdk",
        redirect_uris=["http://localhost:3030/callback"],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    auth = OAuthClientProvider(server_url=server["url"], client_metadata=metadata, storage=storage,
                               redirect_handler=owner_approves(pairing_code, ["transcripts", "entities"], captured),
                               callback_handler=callback)
    async with httpx.AsyncClient(auth=auth, timeout=30) as http:
        async with streamable_http_client(server["url"], http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = sorted(t.name for t in (await session.list_tools()).tools)
                found = await session.call_tool("search", {"query": "lease renewal"})
                facets = await session.call_tool("list_facets", {})
                return tools, found, facets


def test_the_sdk_signs_in_through_the_consent_page_and_uses_its_grant(server):
    storage = MemoryStorage()
    tools, found, facets = asyncio.run(sign_in_and_use(server, storage))
    assert tools == sorted(["save_memory", "recall_memory", "list_facets", "search", "fetch",
                            "list_transcripts", "get_transcript", "list_entities", "get_entity"])
    assert not found.isError and found.structuredContent["results"]
    assert all("description" not in f for f in facets.structuredContent["facets"]), "no facets category granted"
    assert storage.tokens.access_token.startswith("jat_")
    assert storage.client_info.client_id.startswith("jc_")

    # The refresh token rotates; the old one presented later (outside the retry window) would revoke.
    origin = server["url"].rsplit("/mcp", 1)[0]
    refreshed = httpx.post(f"{origin}/token", data={"grant_type": "refresh_token", "client_id": storage.client_info.client_id,
                                                    "refresh_token": storage.tokens.refresh_token, "resource": server["url"]})
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.headers["cache-control"] == "no-store"
    body = refreshed.json()
    assert body["refresh_token"] != storage.tokens.refresh_token
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600

    listed = run(server["dir"], "mcp", "oauth", "list")
    assert "python-sdk" in listed and "transcripts, entities" in listed
    activity = run(server["dir"], "mcp", "activity")
    assert "python-sdk  search  served" in activity


def test_sign_in_is_refused_without_a_pairing_code(server):
    run(server["dir"], "mcp", "pairing", "revoke")
    origin = server["url"].rsplit("/mcp", 1)[0]
    answer = httpx.post(f"{origin}/register", json={"redirect_uris": ["http://localhost:3030/callback"]})
    assert answer.status_code == 403
    assert answer.json() == {"error": "access_denied", "error_description":
                             "sign-in is closed: run journal mcp pairing generate on the journal's computer, then try again"}
    page = httpx.post(f"{origin}/register", json={}, headers={"Accept": "text/html"})
    assert page.status_code == 403 and "Nothing is waiting to connect" in page.text
