// The graph in the owner app, in a real browser (headless Chromium, playwright-core): an agent
// connects a note to a person over MCP and writes its note; the owner finds the person, sees the
// neighbourhood the server drew (an inline SVG, no script, under the page's strict CSP), follows
// the picture to the note's page, writes the owner's own note beside the agent's, and removes the
// connection. Screenshots go to artifacts/.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, journal, rpc, sampleApp } from './journal.mjs';

test('the owner sees an item\'s neighbourhood and overrides a connection in a real browser', async (t) => {
  const { home, origin, addr, browser } = await sampleApp(t, 'journal-graph-');
  const key = journal(home, 'mcp', 'token', 'create', '--label', 'researcher').trim().split('\n').pop();
  journal(home, 'mcp', 'permission', 'set', '--token', 'researcher', '--category', 'notes', '--category', 'entities',
    '--category', 'graph', '--write', 'force');
  const init = await rpc(origin, key, {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'graph-browser-test', version: '1' } },
  });
  const session = init.response.headers.get('mcp-session-id');
  let id = 1;
  const call = async (name, args) => {
    const reply = await rpc(origin, key, { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }, session);
    assert.equal(reply.json.result.isError, false, JSON.stringify(reply.json.result));
    return reply.json.result.structuredContent;
  };
  const made = await call('connect', { from: 'Projects/Atlas/Atlas.md', to: 'Ada Okafor', type: 'sponsor' });
  const connection = made.connection.id;
  await call('write_connection_note', { id: connection, text: 'The overview names her as sponsor.' });

  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(String(error)));
  page.on('console', (message) => { if (message.type() === 'error') problems.push(message.text()); });
  const link = journal(home, 'app', '--no-open', '--local-addr', addr).trim().split('\n').pop();
  await page.goto(link);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/app\/[A-Za-z0-9_-]{22}\/$/);

  await page.click('nav a:has-text("Graph")');
  await page.fill('input#item', 'Ada Okafor');
  await page.click('button:has-text("Show")');
  await page.waitForSelector('svg.neighbourhood');
  assert.equal(await page.textContent('h1'), 'Ada Okafor');
  const picture = await page.$('svg.neighbourhood');
  const box = await picture.boundingBox();
  assert.ok(box.width > 300 && box.height > 150, `the picture is drawn: ${JSON.stringify(box)}`);
  assert.equal(await page.locator('svg.neighbourhood line').count(), 1);
  assert.match(await page.textContent('svg.neighbourhood'), /sponsor/);
  await page.screenshot({ path: join(ARTIFACTS, 'graph-item.png'), fullPage: true });

  // The picture links to the neighbour's page.
  await page.click('svg.neighbourhood a text');
  await page.waitForURL(/item=note%3AProjects\/Atlas\/Atlas\.md/);
  assert.equal(await page.textContent('h1'), 'Project Atlas');

  await page.fill(`textarea#note-${connection}`, 'Confirmed with her on Monday.');
  await page.click(`form[action$="/graph/${connection}/note"] button`);
  await page.waitForSelector('.notice');
  const notes = await page.textContent(`#${connection} .notes`);
  assert.match(notes, /agent:researcher/);
  assert.match(notes, /owner/);
  const file = readFileSync(join(home, 'graph.jsonl'), 'utf8');
  assert.match(file, /"author":"owner","text":"Confirmed with her on Monday\."/);
  assert.match(file, /"author":"agent:researcher","text":"The overview names her as sponsor\."/);

  await page.click(`form[action$="/graph/${connection}/disconnect"] button`);
  await page.waitForSelector('.notice');
  assert.match(await page.textContent('.notice'), /Removed/);
  assert.equal(readFileSync(join(home, 'graph.jsonl'), 'utf8'), '');
  assert.deepEqual(problems, [], 'no script errors and no CSP violations');
});
