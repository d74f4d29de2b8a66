// The owner's review of agents' proposals, and undo, in a real browser: headless Chromium (Debian's
// package) driven by playwright-core. A key in propose mode suggests three changes over MCP; the
// owner sees them on the overview and the proposals page, accepts one, rejects one with a reason
// (the agent reads both outcomes), sees the conflict of one whose note changed since, is refused
// when the note changes again under the page, accepts it onto the current note, and undoes an
// accepted change from its note's history. Screenshots go to artifacts/.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, journal, rpc, sampleApp } from './journal.mjs';

/** An MCP session for `key` that calls tools and answers their structured results. */
async function mcpSession(origin, key) {
  const init = await rpc(origin, key, {
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'proposals-browser-test', version: '1' } },
  });
  assert.equal(init.response.status, 200);
  const session = init.response.headers.get('mcp-session-id');
  let id = 1;
  return async (name, args) => {
    const call = await rpc(origin, key, { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }, session);
    assert.equal(call.response.status, 200);
    assert.equal(call.json.result.isError, false, JSON.stringify(call.json.result));
    return call.json.result.structuredContent;
  };
}

/** A key labelled `label` granted notes with the write mode `write`, and an MCP session for it. */
async function writer(home, origin, label, write) {
  const key = journal(home, 'mcp', 'token', 'create', '--label', label).trim().split('\n').pop();
  journal(home, 'mcp', 'permission', 'set', '--token', label, '--category', 'notes', '--write', write);
  return mcpSession(origin, key);
}

/** The owner signed in to the app in a new browser page, through a fresh sign-in link: answers the
 *  page, the app's base URL and the script errors the page raises. */
async function signedIn(browser, home, origin, addr) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const scriptErrors = [];
  page.on('pageerror', (error) => scriptErrors.push(String(error)));
  const link = journal(home, 'app', '--no-open', '--local-addr', addr).trim().split('\n').pop();
  await page.goto(link);
  await page.click('button[type=submit]');
  await page.waitForURL(new RegExp(`^${origin.replace(/\./g, '\\.')}/app/[A-Za-z0-9_-]{22}/$`));
  const app = `${origin}${new URL(page.url()).pathname.replace(/\/$/, '')}`;
  return { page, app, scriptErrors };
}

test('the owner accepts, rejects, resolves a conflict and undoes agents\' changes in a real browser', async (t) => {
  const { home, origin, addr, browser } = await sampleApp(t, 'journal-proposals-');
  const notes = join(home, 'notes');
  const call = await writer(home, origin, 'helper', 'propose');
  const inbox = readFileSync(join(notes, 'Inbox.md'), 'utf8');
  const quotes = readFileSync(join(notes, 'Quotes.md'), 'utf8');

  const a = await call('note_append', { path: 'Inbox.md', text: '- buy linseed oil' });
  const b = await call('note_append', { path: 'Ideas.md', text: '- a kiln in the garden' });
  const c = await call('note_write', { path: 'Quotes.md', body: '# Quotes\n\nOnly one now.\n' });
  for (const proposed of [a, b, c]) assert.equal(proposed.status, 'proposed');
  assert.equal(readFileSync(join(notes, 'Inbox.md'), 'utf8'), inbox, 'a proposal changes nothing');

  const { page, app, scriptErrors } = await signedIn(browser, home, origin, addr);
  assert.match(await page.locator('.stat', { hasText: 'for your review' }).innerText(), /^3\s/);

  // The list: grouped by connection, each with its diff.
  await page.click('nav >> text=Proposals');
  await page.waitForURL(`${app}/proposals`);
  assert.equal(await page.locator('article.proposal').count(), 3);
  const first = page.locator(`#proposal-${a.proposal_id}`);
  assert.match(await first.locator('pre.diff .add').innerText(), /\+- buy linseed oil/);
  await page.screenshot({ path: join(ARTIFACTS, 'app-proposals.png'), fullPage: true });

  // Accept one: the change is made.
  await first.locator('button', { hasText: 'Accept' }).click();
  await page.waitForURL(/notice=accepted/);
  assert.match(await page.locator('.notice').innerText(), /Accepted/);
  assert.ok(readFileSync(join(notes, 'Inbox.md'), 'utf8').endsWith('- buy linseed oil'));

  // Reject one with a reason: nothing changes, and the agent reads the outcome.
  const second = page.locator(`#proposal-${b.proposal_id}`);
  await second.locator('input[name=reason]').fill('not this year');
  await second.locator('button', { hasText: 'Reject' }).click();
  await page.waitForURL(/notice=rejected/);
  assert.doesNotMatch(readFileSync(join(notes, 'Ideas.md'), 'utf8'), /kiln/);
  const mine = await call('my_proposals', {});
  const outcome = Object.fromEntries(mine.proposals.map((p) => [p.proposal_id, p]));
  assert.equal(outcome[a.proposal_id].status, 'accepted');
  assert.equal(outcome[b.proposal_id].status, 'rejected');
  assert.equal(outcome[b.proposal_id].reason, 'not this year');

  // The owner edits the third one's note: the page shows the conflict and the change against it now.
  writeFileSync(join(notes, 'Quotes.md'), `${quotes}\n> A line the owner added.\n`);
  await page.goto(`${app}/proposals`);
  const third = page.locator(`#proposal-${c.proposal_id}`);
  assert.match(await third.locator('.conflict').innerText(), /changed since this was proposed/);
  assert.match(await third.locator('.conflict pre.diff').innerText(), /-> A line the owner added\./);
  assert.equal(await third.locator('button', { hasText: /^Accept$/ }).count(), 0, 'no blind accept');
  await page.screenshot({ path: join(ARTIFACTS, 'app-proposals-conflict.png'), fullPage: true });

  // The note changes again under the open page: accepting onto what the page showed is refused.
  const edited = `${quotes}\n> A second line, saved while the page was open.\n`;
  writeFileSync(join(notes, 'Quotes.md'), edited);
  const refused = page.waitForResponse((r) => r.url().endsWith(`/proposals/${c.proposal_id}/accept`));
  await third.locator('button', { hasText: 'Accept onto the current note' }).click();
  assert.equal((await refused).status(), 409);
  assert.match(await page.locator('.error').innerText(), /changed since/);
  assert.equal(readFileSync(join(notes, 'Quotes.md'), 'utf8'), edited, 'nothing applied blindly');
  // Accepted onto the note as the page now shows it.
  await page.locator(`#proposal-${c.proposal_id} button`, { hasText: 'Accept onto the current note' }).click();
  await page.waitForURL(/notice=accepted/);
  assert.ok(readFileSync(join(notes, 'Quotes.md'), 'utf8').endsWith('# Quotes\n\nOnly one now.\n'));
  assert.match(await page.locator('.empty').innerText(), /No proposals wait/);

  // Undo the accepted append from the note's history.
  await page.click('nav >> text=Changes');
  await page.waitForURL(`${app}/changes`);
  assert.equal(await page.locator('table tr').count(), 3, 'two changes and the header');
  await page.click('a >> text=Inbox.md');
  await page.waitForURL(/\/changes\/note\?path=Inbox\.md$/);
  assert.match(await page.locator('pre.diff').first().innerText(), /\+- buy linseed oil/);
  await page.screenshot({ path: join(ARTIFACTS, 'app-note-history.png'), fullPage: true });
  await page.locator('button', { hasText: /^Undo #/ }).first().click();
  await page.waitForURL(/notice=reverted/);
  assert.equal(readFileSync(join(notes, 'Inbox.md'), 'utf8'), inbox, 'back as it was');
  assert.match(await page.locator('article.version h3').first().innerText(), /by you/);
  assert.deepEqual(scriptErrors, []);
});

test('the owner undoes an agent\'s move and restores its deletion from the trash in a real browser', async (t) => {
  const { home, origin, addr, browser } = await sampleApp(t, 'journal-trash-');
  const notes = join(home, 'notes');
  const call = await writer(home, origin, 'tidier', 'force');
  const ideas = readFileSync(join(notes, 'Ideas.md'), 'utf8');
  const quotes = readFileSync(join(notes, 'Quotes.md'), 'utf8');

  const moved = await call('note_move', { from: 'Ideas.md', to: 'Someday/Ideas later.md' });
  assert.equal(moved.status, 'moved');
  assert.ok(moved.links_updated.length > 0, 'the demo links [[Ideas]] from its hub note');
  const linker = moved.links_updated[0];
  const deleted = await call('note_delete', { path: 'Quotes.md', confirm: true });
  assert.equal(deleted.status, 'deleted');

  const { page, app, scriptErrors } = await signedIn(browser, home, origin, addr);

  // The changes page lists the move and the deletion; the trash holds the deleted note.
  await page.goto(`${app}/changes`);
  assert.match(await page.locator('table').first().innerText(), /moved/);
  const trash = page.locator('#trash');
  assert.match(await trash.innerText(), /Quotes\.md/);
  await page.screenshot({ path: join(ARTIFACTS, 'app-changes-trash.png'), fullPage: true });
  await trash.locator('button', { hasText: 'Restore' }).click();
  await page.waitForURL(/notice=restored/);
  assert.match(await page.locator('.notice').innerText(), /Restored/);
  assert.equal(readFileSync(join(notes, 'Quotes.md'), 'utf8'), quotes, 'back, byte for byte');
  assert.match(await page.locator('#trash').innerText(), /back in place/);

  // Undo the move from the moved note's page: the note and the links go back as they were.
  await page.locator('a', { hasText: 'Someday/Ideas later.md' }).first().click();
  await page.waitForURL(/\/changes\/note\?path=Someday/);
  assert.match(await page.locator('pre.diff').first().innerText(), /rename from Ideas\.md/);
  await page.locator('button', { hasText: /^Undo #/ }).first().click();
  await page.waitForURL(/notice=reverted/);
  assert.equal(readFileSync(join(notes, 'Ideas.md'), 'utf8'), ideas);
  assert.match(readFileSync(join(notes, linker), 'utf8'), /\[\[Ideas\]\]/);
  assert.deepEqual(scriptErrors, []);
});
