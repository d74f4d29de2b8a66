// Managing access from the owner app in a real browser: headless Chromium (Debian's package) driven
// by playwright-core. The owner signs in with a fresh link, makes a pairing code (its countdown
// runs under the page's script nonce), mints a key (shown once, with copy buttons), narrows the
// key's grant and sees its MCP tool list change in an open session, reads the activity page, and
// revokes the key, whose next request is refused. Every page is saved as a screenshot in artifacts/.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ARTIFACTS, journal, rpc, sampleApp } from './journal.mjs';

/** An MCP session for `key`: initialize, then list the tools' names and schemas. */
async function mcpSession(origin, key) {
  const init = await rpc(origin, key, {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'app-browser-test', version: '1' } },
  });
  assert.equal(init.response.status, 200);
  const session = init.response.headers.get('mcp-session-id');
  let id = 1;
  return {
    async tools() {
      const list = await rpc(origin, key, { jsonrpc: '2.0', id: ++id, method: 'tools/list' }, session);
      return { status: list.response.status, tools: list.json?.result?.tools ?? [] };
    },
    async call(name, args) {
      const call = await rpc(origin, key, { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }, session);
      assert.equal(call.response.status, 200);
      return call.json.result;
    },
  };
}

test('the owner connects, mints, narrows and revokes from the app in a real browser', async (t) => {
  const { home, origin, addr, browser } = await sampleApp(t, 'journal-app-manage-');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const scriptErrors = [];
  page.on('console', (message) => { if (message.type() === 'error') scriptErrors.push(message.text()); });
  page.on('pageerror', (error) => scriptErrors.push(String(error)));

  // Sign in with a fresh link.
  const link = journal(home, 'app', '--no-open', '--local-addr', addr).trim().split('\n').pop();
  await page.goto(link);
  await page.click('button[type=submit]');
  await page.waitForURL(new RegExp(`^${origin.replace(/\./g, '\\.')}/app/[A-Za-z0-9_-]{22}/$`));
  // The session's own place: every page of the app is under it.
  const app = `${origin}${new URL(page.url()).pathname.replace(/\/$/, '')}`;

  // Connect an agent: make a pairing code; the countdown runs.
  await page.click('nav >> text=Connect an agent');
  await page.waitForURL(`${app}/connect`);
  assert.match(await page.locator('#address').innerText(), new RegExp(`^${origin.replace(/\./g, '\\.')}/mcp$`));
  await page.click('form[action$="/connect/code"] button');
  const code = (await page.locator('#pairing-code').innerText()).trim();
  assert.match(code, /^[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
  await page.waitForFunction(() => /\d+:\d\d left/.test(document.querySelector('[data-seconds]').textContent));
  assert.ok(await page.locator('button[data-copy="address"]').isVisible(), 'copy buttons appear when the script runs');
  await page.screenshot({ path: join(ARTIFACTS, 'app-connect.png'), fullPage: true });
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  await phone.context().addCookies(await context.cookies());

  // Mint a key: shown once, with the lines that use it.
  await page.click('nav >> text=Connections');
  await page.fill('form[action$="/connections/mint"] input[name=label]', 'browser-key');
  await page.click('form[action$="/connections/mint"] button');
  const key = (await page.locator('#key').innerText()).trim();
  assert.match(key, /^jk_[A-Za-z0-9_-]{43}$/);
  assert.ok(await page.locator('button[data-copy="key"]').isVisible());
  await page.screenshot({ path: join(ARTIFACTS, 'app-key-minted.png'), fullPage: true });

  const agent = await mcpSession(origin, key);
  const before = await agent.tools();
  assert.equal(before.status, 200);
  assert.deepEqual(before.tools.map((tool) => tool.name).sort(), ['list_facets', 'recall_memory', 'save_memory']);

  // Edit its grant: transcripts and entities, in one facet only.
  await page.click('text=Choose what it may see');
  await page.check('input[name=category][value=transcripts]');
  await page.check('input[name=category][value=entities]');
  await page.check('input[name=scope][value=facets]');
  const firstFacet = page.locator('input[name=facet]').first();
  const facetId = await firstFacet.getAttribute('value');
  await firstFacet.check();
  await page.click('form[action$="/grant"] button[type=submit]');
  await page.waitForURL(/notice=saved/);
  assert.match(await page.locator('.notice').innerText(), /Saved/);
  assert.match(await page.locator('.tools').innerText(), /get_transcript/);
  await page.screenshot({ path: join(ARTIFACTS, 'app-connection.png'), fullPage: true });

  const after = await agent.tools();
  const names = after.tools.map((tool) => tool.name);
  for (const name of ['search', 'list_transcripts', 'get_transcript', 'list_entities', 'get_entity']) {
    assert.ok(names.includes(name), `${name} is offered after the change: ${names}`);
  }
  const listEntities = after.tools.find((tool) => tool.name === 'list_entities');
  assert.deepEqual(listEntities.inputSchema.properties.facet.enum, [facetId], 'only the chosen facet');
  const searched = await agent.call('search', { query: 'the' });
  assert.equal(searched.isError, false);
  assert.equal((await agent.call('list_transcripts', {})).isError, false);
  assert.equal((await agent.call('list_entities', {})).isError, false);
  assert.equal((await agent.call('fetch', { reference: 'forged' })).isError, true, 'a forged reference is refused');
  // A refusal whose detail holds one long unbroken word (as a hash does): an unknown argument's name.
  const long = `f${'0123456789abcdef'.repeat(5)}`;
  assert.equal((await agent.call('search', { query: 'the', [long]: 1 })).isError, true);

  // The connections list and the activity log show it.
  await page.click('nav >> text=Connections');
  assert.match(await page.locator('table').innerText(), /browser-key[\s\S]*transcripts and entities in \w+/);
  await page.screenshot({ path: join(ARTIFACTS, 'app-connections.png'), fullPage: true });
  await page.click('nav >> text=Activity');
  await page.waitForURL(`${app}/activity`);
  assert.equal(await page.locator('svg.chart').count(), 2);
  assert.match(await page.locator('table').innerText(), /browser-key\s+search/);
  await page.selectOption('select[name=outcome]', 'refused');
  await page.click('form[action$="/activity"] button');
  await page.waitForURL(/outcome=refused/);
  const refusedRows = await page.locator('table tr').allInnerTexts();
  assert.equal(refusedRows.length, 3, `the header and the two refused calls: ${refusedRows}`);
  assert.match(refusedRows[1], /browser-key\s+search\s+refused\s+invalid arguments/);
  assert.match(refusedRows[2], /browser-key\s+fetch\s+refused/);
  await page.selectOption('select[name=outcome]', 'error');
  await page.click('form[action$="/activity"] button');
  await page.waitForURL(/outcome=error/);
  assert.match(await page.content(), /No calls match these filters/);
  await page.click('text=Clear filters');
  await page.waitForURL(`${app}/activity`);
  await page.screenshot({ path: join(ARTIFACTS, 'app-activity.png'), fullPage: true });
  // A long detail wraps inside its cell: the table fits its card, with no scrolling sideways.
  const sideways = await page.evaluate(() => [...document.querySelectorAll('.scroll')]
    .map((box) => box.scrollWidth - box.clientWidth));
  assert.ok(sideways.every((extra) => extra <= 0), `the activity table fits its card at 1280px: ${sideways}`);

  // The connect page's command lines break only between words (a word longer than the box aside).
  await page.click('nav >> text=Connect');
  const broken = await page.evaluate(() => {
    const split = [];
    for (const box of document.querySelectorAll('pre.line')) {
      const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      for (let text = walker.nextNode(); text; text = walker.nextNode()) {
        let at = 0;
        for (const word of text.data.split(' ')) {
          const range = document.createRange();
          range.setStart(text, at);
          range.setEnd(text, at + word.length);
          const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
          if (lines.size > 1) split.push(word);
          at += word.length + 1;
        }
      }
    }
    return split;
  });
  assert.deepEqual(broken, [], 'no word of a command line is broken across two lines');
  // What the Copy button copies is the command as written.
  const claude = await page.evaluate(() => document.getElementById('client-1').textContent);
  assert.match(claude, /^claude mcp add --scope user --transport http journal http:\/\/127\.0\.0\.1:\d+\/mcp$/);

  for (const [path, name] of [['/connect', 'connect'], ['/activity', 'activity'], ['/connections', 'connections']]) {
    await phone.goto(`${app}${path}`);
    await phone.screenshot({ path: join(ARTIFACTS, `app-${name}-phone.png`), fullPage: true });
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${path} fits a phone's width (overflow ${overflow}px)`);
  }

  // Revoke it: its next request is refused.
  await page.click('nav >> text=Connections');
  await page.click('text=browser-key');
  await page.click('form[action$="/revoke"] button');
  await page.waitForURL(/notice=revoked/);
  assert.match(await page.locator('.notice').innerText(), /Revoked/);
  assert.doesNotMatch(await page.locator('table').innerText(), /browser-key/);
  const revoked = await agent.tools();
  assert.equal(revoked.status, 401, 'a revoked key is refused at once');
  assert.deepEqual(scriptErrors, [], 'no script errors, and nothing blocked by the page policy');
});
