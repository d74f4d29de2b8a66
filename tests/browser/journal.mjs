// What the browser tests share: where the binary, Chromium and the screenshots are, running the CLI,
// and starting `journal serve` on an ephemeral port.

import { spawn, execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';

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
