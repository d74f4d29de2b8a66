// The official MCP conformance suite (pinned) against `journal serve`, one scenario at a time, each
// with a fresh key (the suite leaves its sessions open, and a key may hold 16). The suite cannot send
// an Authorization header, so it talks to a small header-adding proxy. expected-failures.yml lists
// the scenarios that need fixture tools or capabilities journal does not have, with reasons.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProxy } from './proxy.mjs';
import { JOURNAL, journal, serve } from './served.mjs';

const HERE = import.meta.dirname;
const SUITE = join(HERE, 'node_modules', '.bin', 'conformance');

function freshKey(dir, n) {
  const label = `conformance-${n}`;
  const { key } = JSON.parse(journal(dir, 'mcp', 'token', 'create', '--label', label, '--json'));
  journal(dir, 'mcp', 'permission', 'set', '--token', label, '--category', 'transcripts', '--category', 'entities', '--category', 'facets', '--category', 'notes');
  return key;
}

function run(args) {
  return new Promise((done) => {
    const child = spawn(SUITE, args, { cwd: HERE, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => { output += chunk; });
    child.stderr.on('data', (chunk) => { output += chunk; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => { clearTimeout(timer); done({ code, output }); });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'journal-conformance-'));
const home = join(dir, 'journal');
execFileSync(JOURNAL, ['demo', home, '--days', '2', '--segments-per-day', '2']);
const { url, child } = await serve(home);
const proxy = await startProxy(url, freshKey(home, 0));
const listed = await run(['list', '--server']);
const scenarios = [...listed.output.matchAll(/^\s+- (\S+)$/gm)].map((m) => m[1]);

test('the suite lists its server scenarios', () => {
  assert.ok(scenarios.includes('server-initialize') && scenarios.includes('dns-rebinding-protection'), listed.output);
});

let n = 0;
for (const scenario of scenarios) {
  test(`conformance: ${scenario}`, async () => {
    n += 1;
    proxy.setKey(freshKey(home, n));
    const { code, output } = await run(['server', '--url', `http://127.0.0.1:${proxy.port}/mcp`, '--scenario', scenario,
      '--expected-failures', join(HERE, 'expected-failures.yml')]);
    assert.equal(code, 0, output);
  });
}

test.after(() => {
  proxy.server.close();
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});
