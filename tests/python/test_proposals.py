"""Propose mode and undo through the official MCP Python SDK, against a real `journal serve` over a demo journal.

A key minted with `--write propose` calls every write tool through the SDK's ClientSession (which checks each result
against the tool's output schema): each answers `proposed` with an id and changes no byte on disk; the rules of a
write refuse at once (read-only, private as missing, protected keys, a stale expected_hash) and stage nothing. The
owner decides with `journal proposals accept|reject` beside the running server; the agent reads each outcome with
`my_proposals`; a proposal whose note the owner edited since is refused until accepted onto the current note. A force
key's change is undone with `journal notes revert`. Expected values come from the vault files, never from the
server's answers.
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

DEMO_NOTES_SOURCE = Path(__file__).resolve().parents[2] / "crates" / "store" / "src" / "journal" / "demo_notes.rs"


def demo_constant(name):
    return re.search(rf'pub const {name}: &str = "([^"]*)";', DEMO_NOTES_SOURCE.read_text()).group(1)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def fails(journal_dir, *args):
    out = subprocess.run([JOURNAL, "--journal", journal_dir, *args], capture_output=True, text=True)
    assert out.returncode == 1, f"{args} should fail: {out.stdout}"
    assert out.stderr.startswith("error: ") and len(out.stderr.strip().splitlines()) == 1, out.stderr
    return out.stderr


@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory() as parent:
        journal_dir = demo_journal(parent)
        keys = {
            "propose": mint_key(journal_dir, "suggester", ["notes"], write="propose"),
            "force": mint_key(journal_dir, "forceful", ["notes"], write="force"),
        }
        with serve(journal_dir) as url:
            yield SimpleNamespace(url=url, keys=keys, vault=Path(journal_dir) / "notes", dir=journal_dir)


def snapshot(vault):
    return {path: path.read_bytes() for path in vault.rglob("*") if path.is_file()}


def test_every_write_tool_proposes_and_changes_nothing(server):
    before = snapshot(server.vault)
    inbox = (server.vault / "Inbox.md").read_bytes()
    calls = [
        ("note_create", {"path": "Ideas/heron", "content": "# Heron\n"}),
        ("note_write", {"path": "Inbox.md", "body": "# Inbox\n\nAll done.\n", "expected_hash": sha256(inbox)}),
        ("note_append", {"path": "Inbox.md", "text": "- sharpen the chisels"}),
        ("note_edit_section", {"path": "Inbox.md", "anchor": "dentist", "op": "insert_after", "content": " (moved)"}),
        ("note_set_properties", {"path": "Inbox.md", "properties": {"status": "triaged"}}),
    ]

    async def body(session):
        answers = [await ok(session, tool, arguments) for tool, arguments in calls]
        mine = await ok(session, "my_proposals", {"status": "pending"})
        return answers, mine

    answers, mine = in_session(server, server.keys["propose"], body)
    assert [a["status"] for a in answers] == ["proposed"] * 5, answers
    assert "hash" not in answers[0] and answers[0]["path"] == "Ideas/heron.md"
    assert all(a["hash"] == sha256(inbox) for a in answers[1:]), "the note's hash now, unchanged"
    assert snapshot(server.vault) == before, "a proposal changes no byte"
    listed = {p["proposal_id"]: p for p in mine["proposals"]}
    assert set(listed) == {a["proposal_id"] for a in answers}
    assert {p["tool"] for p in listed.values()} == {tool for tool, _ in calls}
    assert all(p["status"] == "pending" for p in listed.values())
    for answer in answers:
        run(server.dir, "proposals", "reject", str(answer["proposal_id"]), "--reason", "tidying up")


def test_the_rules_of_a_write_refuse_a_proposal_at_once(server):
    read_only, private = demo_constant("READ_ONLY_NOTE"), demo_constant("PRIVATE_NOTE")

    async def body(session):
        return (
            await refused(session, "note_append", {"path": read_only, "text": "x"}),
            await refused(session, "note_append", {"path": private, "text": "x"}),
            await refused(session, "note_append", {"path": "Nowhere/absent.md", "text": "x"}),
            await refused(session, "note_set_properties", {"path": "Inbox.md", "properties": {"access": None}}),
            await refused(session, "note_write", {"path": "Inbox.md", "body": "x",
                                                  "expected_hash": sha256(b"stale")}),
            await ok(session, "my_proposals", {"status": "pending"}),
        )

    locked, hidden, missing, protected, conflict, pending = in_session(server, server.keys["propose"], body)
    assert "read-only" in locked, locked
    assert hidden.replace(private, "P") == missing.replace("Nowhere/absent.md", "P"), "private answers as missing"
    assert "access" in protected, protected
    assert conflict.startswith("conflict:") and sha256((server.vault / "Inbox.md").read_bytes()) in conflict
    assert pending["proposals"] == [], "nothing refused is staged"


def test_the_owner_decides_and_the_agent_learns_each_outcome(server):
    note = server.vault / "Quotes.md"
    original = note.read_bytes()

    async def propose(session):
        return (await ok(session, "note_append", {"path": "Quotes.md", "text": "> First."}),
                await ok(session, "note_append", {"path": "Quotes.md", "text": "> Second."}),
                await ok(session, "note_append", {"path": "Quotes.md", "text": "> Third."}))

    first, second, third = in_session(server, server.keys["propose"], propose)
    shown = run(server.dir, "proposals", "show", str(first["proposal_id"]))
    assert "+> First." in shown and "suggester" in shown, shown
    assert "accepted proposal" in run(server.dir, "proposals", "accept", str(first["proposal_id"]))
    expected = original + (b"> First." if original.endswith(b"\n") else b"\n> First.")
    assert note.read_bytes() == expected
    # The second was proposed against the note before the first was made: refused, then made onto the note now.
    stale = fails(server.dir, "proposals", "accept", str(second["proposal_id"]))
    assert "changed since" in stale and "--onto-current" in stale, stale
    run(server.dir, "proposals", "accept", str(second["proposal_id"]), "--onto-current")
    assert note.read_text().endswith("> First.\n> Second.")
    run(server.dir, "proposals", "reject", str(third["proposal_id"]), "--reason", "two is enough")
    assert "Third" not in note.read_text()

    async def outcomes(session):
        return await ok(session, "my_proposals", {}), await ok(session, "note_read", {"path": "Quotes.md"})

    mine, read = in_session(server, server.keys["propose"], outcomes)
    by_id = {p["proposal_id"]: p for p in mine["proposals"]}
    assert by_id[first["proposal_id"]]["status"] == "accepted"
    assert by_id[second["proposal_id"]]["hash"] == sha256(note.read_bytes()) == read["hash"]
    assert by_id[third["proposal_id"]]["status"] == "rejected"
    assert by_id[third["proposal_id"]]["reason"] == "two is enough"
    assert "accepted" in fails(server.dir, "proposals", "reject", str(first["proposal_id"]))


def test_a_force_change_is_undone_from_its_history(server):
    note = server.vault / "Ideas.md"
    original = note.read_bytes()

    async def body(session):
        return await ok(session, "note_write", {"path": "Ideas.md", "body": "# Ideas\n\nJust one.\n"})

    written = in_session(server, server.keys["force"], body)
    assert written["status"] == "written" and written["hash"] == sha256(note.read_bytes())
    history = run(server.dir, "notes", "history", "Ideas.md")
    newest = history.splitlines()[0].split()
    assert newest[0] == "version" and "agent:forceful" in history and "note_write" in history, history
    run(server.dir, "notes", "revert", "Ideas.md", newest[1])
    assert note.read_bytes() == original

    async def read(session):
        return await ok(session, "note_read", {"path": "Ideas.md"})

    assert in_session(server, server.keys["force"], read)["hash"] == sha256(original), "the server sees the undo"


def test_a_deletion_is_proposed_or_made_and_the_trash_brings_it_back(server):
    folder = server.vault / "Scratch"
    folder.mkdir()
    (folder / "one.md").write_text("# One\n")
    (folder / "two.md").write_text("# Two\n")

    async def propose(session):
        return await ok(session, "note_delete", {"path": "Scratch/", "confirm": True})

    proposed = in_session(server, server.keys["propose"], propose)
    assert proposed["status"] == "proposed" and proposed["notes"] == ["Scratch/one.md", "Scratch/two.md"]
    assert (folder / "one.md").exists(), "a proposal deletes nothing"
    run(server.dir, "proposals", "reject", str(proposed["proposal_id"]))

    async def delete(session):
        unconfirmed = await refused(session, "note_delete", {"path": "Scratch/one.md", "confirm": False})
        return unconfirmed, await ok(session, "note_delete", {"path": "Scratch/one.md", "confirm": True})

    unconfirmed, deleted = in_session(server, server.keys["force"], delete)
    assert "confirm: true" in unconfirmed
    assert deleted == {"status": "deleted", "path": "Scratch/one.md", "notes": ["Scratch/one.md"]}
    assert not (folder / "one.md").exists() and (folder / "two.md").exists()
    listed = run(server.dir, "trash", "list")
    assert "Scratch/one.md" in listed and "agent:forceful" in listed, listed
    run(server.dir, "trash", "restore", listed.split()[0])
    assert (folder / "one.md").read_text() == "# One\n"


def linking(vault, name):
    """Vault notes whose text links the note `name` by a wikilink, read from the files."""
    return {str(p.relative_to(vault)) for p in vault.rglob("*.md")
            if not any(part.startswith((".", "_")) or part == "Widgets" for part in p.relative_to(vault).parts)
            and f"[[{name}" in p.read_text()}


def test_a_move_keeps_the_links_and_is_undone_whole(server):
    vault = server.vault
    source, target = "Projects/Atlas/warehouse-cutover.md", "Projects/Atlas/Cutover/weekend.md"
    moved_bytes = (vault / source).read_bytes()
    linkers = linking(vault, "warehouse-cutover")
    assert len(linkers) >= 2, linkers
    before = snapshot(vault)

    async def propose(session):
        return await ok(session, "note_move", {"from": source, "to": target})

    proposed = in_session(server, server.keys["propose"], propose)
    assert proposed["status"] == "proposed" and proposed["notes"] == [target], proposed
    assert snapshot(vault) == before, "a proposal moves nothing"
    assert "rename from " + source in run(server.dir, "proposals", "show", str(proposed["proposal_id"]))
    run(server.dir, "proposals", "reject", str(proposed["proposal_id"]))

    async def move(session):
        return await ok(session, "note_move", {"from": source, "to": target})

    moved = in_session(server, server.keys["force"], move)
    assert moved["status"] == "moved" and moved["path"] == target and moved["notes"] == [target], moved
    assert not (vault / source).exists()
    assert (vault / target).read_bytes() == moved_bytes, "the note's bytes (and its id) move unchanged"
    assert moved["hash"] == sha256(moved_bytes)
    after = snapshot(vault)
    changed = {str(p.relative_to(vault)) for p in after if after[p] != before.get(p)} - {target}
    assert set(moved["links_updated"]) == changed, (moved, changed)
    private = demo_constant("PRIVATE_NOTE")
    assert changed == linkers - {private, demo_constant("READ_ONLY_NOTE")}, "every note the agent may change"
    for path in changed:
        text = (vault / path).read_text()
        assert "[[warehouse-cutover" not in text and "[[weekend" in text, (path, text)

    history = run(server.dir, "notes", "history", target)
    newest = history.splitlines()[0].split()
    assert "note_move" in history and source in history, history
    run(server.dir, "notes", "revert", target, newest[1])
    assert snapshot(vault) == before, "the undo puts back every note the move changed"


def test_a_move_refuses_what_a_write_refuses(server):
    read_only, private = demo_constant("READ_ONLY_NOTE"), demo_constant("PRIVATE_NOTE")
    before = snapshot(server.vault)

    async def body(session):
        return (
            await refused(session, "note_move", {"from": "Inbox.md", "to": "Ideas.md"}),
            await refused(session, "note_move", {"from": "Inbox.md", "to": private}),
            await refused(session, "note_move", {"from": "Inbox.md", "to": "_private/inbox.md"}),
            await refused(session, "note_move", {"from": read_only, "to": "Projects/log.md"}),
            await refused(session, "note_move", {"from": private, "to": "Areas/trip.md"}),
            await refused(session, "note_move", {"from": "Nowhere/absent.md", "to": "Areas/trip.md"}),
            await refused(session, "note_move", {"from": "Inbox.md", "to": "Inbox.txt"}),
            await refused(session, "note_move", {"from": "Projects/", "to": "Projects/Archive/"}),
        )

    exists, onto_private, quarantined, locked, hidden, missing, kind, itself = in_session(
        server, server.keys["force"], body)
    assert "already exists" in exists, exists
    assert onto_private.replace(private, "P") == quarantined.replace("_private/inbox.md", "P"), \
        "a private note in the way answers like a path no note can be at"
    assert "read-only" in locked, locked
    assert hidden.replace(private, "P") == missing.replace("Nowhere/absent.md", "P"), "private answers as missing"
    assert "markdown" in kind and "into itself" in itself, (kind, itself)
    assert snapshot(server.vault) == before, "a refused move changes nothing"
