"""Agent writes through the official MCP Python SDK, against a real `journal serve` over a demo journal.

Keys minted with the CLI, one per write mode (`--write force`, `--write propose`, none). Through the SDK's
ClientSession: which keys are offered the five write tools (force and propose, not none); each tool's change, checked on the file on disk and by
its SHA-256; `expected_hash` conflicts; and the refusals: a read-only note, a private note (answered exactly as a
missing one), protected keys, an ambiguous anchor, a path taken. Then `journal mcp activity` shows the writes with
their note and mode. Expected values come from the vault files, never from the server's answers.
"""

import hashlib
import os
import re
import subprocess
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from journal_helpers import JOURNAL, demo_journal, in_session, mint_key, ok, refused, run, serve

WRITE_TOOLS = ["note_create", "note_write", "note_append", "note_edit_section", "note_set_properties"]
DEMO_NOTES_SOURCE = Path(__file__).resolve().parents[2] / "crates" / "store" / "src" / "journal" / "demo_notes.rs"


def demo_constant(name):
    return re.search(rf'pub const {name}: &str = "([^"]*)";', DEMO_NOTES_SOURCE.read_text()).group(1)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory() as parent:
        journal_dir = demo_journal(parent)
        keys = {
            "force": mint_key(journal_dir, "forceful", ["notes"], write="force"),
            "propose": mint_key(journal_dir, "suggester", ["notes"], write="propose"),
            "none": mint_key(journal_dir, "reader", ["notes"]),
        }
        with serve(journal_dir) as url:
            yield SimpleNamespace(url=url, keys=keys, vault=Path(journal_dir) / "notes", dir=journal_dir)


def test_keys_with_a_write_mode_are_offered_the_write_tools(server):
    async def names(session):
        return [tool.name for tool in (await session.list_tools()).tools]

    for mode in ["force", "propose"]:
        listed = in_session(server, server.keys[mode], names)
        assert all(tool in listed for tool in WRITE_TOOLS + ["my_proposals"]), f"{mode}: {listed}"
    listed = in_session(server, server.keys["none"], names)
    assert not any(tool in listed for tool in WRITE_TOOLS + ["my_proposals"]), listed

    async def schema(session):
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        return tools["note_edit_section"].inputSchema, tools["note_write"].annotations

    edit_schema, write_annotations = in_session(server, server.keys["force"], schema)
    assert set(edit_schema["properties"]) == {"path", "anchor", "heading", "op", "content", "expected_hash"}
    assert edit_schema["properties"]["expected_hash"]["maxLength"] == 64
    assert write_annotations.readOnlyHint is False and write_annotations.destructiveHint is True


def test_writes_change_the_file_and_answer_its_hash(server):
    content = "---\nstatus: draft\n---\n# Heron\n\n## Plan\n\nOne.\n\n## Log\n\nStarted.\n"

    async def body(session):
        made = await ok(session, "note_create", {"path": "Projects/heron", "content": content})
        on_disk = (server.vault / "Projects" / "heron.md").read_bytes()
        assert on_disk == content.encode()
        assert made == {"status": "written", "path": "Projects/heron.md", "hash": sha256(on_disk)}

        read = await ok(session, "note_read", {"path": "Projects/heron.md"})
        assert read["hash"] == made["hash"] and read["title"] == "Heron"

        stale = sha256(b"an older version")
        conflict = await refused(session, "note_write", {"path": "Projects/heron.md", "body": "x",
                                                         "expected_hash": stale})
        assert conflict.startswith("conflict:") and made["hash"] in conflict, conflict
        assert (server.vault / "Projects" / "heron.md").read_bytes() == on_disk, "a conflict changes nothing"

        edited = await ok(session, "note_edit_section", {"path": "Projects/heron.md", "heading": "## Plan",
                                                          "op": "append_within", "content": "Two.\n",
                                                          "expected_hash": made["hash"]})
        text = (server.vault / "Projects" / "heron.md").read_text()
        assert "One.\n\nTwo.\n## Log" in text and edited["hash"] == sha256(text.encode())

        await ok(session, "note_set_properties", {"path": "Projects/heron.md",
                                                  "properties": {"status": "active", "due": "2026-12-24"}})
        await ok(session, "note_append", {"path": "Projects/heron.md", "text": "Appended."})
        text = (server.vault / "Projects" / "heron.md").read_text()
        assert text.startswith("---\nstatus: active\ndue: \"2026-12-24\"\n---\n# Heron"), text
        assert text.endswith("Started.\nAppended.")

        hits = await ok(session, "search", {"query": "heron"})
        assert any(hit.get("path") == "Projects/heron.md" for hit in hits["results"]), hits

    in_session(server, server.keys["force"], body)


def test_refusals_say_why_and_change_nothing(server):
    read_only = demo_constant("READ_ONLY_NOTE")
    private = demo_constant("PRIVATE_NOTE")
    before = {path: (server.vault / path).read_bytes() for path in [read_only, private, "Inbox.md"]}

    async def body(session):
        locked = await refused(session, "note_append", {"path": read_only, "text": "x"})
        assert "read-only" in locked, locked
        hidden = await refused(session, "note_append", {"path": private, "text": "x"})
        absent = await refused(session, "note_append", {"path": "Areas/nothing-here.md", "text": "x"})
        assert hidden.replace(private, "P") == absent.replace("Areas/nothing-here.md", "P"), (hidden, absent)
        onto_private = await refused(session, "note_create", {"path": private, "content": "x"})
        quarantined = await refused(session, "note_create", {"path": "_private/x.md", "content": "x"})
        assert onto_private.replace(private, "P") == quarantined.replace("_private/x.md", "P")
        assert "already exists" in await refused(session, "note_create", {"path": "Inbox.md", "content": "x"})
        protected = await refused(session, "note_set_properties", {"path": "Inbox.md",
                                                                   "properties": {"access": "private"}})
        assert "access" in protected, protected
        ambiguous = await refused(session, "note_edit_section", {"path": "Inbox.md", "anchor": "\n", "op": "replace",
                                                                 "content": ""})
        assert re.search(r"occurs \d+ times", ambiguous), ambiguous

    in_session(server, server.keys["force"], body)
    for path, data in before.items():
        assert (server.vault / path).read_bytes() == data, f"{path} unchanged"
    assert not (server.vault / "_private" / "x.md").exists()


def test_the_activity_log_names_each_written_note_and_the_mode(server):
    async def body(session):
        await ok(session, "note_create", {"path": "Inbox/activity-check", "content": "x"})

    in_session(server, server.keys["force"], body)
    log = run(server.dir, "mcp", "activity", "--token", "forceful", "--tool", "note_create")
    assert "Inbox/activity-check.md (force)" in log, log
