"""What the Python tests share: the CLI, a token store for the SDK's OAuth client, and the owner's
part of a sign-in (reading the consent page, typing the pairing code, following the redirect back)."""

import os
import re
import subprocess
from urllib.parse import parse_qs, urlparse

import httpx
from mcp.client.auth import TokenStorage
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

JOURNAL = os.environ.get("JOURNAL_BIN", "target/debug/journal")


def run(journal_dir, *args):
    out = subprocess.run([JOURNAL, "--journal", journal_dir, *args], check=True, capture_output=True, text=True)
    return out.stdout


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
