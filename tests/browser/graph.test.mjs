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
  // More around Ada: the same note again (another type, and back the other way, untyped), notes
  // pointing at her, and ones she points to: one node per item, an arrowhead for each direction.
  await call('connect', { from: 'Projects/Atlas/Atlas.md', to: 'Ada Okafor', type: 'cites' });
  await call('connect', { from: 'Ada Okafor', to: 'Projects/Atlas/Atlas.md' });
  for (const note of ['Inbox.md', 'Ideas.md', 'Projects/Atlas/retro.md', 'Projects/Atlas/dashboards.md']) {
    await call('connect', { from: note, to: 'Ada Okafor' });
  }
  for (const note of ['Quotes.md', 'Projects/Bindery/suppliers.md', 'Projects/half-marathon.md']) {
    await call('connect', { from: 'Ada Okafor', to: note, type: 'mentioned-in-the-long-weekly-review' });
  }
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
  // One node and one line per item however many connections it shares with Ada.
  assert.equal(await page.locator('svg.neighbourhood circle').count(), 8);
  assert.equal(await page.locator('svg.neighbourhood line').count(), 8);
  assert.match(await page.textContent("svg.neighbourhood"), /cites, sponsor|sponsor, cites/);
  // Every line has an arrowhead; the note connected both ways, one at each end.
  const markers = await page.$$eval('svg.neighbourhood line', (lines) => lines.map((line) =>
    [line.getAttribute('marker-start') ? 'start' : '', line.getAttribute('marker-end') ? 'end' : ''].join('')));
  assert.ok(markers.every((m) => m !== ''), JSON.stringify(markers));
  assert.equal(markers.filter((m) => m === 'startend').length, 1, JSON.stringify(markers));
  // As the browser lays it out: no line passes through any text's box.
  const crossings = await page.$$eval('svg.neighbourhood', ([svg]) => {
    const boxes = [...svg.querySelectorAll('text')].map((text) => ({ text: text.textContent, box: text.getBBox() }));
    const found = [];
    for (const line of svg.querySelectorAll('line')) {
      const [x1, y1, x2, y2] = ['x1', 'y1', 'x2', 'y2'].map((a) => Number(line.getAttribute(a)));
      for (const { text, box } of boxes) {
        // Sample the segment finely: a point inside a text's box is a crossing.
        for (let i = 0; i <= 200; i++) {
          const x = x1 + (x2 - x1) * i / 200;
          const y = y1 + (y2 - y1) * i / 200;
          if (x > box.x && x < box.x + box.width && y > box.y && y < box.y + box.height) {
            found.push(`${text} at ${x.toFixed(0)},${y.toFixed(0)}`);
            break;
          }
        }
      }
    }
    return found;
  });
  assert.deepEqual(crossings, [], 'no line through a label');
  // The search box is styled like the app's other fields.
  const field = await page.$eval('input#item', (input) => getComputedStyle(input).borderRadius);
  assert.equal(field, '8px');
  await page.screenshot({ path: join(ARTIFACTS, 'graph-item.png'), fullPage: true });

  // The picture links to the neighbour's page.
  await page.click('svg.neighbourhood a:has-text("Project Atlas") text');
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
  assert.doesNotMatch(readFileSync(join(home, 'graph.jsonl'), 'utf8'), new RegExp(connection));
  assert.deepEqual(problems, [], 'no script errors and no CSP violations');
});
