// The conformance suite's test server (crates/mcp/examples/fixture: the suite's fixture tools,
// prompts and resources served by journal-mcp's own transport and dispatch), for the scenarios that
// need them. `cargo test` builds it (so does `cargo build --examples`); FIXTURE_BIN names another.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');
export const FIXTURE = process.env.FIXTURE_BIN ?? join(ROOT, 'target', 'debug', 'examples', 'fixture');

/** Starts the fixture server; resolves with its /mcp URL, its key and the process. */
export function startFixture() {
  if (!existsSync(FIXTURE)) {
    throw new Error(`the fixture server is not built at ${FIXTURE}: run cargo test (or cargo build --examples) first`);
  }
  const child = spawn(FIXTURE, [], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((done, fail) => {
    let seen = '';
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = /fixture at (http:\/\/127\.0\.0\.1:\d+\/mcp) key (\S+)/.exec(seen);
      if (match) done({ url: match[1], key: match[2], child });
    });
    child.on('error', fail);
    child.on('exit', (code) => fail(new Error(`the fixture server exited with ${code}`)));
  });
}
