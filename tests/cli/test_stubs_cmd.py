"""`cartograph stubs`: typed packages that pass pyright, regenerate stably and call for real."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from cartograph.cards.seal import card_version_digest
from cartograph.cli import main
from cartograph.generate.attest import attest_snapshot
from cartograph.storage import load_verified, open_store
from cartograph.stubgen import module_names, write_package
from cartograph.stubgen.typing_ import TypeMapper, docstring, identifier
from cartograph.trust.lifecycle import init_key
from cartograph.upstream.snapshot import load_snapshot
from cartograph.workspace import Workspace

CATALOG = Path("/work/shared/fleet/catalog.json")
PYRIGHT = Path(sys.executable).with_name("pyright")


def pyright(package: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [str(PYRIGHT), "--outputjson", "--pythonpath", sys.executable, str(package)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = json.loads(proc.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert not errors, errors[:5]
    return report["summary"]


def test_names_become_unique_identifiers_in_a_stable_order() -> None:
    servers = ["a-b", "a_b", "A B", "class", "1password", "_runtime", "getUser", "match", "connect"]
    names = module_names(servers)
    assert names == module_names(list(reversed(servers)))
    assert len(set(names.values())) == len(servers)
    for name in names.values():
        assert name.isidentifier() and name not in ("_runtime", "class", "match", "connect")
    assert names["getUser"] == "get_user"
    assert names["1password"] == "server_1password"
    taken: set[str] = {"list"}
    assert identifier("list", taken) == "list_2"
    assert identifier("from", taken) == "from_"


def test_schemas_map_to_python_types() -> None:
    defined: dict[str, str] = {}

    def define(name: str, body: str) -> str:
        defined[name] = body
        return name

    hint = TypeMapper(define).hint
    assert hint({"type": "string", "enum": ["a|b", "c"]}, "x") == "Literal['a|b', 'c']"
    assert hint({"type": ["integer", "null"]}, "x") == "int | None"
    assert hint({"anyOf": [{"type": "number"}, {"type": "string"}]}, "x") == "float | str"
    assert hint({"type": "array", "items": {"type": "boolean"}}, "x") == "list[bool]"
    assert hint({"type": "object"}, "x") == "dict[str, Any]"
    assert hint({"$ref": "#/defs/a"}, "x") == "Any"
    item = hint(
        {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"from": {"type": "string"}, "n": {"type": "integer"}},
                "required": ["from"],
            },
        },
        "edit",
    )
    assert item == "list[EditItem]"
    assert defined["EditItem"] == "{'from': str, 'n': NotRequired[int]}"


def test_docstrings_cannot_break_out_of_their_quotes() -> None:
    for text, expected in [
        ('has """ and \\ inside', 'has """ and \\ inside'),
        ('ends with "a quote"', 'ends with "a quote" '),
        ("two\nlines", "two\nlines\n"),
    ]:
        namespace: dict[str, Any] = {}
        exec(f"DOC = (\n{docstring(text, '    ')}\n)", namespace)
        assert namespace["DOC"].replace("\n    ", "\n") == expected


@pytest.fixture(scope="module")
def fleet_home(
    tmp_path_factory: pytest.TempPathFactory, bootstrap_example_home: Callable[[Path], Path]
) -> Path:
    return bootstrap_example_home(tmp_path_factory.mktemp("stubs") / "home")


@pytest.mark.fleet
def test_example_fleet_stubs_type_check_regenerate_stably_and_call_the_time_server(
    fleet_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "fleetstubs"
    runner = CliRunner()
    first = runner.invoke(main, ["--home", str(fleet_home), "stubs", str(out), "--json"])
    assert first.exit_code == 0, first.output
    written = json.loads(first.output)
    assert written["modules"]["sequential_thinking"] == "sequential-thinking"
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    again = runner.invoke(main, ["--home", str(fleet_home), "stubs", str(out), "--json"])
    assert json.loads(again.output)["written"] == []
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before

    summary = pyright(out)
    assert summary["filesAnalyzed"] >= 10  # __init__, _runtime, eight servers

    card = load_verified(Workspace(fleet_home)).cards["time"]
    monkeypatch.syspath_prepend(str(tmp_path))
    package = importlib.import_module("fleetstubs")
    time_stubs = importlib.import_module("fleetstubs.time")
    assert card_version_digest(card) == time_stubs.CARD_DIGEST
    entry = card.tool("get_current_time")
    assert entry is not None and entry.summary in (time_stubs.get_current_time.__doc__ or "")

    async def scenario() -> tuple[Any, str]:
        with anyio.fail_after(120):
            return await calls()

    async def calls() -> tuple[Any, str]:
        async with package.connect():
            now = await time_stubs.get_current_time(timezone="Asia/Tokyo")
            with pytest.raises(package.ToolCallError) as refused:
                await time_stubs.get_current_time(timezone=5)
        return now.json(), str(refused.value)

    now, refused = anyio.run(scenario)
    assert now["timezone"] == "Asia/Tokyo" and now["datetime"].endswith("+09:00")
    assert "nothing was sent" in refused


@pytest.mark.fleet
def test_stubs_of_servers_that_are_gone_are_removed(fleet_home: Path, tmp_path: Path) -> None:
    cards = load_verified(Workspace(fleet_home)).cards
    out = tmp_path / "pkg"
    write_package(cards, out, home=None)
    (out / "notes.py").write_text("# mine\n")
    fewer = {k: v for k, v in cards.items() if k != "git"}
    result = write_package(fewer, out, home=None)
    assert result.removed == ["git.py"]
    assert result.written == ["__init__.py"]
    assert (out / "notes.py").exists()


@pytest.mark.skipif(not CATALOG.is_file(), reason="fleet catalog not present in ../shared")
def test_fleet_catalog_stubs_type_check(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "home").ensure()
    result = attest_snapshot(ws, load_snapshot(CATALOG), init_key(ws), store=open_store(ws))
    assert not result.failed
    cards = load_verified(ws).cards
    out = tmp_path / "catalog_stubs"
    written = write_package(cards, out, home=None)
    assert len(written.modules) == len(cards) == 99
    functions = sum(
        p.read_text(encoding="utf-8").count("\nasync def ")
        for p in out.glob("*.py")
        if p.name != "_runtime.py"
    )
    assert functions == sum(len(c.tools) for c in cards.values())
    pyright(out)
