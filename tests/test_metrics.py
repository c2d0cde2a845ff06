"""The Prometheus text that cartograph.metrics writes, read back by prometheus_client's parser."""

from __future__ import annotations

import threading

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cartograph.metrics import Counter, Family, Histogram, render


def parsed(text: str) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for family in text_string_to_metric_families(text):
        out[family.name] = {
            "type": family.type,
            "help": family.documentation,
            "samples": {(s.name, tuple(sorted(s.labels.items()))): s.value for s in family.samples},
        }
    return out


def test_a_histogram_has_cumulative_buckets_a_sum_and_a_count() -> None:
    h = Histogram("t_seconds", "time", ("server",), buckets=(0.01, 0.1, 1.0))
    for value in (0.005, 0.05, 0.05, 0.5, 7.0):
        h.observe(value, server="git")
    got = parsed(render([h]))["t_seconds"]
    assert got["type"] == "histogram" and got["help"] == "time"
    samples = got["samples"]
    assert isinstance(samples, dict)
    buckets = [
        samples[("t_seconds_bucket", (("le", le), ("server", "git")))]
        for le in ("0.01", "0.1", "1.0", "+Inf")
    ]
    assert buckets == [1, 3, 4, 5]
    assert samples[("t_seconds_count", (("server", "git"),))] == 5
    assert samples[("t_seconds_sum", (("server", "git"),))] == pytest.approx(7.605)
    assert h.count(server="git") == 5


def test_counters_start_at_zero_without_labels_and_escape_label_values() -> None:
    plain = Counter("refused_total", "refusals")
    labelled = Counter("calls_total", 'calls "by" server\nand more', ("server",))
    labelled.inc(server='we"ird\\name\nx')
    labelled.inc(2, server='we"ird\\name\nx')
    got = parsed(render([plain, labelled]))
    assert got["refused"]["samples"] == {("refused_total", ()): 0.0}
    assert got["calls"]["help"] == 'calls "by" server\nand more'
    assert got["calls"]["samples"] == {("calls_total", (("server", 'we"ird\\name\nx'),)): 3.0}


def test_keep_drops_the_samples_of_servers_a_client_may_not_see() -> None:
    c = Counter("calls_total", "calls", ("server",))
    c.inc(server="git")
    c.inc(server="secret")
    gauge = Family("up", "gauge", "up", [({"server": "git"}, 1), ({"server": "secret"}, 0)])
    text = render([c, gauge], keep=lambda labels: labels.get("server") != "secret")
    assert "secret" not in text
    got = parsed(text)
    assert got["up"]["samples"] == {("up", (("server", "git"),)): 1.0}


def test_wrong_labels_are_refused() -> None:
    c = Counter("calls_total", "calls", ("server",))
    with pytest.raises(ValueError, match="server"):
        c.inc(tool="x")


def test_concurrent_observations_are_all_counted() -> None:
    h = Histogram("t_seconds", "time")

    def work() -> None:
        for _ in range(2000):
            h.observe(0.002)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert h.count() == 8000
