"""Many processes on one journal: a running `journal serve` and four `journal mcp stdio` agents write notes and
connections at once, and one agent is killed with SIGKILL in the middle of a write.

Every write a process acknowledged must be there afterwards: each note on disk with the text it was given, each
connection in graph.jsonl with its author's note, every note found by the server's search within the sync
interval, and graph.jsonl readable line by line. The killed process leaves no lock behind: the others go on, and a
new process writes the graph after it. The longest any call took is printed, not asserted (the machine is shared).
"""

import asyncio
import json
import os
import random
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from journal_helpers import JOURNAL, demo_journal, in_session, mint_key, ok, run, serve

WRITES = 12
AGENTS = 4


class StdioAgent:
    """`journal mcp stdio --agent LABEL`, spoken to a JSON-RPC line at a time, as a local agent does."""

    def __init__(self, journal_dir, label):
        self.process = subprocess.Popen(
            [JOURNAL, "--journal", journal_dir, "mcp", "stdio", "--agent", label],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.next_id = 0
        self.slowest = 0.0
        answer = self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "many", "version": "1"}})
        assert answer["result"]["protocolVersion"] == "2025-06-18", answer
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        started = time.monotonic()
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.process.stdout.readline()
            assert line, f"{method}: the process ended"
            answer = json.loads(line)
            # The session's list changes (another agent made a note) come between answers.
            if "id" in answer or not answer.get("method", "").startswith("notifications/"):
                break
        self.slowest = max(self.slowest, time.monotonic() - started)
        assert answer["id"] == self.next_id, answer
        return answer

    def call(self, tool, arguments):
        """A tool's structured result; a refusal fails the test (nothing here should be refused)."""
        result = self.request("tools/call", {"name": tool, "arguments": arguments})["result"]
        assert not result["isError"], f"{tool} {arguments}: {result['content'][0]['text']}"
        return result["structuredContent"]

    def close(self):
        self.process.stdin.close()
        assert self.process.wait(timeout=10) == 0


def work(journal_dir, index, acknowledged, slowest, kill_after=None):
    """One agent's writes: a note, a connection from it to a facet, the agent's note on that connection."""
    agent = StdioAgent(journal_dir, f"agent-{index}")
    for n in range(WRITES):
        path = f"Agents/agent-{index}/note-{n}.md"
        text = f"# Note {n}\n\nmarker{index}x{n}q written by agent {index}.\n"
        if kill_after is not None and n == kill_after:
            # Mid-write: the request is sent, then the process dies before (or while) it answers.
            agent.send({"jsonrpc": "2.0", "id": 999, "method": "tools/call",
                        "params": {"name": "note_create", "arguments": {"path": path, "content": text}}})
            time.sleep(random.uniform(0, 0.02))
            agent.process.send_signal(signal.SIGKILL)
            agent.process.wait(timeout=10)
            slowest.append(agent.slowest)
            return
        written = agent.call("note_create", {"path": path, "content": text})
        acknowledged["notes"].append((path, text, written["hash"]))
        connected = agent.call("connect", {"from": path, "to": "work", "type": "filed-under"})
        connection = connected["connection"]["id"]
        acknowledged["connections"].append((connection, f"agent:agent-{index}"))
        agent.call("write_connection_note", {"id": connection, "text": f"agent {index} filed note {n}"})
        acknowledged["notes_on_connections"].append((connection, f"agent:agent-{index}", f"agent {index} filed note {n}"))
    slowest.append(agent.slowest)
    agent.close()


@pytest.fixture(scope="module")
def journal():
    with tempfile.TemporaryDirectory() as parent:
        journal_dir = demo_journal(parent)
        for index in range(AGENTS):
            mint_key(journal_dir, f"agent-{index}", ["notes", "graph"], write="force")
        checker = mint_key(journal_dir, "checker", ["notes", "graph"])
        yield journal_dir, checker


def test_every_acknowledged_write_survives_many_writers_and_a_killed_one(journal):
    journal_dir, checker = journal
    vault = Path(journal_dir) / "notes"
    acknowledged = {"notes": [], "connections": [], "notes_on_connections": []}
    slowest = []
    with serve(journal_dir) as url:
        threads = [threading.Thread(target=work, args=(journal_dir, index, acknowledged, slowest,
                                                       5 if index == AGENTS - 1 else None))
                   for index in range(AGENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert not any(thread.is_alive() for thread in threads), "every agent finished"
        assert len(slowest) == AGENTS, "no agent failed (see the assertion above, if one did)"
        expected_notes = (AGENTS - 1) * WRITES + 5
        assert len(acknowledged["notes"]) == expected_notes
        assert len(acknowledged["connections"]) == expected_notes

        # Every acknowledged note is on disk as written.
        for path, text, _ in acknowledged["notes"]:
            assert (vault / path).read_text() == text, path

        # The graph file reads whole, and holds every acknowledged connection and note.
        lines = (Path(journal_dir) / "graph.jsonl").read_text().splitlines()
        graph = {c["id"]: c for c in map(json.loads, lines)}
        for connection, author in acknowledged["connections"]:
            assert graph[connection]["created_by"] == author, connection
        for connection, author, text in acknowledged["notes_on_connections"]:
            assert {"author": author, "text": text} in [
                {"author": n["author"], "text": n["text"]} for n in graph[connection].get("notes", [])], connection
        listing = subprocess.run([JOURNAL, "--journal", journal_dir, "graph", "list"], capture_output=True, text=True)
        assert listing.returncode == 0 and listing.stderr == "", listing.stderr

        # The killed process held no lock that outlives it: a new process writes the graph at once.
        survivor = StdioAgent(journal_dir, "agent-3")
        made = survivor.call("connect", {"from": "Agents/agent-3/note-0.md", "to": "Inbox.md"})
        assert made["status"] == "connected"
        survivor.close()

        # The server's search finds every acknowledged note within the sync interval.
        markers = {f"marker{path.split('/')[1].split('-')[1]}x{path.split('-')[-1][:-3]}q": path
                   for path, _, _ in acknowledged["notes"]}

        class Server:
            pass

        server = Server()
        server.url = url

        async def unfound(session):
            missing = dict(markers)
            deadline = time.monotonic() + 30
            while missing and time.monotonic() < deadline:
                for marker, path in list(missing.items()):
                    found = await ok(session, "search", {"query": marker, "category": "notes"})
                    if any(hit.get("path") == path for hit in found["results"]):
                        del missing[marker]
                if missing:
                    await asyncio.sleep(0.5)
            described = await ok(session, "describe_item", {"item": "work"})
            return missing, described

        missing, described = in_session(server, checker, unfound)
        assert not missing, f"search never found: {sorted(missing.values())[:5]}"
        assert described["connection_count"] == expected_notes
    print(f"\n{AGENTS} stdio agents beside a server: {expected_notes * 3 + 1} writes acknowledged; "
          f"the slowest call took {max(slowest):.2f} s")
