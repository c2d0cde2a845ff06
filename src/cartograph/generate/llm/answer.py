"""What the LLM generator accepts from the model: the answer's schema, parsing and checks.

Pure functions only (no I/O). :func:`parse_fields` reads the JSON object of an answer field by
field (:data:`ANSWER_SCHEMA`); :func:`check_fields` says why each field may not become card text:
a run of :data:`MAX_SHARED_WORDS` words shared with the publisher's text
(:func:`cartograph.generate.text.shared_run`), with the instructions or with the prompt's worked
example, model-directed text of its own, a summary out of bounds or the same as another tool's of
the server. Field by field, so the generator can keep what the model got right and fall back to
the bootstrap text for the rest. :func:`parse_answer` and :func:`check_answer` are the
whole-answer forms. A change here is a prompt change: bump
:data:`cartograph.generate.llm.prompt.PROMPT_VERSION`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from jsonschema.validators import Draft202012Validator

from cartograph.generate.llm.prompt import EXAMPLE_ANSWER, EXAMPLE_FACTS, SYSTEM_PROMPT, ToolHint
from cartograph.generate.text import directive_reason, shared_run, tokenise

MAX_SHARED_WORDS = 8
"""An answer that repeats this many consecutive words of the publisher's text is rejected."""
FIELDS = ("summary", "usage", "example_tasks", "tags")
"""The fields the model writes, each checked (and, failing, replaced) on its own."""

SUMMARY_WORDS = (3, 30)
USAGE_WORDS = 45

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "minLength": 8, "maxLength": 220},
        "usage": {"type": "string", "maxLength": 300},
        "example_tasks": {
            "type": "array",
            "items": {"type": "string", "minLength": 4, "maxLength": 140},
            "minItems": 1,
            "maxItems": 3,
        },
        "tags": {
            "type": "array",
            "items": {"type": "string", "minLength": 2, "maxLength": 32},
            "maxItems": 6,
        },
    },
    "required": ["summary", "usage", "example_tasks", "tags"],
    "additionalProperties": False,
}
_FIELD_VALIDATORS = {
    name: Draft202012Validator(schema) for name, schema in ANSWER_SCHEMA["properties"].items()
}


def wire_schema() -> dict[str, Any]:
    """:data:`ANSWER_SCHEMA` without length bounds, for the server's structured-output grammar
    (llama.cpp turns each bound into grammar repetitions, which made sampling ~10x slower here);
    the bounds are still checked on the answer."""
    bounds = {"minLength", "maxLength", "minItems", "maxItems"}

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in bounds}
        return node

    return strip(ANSWER_SCHEMA)


_CHANGES_NOTHING = re.compile(
    r"\bwithout\s+(?:changing|removing|deleting|modifying|altering|touching)\b|"
    r"\b(?:changes|modifies|alters)\s+nothing\b|\bread[- ]only\b|\bonly\s+reads\b",
    re.IGNORECASE,
)
_WRITE_VERBS = frozenset(
    [
        "add",
        "append",
        "archive",
        "assign",
        "clear",
        "close",
        "create",
        "delete",
        "drop",
        "edit",
        "insert",
        "merge",
        "modify",
        "move",
        "patch",
        "post",
        "purge",
        "put",
        "remove",
        "rename",
        "reset",
        "restore",
        "revoke",
        "save",
        "send",
        "set",
        "start",
        "stop",
        "submit",
        "toggle",
        "update",
        "upload",
        "upsert",
        "write",
    ]
)
_IDENTIFIER = re.compile(r"[A-Za-z][\w.-]*[_.-][\w.-]*(?:\s*\(.*\))?")
"""One word with ``_``, ``.`` or ``-`` inside, maybe called (``delete_note({id: 1})``): a tool
name or code, not a sentence or a request."""
_INSTRUCTION_WORDS = tuple(tokenise(SYSTEM_PROMPT))
_EXAMPLE_WORDS = tuple(
    tuple(tokenise(text))
    for text in (
        EXAMPLE_FACTS,
        EXAMPLE_ANSWER["summary"],
        EXAMPLE_ANSWER["usage"],
        *EXAMPLE_ANSWER["example_tasks"],
    )
)


class AnswerRejected(ValueError):
    """An answer that may not become card text; the message says why (fed back to the model)."""


def parse_answer(content: str) -> dict[str, Any]:
    """The JSON object in ``content`` (code fences and chatter around it are ignored), all four
    fields valid; otherwise :class:`AnswerRejected` naming the first problem."""
    fields, problems = parse_fields(content)
    if problems:
        raise AnswerRejected(next(iter(problems.values())))
    data = _object_of(content)
    extra = sorted(set(data) - set(FIELDS))
    if extra:
        raise AnswerRejected(f"answer: unexpected field(s) {', '.join(map(repr, extra))}")
    return fields


def parse_fields(content: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The valid, normalised fields of the JSON object in ``content`` and why each other field
    is not valid (missing, wrong type, out of bounds); unknown fields are ignored.
    :class:`AnswerRejected` when ``content`` holds no JSON object at all."""
    data = _object_of(content)
    fields: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for name in FIELDS:
        if name not in data:
            problems[name] = f"answer: {name!r} is a required property"
            continue
        error = next(iter(_FIELD_VALIDATORS[name].iter_errors(data[name])), None)
        if error is not None:
            where = "/".join([name, *(str(p) for p in error.absolute_path)])
            problems[name] = f"{where}: {error.message[:160]}"
            continue
        fields[name] = data[name]
    return normalise(fields), problems


def _object_of(content: str) -> dict[str, Any]:
    start, end = content.find("{"), content.rfind("}")
    if start < 0 or end <= start:
        raise AnswerRejected("the answer was not a JSON object")
    try:
        data = json.loads(content[start : end + 1])
    except json.JSONDecodeError as exc:
        raise AnswerRejected(f"the answer was not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise AnswerRejected("the answer was not a JSON object")
    return data


def normalise(data: dict[str, Any]) -> dict[str, Any]:
    """Whitespace collapsed, tags lower-cased and deduplicated, tasks deduplicated (only the
    fields present)."""
    out: dict[str, Any] = {}
    for name in ("summary", "usage"):
        if name in data:
            out[name] = " ".join(str(data[name]).split())
    for name, fold in (("example_tasks", False), ("tags", True)):
        if name not in data:
            continue
        items: list[str] = []
        for item in data[name]:
            text = " ".join(str(item).split())
            text = text.lower() if fold else text
            if text and text not in items:
                items.append(text)
        out[name] = items
    return out


def summary_key(summary: str) -> str:
    """Two summaries collide when their words are the same."""
    return " ".join(tokenise(summary))


def check_answer(
    answer: dict[str, Any], hint: ToolHint, taken: Iterable[tuple[str, str]] = ()
) -> list[str]:
    """Why ``answer`` may not become card text (empty when it may)."""
    return [p for problems in check_fields(answer, hint, taken).values() for p in problems]


def check_fields(
    answer: dict[str, Any], hint: ToolHint, taken: Iterable[tuple[str, str]] = ()
) -> dict[str, list[str]]:
    """Why each field of ``answer`` may not become card text (fields with no problem, and
    fields ``answer`` does not hold, are left out: an empty dict means all it holds may)."""
    found: dict[str, list[str]] = {}
    summary = answer.get("summary", "")
    n = len(tokenise(summary))
    if "summary" in answer and not SUMMARY_WORDS[0] <= n <= SUMMARY_WORDS[1]:
        found.setdefault("summary", []).append(
            f"summary has {n} words; write {SUMMARY_WORDS[0]} to {SUMMARY_WORDS[1]} words"
        )
    if len(tokenise(answer.get("usage", ""))) > USAGE_WORDS:
        found.setdefault("usage", []).append(f"usage is longer than {USAGE_WORDS} words")
    if "example_tasks" in answer and not answer["example_tasks"]:
        found.setdefault("example_tasks", []).append("give at least one example task")
    texts = [("summary", "summary", summary), ("usage", "usage", answer.get("usage", ""))]
    texts += [
        ("example_tasks", f"example task {i + 1}", t)
        for i, t in enumerate(answer.get("example_tasks", []))
    ]
    for field, label, text in texts:
        for problem in _text_problems(label, text, hint):
            found.setdefault(field, []).append(problem)
    mine = summary_key(summary) if "summary" in answer else ""
    for other, other_summary in taken:
        if mine and summary_key(other_summary) == mine:
            found.setdefault("summary", []).append(f"summary is the same as tool {other}'s")
    borrowed = _example_tags(answer.get("tags", []), hint)
    if borrowed:
        found.setdefault("tags", []).append(
            f"tags {', '.join(borrowed)} come from the worked example; tag this tool's own topics"
        )
    return found


def _example_tags(tags: list[str], hint: ToolHint) -> list[str]:
    """The worked example's tags in ``tags`` that nothing about this tool mentions."""
    own = {w for source in hint.sources for w in source}
    own |= set(tokenise(f"{hint.name} {hint.title or ''} {' '.join(hint.params)} {hint.hint}"))
    return [t for t in tags if t in EXAMPLE_ANSWER["tags"] and not set(tokenise(t)) <= own]


def _writes(hint: ToolHint) -> bool:
    """Whether the tool changes data, by its annotations or by the verb its name starts with."""
    if "readOnlyHint=true" in hint.annotations:
        return False
    if "destructiveHint=true" in hint.annotations or "readOnlyHint=false" in hint.annotations:
        return True
    first = tokenise(hint.name.replace("_", " ").replace("-", " "))[:1]
    return bool(first) and first[0] in _WRITE_VERBS


def _text_problems(label: str, text: str, hint: ToolHint) -> list[str]:
    words = tokenise(text)
    problems: list[str] = []
    if _IDENTIFIER.fullmatch(text.strip().rstrip(".")):
        problems.append(f"{label} is only a name ({text.strip()!r}); write words a person reads")
    if not label.startswith("example") and _writes(hint) and _CHANGES_NOTHING.search(text):
        problems.append(f"{label} says it changes nothing, but {hint.name} changes data")
    for source in hint.sources:
        run = shared_run(source, words, MAX_SHARED_WORDS)
        if run is not None:
            problems.append(
                f"{label} copies the publisher's words {' '.join(run)!r}; use your own words"
            )
            break
    for line in hint.siblings:
        other, _, summary = line.partition(": ")
        run = shared_run(tuple(tokenise(summary)), words, MAX_SHARED_WORDS)
        if run is not None:
            problems.append(f"{label} copies the summary of {other}; describe {hint.name}")
            break
    reason = directive_reason(text)
    if reason is not None:
        problems.append(f"{label} gives orders ({reason}); describe the tool instead")
    run = shared_run(_INSTRUCTION_WORDS, words, MAX_SHARED_WORDS)
    if run is not None:
        problems.append(f"{label} repeats the instructions {' '.join(run)!r}")
    for example in _EXAMPLE_WORDS:
        run = shared_run(example, words, MAX_SHARED_WORDS)
        if run is not None:
            problems.append(f"{label} copies the worked example {' '.join(run)!r}")
            break
    return problems


@dataclass(frozen=True)
class Written:
    """What the model wrote for one tool: its accepted fields, and why the others were not."""

    fields: dict[str, Any]
    kept: dict[str, str]

    def cached(self) -> dict[str, Any]:
        return {**self.fields, "bootstrap_fields": self.kept} if self.kept else dict(self.fields)


def judge(
    content: str, hint: ToolHint, taken: tuple[tuple[str, str], ...], good: dict[str, Any]
) -> dict[str, str]:
    """Adds the fields of ``content`` that pass every check to ``good`` (a field already there
    stays); returns why each field still missing is wrong (empty: all of them are in)."""
    try:
        fields, bad = parse_fields(content)
    except AnswerRejected as exc:
        return {f: str(exc) for f in FIELDS if f not in good}
    found = check_fields(fields, hint, taken)
    for name, value in fields.items():
        if name not in found and name not in good:
            good[name] = value
    bad.update({name: "; ".join(p) for name, p in found.items()})
    return {f: bad.get(f, "no answer") for f in FIELDS if f not in good}
