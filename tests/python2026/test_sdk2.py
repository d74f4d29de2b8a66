"""The official MCP Python SDK's v2 line against `journal serve` and `journal mcp stdio`: pinned to 2026-07-28 (no
session, the version in every request's `_meta`, the standard headers), in its default auto mode (it asks
`server/discover` first and must stay on 2026-07-28), and in legacy mode (a 2025-11-25 session on the same endpoint).

The connection decides everything as in the 2025 sessions: its tools, its reach (a private note answers as missing),
the owner's changes at the next request. Expected values come from the vault files and the CLI.
"""

import asyncio
import contextlib
import hashlib
import json
import tempfile
from pathlib import Path
from types import SimpleNamespace

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from journal_cli import JOURNAL, demo_journal, mint_key, run, serve


@pytest.fixture(scope="module")
def journal():
    with tempfile.TemporaryDirectory() as parent:
        journal_dir = demo_journal(parent)
        key = mint_key(journal_dir, "modern", ["notes", "transcripts"])
        with serve(journal_dir) as url:
            yield SimpleNamespace(dir=journal_dir, key=key, url=url, vault=Path(journal_dir) / "notes")


def innermost(error):
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def over_http(journal, mode):
    @contextlib.asynccontextmanager
    async def client():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {journal.key}"}, timeout=30) as http:
            async with Client(streamable_http_client(journal.url, http_client=http), mode=mode, cache=None) as c:
                yield c

    return client


def over_stdio(journal, mode, label="modern"):
    @contextlib.asynccontextmanager
    async def client():
        params = StdioServerParameters(command=JOURNAL, args=["--journal", journal.dir, "mcp", "stdio", "--agent", label])
        async with Client(params, mode=mode, cache=None) as c:
            yield c

    return client


def run_with(client, body):
    async def main():
        async with client() as c:
            return await body(c)

    try:
        return asyncio.run(main())
    except BaseExceptionGroup as group:
        raise innermost(group) from None


def text_of(result):
    return "".join(block.text for block in result.content if block.type == "text")


async def exercise(c):
    """What every 2026-07-28 client sees: the protocol, the discover answer, the tool list with its caching hints, a
    note read by hash, a private note as missing, a tool outside the grant refused."""
    discovered = await c.session.send_discover("2026-07-28")
    listed = await c.list_tools(cache_mode="bypass")
    read = await c.call_tool("note_read", {"path": "Inbox.md"})
    hidden = await c.call_tool("note_read", {"path": "Areas/surprise-trip.md"})
    not_granted = await c.call_tool("list_entities", {})
    return SimpleNamespace(
        protocol=c.protocol_version,
        discovered=discovered,
        tools=[tool.name for tool in listed.tools],
        ttl=listed.ttl_ms,
        scope=listed.cache_scope,
        read=read,
        hidden=hidden,
        not_granted=not_granted,
    )


def check(journal, seen):
    assert seen.protocol == "2026-07-28"
    assert seen.discovered["supportedVersions"][0] == "2026-07-28"
    assert "2025-11-25" in seen.discovered["supportedVersions"]
    assert seen.discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "journal"
    assert "note_read" in seen.tools and "search" in seen.tools and "list_entities" not in seen.tools
    assert (seen.ttl, seen.scope) == (60000, "private")
    assert not seen.read.is_error, text_of(seen.read)
    inbox = (journal.vault / "Inbox.md").read_bytes()
    assert seen.read.structured_content["hash"] == hashlib.sha256(inbox).hexdigest()
    assert json.loads(text_of(seen.read)) == seen.read.structured_content
    assert seen.hidden.is_error and 'there is no note at "Areas/surprise-trip.md"' in text_of(seen.hidden)
    assert seen.not_granted.is_error and "does not include list_entities" in text_of(seen.not_granted)


@pytest.mark.parametrize("mode", ["2026-07-28", "auto"])
def test_http_serves_2026_07_28_without_a_session(journal, mode):
    check(journal, run_with(over_http(journal, mode), exercise))
    activity = run(journal.dir, "mcp", "activity", "--token", "modern")
    assert "note_read" in activity and "list_entities  refused" in activity, activity


@pytest.mark.parametrize("mode", ["2026-07-28", "auto"])
def test_stdio_serves_2026_07_28_line_by_line(journal, mode):
    check(journal, run_with(over_stdio(journal, mode), exercise))


def test_auto_mode_names_the_server_from_discover(journal):
    async def body(c):
        return c.server_info, c.protocol_version

    info, protocol = run_with(over_http(journal, "auto"), body)
    assert protocol == "2026-07-28"
    assert info.name == "journal"


def test_legacy_mode_still_opens_a_2025_session_on_the_same_endpoint(journal):
    async def body(c):
        listed = await c.list_tools()
        return c.protocol_version, [tool.name for tool in listed.tools]

    protocol, tools = run_with(over_http(journal, "legacy"), body)
    assert protocol == "2025-11-25"
    assert "note_read" in tools and "list_entities" not in tools


def test_the_owners_narrowing_applies_at_the_next_request(journal):
    narrowed = SimpleNamespace(**{**vars(journal), "key": mint_key(journal.dir, "narrowed", ["notes"])})

    async def body(c):
        before = await c.call_tool("note_read", {"path": "Inbox.md"})
        run(journal.dir, "mcp", "permission", "set", "--token", "narrowed", "--category", "transcripts")
        after = await c.call_tool("note_read", {"path": "Inbox.md"})
        listed = await c.list_tools(cache_mode="bypass")
        return before, after, [tool.name for tool in listed.tools]

    before, after, tools = run_with(over_http(narrowed, "2026-07-28"), body)
    assert not before.is_error
    assert after.is_error and "does not include note_read" in text_of(after)
    assert "note_read" not in tools


def test_note_delete_asks_the_person_through_the_clients_elicitation(journal):
    """The SDK answers `input_required` with its elicitation callback and calls again with the signed state: the
    note goes only on the person's yes."""
    import mcp_types as types

    writer = SimpleNamespace(**{**vars(journal), "key": mint_key(journal.dir, "asker", ["notes"], write="force")})
    asked = []

    def answering(yes):
        async def on_elicit(context, params):
            asked.append(params.message)
            if yes:
                return types.ElicitResult(action="accept", content={"confirm": True})
            return types.ElicitResult(action="decline")

        return on_elicit

    def with_callback(yes):
        @contextlib.asynccontextmanager
        async def client():
            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {writer.key}"}, timeout=30) as http:
                transport = streamable_http_client(writer.url, http_client=http)
                async with Client(transport, mode="2026-07-28", cache=None, elicitation_callback=answering(yes)) as c:
                    yield c

        return client

    async def delete(c):
        return await c.call_tool("note_delete", {"path": "Ideas.md"})

    declined = run_with(with_callback(False), delete)
    assert declined.is_error and "did not say yes" in text_of(declined)
    assert (journal.vault / "Ideas.md").exists()
    deleted = run_with(with_callback(True), delete)
    assert not deleted.is_error, text_of(deleted)
    assert not (journal.vault / "Ideas.md").exists()
    assert len(asked) == 2 and all("Ideas.md" in message for message in asked), asked
