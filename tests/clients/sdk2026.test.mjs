// The official TypeScript MCP client's v2 line (@modelcontextprotocol/client, pinned) at 2026-07-28 against
// a real `journal serve` and `journal mcp stdio`: the pin asks server/discover at connect and then sends
// every request on its own, with its version in `_meta` and the standard headers. The connection's grant
// decides what it sees, as in a 2025 session. Expected values come from the vault files.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { JOURNAL, journal, servedJournal } from './harness.mjs';

const PIN = { versionNegotiation: { mode: { pin: '2026-07-28' } } };

function keyFor(home, label, ...categories) {
  const key = journal(home, 'mcp', 'token', 'create', '--label', label).trim().split('\n').pop();
  const grant = categories.flatMap((c) => ['--category', c]);
  journal(home, 'mcp', 'permission', 'set', '--token', label, ...grant);
  return key;
}

const text = (result) => result.content.filter((b) => b.type === 'text').map((b) => b.text).join('');

/** What every 2026-07-28 connection must show, whichever transport carries it. */
async function exercise(client, home) {
  assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
  assert.equal(client.getServerVersion()?.name, 'journal');
  const discovered = await client.discover();
  assert.equal(discovered.supportedVersions[0], '2026-07-28');
  const listed = await client.listTools({}, { cacheMode: 'bypass' });
  const names = listed.tools.map((t) => t.name);
  assert.ok(names.includes('note_read') && !names.includes('list_entities'), names.join(' '));
  const read = await client.callTool({ name: 'note_read', arguments: { path: 'Inbox.md' } });
  assert.equal(read.isError ?? false, false, text(read));
  const inbox = readFileSync(join(home, 'notes', 'Inbox.md'));
  assert.equal(read.structuredContent.hash, createHash('sha256').update(inbox).digest('hex'));
  const hidden = await client.callTool({ name: 'note_read', arguments: { path: 'Areas/surprise-trip.md' } });
  assert.equal(hidden.isError, true);
  assert.match(text(hidden), /there is no note at "Areas\/surprise-trip.md"/);
  const refused = await client.callTool({ name: 'list_entities', arguments: {} });
  assert.equal(refused.isError, true);
  assert.match(text(refused), /does not include list_entities/);
}

test('the TypeScript client pinned to 2026-07-28 over HTTP', async (t) => {
  const { home, url } = await servedJournal(t);
  const key = keyFor(home, 'ts-modern', 'notes', 'transcripts');
  const client = new Client({ name: 'journal-test', version: '1.0.0' }, PIN);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  }));
  try {
    await exercise(client, home);
  } finally {
    await client.close();
  }
  const activity = journal(home, 'mcp', 'activity', '--token', 'ts-modern');
  assert.match(activity, /list_entities {2}refused/, activity);
});

test('the TypeScript client pinned to 2026-07-28 over stdio', async (t) => {
  const { home } = await servedJournal(t);
  keyFor(home, 'ts-local', 'notes', 'transcripts');
  const client = new Client({ name: 'journal-test', version: '1.0.0' }, PIN);
  await client.connect(new StdioClientTransport({
    command: JOURNAL,
    args: ['--journal', home, 'mcp', 'stdio', '--agent', 'ts-local'],
    stderr: 'ignore',
  }));
  try {
    await exercise(client, home);
  } finally {
    await client.close();
  }
});
