// A small header-adding proxy for the MCP conformance suite, which cannot send an Authorization
// header: it forwards every request to the journal with `Authorization: Bearer <key>` added. A
// loopback Host is rewritten to the journal's own port (the suite only knows the proxy's); any other
// Host is passed through untouched, so the DNS rebinding scenario still reaches the journal's guard.

import http from 'node:http';

export function startProxy(target, initialKey) {
  const upstream = new URL(target);
  let key = initialKey;
  const server = http.createServer((request, response) => {
    const headers = { ...request.headers, authorization: `Bearer ${key}` };
    const host = (request.headers.host ?? '').toLowerCase();
    const name = host.replace(/:\d+$/, '');
    if (['localhost', '127.0.0.1', '[::1]'].includes(name)) headers.host = `${name}:${upstream.port}`;
    // One request per connection is enough for the suite and keeps the proxy trivial.
    headers.connection = 'close';
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers },
      (answer) => {
        response.writeHead(answer.statusCode, answer.headers);
        answer.pipe(response);
      },
    );
    forward.on('error', (error) => {
      response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(`proxy: ${error.message}`);
    });
    request.pipe(forward);
  });
  const setKey = (next) => { key = next; };
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port, setKey })));
}
