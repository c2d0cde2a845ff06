"""Client policies: deny wins over allow; bad policy files are config errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cartograph.access import (
    Policy,
    load_policy,
)
from cartograph.errors import ConfigError


def test_deny_wins_over_allow_and_a_bare_name_is_a_whole_server() -> None:
    policy = Policy(allow=("github", "fs.read_*"), deny=("*.delete_*",))
    assert policy.permits("github", "create_issue")
    assert not policy.permits("github", "delete_repo")
    assert policy.permits("fs", "read_file") and not policy.permits("fs", "write_file")
    assert not policy.permits("slack", "post")
    assert policy.may_see_server("github") and not policy.may_see_server("slack")
    assert not Policy(deny=("slack",)).may_see_server("slack")


def test_policy_file_with_unknown_keys_or_bad_limits_is_a_config_error(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"allow": ["a.*"], "max_concurrent": 2}), encoding="utf-8")
    assert load_policy(good) == Policy(allow=("a.*",), max_concurrent=2)
    for body in ({"alow": ["a"]}, {"allow": "a.*"}, {"calls_per_minute": 0}, []):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(body), encoding="utf-8")
        with pytest.raises(ConfigError):
            load_policy(bad)
