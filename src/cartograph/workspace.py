"""The workspace: one directory that holds keys, cards, index, snapshots and logs.

Chosen by ``--home DIR``, else ``$CARTOGRAPH_HOME``, else ``./.cartograph``::

    <home>/
      keys/operator.key        Ed25519 private key (PEM, mode 0600)
      keys/operator.pub        its public key (PEM)
      keys/trusted/*.pub       other public keys whose cards verify here
      cards/<server>.card.json one signed card per server
      index/                   retrieval index (JSON + .npy)
      snapshots/               catalog snapshots (cartograph.snapshot/1)
      logs/                    audit log (JSONL, rotated)
      config.json              workspace settings (generator, embedder, ...), optional
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

HOME_ENV = "CARTOGRAPH_HOME"
DEFAULT_HOME = ".cartograph"


@dataclass(frozen=True)
class Workspace:
    """Paths inside one Cartograph home directory. Creating it touches nothing on disk."""

    root: Path

    @classmethod
    def resolve(cls, home: str | os.PathLike[str] | None = None) -> Workspace:
        chosen = home or os.environ.get(HOME_ENV) or DEFAULT_HOME
        return cls(Path(chosen).expanduser().resolve())

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


def safe_file_name(name: str) -> str:
    """A file name for ``name`` that cannot escape its directory and stays readable."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".")
    return cleaned or "_"
