// The real MCP clients against a real `journal serve`, with no model and no network beyond loopback.
//
// Claude Code, Codex and Gemini CLI are installed from npm at pinned versions (package.json); each
// runs in a fresh temporary HOME (and CODEX_HOME) with telemetry and update checks off, and every
// wait is bounded. The checks:
//   - Claude Code with a key: `claude mcp list` reports the journal connected 25 times in a row
//     (Claude never ends its sessions, so this passes only if the journal makes room for new ones);
//   - Gemini CLI with a key from the environment (`${JOURNAL_KEY}` in its settings): `gemini mcp
//     list` reports it disabled in an untrusted folder, and connected once the folder is trusted;
//   - Codex signs in with dynamic registration (`codex mcp login --oauth-client-registration dcr`,
//     the owner typing the pairing code on the consent page), lists the journal with OAuth, and
//     calls tools through its app-server (`mcpServer/tool/call`): search, and with the notes
//     category base_query and note_read (a private note answers as missing), which the journal audits, and,
//     approved to suggest changes, proposes a move that the owner accepts with `journal proposals accept`;
//   - over stdio (`journal mcp stdio --agent LABEL`, started by the client): `claude mcp list` reports
//     the journal connected, and Codex's app-server lists the connection's tools and calls note_append,
//     which lands on disk as that connection's change; Gemini CLI (`gemini mcp add -s user journal
//     JOURNAL --journal DIR mcp stdio --agent gemini`) lists it connected in a trusted folder, offers
//     all of the connection's tools to the model, and calls note_append when a scripted stand-in for
//     the Gemini API on loopback asks it to: the call is in the audit as the connection's;
//   - the default sign-in of Codex (`codex mcp add`, which starts it by itself) and of Claude Code
//     (`claude mcp login`, under a pseudo-terminal) identify themselves with their client ID metadata
//     documents; with no network, the journal must know them without fetching: the consent page
//     names them, and the sign-in completes;
//   - a new user's first hour: `journal serve --demo` (HOME and XDG_DATA_HOME in a temporary folder, one
//     port for both starts) makes the sample journal and prints a key, a pairing code and each client's
//     lines; Codex signs in with the printed line and code, Claude Code is added with the printed key line;
//     after SIGTERM a second start serves the same journal at the same address and says the key still
//     works, Codex connects and calls search with the token it had (no second sign-in), the call is in the
//     demo journal's audit, and Claude Code with the key from the first start lists it connected.
// A BROWSER script hands each sign-in URL to the test, which plays the owner over HTTP.
// Run from the repository root: (cd tests/clients && npm ci) && node --test tests/clients/ (JOURNAL_BIN names
// another journal binary than target/debug/journal). Needs util-linux `script`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  CLAUDE, CODEX, GEMINI, JOURNAL, codexAppServer, declaredFunctions, freePort, journal, lines, ownerApproves, printedCommand,
  report, sandbox, scriptedGeminiApi, serveDemo, servedJournal, visitCallback, waitFor,
} from './harness.mjs';

const ALL_TOOLS = ['fetch', 'get_entity', 'get_transcript', 'list_entities', 'list_facets', 'list_transcripts',
  'recall_memory', 'save_memory', 'search'];
const NOTES_TOOLS = ['base_query', 'note_read', 'notes_list', 'skill_read', 'skills_list'];
const WRITE_TOOLS = ['my_proposals', 'note_append', 'note_create', 'note_delete', 'note_edit_section', 'note_move',
  'note_set_properties', 'note_write'];

/** A new key for the journal in `home`: the last line `token create` prints. */
function createKey(home, label) {
  return journal(home, 'mcp', 'token', 'create', '--label', label).trim().split('\n').pop();
}

/** Opens sign-in on the journal in `home`: the pairing code, the last line `pairing generate` prints. */
function openPairing(home) {
  return journal(home, 'mcp', 'pairing', 'generate').trim().split('\n').pop();
}

/** Codex's configuration before any server is added: no update check, analytics, feedback or plugin
 *  and app sync (which reach for github.com), tokens in a file under CODEX_HOME rather than a keyring,
 *  and a model provider on loopback, so starting a thread reaches for nothing outside this machine. */
function configureCodex(box) {
  writeFileSync(join(box.codexHome, 'config.toml'), [
    'check_for_update_on_startup = false',
    'mcp_oauth_credentials_store = "file"',
    'model_provider = "loopback"',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    '',
    '[model_providers.loopback]',
    'name = "loopback"',
    'base_url = "http://127.0.0.1:9/v1"',
    'wire_api = "responses"',
    '',
  ].join('\n'));
}

/** Gemini CLI's user settings before any server is added: no update check, usage statistics or
 *  telemetry, and the Gemini API key as the way to reach a model (which only the scripted stand-in
 *  of `scriptedGeminiApi` answers, when a test points GOOGLE_GEMINI_BASE_URL at it). Answers ~/.gemini. */
function configureGemini(box) {
  const geminiDir = join(box.home, '.gemini');
  mkdirSync(geminiDir, { recursive: true });
  writeFileSync(join(geminiDir, 'settings.json'), JSON.stringify({
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    security: { auth: { selectedType: 'gemini-api-key' } },
  }, null, 2));
  return geminiDir;
}

/** Trusts the sandbox's working folder as Gemini CLI's trust dialog does: ~/.gemini/trustedFolders.json
 *  maps it to TRUST_FOLDER (in any other folder Gemini disables every MCP server). */
function trustGeminiFolder(box) {
  writeFileSync(join(box.home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [box.work]: 'TRUST_FOLDER' }, null, 2));
}

/** Codex's app-server, initialized, with the journal among its MCP servers: answers the server and
 *  the journal's status entry (its tools, its sign-in). */
async function codexWithJournal(box) {
  const server = codexAppServer(box);
  const init = await server.request('initialize', { clientInfo: { name: 'journal-client-test', version: '1' } });
  assert.ok(init.result, JSON.stringify(init));
  server.notify('initialized');
  const status = await server.request('mcpServerStatus/list', { detail: 'toolsAndAuthOnly' });
  const entry = status.result?.data?.find((s) => s.name === 'journal');
  assert.ok(entry, `${JSON.stringify(status)}\n${server.report()}`);
  return { server, entry };
}

/** A new ephemeral thread in Codex's app-server (tool calls belong to a thread); answers its id. */
async function codexThread(server, box) {
  const thread = await server.request('thread/start', { ephemeral: true, cwd: box.work });
  const threadId = thread.result?.thread?.id;
  assert.ok(threadId, `${JSON.stringify(thread)}\n${server.report()}`);
  return threadId;
}

/** The query of an authorization URL a client handed to the browser, checked for PKCE and the
 *  resource; answers the parameters. */
function authorizationParams(authorizeUrl, { origin, url }) {
  const parsed = new URL(authorizeUrl);
  assert.equal(`${parsed.origin}${parsed.pathname}`, `${origin}/authorize`, authorizeUrl);
  const params = Object.fromEntries(parsed.searchParams);
  assert.equal(params.response_type, 'code', authorizeUrl);
  assert.equal(params.code_challenge_method, 'S256', authorizeUrl);
  assert.equal(params.resource, url, authorizeUrl);
  return params;
}

test('Claude Code with a key: `claude mcp list` reports the journal connected 25 times in a row', { timeout: 300_000 }, async (t) => {
  const { home, url, serverLog } = await servedJournal(t);
  const key = createKey(home, 'claude-code');
  const box = sandbox(t, 'claude');
  const added = await box.run(CLAUDE, ['mcp', 'add', '--transport', 'http', '--scope', 'user', 'journal', url,
    '--header', `Authorization: Bearer ${key}`]);
  assert.equal(added.code, 0, report(added));
  assert.ok(lines(added.stdout).includes(`Added HTTP MCP server journal with URL: ${url} to user config`), report(added));

  // Every `claude mcp list` opens a session and never ends it (no DELETE): a cap of 16 sessions per
  // credential that refuses the 17th would show the journal as failed from the 17th run on.
  const connected = `journal: ${url} (HTTP) - ✔ Connected`;
  for (let attempt = 1; attempt <= 25; attempt++) {
    const listed = await box.run(CLAUDE, ['mcp', 'list']);
    assert.ok(listed.code === 0 && lines(listed.stdout).includes(connected),
      `run ${attempt} of \`claude mcp list\` should report "${connected}"\n${report(listed)}\n--- journal serve log\n${serverLog()}`);
  }
});

test('Gemini CLI with a key from the environment: `gemini mcp list` reports the journal connected in a trusted folder', { timeout: 180_000 }, async (t) => {
  const { home, url } = await servedJournal(t);
  const key = createKey(home, 'gemini-cli');
  const box = sandbox(t, 'gemini');
  const geminiDir = configureGemini(box);

  // User scope (the default is the project's .gemini/settings.json), and the key by reference: Gemini
  // expands ${JOURNAL_KEY} from its environment when it connects, so no key is written anywhere.
  const added = await box.run(GEMINI, ['mcp', 'add', '--scope', 'user', '--transport', 'http', 'journal', url,
    '--header', 'Authorization: Bearer ${JOURNAL_KEY}']);
  assert.equal(added.code, 0, report(added));
  assert.ok(lines(added.stdout + added.stderr).includes('MCP server "journal" added to user settings. (http)'), report(added));
  const settings = JSON.parse(readFileSync(join(geminiDir, 'settings.json'), 'utf8'));
  assert.deepEqual(settings.mcpServers.journal, { url, type: 'http', headers: { Authorization: 'Bearer ${JOURNAL_KEY}' } });

  const env = { JOURNAL_KEY: key };
  // An untrusted folder disables every server, the user's too.
  const untrusted = await box.run(GEMINI, ['mcp', 'list'], { env });
  assert.ok(untrusted.code === 0 && lines(untrusted.stdout + untrusted.stderr).includes(`○ journal: ${url} (http) - Disabled`), report(untrusted));

  trustGeminiFolder(box);
  const listed = await box.run(GEMINI, ['mcp', 'list'], { env });
  assert.ok(listed.code === 0 && lines(listed.stdout + listed.stderr).includes(`✓ journal: ${url} (http) - Connected`), report(listed));
});

test('Codex signs in with dynamic registration, lists the journal with OAuth and calls a tool through its app-server', { timeout: 240_000 }, async (t) => {
  const { home, origin, url } = await servedJournal(t);
  const box = sandbox(t, 'codex');
  configureCodex(box);

  // `codex mcp add` starts a sign-in by itself when the server offers OAuth. With sign-in closed (no
  // pairing code open), registration is refused: the server is added all the same, and Codex prints
  // the journal's refusal as it is, so it must read as a sentence rather than a page.
  const added = await box.run(CODEX, ['mcp', 'add', 'journal', '--url', url, '--oauth-client-registration', 'dcr']);
  const addedOutput = added.stdout + added.stderr;
  assert.ok(lines(addedOutput).includes("Added global MCP server 'journal'."), report(added));
  assert.match(addedOutput, /sign-in is closed: run journal mcp pairing generate/, report(added));
  assert.doesNotMatch(addedOutput, /<html|<!doctype/i, report(added));

  const pairing = openPairing(home);
  const login = box.start(CODEX, ['mcp', 'login', 'journal', '--oauth-client-registration', 'dcr']);
  const authorizeUrl = await box.browserUrl(`codex mcp login to open the browser\n${login.report()}`);
  const params = authorizationParams(authorizeUrl, { origin, url });
  assert.match(params.client_id, /^jc_/, 'a registered client id');
  assert.match(params.redirect_uri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  const callback = await ownerApproves(authorizeUrl, {
    client: 'Codex', pairing, categories: ['transcripts', 'entities', 'facets', 'notes'], write: 'propose',
  });
  assert.equal(`${callback.origin}${callback.pathname}`, params.redirect_uri);
  assert.equal(callback.searchParams.get('state'), params.state);
  const landed = await visitCallback(callback);
  assert.equal(landed.status, 200, landed.text);
  await waitFor(() => login.code !== undefined || login.signal !== undefined, 30_000, 'codex mcp login to finish', login.report);
  assert.equal(login.code, 0, login.report());
  assert.ok(lines(login.stdout).includes("Successfully logged in to MCP server 'journal'."), login.report());

  const listed = await box.run(CODEX, ['mcp', 'list']);
  assert.equal(listed.code, 0, report(listed));
  const row = lines(listed.stdout).find((line) => line.startsWith('journal '));
  assert.match(row ?? '', new RegExp(`^journal\\s+${url.replace(/[.]/g, '\\.')}\\s+-\\s+enabled\\s+OAuth$`), report(listed));

  // No model: Codex's app-server connects to the journal with its stored token, lists the tools and
  // calls one on request, as it would for the model.
  const { server, entry } = await codexWithJournal(box);
  assert.equal(entry.authStatus, 'oAuth', JSON.stringify(entry));
  assert.deepEqual(Object.keys(entry.tools).sort(), [...ALL_TOOLS, ...NOTES_TOOLS, ...WRITE_TOOLS].sort(), JSON.stringify(entry));
  const threadId = await codexThread(server, box);
  const called = await server.request('mcpServer/tool/call', { server: 'journal', threadId, tool: 'search', arguments: { query: 'lease renewal' } });
  assert.ok(called.result && !called.result.isError, `${JSON.stringify(called)}\n${server.report()}`);
  const found = JSON.parse(called.result.content[0].text);
  assert.ok(found.results.length > 0, called.result.content[0].text);
  assert.match(found.results[0].snippet, /lease renewal/, called.result.content[0].text);
  // The notes tools, through Codex as the model would call them (Codex checks structured results
  // against each tool's output schema).
  const dsl = 'where status is "active"\nsort priority\ncolumns __title, priority\nlimit 2';
  const queried = await server.request('mcpServer/tool/call', { server: 'journal', threadId, tool: 'base_query', arguments: { dsl } });
  assert.ok(queried.result && !queried.result.isError, `${JSON.stringify(queried)}\n${server.report()}`);
  const table = JSON.parse(queried.result.content[0].text);
  assert.deepEqual(table.columns, ['__title', 'priority'], queried.result.content[0].text);
  assert.equal(table.rows.length, 2, queried.result.content[0].text);
  assert.ok(table.rows[0][1] <= table.rows[1][1], queried.result.content[0].text);
  const read = await server.request('mcpServer/tool/call', { server: 'journal', threadId, tool: 'note_read', arguments: { path: 'Projects/Atlas/decision-log.md' } });
  assert.ok(read.result && !read.result.isError, `${JSON.stringify(read)}\n${server.report()}`);
  const note = JSON.parse(read.result.content[0].text);
  assert.equal(note.read_only, true, read.result.content[0].text);
  assert.equal(note.agents_md.path, 'Projects/AGENTS.md', read.result.content[0].text);
  const hidden = await server.request('mcpServer/tool/call', { server: 'journal', threadId, tool: 'note_read', arguments: { path: 'Areas/surprise-trip.md' } });
  assert.ok(hidden.result?.isError, JSON.stringify(hidden));
  assert.match(hidden.result.content[0].text, /there is no note at "Areas\/surprise-trip\.md"/);
  // A write, approved on the consent page as a suggestion: proposed, nothing moves until the owner accepts.
  const moved = await server.request('mcpServer/tool/call', { server: 'journal', threadId, tool: 'note_move', arguments: { from: 'Ideas.md', to: 'Someday/' } });
  assert.ok(moved.result && !moved.result.isError, `${JSON.stringify(moved)}\n${server.report()}`);
  const proposal = JSON.parse(moved.result.content[0].text);
  assert.equal(proposal.status, 'proposed', moved.result.content[0].text);
  assert.deepEqual(proposal.notes, ['Someday/Ideas.md'], moved.result.content[0].text);
  const ideas = readFileSync(join(home, 'notes', 'Ideas.md'), 'utf8');
  assert.match(journal(home, 'proposals', 'accept', String(proposal.proposal_id)), /accepted proposal/);
  assert.equal(readFileSync(join(home, 'notes', 'Someday', 'Ideas.md'), 'utf8'), ideas);
  const mine = await server.request('mcpServer/tool/call', { server: 'journal', threadId, tool: 'my_proposals', arguments: {} });
  assert.equal(JSON.parse(mine.result.content[0].text).proposals[0].status, 'accepted', JSON.stringify(mine));
  server.stop();

  const activity = lines(journal(home, 'mcp', 'activity'));
  assert.ok(activity.some((line) => /^\S+\s+Codex\s+search\s+served$/.test(line)), activity.join('\n'));
  assert.ok(activity.some((line) => /^\S+\s+Codex\s+base_query\s+served$/.test(line)), activity.join('\n'));
});

test('Codex signs in by default with its client ID metadata document, without fetching it', { timeout: 180_000 }, async (t) => {
  const { home, origin, url } = await servedJournal(t);
  const box = sandbox(t, 'codex-cimd');
  configureCodex(box);
  const pairing = openPairing(home);

  // What a user types: `codex mcp add` detects OAuth and signs in by itself.
  const add = box.start(CODEX, ['mcp', 'add', 'journal', '--url', url]);
  const authorizeUrl = await box.browserUrl(`codex mcp add to open the browser\n${add.report()}`);
  const params = authorizationParams(authorizeUrl, { origin, url });
  assert.equal(params.client_id, 'https://chatgpt.com/oauth/codex/client.json');
  assert.match(params.redirect_uri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  // The consent page (200, naming Codex) although chatgpt.com cannot be reached from here.
  const callback = await ownerApproves(authorizeUrl, { client: 'Codex', pairing });
  assert.equal(`${callback.origin}${callback.pathname}`, params.redirect_uri);
  const landed = await visitCallback(callback);
  assert.equal(landed.status, 200, landed.text);
  await waitFor(() => add.code !== undefined || add.signal !== undefined, 30_000, 'codex mcp add to finish', add.report);
  assert.equal(add.code, 0, add.report());
  assert.ok(lines(add.stdout).includes('Successfully logged in.'), add.report());

  const listed = await box.run(CODEX, ['mcp', 'list']);
  const row = lines(listed.stdout).find((line) => line.startsWith('journal '));
  assert.match(row ?? '', /\s+enabled\s+OAuth$/, report(listed));
});

test('Claude Code signs in with its client ID metadata document, without fetching it', { timeout: 180_000 }, async (t) => {
  const { home, origin, url } = await servedJournal(t);
  const box = sandbox(t, 'claude-cimd');
  const added = await box.run(CLAUDE, ['mcp', 'add', '--transport', 'http', '--scope', 'user', 'journal', url]);
  assert.equal(added.code, 0, report(added));
  const pairing = openPairing(home);

  // `claude mcp login` needs a terminal (without one it stops after "Starting authentication"):
  // util-linux `script` gives it a pseudo-terminal; its input stays open so it waits for the browser.
  const login = box.start('script', ['-qfec', `'${CLAUDE}' mcp login journal`, '/dev/null'], { env: { TERM: 'xterm' }, stdin: 'pipe' });
  const authorizeUrl = await box.browserUrl(`claude mcp login to open the browser\n${login.report()}`);
  const params = authorizationParams(authorizeUrl, { origin, url });
  assert.equal(params.client_id, 'https://claude.ai/oauth/claude-code-client-metadata');
  assert.match(params.redirect_uri, /^http:\/\/localhost:\d+\/callback$/);
  // The consent page (200, naming Claude Code) although claude.ai cannot be reached from here.
  const callback = await ownerApproves(authorizeUrl, { client: 'Claude Code', pairing });
  assert.equal(`${callback.origin}${callback.pathname}`, params.redirect_uri);
  const landed = await visitCallback(callback);
  assert.equal(landed.status, 200, landed.text);
  await waitFor(() => login.stdout.includes('Authenticated with "journal".'), 30_000, 'claude mcp login to finish', login.report);
  login.stop();

  const listed = await box.run(CLAUDE, ['mcp', 'list']);
  assert.ok(lines(listed.stdout).includes(`journal: ${url} (HTTP) - ✔ Connected`), report(listed));
});

test('Claude Code and Codex start the journal over stdio as a connection and call its tools', { timeout: 240_000 }, async (t) => {
  const { home } = await servedJournal(t);
  createKey(home, 'local-agent');
  journal(home, 'mcp', 'permission', 'set', '--token', 'local-agent', '--category', 'notes', '--write', 'force');
  const command = [JOURNAL, '--journal', home, 'mcp', 'stdio', '--agent', 'local-agent'];

  const claude = sandbox(t, 'claude-stdio');
  const added = await claude.run(CLAUDE, ['mcp', 'add', '--scope', 'user', 'journal', '--', ...command]);
  assert.equal(added.code, 0, report(added));
  const listed = await claude.run(CLAUDE, ['mcp', 'list']);
  const row = lines(listed.stdout).find((line) => line.startsWith('journal: '));
  assert.match(row ?? '', /^journal: .*mcp stdio --agent local-agent - ✔ Connected$/, report(listed));

  const box = sandbox(t, 'codex-stdio');
  configureCodex(box);
  const codexAdded = await box.run(CODEX, ['mcp', 'add', 'journal', '--', ...command]);
  assert.equal(codexAdded.code, 0, report(codexAdded));
  const { server, entry } = await codexWithJournal(box);
  assert.deepEqual(Object.keys(entry.tools).sort(), [...NOTES_TOOLS, ...WRITE_TOOLS, 'fetch', 'list_facets', 'recall_memory', 'save_memory', 'search'].sort(), JSON.stringify(entry));
  const threadId = await codexThread(server, box);
  const appended = await server.request('mcpServer/tool/call', { server: 'journal', threadId, tool: 'note_append', arguments: { path: 'Inbox.md', text: '- from Codex over stdio' } });
  assert.ok(appended.result && !appended.result.isError, `${JSON.stringify(appended)}\n${server.report()}`);
  assert.equal(JSON.parse(appended.result.content[0].text).status, 'written');
  server.stop();
  assert.ok(readFileSync(join(home, 'notes', 'Inbox.md'), 'utf8').endsWith('- from Codex over stdio'));
  assert.match(journal(home, 'notes', 'history', 'Inbox.md'), /agent:local-agent \(local-agent\)/);
});

test('Gemini CLI starts the journal over stdio: `gemini mcp list` reports it connected, and a tool call lands in the audit', { timeout: 180_000 }, async (t) => {
  const { home } = await servedJournal(t);
  createKey(home, 'gemini');
  journal(home, 'mcp', 'permission', 'set', '--token', 'gemini', '--category', 'notes', '--write', 'force');
  const box = sandbox(t, 'gemini-stdio');
  const geminiDir = configureGemini(box);

  // The line README.md and docs/mcp.md give: Gemini takes the command and its arguments after the name.
  const args = ['--journal', home, 'mcp', 'stdio', '--agent', 'gemini'];
  const added = await box.run(GEMINI, ['mcp', 'add', '-s', 'user', 'journal', JOURNAL, ...args]);
  assert.equal(added.code, 0, report(added));
  assert.ok(lines(added.stdout + added.stderr).includes('MCP server "journal" added to user settings. (stdio)'), report(added));
  const settings = JSON.parse(readFileSync(join(geminiDir, 'settings.json'), 'utf8'));
  assert.deepEqual(settings.mcpServers.journal, { command: JOURNAL, args });

  trustGeminiFolder(box);
  const listed = await box.run(GEMINI, ['mcp', 'list']);
  assert.ok(listed.code === 0
    && lines(listed.stdout + listed.stderr).includes(`✓ journal: ${JOURNAL} ${args.join(' ')} (stdio) - Connected`), report(listed));

  // No model: a scripted stand-in for the Gemini API asks for one call of the journal's note_append,
  // which Gemini CLI makes through the stdio process as it would for the model (--approval-mode yolo
  // answers its confirmation), then hands the result back.
  const api = await scriptedGeminiApi(t, (request) => {
    const asked = JSON.stringify(request.contents ?? []).includes('"functionResponse"');
    return asked ? [{ text: 'appended' }]
      : [{ functionCall: { name: 'mcp_journal_note_append', args: { path: 'Inbox.md', text: '- from Gemini over stdio' } } }];
  });
  const ran = await box.run(GEMINI, ['-p', 'add a line to my inbox', '--approval-mode', 'yolo'], {
    env: { GEMINI_API_KEY: 'scripted', GOOGLE_GEMINI_BASE_URL: api.url }, timeoutMs: 90_000,
  });
  assert.equal(ran.code, 0, report(ran));
  assert.ok(lines(ran.stdout).includes('appended'), report(ran));
  const turns = api.requests.filter((r) => r.url.includes(':streamGenerateContent')).map((r) => r.body);
  assert.equal(turns.length, 2, report(ran));
  // Gemini offered the model every tool of the connection (none dropped for its schema), named mcp_journal_*.
  const offered = declaredFunctions(turns[0]).filter((name) => name.startsWith('mcp_journal_')).sort();
  assert.deepEqual(offered, [...NOTES_TOOLS, ...WRITE_TOOLS, 'fetch', 'list_facets', 'recall_memory', 'save_memory', 'search']
    .map((name) => `mcp_journal_${name}`).sort(), JSON.stringify(declaredFunctions(turns[0])));
  const answered = JSON.stringify(turns[1].contents);
  assert.match(answered, /"functionResponse"/, answered);
  assert.match(answered, /\\"status\\":\s*\\"written\\"/, answered);

  assert.ok(readFileSync(join(home, 'notes', 'Inbox.md'), 'utf8').endsWith('- from Gemini over stdio'));
  const activity = lines(journal(home, 'mcp', 'activity'));
  assert.ok(activity.some((line) => /^\S+\s+gemini\s+note_append\s+served\s+Inbox\.md \(force\)$/.test(line)), activity.join('\n'));
  assert.match(journal(home, 'notes', 'history', 'Inbox.md'), /agent:gemini \(gemini\)/);
});

test('A new user\'s demo: serve --demo, Codex signs in with the printed code, and after a restart Codex and the printed key connect again', { timeout: 240_000 }, async (t) => {
  const user = mkdtempSync(join(tmpdir(), 'journal-demo-user-'));
  t.after(() => rmSync(user, { recursive: true, force: true }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const clients = { PATH: `${dirname(CODEX)}:${process.env.PATH}` };

  const first = await serveDemo(t, user, port);
  const made = /^wrote a demo journal to (\S+): /m.exec(first.out);
  assert.ok(made, first.out);
  const demo = made[1];
  assert.equal(demo, join(user, '.local', 'share', 'journal-demo'), first.out);
  assert.ok(lines(first.out).includes(`serving ${demo} at ${url}`), first.out);
  const key = /^ {2}export JOURNAL_KEY=(jk_\S+)$/m.exec(first.out)?.[1];
  assert.ok(key, first.out);
  const pairing = /this pairing code works once[^\n]*\n {2}([A-Z0-9]{4}-[A-Z0-9]{4})\n/.exec(first.out)?.[1];
  assert.ok(pairing, first.out);

  // Codex, with the sign-in line the banner prints, run as printed: it signs in by itself, the owner
  // typing the printed pairing code on the consent page.
  const codex = sandbox(t, 'codex-demo');
  configureCodex(codex);
  const codexLine = printedCommand(first.out, 'Or sign an agent in', 'Codex');
  assert.equal(codexLine, `codex mcp add journal --url ${url}`);
  const add = codex.start('sh', ['-c', codexLine], { env: clients });
  const authorizeUrl = await codex.browserUrl(`codex mcp add to open the browser\n${add.report()}`);
  const callback = await ownerApproves(authorizeUrl, { client: 'Codex', pairing, categories: ['transcripts', 'entities', 'facets', 'notes'] });
  const landed = await visitCallback(callback);
  assert.equal(landed.status, 200, landed.text);
  await waitFor(() => add.code !== undefined || add.signal !== undefined, 30_000, 'codex mcp add to finish', add.report);
  assert.equal(add.code, 0, add.report());
  assert.ok(lines(add.stdout).includes('Successfully logged in.'), add.report());

  // Claude Code with the printed key and its printed line (the key from the shell, as the banner says).
  const claude = sandbox(t, 'claude-demo');
  const claudeLine = printedCommand(first.out, 'A key named "demo"', 'Claude Code');
  const keyAdded = await claude.run('sh', ['-c', claudeLine], { env: { ...clients, JOURNAL_KEY: key } });
  assert.equal(keyAdded.code, 0, report(keyAdded));

  assert.equal(await first.stop(), 0, `serve --demo ends cleanly on SIGTERM\n${first.log()}`);

  // The second start serves the same journal at the same address, with the same key, and says so.
  const second = await serveDemo(t, user, port);
  assert.doesNotMatch(second.out, /wrote a demo journal/, second.out);
  assert.doesNotMatch(second.out, /export JOURNAL_KEY=/, second.out);
  assert.ok(lines(second.out).includes(`serving ${demo} at ${url}`), second.out);
  assert.match(second.out, /The key "demo" made at the first start still works, and so do the agents signed in since\./, second.out);

  // Codex connects with the token it got before the restart (no sign-in) and calls a tool.
  const { server, entry } = await codexWithJournal(codex);
  assert.equal(entry.authStatus, 'oAuth', JSON.stringify(entry));
  assert.ok(Object.keys(entry.tools).includes('search'), JSON.stringify(entry));
  const threadId = await codexThread(server, codex);
  const called = await server.request('mcpServer/tool/call', { server: 'journal', threadId, tool: 'search', arguments: { query: 'lease renewal' } });
  assert.ok(called.result && !called.result.isError, `${JSON.stringify(called)}\n${server.report()}`);
  assert.ok(JSON.parse(called.result.content[0].text).results.length > 0, called.result.content[0].text);
  server.stop();
  assert.equal(codex.browserUrls().length, 1, `Codex opened no second sign-in: ${codex.browserUrls().join('\n')}`);
  const activity = lines(journal(demo, 'mcp', 'activity'));
  assert.ok(activity.some((line) => /^\S+\s+Codex\s+search\s+served$/.test(line)), activity.join('\n'));

  // And the key printed at the first start still connects Claude Code.
  const listed = await claude.run(CLAUDE, ['mcp', 'list']);
  assert.ok(lines(listed.stdout).includes(`journal: ${url} (HTTP) - ✔ Connected`), report(listed));
  assert.equal(await second.stop(), 0, second.log());
});
