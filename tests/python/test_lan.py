"""The LAN route across a real network: a network namespace joined to this one by a veth pair, each end
with its own private address. `journal serve` runs inside the namespace with the LAN route on (every
private address, as the owner would leave it); the tests are the owner's other device outside it.

The official Python SDK, trusting only the journal's CA, signs in over OAuth with a pairing code for the
lan route and calls a tool. Then what the route refuses: a client that trusts the usual authorities,
TLS 1.2, a foreign Host, a key, a pairing code of the local route, a peer on loopback, the 17th
connection from one device. Needs root (network namespaces); CI runs as root.
"""

import asyncio
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

import httpx
import pytest

from journal_helpers import JOURNAL, MemoryStorage, demo_journal, run, sign_in_and_search

TAG = f"jt{os.getpid() % 100000}"
SUBNET = 10 + os.getpid() % 200
SERVER_IP = f"10.213.{SUBNET}.2"
CLIENT_IP = f"10.213.{SUBNET}.1"
# A second device on the same network, outside the namespace.
OTHER_CLIENT_IP = f"10.213.{SUBNET}.3"
# How long a refusal may take to arrive. The server refuses at once (a socket closed unread, an
# alert); waiting this long and hearing nothing means it is hung, and fails the test.
ANSWER_WITHIN = 4


def ip(*args, netns=None):
    prefix = ["ip", "netns", "exec", netns] if netns else []
    subprocess.run([*prefix, "ip", *args], check=True, capture_output=True)


def can_make_namespaces():
    return os.geteuid() == 0 and shutil.which("ip") is not None


@pytest.fixture(scope="module")
def lan():
    if not can_make_namespaces():
        if os.environ.get("CI"):
            pytest.fail("the LAN test needs root and iproute2 to make a network namespace; CI runs as root")
        pytest.skip("needs root and iproute2 (network namespaces); run as root, as CI does")
    with tempfile.TemporaryDirectory() as parent:
        journal_dir = demo_journal(parent, days=3)
        enabled = run(journal_dir, "route", "enable", "lan")
        assert "The LAN route is on" in enabled
        ca_file = os.path.join(parent, "journal-ca.pem")
        with open(ca_file, "w") as f:
            f.write(run(journal_dir, "route", "ca", "--pem"))
        ip("netns", "add", TAG)
        process = None
        try:
            ip("link", "add", f"{TAG}a", "type", "veth", "peer", "name", f"{TAG}b")
            ip("link", "set", f"{TAG}b", "netns", TAG)
            ip("addr", "add", f"{CLIENT_IP}/24", "dev", f"{TAG}a")
            ip("addr", "add", f"{OTHER_CLIENT_IP}/24", "dev", f"{TAG}a")
            ip("link", "set", f"{TAG}a", "up")
            ip("addr", "add", f"{SERVER_IP}/24", "dev", f"{TAG}b", netns=TAG)
            ip("link", "set", f"{TAG}b", "up", netns=TAG)
            ip("link", "set", "lo", "up", netns=TAG)
            process = subprocess.Popen(["ip", "netns", "exec", TAG, JOURNAL, "--journal", journal_dir, "serve"],
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            url = None
            for _ in range(50):
                match = re.search(r"the LAN route serves at (https://\S+/mcp)", process.stdout.readline())
                if match:
                    url = match.group(1)
                    break
            assert url == f"https://{SERVER_IP}:7660/mcp", url
            yield {"url": url, "origin": url.rsplit("/mcp", 1)[0], "dir": journal_dir, "ca": ca_file}
        finally:
            if process:
                process.terminate()
                assert process.wait(timeout=15) == 0
            subprocess.run(["ip", "netns", "del", TAG], capture_output=True)
            subprocess.run(["ip", "link", "del", f"{TAG}a"], capture_output=True)


def trusting_the_ca(lan):
    """A TLS context that trusts the journal's CA and nothing else."""
    context = ssl.create_default_context(cafile=lan["ca"])
    assert len(context.get_ca_certs()) == 1
    return context


def connect(source=None):
    """A TCP connection to the LAN route from `source` (an address of this side), waiting at most
    ANSWER_WITHIN for anything after."""
    return socket.create_connection((SERVER_IP, 7660), timeout=ANSWER_WITHIN,
                                    source_address=(source, 0) if source else None)


def handshake(context, source=None):
    """A completed TLS 1.3 handshake from `source`: the control that the server is up and serving."""
    connection = context.wrap_socket(connect(source), server_hostname=SERVER_IP)
    assert connection.version() == "TLSv1.3"
    return connection


def assert_closed_before_the_handshake(context, source=None):
    """The server closed the connection without a byte, before any handshake: a connection that sends
    nothing reads EOF at once, and a TLS client's hello meets that EOF (or the reset of the closed
    socket). Silence is not a refusal: a timeout fails."""
    try:
        with connect(source) as raw:
            assert raw.recv(1) == b"", "the server sent something to a connection it should refuse"
        with connect(source) as raw, pytest.raises((ssl.SSLEOFError, ConnectionResetError)):
            context.wrap_socket(raw, server_hostname=SERVER_IP)
    except TimeoutError:
        pytest.fail(f"no refusal within {ANSWER_WITHIN} s: the server did not answer at all")


async def sign_in_and_call(lan, storage):
    pairing_code = run(lan["dir"], "mcp", "pairing", "generate", "--route", "lan").strip().splitlines()[-1]
    return await sign_in_and_search(lan["url"], pairing_code, ["transcripts", "entities"], storage,
                                    verify=trusting_the_ca(lan))


def test_the_sdk_signs_in_over_the_lan_trusting_only_the_journals_ca(lan):
    storage = MemoryStorage()
    tools, found = asyncio.run(sign_in_and_call(lan, storage))
    assert "search" in tools and "get_transcript" in tools
    assert not found.isError and found.structuredContent["results"]

    # Discovery names the LAN origin: the issuer and resource are this route's own.
    verify = trusting_the_ca(lan)
    metadata = httpx.get(f"{lan['origin']}/.well-known/oauth-authorization-server", verify=verify).json()
    assert metadata["issuer"] == lan["origin"]
    resource = httpx.get(f"{lan['origin']}/.well-known/oauth-protected-resource", verify=verify).json()
    assert resource["resource"] == lan["url"]

    listed = run(lan["dir"], "mcp", "oauth", "list")
    assert "python-sdk" in listed and "lan" in listed
    activity = run(lan["dir"], "mcp", "activity")
    assert "python-sdk  search  served" in activity

    # The LAN route's token is refused on the local route (reached from inside the namespace), and the
    # owner app there offers the CA the client trusted.
    probe = (
        "import urllib.request, urllib.error\n"
        "request = urllib.request.Request('http://127.0.0.1:7659/mcp', data=b'{}', method='POST', headers={\n"
        f"    'authorization': 'Bearer {storage.tokens.access_token}', 'content-type': 'application/json'}})\n"
        "try:\n"
        "    print(urllib.request.urlopen(request).status)\n"
        "except urllib.error.HTTPError as e:\n"
        "    print(e.code)\n"
        "print(urllib.request.urlopen('http://127.0.0.1:7659/app/ca.pem').read().decode(), end='')\n"
    )
    out = subprocess.run(["ip", "netns", "exec", TAG, "python3", "-c", probe], capture_output=True, text=True, timeout=30)
    status, _, served_ca = out.stdout.partition("\n")
    assert status == "401", out.stdout + out.stderr
    with open(lan["ca"]) as f:
        assert served_ca == f.read()

    routes = run(lan["dir"], "route", "list")
    assert f"lan     on   https://{SERVER_IP}:7660/mcp" in routes, routes
    assert "issued by journal private CA" in routes and "last error: none" in routes


def test_a_client_that_trusts_only_the_usual_authorities_is_refused(lan):
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"{lan['origin']}/.well-known/oauth-protected-resource")


def test_tls_1_2_is_refused(lan):
    # rustls serves TLS 1.3 only: a TLS 1.2 hello gets a protocol_version alert.
    tls12 = trusting_the_ca(lan)
    tls12.maximum_version = ssl.TLSVersion.TLSv1_2
    with connect() as raw, pytest.raises(ssl.SSLError) as refused:
        tls12.wrap_socket(raw, server_hostname=SERVER_IP)
    assert refused.value.reason == "TLSV1_ALERT_PROTOCOL_VERSION", refused.value
    # The same client allowed TLS 1.3, from the same device, right after: it gets its handshake.
    handshake(trusting_the_ca(lan)).close()


def test_a_foreign_host_is_refused(lan):
    answer = httpx.get(f"{lan['origin']}/.well-known/oauth-protected-resource", verify=trusting_the_ca(lan),
                       headers={"host": "journal.example:7660"})
    assert answer.status_code == 403
    assert answer.json()["error"] == "host_not_allowed"
    answer = httpx.post(lan["url"], verify=trusting_the_ca(lan), headers={"origin": "https://evil.example"}, json={})
    assert answer.status_code == 403
    assert answer.json()["error"] == "cross_origin_blocked"


def test_a_key_is_refused_on_the_lan(lan):
    key = json.loads(run(lan["dir"], "mcp", "token", "create", "--label", "script", "--json"))["key"]
    run(lan["dir"], "mcp", "permission", "set", "--token", "script", "--category", "transcripts")
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    answer = httpx.post(lan["url"], verify=trusting_the_ca(lan), json=initialize,
                        headers={"authorization": f"Bearer {key}", "accept": "application/json, text/event-stream"})
    assert answer.status_code == 401
    assert f'resource_metadata="{lan["origin"]}/.well-known/oauth-protected-resource"' in answer.headers["www-authenticate"]


def test_a_pairing_code_of_the_local_route_does_not_open_the_lan(lan):
    run(lan["dir"], "mcp", "pairing", "revoke")
    run(lan["dir"], "mcp", "pairing", "generate", "--route", "local")
    answer = httpx.post(f"{lan['origin']}/register", verify=trusting_the_ca(lan),
                        json={"redirect_uris": ["http://localhost:3030/callback"]})
    assert answer.status_code == 403
    assert answer.json()["error"] == "access_denied"
    assert answer.json()["error_description"].startswith("sign-in is closed")
    run(lan["dir"], "mcp", "pairing", "revoke")


# Run inside the namespace. From the refused source: what a connection that sends nothing reads, and
# what a TLS 1.3 handshake trusting the CA meets; from the allowed source: that handshake. Each is
# "eof" (EOF or reset), "timeout", or what was read or made.
PROBE = """
import socket, ssl, sys
server, ca, wait, refused, allowed = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
context = ssl.create_default_context(cafile=ca)
def connect(source):
    return socket.create_connection((server, 7660), timeout=wait, source_address=(source, 0))
def outcome(attempt, source):
    try:
        return attempt(source)
    except TimeoutError:
        return "timeout"
    except (ssl.SSLEOFError, ConnectionResetError):
        return "eof"
    except OSError as e:
        return repr(e)
def unread(source):
    with connect(source) as raw:
        return "eof" if raw.recv(1) == b"" else "data"
def handshake(source):
    with connect(source) as raw, context.wrap_socket(raw, server_hostname=server) as tls:
        return tls.version()
print("refused", outcome(unread, refused), outcome(handshake, refused))
print("allowed", outcome(handshake, allowed))
"""


def test_a_peer_on_loopback_is_refused(lan):
    # From inside the namespace, with the loopback address as the source: closed unread, before the
    # handshake. Right after, as the control, the namespace's own private address gets its handshake.
    out = subprocess.run(["ip", "netns", "exec", TAG, sys.executable, "-c", PROBE, SERVER_IP, lan["ca"],
                          str(ANSWER_WITHIN), "127.0.0.1", SERVER_IP],
                         capture_output=True, text=True, timeout=30)
    assert out.stdout.splitlines() == ["refused eof eof", "allowed TLSv1.3"], out.stdout + out.stderr


def test_one_device_gets_at_most_sixteen_connections(lan):
    context = trusting_the_ca(lan)
    # Held open well within the server's 5 s head deadline, which would close them on its own.
    held = [handshake(context) for _ in range(16)]
    try:
        assert_closed_before_the_handshake(context)
        # Another device is not counted with this one.
        handshake(context, source=OTHER_CLIENT_IP).close()
        # A closed connection gives its slot back: the next connection from this device gets in.
        held.pop().close()
        deadline = time.monotonic() + ANSWER_WITHIN
        while True:
            try:
                held.append(handshake(context))
                break
            except (ssl.SSLEOFError, ConnectionResetError):
                assert time.monotonic() < deadline, "the closed connection's slot did not come back"
                time.sleep(0.05)
        # It is full again.
        assert_closed_before_the_handshake(context)
    finally:
        for connection in held:
            connection.close()
    # All the slots come back, and HTTP is served.
    deadline = time.monotonic() + ANSWER_WITHIN
    while True:
        try:
            answer = httpx.get(f"{lan['origin']}/.well-known/oauth-protected-resource", verify=context,
                               timeout=ANSWER_WITHIN)
            break
        except httpx.ConnectError:
            assert time.monotonic() < deadline, "slots did not come back"
            time.sleep(0.05)
    assert answer.status_code == 200
