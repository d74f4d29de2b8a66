"""The journal's CLI as the tests use it: a demo journal, a key with a grant, `journal serve` on a free port. No MCP
SDK here, so that the tests of both SDK lines (tests/python with mcp 1.x, tests/python2026 with mcp 2.x) share it."""

import contextlib
import json
import os
import re
import subprocess

JOURNAL = os.environ.get("JOURNAL_BIN", "target/debug/journal")


def run(journal_dir, *args):
    out = subprocess.run([JOURNAL, "--journal", journal_dir, *args], check=True, capture_output=True, text=True)
    return out.stdout


def demo_journal(parent, days=1):
    """A demo journal in `parent`/journal: `days` days of as many segments a day, the demo notes and facets."""
    journal_dir = os.path.join(parent, "journal")
    subprocess.run([JOURNAL, "demo", journal_dir, "--days", str(days), "--segments-per-day", str(days)],
                   check=True, capture_output=True)
    return journal_dir


def mint_key(journal_dir, label, categories, facets=(), write=None):
    """A new key labelled `label`, granted `categories` over the whole journal or only `facets`, with the
    write mode `write` (none when not given)."""
    key = json.loads(run(journal_dir, "mcp", "token", "create", "--label", label, "--json"))["key"]
    grant = [arg for category in categories for arg in ("--category", category)]
    grant += [arg for facet in facets for arg in ("--facet", facet)]
    grant += ["--write", write] if write else []
    run(journal_dir, "mcp", "permission", "set", "--token", label, *grant)
    return key


@contextlib.contextmanager
def serve(journal_dir):
    """`journal serve` on a free loopback port; yields its /mcp URL and stops it cleanly afterwards."""
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
        yield url
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0, "SIGTERM stops the server cleanly"
