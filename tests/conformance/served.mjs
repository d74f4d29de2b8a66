// What both conformance runs (2025 and 2026-07-28) share: the journal's CLI and `journal serve` on an
// ephemeral loopback port.

import { spawn, execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');
export const JOURNAL = process.env.JOURNAL_BIN ?? join(ROOT, 'target', 'debug', 'journal');

/** Runs the CLI on the journal in `dir`; answers its standard output. */
export function journal(dir, ...args) {
  return execFileSync(JOURNAL, ['--journal', dir, ...args], { encoding: 'utf8' });
}

/** Starts `journal serve` on the journal in `dir`; resolves with its /mcp URL and the process. */
export function serve(dir) {
  const child = spawn(JOURNAL, ['--journal', dir, 'serve', '--local-addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((done, fail) => {
    let seen = '';
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen);
      if (match) done({ url: match[1], child });
    });
    child.on('exit', (code) => fail(new Error(`journal serve exited with ${code}`)));
  });
}
