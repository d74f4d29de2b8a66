// What the client tests share: the journal binary and the installed clients, a demo journal served on
// an ephemeral loopback port, a sandbox per client (its own HOME, CODEX_HOME, XDG dirs, a BROWSER
// script that hands the sign-in URL to the test, telemetry and update checks off), running a client
// with a bounded time, and the owner's part of a sign-in on the consent page.

import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import assert from 'node:assert/strict';
import http from 'node:http';

const ROOT = resolve(import.meta.dirname, '..', '..');
export const JOURNAL = process.env.JOURNAL_BIN ?? join(ROOT, 'target', 'debug', 'journal');
const BIN = join(import.meta.dirname, 'node_modules', '.bin');
export const CLAUDE = join(BIN, 'claude');
export const CODEX = join(BIN, 'codex');
export const GEMINI = join(BIN, 'gemini');

/** Runs the CLI on the journal in `dir`; answers its standard output. */
export function journal(dir, ...args) {
  return execFileSync(JOURNAL, ['--journal', dir, ...args], { encoding: 'utf8', timeout: 30_000 });
}

/** Starts `journal serve` on an ephemeral port; resolves with its origin and the process. */
function serve(dir) {
  const child = spawn(JOURNAL, ['--journal', dir, 'serve', '--local-addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk) => { log = (log + chunk).slice(-20_000); });
  return new Promise((resolvePromise, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`the server printed no address: ${seen}`)), 20_000);
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = /at (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(seen);
      if (match) {
        clearTimeout(timer);
        resolvePromise({ origin: match[1], child, log: () => log });
      }
    });
    child.on('exit', (code) => reject(new Error(`the server exited with ${code}: ${log}`)));
  });
}

/** A demo journal, served; stopped and removed when the test `t` ends. */
export async function servedJournal(t) {
  const dir = mkdtempSync(join(tmpdir(), 'journal-clients-'));
  const home = join(dir, 'journal');
  execFileSync(JOURNAL, ['demo', home, '--days', '3', '--segments-per-day', '3'], { timeout: 60_000 });
  const { origin, child, log } = await serve(home);
  t.after(() => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });
  return { home, origin, url: `${origin}/mcp`, serverLog: log };
}

/** A fresh home for one client: an empty HOME with a working folder, and an environment made from
 *  scratch (nothing of the caller's configuration or credentials leaks in). BROWSER is a script
 *  that appends the URL it is given to a file, read with `browserUrl()`. */
export function sandbox(t, name) {
  const home = mkdtempSync(join(tmpdir(), `journal-${name}-`));
  const work = join(home, 'work');
  const codexHome = join(home, '.codex');
  for (const d of [work, codexHome, join(home, '.config'), join(home, '.cache'), join(home, '.local', 'share'), join(home, '.local', 'state')]) {
    mkdirSync(d, { recursive: true });
  }
  const urls = join(home, 'browser-urls');
  const browser = join(home, 'browser.sh');
  writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${urls}'\n`);
  chmodSync(browser, 0o755);
  const env = {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    BROWSER: browser,
    NO_COLOR: '1',
    // Claude Code: no update, telemetry, error reports or other background traffic; its API origin
    // on loopback, so even its preconnect stays on this machine.
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    // Gemini CLI (its settings.json turns off updates and usage statistics too).
    GEMINI_TELEMETRY_ENABLED: 'false',
    // Codex (its config.toml turns off update checks, analytics and plugin sync).
    CODEX_HOME: codexHome,
  };
  // Whatever the test started in this home is stopped before the home is removed.
  const children = [];
  t.after(() => {
    for (const child of children) child.stop();
    rmSync(home, { recursive: true, force: true });
  });
  /** Starts a client in this home (see `start`); it is stopped when the test ends. */
  function startHere(command, args, { env: extra = {}, stdin } = {}) {
    const child = start(command, args, { env: { ...env, ...extra }, cwd: work, stdin });
    children.push(child);
    return child;
  }
  /** Runs a client in this home to its end (killed after `timeoutMs`): its code and output. */
  function runHere(command, args, { env: extra, timeoutMs } = {}) {
    return finish(startHere(command, args, { env: extra }), timeoutMs);
  }
  /** The URL the client last handed to the browser; waits for one (bounded). */
  async function browserUrl(what, timeoutMs = 30_000) {
    return waitFor(() => existsSync(urls) && readFileSync(urls, 'utf8').trim().split('\n').pop(), timeoutMs, what);
  }
  /** Every URL the client handed to the browser so far. */
  function browserUrls() {
    return existsSync(urls) ? readFileSync(urls, 'utf8').trim().split('\n') : [];
  }
  return { home, work, codexHome, env, browserUrl, browserUrls, start: startHere, run: runHere };
}

/** Polls `probe` until it answers something truthy; throws after `timeoutMs` with `what` and the
 *  output of `output()`, when given. */
export async function waitFor(probe, timeoutMs, what, output = () => '') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts a client in its own process group; its output is collected. `stop()` ends the whole group. */
export function start(command, args, { env, cwd, stdin = 'ignore' } = {}) {
  const child = spawn(command, args, { env, cwd, detached: true, stdio: [stdin, 'pipe', 'pipe'] });
  const run = { command: [command, ...args].join(' '), stdout: '', stderr: '', code: undefined, signal: undefined, child };
  child.stdout.on('data', (chunk) => { run.stdout += chunk; });
  child.stderr.on('data', (chunk) => { run.stderr += chunk; });
  run.exited = new Promise((r) => child.on('close', (code, signal) => { run.code = code; run.signal = signal; r(run); }));
  run.stop = () => {
    if (run.code === undefined && run.signal === undefined) {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    }
  };
  run.report = () => report(run);
  return run;
}

/** Waits for a started client to end, killing it after `timeoutMs`; resolves with its code and output. */
async function finish(child, timeoutMs = 60_000) {
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; child.stop(); }, timeoutMs);
  const result = await child.exited;
  clearTimeout(timer);
  result.timedOut = timedOut;
  return result;
}

/** A client's run, for an assertion message. */
export function report(result) {
  const how = result.timedOut ? 'was killed after its time limit' : `exited with ${result.code ?? result.signal}`;
  return `$ ${result.command}\n(${how})\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/** The output's lines, without trailing spaces and carriage returns. */
export function lines(text) {
  return text.split('\n').map((line) => line.replace(/\r/g, '').trimEnd());
}

/** One request as the owner's browser makes it when it navigates (`Sec-Fetch-Mode: navigate`, as
 *  the journal requires of a page that starts a sign-in); resolves with status, headers and text. */
function navigate(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolvePromise, reject) => {
    const request = http.request(url, {
      method,
      headers: { accept: 'text/html', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', ...headers },
      timeout: 20_000,
    }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { text += chunk; });
      response.on('end', () => resolvePromise({ status: response.statusCode, headers: response.headers, text }));
    });
    request.on('timeout', () => request.destroy(new Error(`no answer from ${url} within 20 s`)));
    request.on('error', reject);
    request.end(body);
  });
}

/** The owner in the browser: opens the authorization URL, checks that the consent page names
 *  `client`, types the pairing code with the given categories (the whole journal), approves,
 *  and answers the client's callback URL from the 303. */
export async function ownerApproves(authorizeUrl, { client, pairing, categories = [], write = 'none' }) {
  const page = await navigate(authorizeUrl);
  assert.equal(page.status, 200, `the consent page for ${authorizeUrl}:\n${page.text}`);
  assert.ok(page.text.includes(`<h1>${client} wants to connect to your journal</h1>`), `the consent page names ${client}:\n${page.text}`);
  const field = (name) => {
    const match = new RegExp(`name="${name}" value="([^"]+)"`).exec(page.text);
    assert.ok(match, `the consent page has the hidden field ${name}:\n${page.text}`);
    return match[1];
  };
  const origin = new URL(authorizeUrl).origin;
  const form = new URLSearchParams({ pending: field('pending'), csrf: field('csrf'), pairing_code: pairing, scope: 'journal', decision: 'approve', write });
  for (const category of categories) form.append('category', category);
  const answer = await navigate(`${origin}/authorize`, {
    method: 'POST', body: form.toString(),
    headers: { origin, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
  });
  assert.equal(answer.status, 303, answer.text);
  const back = new URL(answer.headers.location);
  assert.equal(back.searchParams.get('iss'), origin);
  assert.match(back.searchParams.get('code') ?? '', /^jac_/, `the callback carries a code: ${back}`);
  return back;
}

/** The browser following the redirect to the client's loopback callback: answers status and text. */
export function visitCallback(callback) {
  return navigate(callback.href, { headers: { 'sec-fetch-site': 'cross-site' } });
}

/** Codex's app-server (JSON-RPC, one message a line, on stdio): `request` sends and resolves with
 *  the answer to it (bounded), `stop` ends it. */
export function codexAppServer(box) {
  const server = box.start(CODEX, ['app-server'], { stdin: 'pipe' });
  const answers = new Map();
  let pending = '';
  server.child.stdout.on('data', (chunk) => {
    pending += chunk;
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      let message;
      try { message = JSON.parse(line); } catch { continue; }
      if (message.id !== undefined && !message.method) answers.get(message.id)?.(message);
    }
  });
  let next = 0;
  return {
    report: server.report,
    stop: server.stop,
    notify(method, params) {
      server.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
    },
    request(method, params, timeoutMs = 60_000) {
      const id = ++next;
      const answer = new Promise((resolvePromise, reject) => {
        const timer = setTimeout(() => reject(new Error(`codex app-server did not answer ${method} within ${timeoutMs} ms\n${server.report()}`)), timeoutMs);
        answers.set(id, (message) => { clearTimeout(timer); resolvePromise(message); });
      });
      server.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return answer;
    },
  };
}

/** A stand-in for the Gemini API on loopback (Gemini CLI reaches it with GEMINI_API_KEY and
 *  GOOGLE_GEMINI_BASE_URL): no model, a script. Each `streamGenerateContent` request is answered with
 *  the parts `turn(request)` returns (a functionCall, or text); the one-shot `generateContent` calls
 *  Gemini CLI makes on the side (its model router) get a fixed JSON answer. `requests` holds every
 *  request body, parsed. Stopped when the test `t` ends. */
export async function scriptedGeminiApi(t, turn) {
  const requests = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      let parsed = {};
      try { parsed = JSON.parse(body || '{}'); } catch { /* answered as an empty request */ }
      requests.push({ url: request.url, body: parsed });
      const streaming = request.url.includes(':streamGenerateContent');
      const parts = streaming ? turn(parsed) : [{ text: '{"complexity_reasoning":"scripted","complexity_score":10}' }];
      const answer = {
        candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
      };
      if (streaming) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(`data: ${JSON.stringify(answer)}\r\n\r\n`);
      } else {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(answer));
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => { server.close(); server.closeAllConnections(); });
  return { url: `http://127.0.0.1:${server.address().port}`, requests };
}

/** The function names a Gemini API request offers the model. */
export function declaredFunctions(request) {
  return (request.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((f) => f.name));
}

/** A loopback port nothing listens on now (bound, then let go): for a server that must come back at
 *  the same address after a restart. */
export async function freePort() {
  const server = http.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

/** `journal serve --demo --local-addr 127.0.0.1:PORT` as a new user runs it, with HOME and XDG_DATA_HOME
 *  in `userHome` (so the sample journal lands in its data folder). Resolves, once the server printed
 *  "press Ctrl-C to stop" (bounded), with what it printed and `stop()`, which sends SIGTERM and resolves
 *  with its exit code (SIGKILL after 20 s). Stopped when the test `t` ends. */
export function serveDemo(t, userHome, port) {
  const env = { PATH: process.env.PATH, LANG: 'C.UTF-8', HOME: userHome, XDG_DATA_HOME: join(userHome, '.local', 'share') };
  const child = spawn(JOURNAL, ['serve', '--demo', '--local-addr', `127.0.0.1:${port}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let log = '';
  child.stdout.on('data', (chunk) => { out += chunk; });
  child.stderr.on('data', (chunk) => { log = (log + chunk).slice(-20_000); });
  const exited = new Promise((r) => child.on('exit', (code, signal) => r(code ?? signal)));
  const stop = async () => {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  t.after(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve --demo did not finish its banner in 60 s:\n${out}\n${log}`)), 60_000);
    child.stdout.on('data', () => {
      if (out.includes('press Ctrl-C to stop')) {
        clearTimeout(timer);
        resolvePromise({ out, log: () => log, stop });
      }
    });
    exited.then((code) => { clearTimeout(timer); reject(new Error(`serve --demo exited with ${code}:\n${out}\n${log}`)); });
  });
}

/** The command printed under `# CLIENT` in the part of a `serve --demo` banner that starts with `part`. */
export function printedCommand(banner, part, client) {
  const rest = banner.slice(banner.indexOf(part));
  const all = lines(rest);
  const at = all.findIndex((line) => line.trim() === `# ${client}`);
  assert.ok(banner.includes(part) && at >= 0, `the banner has "${part}" and under it "# ${client}":\n${banner}`);
  return all[at + 1].trim();
}
