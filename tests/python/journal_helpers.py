"""What the Python tests share: the CLI (from journal_cli), a token store for the SDK's OAuth client, and the
owner's part of a sign-in (reading the consent page, typing the pairing code, following the redirect back)."""

import asyncio
import contextlib
import json
import re
from urllib.parse import parse_qs, urlparse

import httpx
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from journal_cli import JOURNAL, demo_journal, mint_key, run, serve  # noqa: F401 (the tests import them from here)


class MemoryStorage(TokenStorage):
    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull):
        self.client_info = client_info


def owner_approves(pairing_code, categories, captured, verify=True, transport=None):
    """A redirect handler that plays the owner in the browser (`verify`: what the browser trusts;
    `transport`: how it reaches names that only the test resolves)."""

    async def handler(authorization_url):
        query = parse_qs(urlparse(authorization_url).query)
        assert query["code_challenge_method"] == ["S256"]
        assert query["resource"][0].endswith("/mcp")
        async with httpx.AsyncClient(verify=verify, transport=transport) as browser:
            page = await browser.get(authorization_url)
            assert page.status_code == 200, page.text
            assert "python-sdk wants to connect" in page.text
            assert page.headers["x-frame-options"] == "DENY"
            fields = {name: re.search(rf'name="{name}" value="([^"]+)"', page.text).group(1) for name in ("pending", "csrf")}
            form = {"pending": fields["pending"], "csrf": fields["csrf"], "pairing_code": pairing_code.lower(),
                    "scope": "journal", "decision": "approve", "category": list(categories)}
            origin = f"{urlparse(authorization_url).scheme}://{urlparse(authorization_url).netloc}"
            answer = await browser.post(f"{origin}/authorize", data=form, headers={"origin": origin})
            assert answer.status_code == 303, answer.text
            back = urlparse(answer.headers["location"])
            assert back.path == "/callback"
            params = parse_qs(back.query)
            assert params["iss"] == [origin]
            captured["code"] = params["code"][0]
            captured["state"] = params.get("state", [None])[0]

    return handler


async def sign_in_and_search(url, pairing_code, categories, storage, verify=True, transport_factory=None):
    """The SDK signs in at `url` (the owner approving with `pairing_code` and `categories`), lists its
    tools and searches. `verify`: what the client trusts; `transport_factory`: makes the transport of
    the client and of the owner's browser, for names only the test resolves (it carries its own trust)."""
    captured = {}

    async def callback():
        return captured["code"], captured["state"]

    metadata = OAuthClientMetadata(client_name="python-sdk", redirect_uris=["http://localhost:3030/callback"],
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                                   token_endpoint_auth_method="none")
    browser = transport_factory() if transport_factory else None
    auth = OAuthClientProvider(server_url=url, client_metadata=metadata, storage=storage,
                               redirect_handler=owner_approves(pairing_code, categories, captured, verify, browser),
                               callback_handler=callback)
    reach = {"transport": transport_factory()} if transport_factory else {"verify": verify}
    async with httpx.AsyncClient(auth=auth, timeout=30, **reach) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = sorted(t.name for t in (await session.list_tools()).tools)
                found = await session.call_tool("search", {"query": "lease renewal"})
                return tools, found


# Calling tools through the SDK.

def innermost(error):
    """The one failure inside the SDK's task groups, so that pytest reports it rather than the groups."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def run_session(streams, body):
    """Runs `body(session)` in an initialized SDK session over `streams()` (an async context manager that yields the
    read and write streams first); returns what it returns, and the one failure inside the SDK's task groups."""

    async def main():
        async with streams() as opened:
            async with ClientSession(opened[0], opened[1]) as session:
                await session.initialize()
                return await body(session)

    try:
        return asyncio.run(main())
    except BaseExceptionGroup as group:
        raise innermost(group) from None


def in_session(server, key, body):
    """Runs `body(session)` in an initialized SDK session that presents `key`; returns what it returns."""

    @contextlib.asynccontextmanager
    async def streams():
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
            async with streamable_http_client(server.url, http_client=http) as opened:
                yield opened

    return run_session(streams, body)


async def call(session, tool, arguments):
    try:
        return await session.call_tool(tool, arguments)
    except RuntimeError as error:  # the SDK checks structuredContent against the tool's outputSchema
        raise AssertionError(f"{tool} {arguments}: {str(error).splitlines()[0]}") from None


def text_of(result):
    return "".join(block.text for block in result.content if block.type == "text")


async def ok(session, tool, arguments):
    """A served call's structuredContent (which its text content repeats)."""
    result = await call(session, tool, arguments)
    assert not result.isError, f"{tool} {arguments} was refused: {text_of(result)}"
    assert json.loads(text_of(result)) == result.structuredContent, f"{tool}: the text is the structured content"
    return result.structuredContent


async def refused(session, tool, arguments):
    """A refused call's text (an isError result, not a protocol error)."""
    result = await call(session, tool, arguments)
    assert result.isError, f"{tool} {arguments} was served: {result.structuredContent}"
    return text_of(result)


def in_stdio_session(journal_dir, label, body):
    """Runs `body(session)` in an initialized SDK session over `journal mcp stdio --agent label`, the SDK starting
    the process as an agent on this computer would; returns what it returns."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=JOURNAL, args=["--journal", journal_dir, "mcp", "stdio", "--agent", label])
    return run_session(lambda: stdio_client(params), body)
