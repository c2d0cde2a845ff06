"""The console over a real `serve --transport http`: login sessions, CSRF, pages, policies, 404s,
and publisher text that never becomes HTML (a server whose tool description carries a script).

Plain HTTP here (httpx, following what a browser would send); tests/console/test_app_browser.py
drives a real chromium through the same pages."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from accesskit import session
from consolekit import Console, login, serve_console
from proxykit import call, text


@pytest.fixture(scope="module")
def console(golden_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    with serve_console(golden_home, tmp_path_factory.mktemp("console")) as served:
        yield served


@pytest.fixture(scope="module")
def ops(console: Console) -> httpx.Client:
    """A logged-in session of ``ops``, shared by the tests (logins are limited per address)."""
    return login(console, console.keys["ops"])


@pytest.fixture(scope="module")
def narrow(console: Console) -> httpx.Client:
    return login(console, console.keys["narrow"])


def test_a_session_cookie_is_httponly_strict_and_scoped_and_holds_no_key(console: Console) -> None:
    client = httpx.Client(base_url=console.base, timeout=60)
    form = client.get("/console/login")
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert csrf
    done = client.post("/console/login", data={"token": console.keys["ops"], "csrf": csrf[1]})
    cookie = next(c for c in done.headers.get_list("set-cookie") if "cartograph_console=" in c)
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/console" in cookie
    assert "Secure" not in cookie  # http://127.0.0.1: a Secure cookie would never come back
    assert console.keys["ops"].split("_")[-1] not in cookie
    page = client.get("/console")
    assert page.status_code == 200 and "signed in as <b>ops</b>" in page.text
    assert "script-src" not in page.headers["content-security-policy"]
    assert "default-src 'none'" in page.headers["content-security-policy"]


def test_without_a_session_every_page_sends_you_to_the_login(console: Console) -> None:
    for path in ("/console", "/console/audit", "/console/servers/chaos", "/console/nope"):
        response = httpx.get(console.base + path, timeout=30)
        assert response.status_code == 303 and response.headers["location"] == "/console/login"


def test_a_wrong_key_shows_the_login_page_with_a_clear_message(console: Console) -> None:
    client = httpx.Client(base_url=console.base, timeout=60)
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/console/login").text)
    assert csrf
    done = client.post("/console/login", data={"token": "cg_000000000000_wrong", "csrf": csrf[1]})
    assert done.status_code == 401
    assert "That key or token was not accepted" in done.text
    assert "cartograph_console=" not in done.headers.get("set-cookie", "")


def test_a_login_or_logout_without_the_forms_token_is_refused(console: Console) -> None:
    bare = httpx.post(f"{console.base}/console/login", data={"token": console.keys["ops"]})
    assert bare.status_code == 403 and "has expired" in bare.text
    client = login(console, console.keys["ops"])
    forged = client.post("/console/logout", data={"csrf": "forged"})
    assert forged.status_code == 403
    assert client.get("/console").status_code == 200  # still logged in
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/console").text)
    assert token
    out = client.post("/console/logout", data={"csrf": token[1]})
    assert out.status_code == 303 and out.headers["location"] == "/console/login"
    assert client.get("/console").status_code == 303


def test_pages_show_servers_tools_and_never_render_publisher_text_as_html(
    ops: httpx.Client,
) -> None:
    client = ops
    servers = client.get("/console").text
    assert all(f'href="/console/servers/{s}"' in servers for s in ("chaos", "calm", "evil"))
    evil = client.get("/console/servers/evil")
    assert evil.status_code == 200
    assert "<script>" not in evil.text and "<b>bold</b>" not in evil.text
    assert "&lt;script&gt;alert(" in evil.text  # shown, as text
    chaos = client.get("/console/servers/chaos").text
    assert "signed card text" in chaos and "echo" in chaos and "matches" in chaos


def test_an_unknown_server_or_page_is_a_404_that_says_what_exists(ops: httpx.Client) -> None:
    client = ops
    missing = client.get("/console/servers/nope")
    assert missing.status_code == 404
    assert "server &#39;nope&#39;" in missing.text and "/console/servers/chaos" in missing.text
    page = client.get("/console/nowhere")
    assert page.status_code == 404 and 'href="/console/audit"' in page.text


def test_discover_playground_ranks_explains_and_is_audited(ops: httpx.Client) -> None:
    client = ops
    page = client.get("/console/discover", params={"task": "add two numbers", "k": 3})
    assert page.status_code == 200
    assert "/add</a>" in page.text
    assert re.search(r"dense [+-]\d", page.text) and re.search(r"bm25 [+-]\d", page.text)
    assert re.search(r"\(trained -?\d+\.\d\d\)", page.text)  # the reorder stage's score
    audit = client.get("/console/audit", params={"client": "ops"}).text
    assert "add two numbers" in audit and "console-login" in audit


def test_a_restricted_client_sees_only_what_its_policy_allows(narrow: httpx.Client) -> None:
    client = narrow
    servers = client.get("/console").text
    assert 'href="/console/servers/calm"' in servers
    assert "/console/servers/chaos" not in servers and "/console/servers/evil" not in servers
    assert client.get("/console/servers/chaos").status_code == 404
    ranked = client.get("/console/discover", params={"task": "add two numbers"}).text
    assert "chaos/" not in ranked and "calm/add" in ranked
    audit = client.get("/console/audit").text
    assert "ops" not in re.sub(r"<[^>]+>", " ", audit).split()  # only its own entries


def test_quarantine_and_rift_pages_render(ops: httpx.Client) -> None:
    client = ops
    held = client.get("/console/quarantine")
    assert held.status_code == 200 and "Nothing is quarantined" in held.text
    rift = client.get("/console/rift")
    assert rift.status_code == 200 and "tools in clusters" in rift.text
    assert "<svg" in rift.text and "Per-tool margin" in rift.text  # the margin picture, inline
    high = rift.text[rift.text.index('<td class="bad">HIGH') :].split("</tr>", 1)[0]
    assert re.search(r"min margin [+-]\d\.\d{3}", high)  # the cluster's margin
    for tool, rival in (("search_issues", "find_issues"), ("find_issues", "search_issues")):
        assert re.search(rf"evil/<b>{tool}</b></a> <span[^>]*>margin [+-]\d\.\d{{3}}</span> "
                         rf"<span class=\"muted\">vs {rival}</span>", high)  # fmt: skip
    assert "Make explicit what tells them apart" in high and "shared words: issues" in high
    assert "do the same job (substitutes" in rift.text  # calm and chaos: the same tools


def test_the_servers_page_lists_every_replica_on_the_board_cut_by_policy(
    console: Console, ops: httpx.Client, narrow: httpx.Client
) -> None:
    from cartograph.storage.health import FileHealthBoard

    other = {
        "state": "stopped",
        "endpoint": "http://10.0.0.7:8765/mcp",
        "servers": [
            {"server": "calm", "tools": 4, "sessions": ["ready"], "crashes": 2, "quarantined": []},
            {"server": "chaos", "tools": 9, "sessions": ["backoff"], "crashes": 5,
             "quarantined": ["peek"], "last_error": "exited with status 1"},
        ],
    }  # fmt: skip
    FileHealthBoard(console.home / "replicas").publish("elsewhere:4242", other)
    everything = ops.get("/console").text
    assert "<h2>Replicas</h2>" in everything and "elsewhere:4242" in everything
    assert re.search(r"<code>[^<]+:\d+</code></td>\s*<td><span class=\"ok\">serving", everything)
    assert f"{console.base}/mcp" in everything  # the serving process's own record, its endpoint
    assert "http://10.0.0.7:8765/mcp" in everything and "chaos: exited with status 1" in everything
    cut = narrow.get("/console").text
    assert "elsewhere:4242" in cut and "chaos: exited" not in cut
    assert "1 / 4" in cut  # calm only: one server, its four tools


def test_a_tool_has_its_own_page_and_an_unknown_tool_is_a_404_listing_the_servers_tools(
    ops: httpx.Client,
) -> None:
    page = ops.get("/console/servers/chaos/tools/echo")
    assert page.status_code == 200
    assert 'id="echo"' in page.text and 'id="add"' not in page.text and "matches" in page.text
    missing = ops.get("/console/servers/chaos/tools/nope")
    assert missing.status_code == 404
    assert "tool &#39;nope&#39; on server &#39;chaos&#39;" in missing.text
    assert 'href="/console/servers/chaos/tools/echo"' in missing.text
    assert 'href="/console/servers/chaos/tools/add"' in missing.text
    other = ops.get("/console/servers/nope/tools/echo")
    assert other.status_code == 404 and 'href="/console/servers/calm"' in other.text


def test_an_audit_entry_links_the_card_version_and_a_call_the_discover_answer_that_offered_it(
    console: Console, ops: httpx.Client
) -> None:
    async def agent() -> None:
        async with session(f"{console.base}/mcp", console.keys["ops"]) as client:
            await client.call_tool("discover", {"task": "echo a message back", "k": 3})
            assert text(await call(client, "chaos", "echo", {"text": "linked"})) == "linked"

    anyio.run(agent)
    audit = ops.get("/console/audit", params={"tool": "echo"}).text
    call_row = audit[audit.index("<td>call</td>") :].split("</tr>", 1)[0]
    version = re.search(r'href="(/console/servers/chaos/versions/(\d+)#echo)">card v\2<', call_row)
    offered = re.search(r'href="(/console/audit\?entry=([0-9a-f-]+)#\2)"', call_row)
    assert version and offered, call_row
    answer = ops.get(offered[1].replace("&amp;", "&")).text
    assert f'<tr id="{offered[2]}">' in answer and "echo a message back" in answer
    assert answer.count("<tr id=") == 1 and "<td>call</td>" not in answer  # that answer only
    assert version[1] in answer  # the discover result links the same card version
    card = ops.get(version[1].split("#")[0])
    assert card.status_code == 200 and 'id="echo"' in card.text
    assert f"Card version <b>{version[2]}</b>" in card.text
    kept = ops.get("/console/servers/chaos/versions/999")
    assert kept.status_code == 404 and f'href="/console/servers/chaos/versions/{version[2]}"' in (
        kept.text
    )
    assert ops.get("/console/servers/chaos/versions/x").status_code == 404


def test_the_servers_page_shows_each_cards_verification_and_version(ops: httpx.Client) -> None:
    servers = ops.get("/console").text
    assert "(none failed)" in servers
    row = servers[servers.index('href="/console/servers/chaos"') :].split("</tr>", 1)[0]
    assert '<span class="ok">verified</span>' in row
    assert re.search(r'href="/console/servers/chaos/versions/\d+">v\d+</a>', row)


def test_the_playground_shows_the_card_text_that_ranked_and_the_key_that_signed_it(
    ops: httpx.Client,
) -> None:
    page = ops.get("/console/discover", params={"task": "echo a message back", "k": 2}).text
    row = page[page.index('href="/console/servers/chaos/tools/echo"') :].split("</tr>", 1)[0]
    assert re.search(r"dense [+-]\d", row)
    assert re.search(r'href="/console/servers/chaos/versions/\d+#echo">v\d+</a>, key <code>', row)
    assert "key <code>-</code>" not in row
