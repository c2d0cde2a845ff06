"""`cartograph index tune` from the CLI: a clear error without the train extra, `--remove`."""

from __future__ import annotations

import importlib.util
import json

import pytest
from click.testing import CliRunner
from indexkit import INDEX_KEY, write_workspace_cards

from cartograph.cli import main
from cartograph.index.adapt import adapted_dir
from cartograph.workspace import Workspace


@pytest.fixture
def home(tmp_path):
    ws = Workspace(tmp_path / "home")
    write_workspace_cards(ws, INDEX_KEY)
    return ws.root


def run(home, *args):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is not None, reason="torch installed: tune would train"
)
def test_tune_without_the_train_extra_names_the_install(home):
    result = run(home, "index", "tune")
    assert result.exit_code != 0
    assert "cartograph[train]" in result.output
    assert not adapted_dir(home).exists()


def test_remove_deletes_the_adapted_model(home):
    folder = adapted_dir(home)
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text("{}")
    result = run(home, "index", "tune", "--remove", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"removed": True} and not folder.exists()
    again = run(home, "index", "tune", "--remove")
    assert again.exit_code == 0 and "no adapted model" in again.stdout
