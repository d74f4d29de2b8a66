"""The graph through the official MCP Python SDK, over HTTP and over stdio: the SDK validates every result against
the tool's output schema, so the shapes the tools promise are the shapes they send.

Identity comes from the credential: two agents on one connection (two HTTP sessions with one key, and a stdio process
started with that connection's label) are one author, who may change what either made (and remove its connection once
no other author's note is on it); an agent on another
connection may not. Expected values come from graph.jsonl and the CLI, never from the server's answers alone.
"""

import json
import os
import subprocess
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from journal_helpers import JOURNAL, demo_journal, in_session, in_stdio_session, mint_key, ok, refused, run, serve


@pytest.fixture(scope="module")
def journal():
    with tempfile.TemporaryDirectory() as parent:
        journal_dir = demo_journal(parent)
        categories = ["notes", "entities", "facets", "transcripts", "graph"]
        shared = mint_key(journal_dir, "research", categories, write="force")
        other = mint_key(journal_dir, "other agent", categories, write="force")
        yield SimpleNamespace(dir=journal_dir, shared=shared, other=other)


def graph_lines(journal_dir):
    text = (Path(journal_dir) / "graph.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_two_agents_on_one_connection_are_one_author(journal):
    with serve(journal.dir) as url:
        server = SimpleNamespace(url=url)

        async def first(session):
            made = await ok(session, "connect", {"from": "Inbox.md", "to": "Ada Okafor", "type": "mentions"})
            await ok(session, "write_connection_note", {"id": made["connection"]["id"], "text": "From the first."})
            listed = await ok(session, "list_types", {})
            return made, listed

        made, listed = in_session(server, journal.shared, first)
        connection = made["connection"]["id"]
        assert made["connection"]["created_by"] == "agent:research"
        assert {"type": "mentions", "connections": 1} in listed["types"]

        # A second session on the same key is the same author: its note replaces the first one's.
        async def second(session):
            await ok(session, "write_connection_note", {"id": connection, "text": "From the second."})
            return await ok(session, "describe_item", {"item": "Ada Okafor"})

        described = in_session(server, journal.shared, second)
        assert described["item"]["item"] == "entity:ada-okafor"
        assert [n["text"] for n in described["connections"][0]["notes"]] == ["From the second."]

        # Another connection may add its note but not retype or remove the connection.
        async def other(session):
            return (
                await refused(session, "set_connection_type", {"id": connection, "type": "about"}),
                await refused(session, "disconnect", {"id": connection}),
                await ok(session, "write_connection_note", {"id": connection, "text": "Mine."}),
                await ok(session, "recent_activity", {"limit": 5}),
            )

        retype, remove, noted, activity = in_session(server, journal.other, other)
        assert retype.startswith("forbidden: agent:research set this connection's type"), retype
        assert remove.startswith("forbidden: agent:research made this connection"), remove
        assert [n["author"] for n in noted["connection"]["notes"]] == ["agent:other-agent", "agent:research"]
        assert {"agent:other-agent", "agent:research"} == {e["author"] for e in activity["events"]}
        assert {"action": "wrote a note", "text": "Mine."} in [
            {"action": e["action"], "text": e.get("text")} for e in activity["events"]]

    # Over stdio, the same label is the same author again: it may retype and remove what the HTTP sessions made.
    async def local(session):
        listed = sorted(tool.name for tool in (await session.list_tools()).tools)
        found = await ok(session, "find_connections", {"item": "Inbox.md", "direction": "out"})
        retyped = await ok(session, "set_connection_type", {"id": connection, "type": "about"})
        return listed, found, retyped

    listed, found, retyped = in_stdio_session(journal.dir, "research", local)
    assert {"find_connections", "connect", "disconnect", "describe_item"} <= set(listed)
    assert [c["id"] for c in found["connections"]] == [connection]
    assert retyped["connection"]["type"] == "about" and retyped["connection"]["type_by"] == "agent:research"
    [line] = graph_lines(journal.dir)
    assert line["type"] == "about" and line["created_by"] == "agent:research"
    assert {n["author"]: n["text"] for n in line["notes"]} == {
        "agent:research": "From the second.", "agent:other-agent": "Mine."}

    # Its creator may remove it only once no other author's note is on it: the other agent's view stays until
    # that agent takes it back.
    async def remove_refused(session):
        return await refused(session, "disconnect", {"id": connection})

    kept = in_stdio_session(journal.dir, "research", remove_refused)
    assert kept.startswith("forbidden: agent:other-agent added to this connection"), kept
    assert len(graph_lines(journal.dir)) == 1

    async def withdraw(session):
        return await ok(session, "write_connection_note", {"id": connection, "text": ""})

    assert [n["author"] for n in in_stdio_session(journal.dir, "other agent", withdraw)["connection"]["notes"]] == [
        "agent:research"]

    async def remove(session):
        return await ok(session, "disconnect", {"id": connection})

    assert in_stdio_session(journal.dir, "research", remove)["status"] == "disconnected"
    assert graph_lines(journal.dir) == []
    assert "no connections" in run(journal.dir, "graph", "list")


def test_a_search_reference_names_a_transcript_segment(journal):
    async def body(session):
        hits = await ok(session, "search", {"query": "the", "category": "transcripts", "limit": 1})
        reference = hits["results"][0]["reference"]
        made = await ok(session, "connect", {"from": reference, "to": "Inbox.md", "type": "mentioned-in"})
        described = await ok(session, "describe_item", {"item": made["connection"]["from"]["item"]})
        return made, described

    made, described = in_stdio_session(journal.dir, "research", body)
    segment = made["connection"]["from"]["item"]
    assert segment.startswith("segment:"), segment
    day_and_time = segment.removeprefix("segment:")
    assert (Path(journal.dir) / "transcripts" / f"{day_and_time}.md").is_file()
    assert described["connection_count"] == 1
    assert any(line["from"] == segment for line in graph_lines(journal.dir))
