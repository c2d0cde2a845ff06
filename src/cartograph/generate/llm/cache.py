"""The LLM generator's answer cache: one JSON file per accepted tool text, never pickle.

Files live in ``<home>/cache/llm/<k[:2]>/<k>.json``. The key ``k`` is the sha256 of the canonical
JSON of what the answer depends on: server, tool name, input-schema hash, publisher-description
hash, model and prompt version. Re-running bootstrap therefore asks the model only about tools
whose schema or description changed (or when the model or prompt changed). A cache file that
cannot be read is treated as a miss and rewritten; it is never trusted to hold anything but text,
and the entry it yields is validated again before use.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cartograph.canonical import sha256_json
from cartograph.files import atomic_write
from cartograph.workspace import Workspace

logger = logging.getLogger(__name__)

CACHE_FORMAT = "cartograph.llm-cache/1"


@dataclass(frozen=True)
class CacheKey:
    """What one cached answer depends on."""

    server: str
    tool: str
    schema_hash: str
    description_hash: str
    model: str
    prompt_version: str

    def digest(self) -> str:
        return sha256_json(self.as_json()).removeprefix("sha256:")

    def as_json(self) -> dict[str, str]:
        return {
            "server": self.server,
            "tool": self.tool,
            "schema_hash": self.schema_hash,
            "description_hash": self.description_hash,
            "model": self.model,
            "prompt_version": self.prompt_version,
        }


class LLMCache:
    """Accepted LLM answers on disk, keyed by :class:`CacheKey`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def for_workspace(cls, ws: Workspace) -> LLMCache:
        return cls(ws.root / "cache" / "llm")

    def path(self, key: CacheKey) -> Path:
        digest = key.digest()
        return self.root / digest[:2] / f"{digest}.json"

    def get(self, key: CacheKey) -> dict[str, Any] | None:
        path = self.path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            logger.warning("LLM cache file %s unreadable (%s); asking the model again", path, exc)
            return None
        if (
            not isinstance(data, dict)
            or data.get("format") != CACHE_FORMAT
            or data.get("key") != key.as_json()
            or not isinstance(data.get("answer"), dict)
        ):
            logger.warning("LLM cache file %s does not match its key; asking the model again", path)
            return None
        return data["answer"]

    def put(self, key: CacheKey, answer: dict[str, Any]) -> Path:
        path = self.path(key)
        doc = {"format": CACHE_FORMAT, "key": key.as_json(), "answer": answer}
        text = json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        return atomic_write(path, text, fsync=False)  # a cache: losing an entry costs a call

    def files(self) -> list[Path]:
        return sorted(self.root.glob("*/*.json")) if self.root.is_dir() else []
