// The official MCP conformance suite's 2026-07-28 requirements (pinned, run with the Node.js 22 it needs,
// from npm's node-linux-* packages) against `journal serve`, one scenario at a time at the 2026-07-28
// wire: stateless requests, server/discover, the standard headers, caching hints, the era's errors.
// The suite cannot send an Authorization header, so it talks to the header-adding proxy the 2025 run
// uses. The scenarios that need the suite's fixture tools, prompts and resources run against the
// fixture server built from the same transport and dispatch (crates/mcp/examples/fixture), which must
// pass every check of them; `server-stateless` runs against both. expected-failures.yml lists the
// checks journal itself cannot pass, with reasons.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProxy } from '../conformance/proxy.mjs';
import { JOURNAL, journal, serve } from '../conformance/served.mjs';
import { startFixture } from '../conformance/fixture.mjs';

const HERE = import.meta.dirname;
const NODE22 = join(HERE, 'node_modules', '.bin', 'node');
const SUITE = join(HERE, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
// Scenarios the suite runs but does not yet score for 2026-07-28 that check what journal does.
const PENDING = ['http-header-validation'];

function run(args) {
  return new Promise((done) => {
    const child = spawn(NODE22, [SUITE, ...args], { cwd: HERE, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.stderr.on('data', (chunk) => { output += chunk; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => { clearTimeout(timer); done({ code, output }); });
  });
}

assert.ok(existsSync(NODE22), `npm ci in tests/conformance2026 installs Node.js 22 for Linux on x64 and arm64 only, not for ${process.platform} on ${process.arch}`);
const dir = mkdtempSync(join(tmpdir(), 'journal-conformance-2026-'));
const home = join(dir, 'journal');
execFileSync(JOURNAL, ['demo', home, '--days', '2', '--segments-per-day', '2']);
const { url, child } = await serve(home);
const { key } = JSON.parse(journal(home, 'mcp', 'token', 'create', '--label', 'conformance', '--json'));
journal(home, 'mcp', 'permission', 'set', '--token', 'conformance', '--category', 'transcripts', '--category', 'entities', '--category', 'facets', '--category', 'notes');
// Stateless requests open no sessions, so one key serves every scenario.
const proxy = await startProxy(url, key);
const fixture = await startFixture();
const fixtureProxy = await startProxy(fixture.url, fixture.key);
const listed = await run(['list', '--server', '--requirements', '2026-07-28']);
// The server block only: the listing goes on with the client scenarios.
const serverBlock = listed.output.split(/^Client scenarios/m)[0];
const scenarios = [...serverBlock.matchAll(/^\s+- (\S+)$/gm)].map((m) => m[1]);
// Scenarios that call the suite's fixture tools or read its fixture prompts and resources.
const needsFixture = (scenario) => /^(tools-call-|resources-read-|resources-templates-read$|prompts-get-|input-required-result-)/.test(scenario);
const BOTH = ['server-stateless'];

test('the suite lists its 2026-07-28 server scenarios', () => {
  assert.ok(scenarios.includes('server-stateless') && scenarios.includes('caching'), listed.output);
  assert.ok(scenarios.length >= 30, listed.output);
});

test('the fixture scenarios are among the suite\'s', () => {
  assert.ok(scenarios.filter(needsFixture).length >= 25, listed.output);
});

for (const scenario of [...scenarios.filter(needsFixture), ...BOTH]) {
  test(`conformance 2026-07-28, fixture server: ${scenario}`, async () => {
    const { code, output } = await run(['server', '--url', `http://127.0.0.1:${fixtureProxy.port}/mcp`, '--scenario', scenario,
      '--spec-version', '2026-07-28']);
    assert.equal(code, 0, output);
    assert.match(output, /Passed: (\d+)\/\1, 0 failed, 0 warnings/, output);
  });
}

for (const scenario of [...scenarios.filter((s) => !needsFixture(s)), ...PENDING]) {
  test(`conformance 2026-07-28: ${scenario}`, async () => {
    const { code, output } = await run(['server', '--url', `http://127.0.0.1:${proxy.port}/mcp`, '--scenario', scenario,
      '--spec-version', '2026-07-28', '--expected-failures', join(HERE, 'expected-failures.yml')]);
    assert.equal(code, 0, output);
  });
}

test.after(() => {
  proxy.server.close();
  fixtureProxy.server.close();
  fixture.child.kill('SIGTERM');
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});
