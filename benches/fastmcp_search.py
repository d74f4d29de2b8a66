"""The comparison server of docs/performance.md: the official MCP Python SDK's FastMCP answering `search`
over a journal's transcripts with SQLite FTS5, the way a small MCP server is usually written.

    python benches/fastmcp_search.py JOURNAL_DIR PORT

It serves http://127.0.0.1:PORT/mcp (JSON answers, sessions as the SDK keeps them) until stopped, and takes
any bearer key, so `journal-bench --url http://127.0.0.1:PORT/mcp --key x --mix search=1 --queries FILE`
measures it as it measures the journal.
"""

import pathlib
import re
import sqlite3
import sys

from mcp.server.fastmcp import FastMCP


def load(root: pathlib.Path) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, title, body)")
    rows = []
    for path in sorted((root / "transcripts").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        _, head, body = text.split("---\n", 2) if text.startswith("---\n") else ("", "", text)
        title = next((line[6:].strip() for line in head.splitlines() if line.startswith("title:")), path.stem)
        rows.append((str(path.relative_to(root)), title, body))
    db.executemany("INSERT INTO docs VALUES (?, ?, ?)", rows)
    db.commit()
    print(f"indexed {len(rows)} transcripts", file=sys.stderr)
    return db


def fts_query(text: str) -> str:
    # Words and "phrases" as FTS5 reads them; anything else would be FTS5 syntax.
    cleaned = re.sub(r'[^\w"\s]', " ", text)
    if cleaned.count('"') % 2:
        cleaned = cleaned.replace('"', " ")
    return cleaned.strip()


def main() -> None:
    root, port = pathlib.Path(sys.argv[1]), int(sys.argv[2])
    db = load(root)
    server = FastMCP("fts5-search", host="127.0.0.1", port=port, json_response=True, log_level="WARNING")

    @server.tool()
    def search(query: str, limit: int = 10) -> list[dict]:
        """Search the journal's transcripts; ranked hits with a snippet."""
        wanted = fts_query(query)
        if not wanted:
            return []
        rows = db.execute(
            "SELECT path, title, snippet(docs, 2, '', '', '…', 40) FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?",
            (wanted, max(1, min(limit, 100))),
        ).fetchall()
        return [{"path": p, "title": t, "snippet": s} for p, t, s in rows]

    server.run(transport="streamable-http")


if __name__ == "__main__":
    main()
