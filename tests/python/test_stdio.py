"""`journal mcp stdio --agent LABEL` through the official MCP Python SDK's stdio client: the SDK starts the process
as a local agent would, and talks to it over standard input and output.

The connection the label names decides everything, as over HTTP: its tool list (the same as the HTTP one for the
same connection), its reach (a private note answers as missing), its write mode (a force write lands on disk, under
the connection's identity in the history and the audit log), and the owner's changes apply at the next call (a
narrowed grant refuses, a removed connection ends the process). An unknown label exits with one line saying how to
make one. Expected values come from the vault files and the CLI, never from the server's answers.
"""

import hashlib
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
        key = mint_key(journal_dir, "claude", ["notes", "transcripts"], write="force")
        yield SimpleNamespace(dir=journal_dir, key=key, vault=Path(journal_dir) / "notes")


def test_stdio_serves_the_connection_its_label_names(journal):
    async def body(session):
        listed = await session.list_tools()
        return (
            sorted(tool.name for tool in listed.tools),
            await ok(session, "note_read", {"path": "Inbox.md"}),
            await refused(session, "note_read", {"path": "Areas/surprise-trip.md"}),
            await ok(session, "note_append", {"path": "Ideas.md", "text": "- written over stdio"}),
            await refused(session, "list_entities", {}),
        )

    tools, read, hidden, written, not_granted = in_stdio_session(journal.dir, "claude", body)
    inbox = (journal.vault / "Inbox.md").read_bytes()
    assert read["hash"] == hashlib.sha256(inbox).hexdigest()
    assert 'there is no note at "Areas/surprise-trip.md"' in hidden, "private answers as missing"
    ideas = (journal.vault / "Ideas.md").read_bytes()
    assert ideas.endswith(b"- written over stdio") and written["hash"] == hashlib.sha256(ideas).hexdigest()
    assert "does not include list_entities" in not_granted, not_granted
    history = run(journal.dir, "notes", "history", "Ideas.md")
    assert "agent:claude (claude)" in history and "note_append" in history, history
    activity = run(journal.dir, "mcp", "activity", "--token", "claude")
    assert "note_append  served  Ideas.md (force)" in activity, activity

    # The same tools as over HTTP for the same connection.
    with serve(journal.dir) as url:
        async def listed(session):
            return sorted(tool.name for tool in (await session.list_tools()).tools)

        assert in_session(SimpleNamespace(url=url), journal.key, listed) == tools
    assert "note_move" in tools and "search" in tools and "list_entities" not in tools


def test_the_owners_changes_apply_at_the_next_call(journal):
    mint_key(journal.dir, "gemini", ["notes"], write="force")

    async def body(session):
        first = await ok(session, "note_read", {"path": "Inbox.md"})
        run(journal.dir, "mcp", "permission", "set", "--token", "gemini", "--category", "transcripts")
        narrowed = await refused(session, "note_read", {"path": "Inbox.md"})
        run(journal.dir, "mcp", "token", "revoke", "--label", "gemini")
        with pytest.raises(Exception) as removed:
            await session.call_tool("search", {"query": "dentist"})
        return first, narrowed, str(removed.value)

    first, narrowed, removed = in_stdio_session(journal.dir, "gemini", body)
    assert first["path"] == "Inbox.md"
    assert "does not include note_read" in narrowed, narrowed
    assert "was removed" in removed, removed


def test_an_unknown_label_exits_with_one_line_saying_how_to_make_one(journal):
    out = subprocess.run([JOURNAL, "--journal", journal.dir, "mcp", "stdio", "--agent", "nobody"],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
    assert out.returncode == 1 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no connection is named \"nobody\""), out.stderr
    assert "journal mcp token create --label nobody" in lines[0]


def test_bad_lines_get_json_rpc_errors_and_only_answers_reach_stdout(journal):
    import json

    lines = [
        '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        "not json",
        '[{"jsonrpc":"2.0","id":2,"method":"ping"}]',
        '{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}',
        '{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},'
        '"clientInfo":{"name":"raw","version":"1"}}}',
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","id":5,"method":"ping"}',
        '{"jsonrpc":"2.0","id":6,"method":"no/such"}',
        "x" * (64 * 1024 + 1),
        '{"jsonrpc":"2.0","id":7,"method":"ping"}',
    ]
    out = subprocess.run([JOURNAL, "--journal", journal.dir, "mcp", "stdio", "--agent", "claude"],
                         input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    answers = [json.loads(line) for line in out.stdout.splitlines()]
    assert [a.get("id") for a in answers] == [1, None, None, 3, 4, 5, 6, None, 7], answers
    codes = [a.get("error", {}).get("code") for a in answers]
    assert codes == [-32600, -32700, -32600, -32602, None, None, -32601, -32600, None], answers
    assert "send initialize first" in answers[0]["error"]["message"]
    assert answers[4]["result"]["protocolVersion"] == "2025-06-18"
    assert answers[5]["result"] == {} and answers[8]["result"] == {}
