"""The official MCP Python SDK against a real `journal serve` over Streamable HTTP.

Starts the binary on a demo journal, mints a key with the CLI, and uses the SDK's own client to
initialize, list tools, search, fetch, read a transcript, save and recall a memory, and end the session.
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
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

from journal_helpers import JOURNAL, demo_journal, run


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory() as parent:
        journal_dir = demo_journal(parent, days=3)
        key = json.loads(run(journal_dir, "mcp", "token", "create", "--label", "python-sdk", "--json"))["key"]
        run(journal_dir, "mcp", "permission", "set", "--token", "python-sdk",
            "--category", "transcripts", "--category", "entities", "--category", "facets")
        narrow = json.loads(run(journal_dir, "mcp", "token", "create", "--label", "narrow", "--json"))["key"]
        process = subprocess.Popen([JOURNAL, "--journal", journal_dir, "serve", "--local-addr", "127.0.0.1:0"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url = None
            for _ in range(50):
                line = process.stdout.readline()
                match = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", line)
                if match:
                    url = match.group(1)
                    break
            assert url, "the server printed its address"
            yield {"url": url, "key": key, "narrow": narrow, "dir": journal_dir}
        finally:
            process.terminate()
            assert process.wait(timeout=10) == 0, "SIGTERM stops the server cleanly"


async def with_session(server, key, body):
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client(server["url"], http_client=http) as (read, write, get_session_id):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert get_session_id(), "the server issued a session id"
                return await body(session, init)


def test_full_grant_lists_all_tools_searches_and_fetches(server):
    async def body(session, init):
        assert init.protocolVersion == "2025-11-25"
        assert init.serverInfo.name == "journal"
        tools = await session.list_tools()
        names = sorted(t.name for t in tools.tools)
        assert names == sorted(["save_memory", "recall_memory", "list_facets", "search", "fetch",
                                "list_transcripts", "get_transcript", "list_entities", "get_entity"])
        search = next(t for t in tools.tools if t.name == "search")
        assert search.inputSchema["additionalProperties"] is False
        assert len(search.inputSchema["properties"]["facet"]["enum"]) == 4

        found = await session.call_tool("search", {"query": "lease renewal", "limit": 3})
        assert not found.isError
        hits = found.structuredContent["results"]
        assert hits and "lease" in hits[0]["snippet"].lower()
        assert json.loads(found.content[0].text) == found.structuredContent

        fetched = await session.call_tool("fetch", {"reference": hits[0]["reference"]})
        assert not fetched.isError
        assert "lease renewal" in fetched.structuredContent["text"]

        listed = await session.call_tool("list_transcripts", {"limit": 2})
        segment = listed.structuredContent["segments"][0]
        lines = await session.call_tool("get_transcript", {"reference": segment["reference"]})
        assert len(lines.structuredContent["entries"]) >= 8

        bad = await session.call_tool("search", {"query": "x", "limit": 0})
        assert bad.isError and "between 1 and 100" in bad.content[0].text
        return True

    assert asyncio.run(with_session(server, server["key"], body))


def test_memory_round_trip_and_idempotency(server):
    async def body(session, init):
        saved = await session.call_tool("save_memory", {"content": "Prefers mornings.", "operation_id": "sdk-1"})
        assert saved.structuredContent["status"] == "saved"
        again = await session.call_tool("save_memory", {"content": "Prefers mornings.", "operation_id": "sdk-1"})
        assert again.structuredContent["status"] == "replayed"
        recalled = await session.call_tool("recall_memory", {"query": "mornings"})
        assert [m["content"] for m in recalled.structuredContent["memories"]] == ["Prefers mornings."]
        return True

    assert asyncio.run(with_session(server, server["key"], body))


def test_a_new_key_sees_three_tools_and_unknown_tools_are_protocol_errors(server):
    async def body(session, init):
        tools = await session.list_tools()
        assert sorted(t.name for t in tools.tools) == ["list_facets", "recall_memory", "save_memory"]
        refused = await session.call_tool("search", {"query": "lease"})
        assert refused.isError
        with pytest.raises(McpError):
            await session.call_tool("no_such_tool", {})
        return True

    assert asyncio.run(with_session(server, server["narrow"], body))


def messages(error):
    """Every message in an exception, its groups and its causes (the SDK raises from a task group)."""
    seen, stack = [], [error]
    while stack:
        current = stack.pop()
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        stack.extend(getattr(current, "exceptions", ()))
        stack.extend([current.__cause__, current.__context__])
    return " | ".join(f"{type(e).__name__}: {e}" for e in seen)


def test_a_wrong_key_is_refused_with_a_challenge(server):
    origin = server["url"].removesuffix("/mcp")
    answer = httpx.post(server["url"], headers={"Authorization": "Bearer jk_wrong", "Accept": "application/json, text/event-stream"},
                        json={"jsonrpc": "2.0", "id": 0, "method": "initialize",
                              "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == \
        f'Bearer realm="mcp", resource_metadata="{origin}/.well-known/oauth-protected-resource"'
    assert answer.json()["error"] == "invalid_token"

    async def body(session, init):
        return True

    with pytest.raises(BaseException) as raised:
        asyncio.run(with_session(server, "jk_wrong", body))
    assert "401" in messages(raised.value), messages(raised.value)


def test_every_call_is_in_the_activity_log(server):
    async def body(session, init):
        found = await session.call_tool("search", {"query": "lease renewal", "limit": 1})
        assert not found.isError
        reference = found.structuredContent["results"][0]["reference"]
        fetched = await session.call_tool("fetch", {"reference": reference})
        assert not fetched.isError
        return True

    assert asyncio.run(with_session(server, server["key"], body))
    activity = run(server["dir"], "mcp", "activity", "--token", "python-sdk")
    assert "search  served" in activity and "fetch  served" in activity, activity
