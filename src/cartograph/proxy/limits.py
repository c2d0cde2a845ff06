"""Limits on every input an agent controls, and the audit log's bounded view of long inputs.

:class:`InputLimits` holds the documented bounds (docs/limits.md): the size of one JSON-RPC
message (enforced by the transports while it streams in: :mod:`cartograph.proxy.stdio`,
:mod:`cartograph.proxy.http_limit`), the length of a discover task, ``k``, the size of a call's
arguments, and the size of one audit entry. The checks run
before the proxy does any work with the input (no ranking, no validation, nothing sent) and
refuse with :class:`~cartograph.errors.LimitExceeded`, an MCP tool error that names the limit
and says what to do. The size of an upstream's reply is bounded by the gateway
(:attr:`cartograph.gateway.base.Limits.max_result_bytes`).

:class:`BoundedAudit` wraps whichever audit log the store gives: text longer than the excerpt
is recorded as ``{"excerpt", "sha256", "chars"}`` and no entry grows past its size limit, so a
few huge tasks can never rotate the real audit history away.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from cartograph.errors import LimitExceeded

MiB = 1024 * 1024
MAX_NAME_CHARS = 128


@dataclass(frozen=True)
class InputLimits:
    """Bounds on agent inputs (characters and bytes of JSON)."""

    max_task_chars: int = 2_000
    max_k: int = 20
    max_argument_bytes: int = 1 * MiB
    max_message_bytes: int = 4 * MiB  # one JSON-RPC message: an HTTP body, a stdio line
    max_audit_entry_bytes: int = 16 * 1024
    audit_excerpt_chars: int = 200


def check_task(task: str, limits: InputLimits) -> None:
    """Refuse a discover task longer than the limit (before it is stripped, embedded, logged)."""
    if len(task) > limits.max_task_chars:
        raise LimitExceeded(
            f"discover: the task is {len(task):,} characters, over the limit of "
            f"{limits.max_task_chars:,}; describe what you want done in a sentence or two"
        )


def check_k(k: Any, limits: InputLimits) -> int:
    """``k`` as an int in ``1..max_k``, or a clear refusal."""
    if isinstance(k, bool) or not isinstance(k, int):
        raise LimitExceeded(f"discover: k must be a whole number from 1 to {limits.max_k}")
    if not 1 <= k <= limits.max_k:
        raise LimitExceeded(
            f"discover: k is {k}, outside 1..{limits.max_k}; ask for at most {limits.max_k} "
            "tools and rephrase the task if none fits"
        )
    return k


MAX_KEYWORDS = 10
MAX_KEYWORD_CHARS = 64


def check_keywords(keywords: Any) -> tuple[str, ...]:
    """discover's optional keywords: a list of at most 10 short strings."""
    if keywords is None:
        return ()
    if not isinstance(keywords, list) or not all(isinstance(w, str) for w in keywords):
        raise LimitExceeded('discover: keywords must be a list of strings, e.g. ["stripe"]')
    if len(keywords) > MAX_KEYWORDS or any(len(w) > MAX_KEYWORD_CHARS for w in keywords):
        raise LimitExceeded(
            f"discover: at most {MAX_KEYWORDS} keywords of at most {MAX_KEYWORD_CHARS} "
            "characters each (product names, identifiers); put the rest in the task"
        )
    return tuple(w.strip() for w in keywords if w.strip())


def check_names(server: str, tool: str) -> None:
    """Server and tool names are short (tool names: SEP-986, at most 128 characters)."""
    for what, name in (("server", server), ("tool", tool)):
        if len(name) > MAX_NAME_CHARS:
            raise LimitExceeded(
                f"call: the {what} name is {len(name):,} characters; names are at most "
                f"{MAX_NAME_CHARS}: use the names discover returned"
            )


def check_arguments(server: str, tool: str, arguments: Any, limits: InputLimits) -> None:
    """Refuse call arguments whose JSON is over the size limit (counted without serialising
    them; the count stops as soon as it passes the limit)."""
    size = json_size(arguments, limits.max_argument_bytes)
    if size > limits.max_argument_bytes:
        raise LimitExceeded(
            f"{server}/{tool}: the arguments are over {limits.max_argument_bytes / MiB:g} MiB of "
            "JSON, the proxy's limit; nothing was sent. Pass a reference (a path, a URL, an id) "
            "instead of the content, or split the work into smaller calls"
        )


def json_size(value: Any, stop_after: int) -> int:
    """About how many bytes ``value`` takes as compact JSON; stops counting past ``stop_after``.

    Strings count their characters plus quotes (an underestimate for non-ASCII text, which
    JSON may escape), numbers and literals a small constant: a bound, not an exact size."""
    size = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            size += len(item) + 2
        elif isinstance(item, dict):
            size += 1 + max(len(item), 1)  # braces and commas
            for key, inner in item.items():
                size += len(str(key)) + 3
                stack.append(inner)
        elif isinstance(item, list | tuple):
            size += 1 + max(len(item), 1)
            stack.extend(item)
        else:
            size += 8
        if size > stop_after:
            return size
    return size


def text_for_audit(text: str, limits: InputLimits) -> str | dict[str, Any]:
    """``text`` itself when short; else a bounded excerpt, its SHA-256 and its length."""
    if len(text) <= limits.audit_excerpt_chars:
        return text
    return {
        "excerpt": text[: limits.audit_excerpt_chars],
        "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        "chars": len(text),
    }


def bound_record(fields: dict[str, Any], limits: InputLimits) -> dict[str, Any]:
    """The audit fields as they are when the entry fits its size limit; else with every long
    string replaced by :func:`text_for_audit` and, if that is not enough, the largest fields
    summarised the same way (``"truncated": true`` says so)."""
    if _encoded_size(fields) <= limits.max_audit_entry_bytes:
        return fields
    bounded = {key: _bound(value, limits, 0) for key, value in fields.items()}
    bounded["truncated"] = True
    if _encoded_size(bounded) <= limits.max_audit_entry_bytes:
        return bounded
    by_size = sorted(bounded, key=lambda key: _encoded_size(bounded[key]), reverse=True)
    for key in by_size:
        text = json.dumps(bounded[key], ensure_ascii=False, separators=(",", ":"), default=str)
        bounded[key] = text_for_audit(text, limits)
        if _encoded_size(bounded) <= limits.max_audit_entry_bytes:
            break
    return bounded


def _bound(value: Any, limits: InputLimits, depth: int) -> Any:
    if isinstance(value, str):
        return text_for_audit(value, limits)
    if depth >= 8:
        return value if not isinstance(value, dict | list) else "(nested too deeply)"
    if isinstance(value, dict):
        return {str(k): _bound(v, limits, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_bound(v, limits, depth + 1) for v in value]
    return value


def _encoded_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))


class BoundedAudit:
    """An audit log (either backend) whose entries are bounded by :func:`bound_record`."""

    def __init__(self, inner: Any, limits: InputLimits) -> None:
        self.inner = inner
        self.limits = limits

    def write(self, event: str, **fields: Any) -> None:
        self.inner.write(event, **bound_record(fields, self.limits))

    def read(self) -> list[dict[str, Any]]:
        return self.inner.read()

    def close(self) -> None:
        self.inner.close()
