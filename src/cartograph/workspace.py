"""The workspace: one directory that holds keys, cards, index, snapshots and logs.

Chosen by ``--home DIR``, else ``$CARTOGRAPH_HOME``, else ``./.cartograph``::

    <home>/
      keys/operator.key        Ed25519 private key (PEM, mode 0600)
      keys/operator.pub        its public key (PEM)
      keys/trusted/*.pub       other public keys whose cards verify here
      cards/<server>.card.json one signed card per server
      history/<server>/<N>.card.json  its kept versions (N = 1, 2, ...; the newest is current)
      index/                   retrieval index (JSON + .npy)
      snapshots/               catalog snapshots (cartograph.snapshot/1)
      logs/                    audit log (JSONL, rotated)
      config.json              workspace settings (generator, embedder, ...), optional

Cards, the index, the audit log and the quarantine live in these files unless a shared store is
named by ``--store URL``, else ``$CARTOGRAPH_STORE`` (``postgresql://...``; see
:mod:`cartograph.storage`). Keys and ``config.json`` stay in the home directory either way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cartograph.workspace_settings import WorkspaceSettings

HOME_ENV = "CARTOGRAPH_HOME"
STORE_ENV = "CARTOGRAPH_STORE"
DEFAULT_HOME = ".cartograph"


@dataclass(frozen=True)
class Workspace:
    """Paths inside one Cartograph home directory. Creating it touches nothing on disk."""

    root: Path
    store: str | None = None
    """URL of a shared store (``postgresql://...``); None: the files in this directory."""

    @classmethod
    def resolve(
        cls, home: str | os.PathLike[str] | None = None, store: str | None = None
    ) -> Workspace:
        chosen = home or os.environ.get(HOME_ENV) or DEFAULT_HOME
        url = store if store is not None else os.environ.get(STORE_ENV)
        return cls(Path(chosen).expanduser().resolve(), check_store_url(url))

    @property
    def keys_dir(self) -> Path:
        return self.root / "keys"

    @property
    def private_key(self) -> Path:
        return self.keys_dir / "operator.key"

    @property
    def public_key(self) -> Path:
        return self.keys_dir / "operator.pub"

    @property
    def trusted_dir(self) -> Path:
        return self.keys_dir / "trusted"

    @property
    def cards_dir(self) -> Path:
        return self.root / "cards"

    @property
    def history_dir(self) -> Path:
        return self.root / "history"

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    @property
    def snapshots_dir(self) -> Path:
        return self.root / "snapshots"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def config_file(self) -> Path:
        return self.root / "config.json"

    def card_path(self, server: str) -> Path:
        return self.cards_dir / f"{safe_file_name(server)}.card.json"

    def ensure(self) -> Workspace:
        for path in (self.keys_dir, self.cards_dir, self.index_dir, self.snapshots_dir):
            path.mkdir(parents=True, exist_ok=True)
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        return self


def check_store_url(url: str | None) -> str | None:
    """``url`` if it names a store this version can use; None for the workspace files."""
    if url is None or url.strip() in ("", "files", "file:"):
        return None
    url = url.strip()
    if url.startswith(("postgresql://", "postgres://")):
        return url
    from cartograph.errors import ConfigError

    scheme = url.split("://", 1)[0] if "://" in url else url[:20]
    raise ConfigError(
        f"unknown store {scheme!r}: use postgresql://USER@HOST/DB, or leave --store and "
        f"${STORE_ENV} unset for the workspace files",
        field="store",
    )


def file_stamps(paths: list[Path]) -> tuple[object, ...]:
    """(path, mtime_ns, size) per path, (path, None) for one that is missing: compare two
    stamps to see whether any of the files changed."""
    parts: list[object] = []
    for path in paths:
        try:
            st = os.stat(path)
            parts.append((str(path), st.st_mtime_ns, st.st_size))
        except OSError:
            parts.append((str(path), None))
    return tuple(parts)


def safe_file_name(name: str) -> str:
    """A file name for ``name`` that cannot escape its directory and stays readable."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".")
    return cleaned or "_"


def read_settings(ws: Workspace) -> WorkspaceSettings:
    """The workspace settings in ``config.json`` (defaults when absent); :class:`ConfigError`
    naming the file and the field when it is not valid."""
    return _parse_settings(_read_settings_json(ws), ws)


def update_settings(ws: Workspace, **changes: object) -> WorkspaceSettings:
    """Merge ``changes`` into ``config.json`` (checked, written atomically); return the result."""
    import json

    from cartograph.files import atomic_write

    data = {**_read_settings_json(ws), **changes}
    settings = _parse_settings(data, ws)
    atomic_write(ws.config_file, json.dumps(data, indent=2, sort_keys=True) + "\n")
    return settings


def _read_settings_json(ws: Workspace) -> dict[str, Any]:
    import json

    from cartograph.errors import ConfigError

    if not ws.config_file.is_file():
        return {}
    try:
        data = json.loads(ws.config_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not valid JSON: {exc}", file=str(ws.config_file)) from exc
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object", file=str(ws.config_file))
    return data


def _parse_settings(data: dict[str, Any], ws: Workspace) -> WorkspaceSettings:
    from pydantic import ValidationError  # here: the CLI's --help imports this module

    from cartograph.errors import ConfigError
    from cartograph.workspace_settings import WorkspaceSettings

    try:
        return WorkspaceSettings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(first["msg"], file=str(ws.config_file), field=where) from exc
