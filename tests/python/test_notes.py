"""The owner's notes through the official MCP Python SDK, against a real `journal serve` over a demo journal.

Three keys minted with the CLI, each used through the SDK's ClientSession (initialize, list_tools, call_tool):

- a whole-journal key: the five notes tools and their input schemas; notes_list paged with cursors through every
  note but the private one; note_read of the read-only note (its flag, the hash of the file on disk, the AGENTS.md
  that governs it); base_query with where, sort and limit, and a broken query answered with a line and column;
  skills_list and skill_read; search with `tag:` (notes only), fetch of a hit, and an unknown filter refused;
- a key limited to the facet `work`: notes_list reaches exactly the notes filed in `work`, and a note outside it
  answers exactly as a missing one;
- the key named by the demo's `agent_overrides` ("private = missing"): the private, overridden and quarantined
  notes answer note_read and search exactly as a note or word that does not exist.

What is expected is worked out from the vault files `journal demo` wrote (their frontmatter, bytes and words) and
from the demo's constants in crates/store/src/journal/demo_notes.rs, never copied from the server's answers.
"""

import asyncio
import hashlib
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from journal_helpers import JOURNAL, call, demo_journal, in_session, mint_key, ok, refused, serve, text_of

NOTES_TOOLS = ["notes_list", "note_read", "base_query", "skills_list", "skill_read"]
DEMO_NOTES_SOURCE = Path(__file__).resolve().parents[2] / "crates" / "store" / "src" / "journal" / "demo_notes.rs"
NO_SUCH_NOTE = "Areas/no-such-note.md"
NONSENSE_WORD = "xylophone-quasar"


# The demo vault, as written on disk.

def demo_constants():
    """The `pub const`s of demo_notes.rs: strings, numbers and arrays of strings, by name."""
    source = DEMO_NOTES_SOURCE.read_text()
    constants = {name: value for name, value in re.findall(r'pub const (\w+): &str = "([^"]*)";', source)}
    constants.update({name: int(value) for name, value in re.findall(r"pub const (\w+): usize = (\d+);", source)})
    for name, items in re.findall(r"pub const (\w+): \[&str; \d+\] = \[(.*?)\];", source, re.S):
        constants[name] = re.findall(r'"([^"]*)"', items)
    return SimpleNamespace(**constants)


DEMO = demo_constants()


def frontmatter(text):
    """The top-level fields of a note's frontmatter, in the forms the demo vault uses: `key: value` and
    `key: [a, b]` (numbers as numbers, quotes removed)."""
    if not text.startswith("---\n") or "\n---\n" not in text[3:]:
        return {}
    fields = {}
    for line in text[4:text.index("\n---\n", 3)].splitlines():
        key, colon, value = line.partition(":")
        if not colon or line[:1].isspace():
            continue
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            fields[key] = [item.strip().strip("\"'") for item in value[1:-1].split(",") if item.strip()]
        elif value.isdigit():
            fields[key] = int(value)
        else:
            fields[key] = value.strip("\"'")
    return fields


def as_list(value):
    return value if isinstance(value, list) else [] if value is None else [value]


def read_vault(vault):
    """Every note agents may in principle reach, by path: each `.md` file but the quarantined ones."""
    notes = {}
    for file in sorted(vault.rglob("*.md")):
        path = file.relative_to(vault).as_posix()
        if path not in DEMO.QUARANTINED_FILES:
            text = file.read_text()
            notes[path] = SimpleNamespace(text=text, front=frontmatter(text))
    return notes


def visible(notes):
    """The paths of the notes that are not `access: private`."""
    return {path for path, note in notes.items() if note.front.get("access") != "private"}


def files_containing(vault, word):
    return sorted(f.relative_to(vault).as_posix() for f in vault.rglob("*") if f.is_file() and word in f.read_text())


# The server and a session with it.

@pytest.fixture(scope="module")
def server():
    with tempfile.TemporaryDirectory() as parent:
        journal_dir = demo_journal(parent, days=3)
        # Transcripts too, so that a search could find something other than notes.
        categories = ["notes", "transcripts"]
        keys = {
            "whole": mint_key(journal_dir, "whole journal", categories),
            "work": mint_key(journal_dir, "work only", categories, facets=["work"]),
            "overridden": mint_key(journal_dir, DEMO.OVERRIDDEN_FOR, categories),
        }
        vault = Path(journal_dir) / "notes"
        with serve(journal_dir) as url:
            yield SimpleNamespace(url=url, keys=keys, vault=vault, notes=read_vault(vault))


async def all_notes(session):
    """The paths of every note notes_list reaches by following its cursors, and how many pages it took."""
    paths, arguments = [], {"limit": 7}
    for page_number in range(1, 101):
        page = await ok(session, "notes_list", arguments)
        paths += [note["path"] for note in page["notes"]]
        if not page.get("next_cursor"):
            return paths, page_number
        arguments = {"limit": 7, "cursor": page["next_cursor"]}
    pytest.fail("notes_list never stopped handing out cursors")


async def as_missing(session, path):
    """note_read's refusal of `path`, with the path itself taken out."""
    answer = await refused(session, "note_read", {"path": path})
    assert path in answer, f"the refusal names the path: {answer}"
    return answer.replace(path, "<path>")


# A whole-journal key.

def test_the_notes_tools_are_listed_with_their_input_schemas(server):
    async def body(session):
        return {tool.name: tool for tool in (await session.list_tools()).tools}

    tools = in_session(server, server.keys["whole"], body)
    missing = [name for name in NOTES_TOOLS if name not in tools]
    assert not missing, f"the notes tools {missing} are offered with the notes category (listed: {sorted(tools)})"
    schemas = {name: tools[name].inputSchema for name in NOTES_TOOLS}
    for name, schema in schemas.items():
        assert schema["type"] == "object" and schema["additionalProperties"] is False, f"{name}: {schema}"
    limit = schemas["notes_list"]["properties"]["limit"]
    assert (limit["type"], limit["minimum"], limit["maximum"]) == ("integer", 1, 1000), f"notes_list limit: {limit}"
    assert {"folder", "tag", "since", "cursor"} <= set(schemas["notes_list"]["properties"]), schemas["notes_list"]
    assert set(schemas["note_read"]["properties"]) == {"path", "id"}, schemas["note_read"]
    assert schemas["base_query"]["required"] == ["dsl"], schemas["base_query"]
    assert schemas["skill_read"]["required"] == ["id"], schemas["skill_read"]
    assert not schemas["skills_list"].get("properties"), f"skills_list takes no arguments: {schemas['skills_list']}"


def test_notes_list_pages_through_every_note_but_the_private_one(server):
    paths, pages = in_session(server, server.keys["whole"], all_notes)
    assert pages > 1, "7 a page takes more than one page"
    assert len(set(paths)) == len(paths), f"no note is listed twice: {sorted(paths)}"
    assert len(paths) == DEMO.NOTE_COUNT - 1, f"{len(paths)} notes listed, not {DEMO.NOTE_COUNT - 1}"
    assert DEMO.PRIVATE_NOTE not in paths, "the private note is not listed"
    assert set(paths) == visible(server.notes), "the listing is the vault on disk, less the private note"


def test_note_read_gives_the_read_only_flag_the_file_hash_and_its_agents_md(server):
    async def body(session):
        return await ok(session, "note_read", {"path": DEMO.READ_ONLY_NOTE})

    note = in_session(server, server.keys["whole"], body)
    on_disk = (server.vault / DEMO.READ_ONLY_NOTE).read_bytes()
    assert note["path"] == DEMO.READ_ONLY_NOTE, note
    assert note["read_only"] is True, f"the note says access: read-only: {note}"
    assert note["hash"] == hashlib.sha256(on_disk).hexdigest(), "the hash is the SHA-256 of the file's bytes"
    assert on_disk.decode().endswith(note["body"]), "the body is the file's text after its frontmatter"
    assert note["agents_md"]["path"] == "Projects/AGENTS.md", f"the nearest AGENTS.md governs it: {note}"
    agents = (server.vault / "Projects/AGENTS.md").read_text()
    assert note["agents_md"]["body"].strip() == agents.strip(), "agents_md carries the file's text"


def test_base_query_filters_sorts_and_limits_and_locates_its_errors(server):
    limit = 3
    query = ('from notes in "Projects"\nwhere status is "active" and priority exists\n'
             f"sort priority asc\nsort __path asc\ncolumns __path, status, priority\nlimit {limit}")
    broken = 'from notes\nwhere status banana "x"'

    async def body(session):
        return await ok(session, "base_query", {"dsl": query}), await call(session, "base_query", {"dsl": broken})

    answer, bad = in_session(server, server.keys["whole"], body)
    matching = sorted(((note.front["priority"], path) for path, note in server.notes.items()
                       if path.startswith("Projects/") and path in visible(server.notes)
                       and note.front.get("status") == "active" and "priority" in note.front),
                      key=lambda pair: (pair[0], pair[1].lower()))
    assert len(matching) > limit, f"the demo has more active projects than the limit: {matching}"
    assert answer["columns"] == ["__path", "status", "priority"], answer
    assert answer["rows"] == [[path, "active", priority] for priority, path in matching[:limit]], \
        f"the first {limit} active notes under Projects by priority: {answer['rows']} (on disk: {matching})"
    assert (answer["total"], answer["truncated"]) == (len(matching), True), f"{len(matching)} matched: {answer}"
    assert "error" not in answer, answer

    assert not bad.isError, f"a query that does not parse is an answer, not a failed call: {text_of(bad)}"
    error = bad.structuredContent["error"]
    line = broken.splitlines()[1]
    assert (error["line"], error["column"]) == (2, line.index("banana") + 1), f"the error points at `banana`: {error}"
    assert "banana" in error["message"], error
    assert bad.structuredContent["rows"] == [], bad.structuredContent


def test_skills_list_and_skill_read(server):
    async def body(session):
        listed = await ok(session, "skills_list", {})
        first = listed["skills"][0]["id"] if listed["skills"] else None
        return listed, first and await ok(session, "skill_read", {"id": first})

    listed, skill = in_session(server, server.keys["whole"], body)
    on_disk = sorted(path for path in visible(server.notes) if re.fullmatch(r"Skills/[^/]+/SKILL\.md", path))
    assert len(on_disk) == 2, f"the demo vault holds two skills: {on_disk}"
    assert sorted(s["path"] for s in listed["skills"]) == on_disk, listed
    assert sorted(s["id"] for s in listed["skills"]) == sorted(p.split("/")[1] for p in on_disk), listed
    assert skill, "skill_read of the first listed skill"
    note = server.notes[skill["path"]]
    assert skill["description"] == note.front["description"], skill
    assert skill["body"].strip() and note.text.endswith(skill["body"]), \
        "the body is the file's text after its frontmatter"


def test_search_filters_by_tag_to_notes_fetch_reads_a_hit_and_unknown_filters_are_refused(server):
    async def body(session):
        plain = await ok(session, "search", {"query": "atlas", "limit": 100})
        tagged = await ok(session, "search", {"query": "tag:atlas", "limit": 100})
        fetched = tagged["results"] and await ok(session, "fetch", {"reference": tagged["results"][0]["reference"]})
        unknown = await call(session, "search", {"query": "title:x"})
        return plain, tagged, fetched, unknown

    plain, tagged, fetched, unknown = in_session(server, server.keys["whole"], body)
    assert any(hit["category"] != "notes" for hit in plain["results"]), \
        "without the filter, `atlas` is found elsewhere too"
    assert all(hit["category"] == "notes" for hit in tagged["results"]), f"tag: finds notes only: {tagged['results']}"
    found = {hit["path"] for hit in tagged["results"]}
    in_frontmatter = {path for path in visible(server.notes)
                      if any(t.lower() == "atlas" or t.lower().startswith("atlas/")
                             for t in as_list(server.notes[path].front.get("tags")))}
    in_body = {path for path in visible(server.notes)
               if re.search(r"(?<![\w#])#atlas\b", server.notes[path].text, re.I)}
    assert in_frontmatter, "the demo tags notes with atlas"
    assert in_frontmatter <= found <= in_frontmatter | in_body, \
        f"tag:atlas finds the notes tagged atlas: found {sorted(found)}, tagged on disk {sorted(in_frontmatter)}"

    first = tagged["results"][0]["path"]
    assert fetched["text"].strip() and server.notes[first].text.endswith(fetched["text"]), f"fetch reads {first}"

    assert unknown.isError, f"an unknown filter is refused: {unknown.structuredContent}"
    message = text_of(unknown)
    for known in ["path:", "tag:", "has:", "-has:", "[key:op value]", "facet:", "after:", "before:"]:
        assert known in message, f"the refusal lists {known}: {message}"


# A key limited to the facet `work`.

def test_a_facet_limited_key_reaches_exactly_its_facets_notes(server):
    in_work = {path for path in visible(server.notes) if "work" in as_list(server.notes[path].front.get("facets"))}
    outside = sorted(visible(server.notes) - in_work)
    assert in_work and outside, "the demo has notes in and outside work"

    async def body(session):
        paths, _ = await all_notes(session)
        answers = {path: await as_missing(session, path) for path in [outside[0], NO_SUCH_NOTE]}
        return paths, answers

    paths, answers = in_session(server, server.keys["work"], body)
    assert len(set(paths)) == len(paths), f"no note is listed twice: {sorted(paths)}"
    assert set(paths) == in_work, (f"listed but not in work: {sorted(set(paths) - in_work)}; "
                                   f"in work but not listed: {sorted(in_work - set(paths))}")
    assert answers[outside[0]] == answers[NO_SUCH_NOTE], f"a note outside work reads as a missing one: {answers}"


# The key the overridden note names: private = missing.

def test_private_overridden_and_quarantined_notes_answer_as_missing_ones(server):
    hidden = [DEMO.PRIVATE_NOTE, DEMO.OVERRIDDEN_NOTE, "_private/diary.md"]
    words = [DEMO.PRIVATE_WORD, DEMO.OVERRIDDEN_WORD, DEMO.QUARANTINED_WORD]
    assert "_private/diary.md" in DEMO.QUARANTINED_FILES
    for path in hidden:
        assert (server.vault / path).is_file(), f"{path} is on disk"
    assert not (server.vault / NO_SUCH_NOTE).exists()
    for word in words:
        assert files_containing(server.vault, word), f"{word} is on disk"
    assert not files_containing(server.vault, NONSENSE_WORD)

    async def body(session):
        reads = {path: await as_missing(session, path) for path in hidden + [NO_SUCH_NOTE]}
        # Every word required, the answer is exactly a nonsense word's; by meaning (the default) it
        # depends on the words asked, so there the hidden notes must simply never be among the hits.
        searches = {word: await ok(session, "search", {"query": word, "mode": "all_words"})
                    for word in words + [NONSENSE_WORD]}
        by_meaning = {word: await ok(session, "search", {"query": word, "limit": 100}) for word in words}
        return reads, searches, by_meaning

    reads, searches, by_meaning = in_session(server, server.keys["overridden"], body)
    for word, answer in by_meaning.items():
        shown = [hit.get("path") for hit in answer["results"]]
        assert not set(shown) & set(hidden), f"a hidden note is a neighbour of {word}: {shown}"
        assert word not in json.dumps(answer), f"{word} leaks by meaning: {answer}"
    for path in hidden:
        assert reads[path] == reads[NO_SUCH_NOTE], f"note_read of {path} answers as a missing note: {reads}"
    assert searches[NONSENSE_WORD]["results"] == []
    for word in words:
        assert searches[word] == searches[NONSENSE_WORD], \
            f"search for {word} answers as for a nonsense word: {searches}"

    # The override names this key only: another whole-journal key finds the overridden note by its word.
    async def other(session):
        return await ok(session, "search", {"query": DEMO.OVERRIDDEN_WORD, "mode": "all_words"})

    found = in_session(server, server.keys["whole"], other)
    assert [hit.get("path") for hit in found["results"]] == [DEMO.OVERRIDDEN_NOTE], found
