// The consent page in a real browser: headless Chromium (Debian's package) driven by playwright-core.
// A journal is served, sign-in is opened with the CLI, a client registers, and the browser plays the
// owner: it reads stage one, types the pairing code, chooses facets on stage two, approves, and lands
// on the client's callback, whose code is then exchanged and used. Screenshots go to artifacts/.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import crypto from 'node:crypto';
import { chromium } from 'playwright-core';
import { ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, JOURNAL, journal, rpc, serve } from './journal.mjs';

/** A stand-in for the agent's loopback callback: records the first query it receives. */
function callbackListener() {
  let deliver;
  const received = new Promise((r) => { deliver = r; });
  const server = http.createServer((request, response) => {
    const url = new URL(request.url, 'http://127.0.0.1');
    response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Signed in. You can close this tab.</h1>');
    if (url.pathname === '/callback') deliver(Object.fromEntries(url.searchParams));
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, port: server.address().port, received })));
}

test('the owner approves an agent for chosen facets in a real browser', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'journal-browser-'));
  mkdirSync(ARTIFACTS, { recursive: true });
  execFileSync(JOURNAL, ['demo', join(dir, 'journal'), '--days', '3', '--segments-per-day', '2']);
  const home = join(dir, 'journal');
  const { origin, child } = await serve(home);
  const callback = await callbackListener();
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  t.after(async () => {
    await browser.close();
    callback.server.close();
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  const pairing = journal(home, 'mcp', 'pairing', 'generate').trim().split('\n').pop();
  const redirectUri = `http://127.0.0.1:${callback.port}/callback`;
  const registered = await fetch(`${origin}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Browser Test Agent', redirect_uris: [redirectUri] }),
  });
  assert.equal(registered.status, 201);
  const { client_id: clientId } = await registered.json();
  const verifier = crypto.randomBytes(32).toString('base64url');
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  const authorizeUrl = `${origin}/authorize?${new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge,
    code_challenge_method: 'S256', state: 'browser-state', resource: `${origin}/mcp`,
  })}`;

  // A phone first: the same page must read well on a small screen.
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  await phone.goto(authorizeUrl);
  await phone.screenshot({ path: join(ARTIFACTS, 'consent-phone.png'), fullPage: true });
  await phone.close();

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const first = await page.goto(authorizeUrl);
  assert.equal(first.status(), 200);
  assert.equal(first.headers()['x-frame-options'], 'DENY');
  assert.match(await page.locator('h1').innerText(), /Browser Test Agent wants to connect to your journal/);
  assert.match(await page.content(), new RegExp(`127\\.0\\.0\\.1`));
  assert.doesNotMatch(await page.content(), /Side project/, 'no facet names before the pairing code');
  await page.screenshot({ path: join(ARTIFACTS, 'consent-stage-one.png'), fullPage: true });

  // A wrong code first: the page says so and keeps the choices.
  await page.check('input[name=scope][value=facets]');
  await page.check('input[name=category][value=transcripts]');
  await page.fill('input[name=pairing_code]', pairing.startsWith('0') ? '1111-1111' : '0000-0000');
  await page.click('button[value=approve]');
  assert.match(await page.locator('[role=alert]').innerText(), /That code is not right\. 4 tries left\./);
  assert.ok(await page.isChecked('input[name=scope][value=facets]'), 'choices survive a wrong code');
  await page.screenshot({ path: join(ARTIFACTS, 'consent-wrong-code.png'), fullPage: true });

  await page.fill('input[name=pairing_code]', pairing.toLowerCase().replace('-', ' '));
  await page.click('button[value=approve]');
  await page.waitForSelector('input[name=facet]');
  assert.match(await page.content(), /Side project/, 'stage two shows the facets');
  await page.screenshot({ path: join(ARTIFACTS, 'consent-stage-two.png'), fullPage: true });
  await page.locator('label.choice', { hasText: 'Work' }).locator('input').check();
  await page.click('button[value=approve]');

  const params = await callback.received;
  assert.equal(params.state, 'browser-state');
  assert.equal(params.iss, origin);
  assert.match(params.code, /^jac_/);
  await page.waitForLoadState();
  assert.match(await page.content(), /Signed in/, 'the browser landed on the client callback');
  await page.screenshot({ path: join(ARTIFACTS, 'callback.png') });

  const exchanged = await fetch(`${origin}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: params.code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier }),
  });
  assert.equal(exchanged.status, 200);
  const { access_token: token } = await exchanged.json();
  const init = await rpc(origin, token, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'browser-test', version: '1' } } });
  assert.equal(init.response.status, 200);
  const session = init.response.headers.get('mcp-session-id');
  const list = await rpc(origin, token, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
  const search = list.json.result.tools.find((tool) => tool.name === 'search');
  const workId = journal(home, 'facet', 'list').split('\n').find((line) => / work /.test(line)).split(' ')[0];
  assert.deepEqual(search.inputSchema.properties.facet.enum, [workId], 'the grant holds only the chosen facet');
});
