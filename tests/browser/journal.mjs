// What the browser tests share: where the binary, Chromium and the screenshots are, running the CLI,
// starting `journal serve` on an ephemeral port, and one MCP request.

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const ROOT = resolve(import.meta.dirname, '..', '..');
export const JOURNAL = process.env.JOURNAL_BIN ?? join(ROOT, 'target', 'debug', 'journal');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = process.env.ARTIFACTS ?? join(ROOT, 'artifacts', 'browser');
// Chromium as this machine's probe runs it: no sandbox as root, and no background traffic.
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Runs the CLI on the journal in `dir`; answers its standard output. */
export function journal(dir, ...args) {
  return execFileSync(JOURNAL, ['--journal', dir, ...args], { encoding: 'utf8' });
}

/** Starts `journal serve` on an ephemeral port; resolves with its origin, its address and the process. */
export function serve(dir) {
  const child = spawn(JOURNAL, ['--journal', dir, 'serve', '--local-addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolvePromise, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`the server printed no address: ${seen}`)), 20_000);
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = /at (http:\/\/(127\.0\.0\.1:\d+))\/mcp/.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolvePromise({ origin: match[1], addr: match[2], child });
      }
    });
    child.on('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
}

/** One MCP request with a bearer credential (and a session, once there is one); resolves with the
 *  HTTP response and its JSON body (null when there is none). */
export async function rpc(origin, token, body, session) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (session) Object.assign(headers, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' });
  const response = await fetch(`${origin}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  return { response, json: text ? JSON.parse(text) : null };
}

/** A small demo journal with one key (`nightly-script`), served, and a headless Chromium; all of it
 *  is stopped and removed when the test `t` ends. */
export async function sampleApp(t, prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(ARTIFACTS, { recursive: true });
  execFileSync(JOURNAL, ['demo', join(dir, 'journal'), '--days', '3', '--segments-per-day', '2']);
  const home = join(dir, 'journal');
  journal(home, 'mcp', 'token', 'create', '--label', 'nightly-script');
  const { origin, addr, child } = await serve(home);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  t.after(async () => {
    await browser.close();
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });
  return { home, origin, addr, browser };
}
