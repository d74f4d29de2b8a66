// The official MCP conformance suite (pinned) against `journal serve`, one scenario at a time, each
// with a fresh key (the suite leaves its sessions open, and a key may hold 16), and the scenarios
// that need the suite's fixture tools, prompts and resources against the fixture server built from
// the same transport and dispatch (crates/mcp/examples/fixture), which must pass every one of them.
// The suite cannot send an Authorization header, so it talks to a small header-adding proxy.
// expected-failures.yml lists what journal itself does not offer, with reasons.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProxy } from './proxy.mjs';
import { JOURNAL, journal, serve } from './served.mjs';
import { startFixture } from './fixture.mjs';

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
const fixture = await startFixture();
const fixtureProxy = await startProxy(fixture.url, fixture.key);
const listed = await run(['list', '--server']);
const scenarios = [...listed.output.matchAll(/^\s+- (\S+)$/gm)].map((m) => m[1]);
// The scenarios that call the suite's fixture tools or read its fixture prompts and resources
// and those that check what journal does not offer, to show the transport carries them (logging, resource subscriptions).
const FIXTURE = new Set([
  'tools-call-simple-text', 'tools-call-image', 'tools-call-audio', 'tools-call-embedded-resource',
  'tools-call-mixed-content', 'tools-call-with-logging', 'tools-call-error', 'tools-call-with-progress',
  'tools-call-sampling', 'tools-call-elicitation', 'elicitation-sep1034-defaults', 'elicitation-sep1330-enums',
  'json-schema-2020-12', 'resources-read-text', 'resources-read-binary', 'resources-templates-read',
  'prompts-get-simple', 'prompts-get-with-args', 'prompts-get-embedded-resource', 'prompts-get-with-image',
]);
const ALSO_FIXTURE = ['logging-set-level', 'resources-subscribe', 'resources-unsubscribe'];

test('the suite lists its server scenarios', () => {
  assert.ok(scenarios.includes('server-initialize') && scenarios.includes('dns-rebinding-protection'), listed.output);
});

test('every fixture scenario is one the suite has', () => {
  for (const scenario of [...FIXTURE, ...ALSO_FIXTURE]) {
    assert.ok(scenarios.includes(scenario), `${scenario} is not among the suite's scenarios: ${listed.output}`);
  }
});

for (const scenario of [...FIXTURE, ...ALSO_FIXTURE]) {
  test(`conformance, fixture server: ${scenario}`, async () => {
    const { code, output } = await run(['server', '--url', `http://127.0.0.1:${fixtureProxy.port}/mcp`, '--scenario', scenario]);
    assert.equal(code, 0, output);
    assert.match(output, /Passed: (\d+)\/\1, 0 failed, 0 warnings/, output);
  });
}

let n = 0;
for (const scenario of scenarios.filter((s) => !FIXTURE.has(s))) {
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
  fixtureProxy.server.close();
  fixture.child.kill('SIGTERM');
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});
