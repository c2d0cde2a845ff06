"""The reranker: the shipped cross-encoder loads checked, scores real pairs, reorders only stage
one's top 20, and is switched by flag, environment and workspace setting in that order."""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import replace

import numpy as np
import pytest

from cartograph.errors import ConfigError, EmbedderError
from cartograph.index.packaged import models_dir
from cartograph.index.rerank import (
    RERANK_DEPTH,
    RERANK_ENV,
    RERANKER,
    WORKERS_ENV,
    Reranker,
    load_reranker,
    mixed_scores,
    rerank_wanted,
    rerank_workers,
    top_indexes,
    usable_cpus,
    workspace_reranker,
)
from cartograph.workspace import Workspace


@pytest.fixture(scope="module")
def reranker() -> Reranker:
    return load_reranker()


def with_mix(model: Reranker, mix: float) -> Reranker:
    clone = Reranker(model.folder, {**model.manifest, "mix": mix})
    assert clone.mix == mix
    return clone


def test_the_shipped_model_loads_checked_and_names_its_weights(reranker):
    sha = json.loads((models_dir() / RERANKER / "manifest.json").read_text())["files"]
    assert reranker.model == f"cartograph/{RERANKER}@{sha['model.onnx'][:12]}"
    assert 0.0 <= reranker.mix <= 1.0


def test_the_model_is_loaded_once_a_process(reranker):
    assert load_reranker() is reranker  # the proxy reopens its index on every card change
    assert load_reranker(threads=2) is not reranker


def test_a_damaged_model_file_is_named(tmp_path):
    folder = tmp_path / RERANKER
    shutil.copytree(models_dir() / RERANKER, folder)
    with (folder / "model.onnx").open("r+b") as fh:
        fh.truncate(1000)
    with pytest.raises(EmbedderError, match=r"model\.onnx: sha256 .* reinstall"):
        load_reranker(folder)


def test_scores_are_one_logit_a_pair_whatever_the_batch(reranker):
    query = "show the last commits of the git repository"
    docs = ["git log: Show the commit history of a repository. [git]"] + [
        f"weather forecast for city number {i}: temperature and rain. [weather]" for i in range(40)
    ]
    together = reranker.score(query, docs)
    alone = np.asarray([reranker.score(query, [d])[0] for d in docs[:3]])
    assert together.shape == (41,)
    assert np.allclose(together[:3], alone, atol=1e-3)  # batches of 32 and of 1 agree
    assert reranker.score(query, []).shape == (0,)


def test_each_pair_runs_unpadded_with_the_logits_of_a_padded_batch():
    reranker = load_reranker(int8_matmul=False)  # int8 products quantise the padding too
    query = "remember that Alice works at Acme"
    docs = ["memory create_entities: Store facts about people. [memory]", "time now. [time]"] + [
        "slack post_message: Send a message to a channel, with a thread and attachments. " * i
        for i in range(1, 4)
    ]
    encs = reranker._tok.encode_batch(  # the tokenizer pads a batch to its longest pair
        [(query, d) for d in docs]
    )
    assert len({sum(e.attention_mask) for e in encs}) == len(docs)  # really different lengths
    feeds = {
        "input_ids": np.asarray([e.ids for e in encs], dtype=np.int64),
        "attention_mask": np.asarray([e.attention_mask for e in encs], dtype=np.int64),
        "token_type_ids": np.asarray([e.type_ids for e in encs], dtype=np.int64),
    }
    (padded,) = reranker._sess.run(["logits"], feeds)
    assert np.allclose(reranker.score(query, docs), np.asarray(padded).reshape(-1), atol=1e-3)


TASKS = {
    "show the last commits of the git repository": [
        "git log: Show the commit history of the repository, newest first. [git]",
        "git commit: Record staged changes as a new commit. [git]",
        "git diff: Show the changes between the working tree and the index. [git]",
        "github list_commits: List the commits of a branch on GitHub. [github]",
        "slack post_message: Post a message to a Slack channel. [slack]",
    ],
    "remember that Alice works at Acme": [
        "memory create_entities: Store new people, places and facts in the knowledge graph.",
        "memory add_observations: Add facts to an entity already in the knowledge graph.",
        "memory read_graph: Read the whole knowledge graph.",
        "everything toggle_subscriber_updates: Turn resource update notifications on or off.",
        "time get_current_time: Tell the current time in a timezone.",
    ],
}


def test_int8_weight_products_rank_the_pairs_as_float_ones_do():
    int8 = load_reranker(int8_matmul=True)
    floats = load_reranker(int8_matmul=False)
    assert int8.int8_matmul and not floats.int8_matmul and int8._sess is not floats._sess
    gaps = []
    for task, docs in TASKS.items():
        a, b = int8.score(task, docs), floats.score(task, docs)
        assert not np.array_equal(a, b)  # really another computation
        gaps += list(np.abs(a - b))
    # measured 0.10 mean, 0.70 most over 800 fleet pairs with logits spread over 4.2; a wrong
    # scale or weight layout moves logits by whole units
    assert np.mean(gaps) < 0.15 and np.max(gaps) < 0.5, gaps
    git = next(iter(TASKS))
    assert np.argmax(int8.score(git, TASKS[git])) == np.argmax(floats.score(git, TASKS[git])) == 0


def test_pairs_shared_among_workers_get_the_logits_of_one_worker(reranker):
    one = Reranker(reranker.folder, reranker.manifest, workers=1)
    four = Reranker(reranker.folder, reranker.manifest, workers=4)
    assert one._pool is None and four._pool is not None
    for task, docs in TASKS.items():
        many = docs * 4  # more pairs than workers, of different lengths
        assert np.array_equal(four.score(task, many), one.score(task, many))
    assert four.score("anything", []).shape == (0,)


def test_concurrent_discovers_share_the_workers_and_keep_their_own_logits(reranker):
    """The proxy serves discovers on several threads at once; they share one reranker."""
    from concurrent.futures import ThreadPoolExecutor

    two = Reranker(reranker.folder, reranker.manifest, workers=2)
    jobs = [(task, docs[i:] + docs[:i]) for task, docs in TASKS.items() for i in range(4)]
    alone = [two.score(task, docs) for task, docs in jobs]
    with ThreadPoolExecutor(len(jobs)) as pool:
        together = list(pool.map(lambda job: two.score(*job), jobs * 3))
    for i, got in enumerate(together):
        assert np.array_equal(got, alone[i % len(jobs)])


def test_usable_cpus_follow_the_affinity_mask(monkeypatch):
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert usable_cpus() == 3


def test_workers_come_from_the_argument_then_the_environment_then_the_cpus(monkeypatch, caplog):
    monkeypatch.delenv(WORKERS_ENV, raising=False)
    assert rerank_workers() == min(4, usable_cpus())
    monkeypatch.setattr("cartograph.index.rerank.usable_cpus", lambda: 16)
    assert rerank_workers() == 4  # at most 4: 20 pairs gain little past that
    monkeypatch.setattr("cartograph.index.rerank.usable_cpus", lambda: 1)
    assert rerank_workers() == 1
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert rerank_workers() == 3 and rerank_workers(2) == 2 and rerank_workers(0) == 1
    monkeypatch.setenv(WORKERS_ENV, "many")
    with caplog.at_level(logging.WARNING):
        assert rerank_workers() == 1
    assert WORKERS_ENV in caplog.text and "'many'" in caplog.text


def test_the_trained_head_prefers_the_tool_that_does_the_task(reranker):
    query = "show the last commits of the git repository"
    fits = "git log: Show the commit history of the repository, newest first. [git]"
    unrelated = [
        "slack post_message: Post a message to a Slack channel. [slack]",
        "weather forecast: Get the weather forecast for a city. [weather]",
    ]
    logits = reranker.score(query, [fits, *unrelated])
    # a margin, not just an order: an untrained head gives near-equal logits in any order
    assert logits[0] - logits[1:].max() > 1.0, logits


def test_mix_zero_keeps_stage_one_and_one_follows_the_reranker():
    first = np.asarray([3.0, 2.0, 1.0])
    rerank = np.asarray([-1.0, 0.0, 5.0])
    assert list(np.argsort(-mixed_scores(rerank, first, 0.0))) == [0, 1, 2]
    assert list(np.argsort(-mixed_scores(rerank, first, 1.0))) == [2, 1, 0]
    flat = mixed_scores(np.zeros(3), first, 1.0)  # no spread: no opinion, not a division by 0
    assert np.all(flat == 0.0)


def test_top_indexes_break_ties_by_position():
    assert list(top_indexes(np.asarray([1.0, 2.0, 2.0, 0.5, 2.0]), 3)) == [1, 2, 4]
    assert list(top_indexes(np.asarray([1.0]), 5)) == [0]


def test_reranking_reorders_only_stage_ones_top_twenty(index, reranker):
    task = "post a message to the team channel"
    stage_one = index.search(task, k=len(index))
    depth = {(h.server, h.tool) for h in stage_one[:RERANK_DEPTH]}
    reranked = replace(index, reranker=reranker).search(task, k=5)
    assert len(reranked) == 5 and {(h.server, h.tool) for h in reranked} <= depth
    assert all(h.cosine is not None for h in reranked)  # abstention still reads stage one
    kept = replace(index, reranker=with_mix(reranker, 0.0)).search(task, k=5)
    assert [(h.server, h.tool) for h in kept] == [(h.server, h.tool) for h in stage_one[:5]]
    alone = replace(index, reranker=with_mix(reranker, 1.0)).search(task, k=5)
    candidates = stage_one[:RERANK_DEPTH]
    texts = [index.documents[index.position(h.server, h.tool)].dense for h in candidates]
    best = np.argsort(-reranker.score(task, texts), kind="stable")[:5]
    assert [(h.server, h.tool) for h in alone] == [
        (candidates[i].server, candidates[i].tool) for i in best
    ]


def test_flag_wins_over_environment_which_wins_over_the_setting(monkeypatch, caplog):
    monkeypatch.delenv(RERANK_ENV, raising=False)
    assert rerank_wanted(None) is False
    assert rerank_wanted(True) is True
    monkeypatch.setenv(RERANK_ENV, "1")
    assert rerank_wanted(False) is True and rerank_wanted(False, flag=False) is False
    monkeypatch.setenv(RERANK_ENV, "off")
    assert rerank_wanted(True) is False and rerank_wanted(True, flag=True) is True
    monkeypatch.setenv(RERANK_ENV, "maybe")
    with caplog.at_level(logging.WARNING):
        assert rerank_wanted(True) is True
    assert "CARTOGRAPH_RERANK" in caplog.text and "ignored" in caplog.text


def test_the_workspace_setting_is_read_and_checked(tmp_path, monkeypatch):
    monkeypatch.delenv(RERANK_ENV, raising=False)
    ws = Workspace(tmp_path / "home")
    ws.root.mkdir()
    assert workspace_reranker(ws) is None
    ws.config_file.write_text(json.dumps({"rerank": True}))
    found = workspace_reranker(ws)
    assert found is not None and found.model.startswith(f"cartograph/{RERANKER}@")
    assert workspace_reranker(ws, flag=False) is None
    ws.config_file.write_text(json.dumps({"rerank": "yes"}))
    with pytest.raises(ConfigError, match="rerank") as err:
        workspace_reranker(ws)
    assert "config.json" in str(err.value)
