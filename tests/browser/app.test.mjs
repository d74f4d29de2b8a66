// The owner app in a real browser: headless Chromium (Debian's package) driven by playwright-core.
// A sample journal is served, `journal app` prints a one-time link, and the browser signs in with
// it, reads the overview (with a key the CLI minted), tries the used link again, and signs out.
// Screenshots go to artifacts/.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ARTIFACTS, journal, sampleApp } from './journal.mjs';

test('the owner signs in to the app with a one-time link in a real browser', async (t) => {
  const { home, origin, addr, browser } = await sampleApp(t, 'journal-app-');

  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const refused = await page.goto(`${origin}/app`);
  assert.equal(new URL(page.url()).pathname, '/app/signin', 'no session: sent to the sign-in page');
  assert.equal(refused.status(), 200);
  assert.match(await page.content(), /journal app/);

  const link = journal(home, 'app', '--no-open', '--local-addr', addr).trim().split('\n').pop();
  assert.ok(link.startsWith(`${origin}/app/signin?t=`), link);
  await page.goto(link);
  await page.screenshot({ path: join(ARTIFACTS, 'app-sign-in.png'), fullPage: true });
  await page.click('button[type=submit]');
  // The session's pages are under a place of its own, where its cookie is scoped.
  await page.waitForURL(new RegExp(`^${origin.replace(/\./g, '\\.')}/app/[A-Za-z0-9_-]{22}/$`));
  const base = new URL(page.url()).pathname.replace(/\/$/, '');
  const cookies = await page.context().cookies();
  assert.deepEqual(cookies.map((c) => c.path), [base], 'the session cookie is sent only to its own pages');
  assert.match(await page.locator('h1').innerText(), /Your journal/);
  assert.match(await page.content(), /nightly-script/);
  await page.screenshot({ path: join(ARTIFACTS, 'app-overview.png'), fullPage: true });

  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  const again = await phone.goto(link);
  assert.equal(again.status(), 403, 'a used link does not sign in a second browser');
  await phone.close();

  await page.click('nav button[type=submit]');
  await page.waitForLoadState();
  assert.match(await page.content(), /You are signed out/);
  await page.goto(`${origin}/app`);
  assert.equal(new URL(page.url()).pathname, '/app/signin', 'signed out: the session is gone');
});
