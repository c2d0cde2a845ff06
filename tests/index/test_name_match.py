from __future__ import annotations

import numpy as np
import pytest

from cartograph.index.methods import Evidence, HybridParams, hybrid_parts, hybrid_scores
from cartograph.index.name_match import NameMatch

TOOLS = [
    ("mcp-server-git", "git_log"),
    ("mcp-server-git", "git_commit"),
    ("notion", "search_pages"),
    ("github", "listPullRequests"),
]
SERVERS = ["mcp-server-git", "notion", "github"]
SERVER_OF_TOOL = np.asarray([0, 0, 1, 2])


def test_tool_share_is_the_part_of_the_tools_name_the_query_says():
    names = NameMatch(TOOLS, SERVERS, SERVER_OF_TOOL)
    share = names.shares("show the git log of this repository")[0]
    assert share.tolist() == pytest.approx([1.0, 0.5, 0.0, 0.0])
    # camelCase names meet plain words, plurals fold
    assert names.shares("list the open pull requests")[0][3] == pytest.approx(1.0)


def test_server_share_names_the_product_without_generic_server_words():
    names = NameMatch(TOOLS, SERVERS, SERVER_OF_TOOL)
    assert names.shares("find my notes in Notion")[1].tolist() == [0.0, 0.0, 1.0, 0.0]
    # "mcp" and "server" name no product: a query saying them matches no server
    assert names.shares("which mcp server is up")[1].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert names.shares("git status")[1].tolist() == [1.0, 1.0, 0.0, 0.0]


def test_name_terms_join_the_fusion_only_where_weighted():
    ev = Evidence(
        tool_cos=np.asarray([0.50, 0.52], dtype=np.float32),
        centroid_cos=np.zeros(2, dtype=np.float32),
        server_cos=np.zeros(2, dtype=np.float32),
        bm25=np.zeros(2, dtype=np.float32),
        tool_server=np.asarray([0, 1]),
        n_servers=2,
        server_name_share=np.asarray([1.0, 0.0], dtype=np.float32),
    )
    off = HybridParams(w_server_name=0.0)
    on = HybridParams(w_server_name=5.0)
    assert "server_name" not in hybrid_parts(ev, off)
    assert hybrid_parts(ev, on)["server_name"].tolist() == [5.0, 0.0]
    assert np.argmax(hybrid_scores(ev, off)) == 1
    assert np.argmax(hybrid_scores(ev, on)) == 0
