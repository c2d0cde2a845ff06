"""Server identity (generate/bootstrap/identity.py), example values the real servers accept
(generate/bootstrap/values.py) and sibling contrast (generate/bootstrap/siblings.py)."""

from __future__ import annotations

from cartograph.generate.bootstrap.generator import generate_card
from cartograph.generate.bootstrap.identity import product_of
from cartograph.generate.bootstrap.lexicon import sql_gloss
from cartograph.generate.bootstrap.schema import example_arguments
from cartograph.generate.bootstrap.siblings import apart, closest, contrast, profile
from cartograph.upstream.snapshot import ServerSnapshot


def _server(name: str, **kw) -> ServerSnapshot:
    tools = kw.pop("tools", [{"name": "ping", "description": "Ping it."}])
    return ServerSnapshot(name=name, tools=tools, **kw)


def test_abbreviations_users_do_not_say_become_the_product_they_know() -> None:
    gcloud = product_of(_server("gcloud", package="@google-cloud/gcloud-mcp"))
    assert gcloud.display == "Google Cloud CLI" and gcloud.vendor == "Google"
    assert "gcloud" in gcloud.keywords() and "google-cloud" in gcloud.keywords()
    ms365 = product_of(_server("ms365", server_info={"name": "Microsoft365MCP"}))
    assert ms365.named == "Microsoft 365" and "outlook" in ms365.keywords()


def test_names_are_cased_as_the_servers_own_texts_case_them() -> None:
    tools = [{"name": "list_repos", "description": "List GitHub repositories of a user."}]
    github = product_of(
        _server("github", tools=tools, package="@modelcontextprotocol/server-github")
    )
    assert github.display == "GitHub" and github.vendor is None
    dynamo = product_of(
        _server("aws-dynamodb", tools=[{"name": "scan", "description": "Scan a DynamoDB table."}])
    )
    assert dynamo.display == "AWS DynamoDB" and dynamo.vendor == "Amazon Web Services"


def test_a_packagers_scope_is_an_alias_and_a_tool_prefix_is_a_name() -> None:
    tools = [
        {"name": f"jira_{v}", "description": f"{v} an issue."} for v in ("get", "create", "edit")
    ]
    jira = product_of(
        _server("jira-aashari", tools=tools, package="@aashari/mcp-server-atlassian-jira")
    )
    assert jira.display == "Jira" and jira.vendor == "Atlassian"
    assert "aashari" in jira.aliases
    ha = product_of(
        _server(
            "home-assistant", tools=[{"name": f"ha_{n}"} for n in ("get_state", "call", "list")]
        )
    )
    assert ha.display == "Home Assistant"


def test_a_product_named_by_a_common_word_is_generic() -> None:
    time = product_of(
        _server(
            "time", tools=[{"name": "get_current_time", "description": "Get the current time."}]
        )
    )
    assert time.generic
    assert not product_of(
        _server("linear", tools=[{"name": "x", "description": "A Linear issue."}])
    ).generic


def test_example_values_are_ones_a_server_can_accept() -> None:
    def args(props: dict, *name: str) -> dict:
        schema = {"type": "object", "properties": props, "required": list(props)}
        return example_arguments(schema, name)

    assert args({"repo_path": {"type": "string"}}, "git", "status") == {"repo_path": "."}
    assert args({"path": {"type": "string"}}, "list", "directory") == {"path": "."}
    assert args({"path": {"type": "string"}}, "read", "text", "file") == {"path": "README.md"}
    assert args({"revision": {"type": "string"}}, "git", "show") == {"revision": "HEAD"}
    assert args({"target": {"type": "string"}}, "git", "diff") == {"target": "HEAD"}
    sql = {"query": {"type": "string", "description": "SELECT SQL query to execute"}}
    assert args(sql, "read", "query") == {"query": "SELECT 1"}
    # a tool that only writes (sqlite's write_query rejects SELECT) gets a statement it runs
    any_sql = {"query": {"type": "string", "description": "SQL query to execute"}}
    assert args(any_sql, "write", "query")["query"].startswith("INSERT INTO ")
    assert args(any_sql, "execute", "sql") == {"query": "SELECT 1"}
    create = {"query": {"type": "string", "description": "CREATE TABLE SQL statement"}}
    assert args(create, "create", "table")["query"].startswith("CREATE TABLE ")
    assert args(any_sql, "apply", "migration")["query"].startswith("CREATE TABLE ")
    quoted = {
        "branch_type": {
            "type": "string",
            "description": "List local branches ('local'), remote ('remote') or all ('all').",
        }
    }
    assert args(quoted, "git", "branch") == {"branch_type": "local"}
    named = {"plannerTaskId": {"type": "string", "description": "Use 'plannerTaskId' and 'id'."}}
    assert args(named, "get", "task") != {"plannerTaskId": "plannerTaskId"}


def test_contrast_says_what_differs_from_the_closest_sibling() -> None:
    plain = profile("list_directory", "list", "List a directory.", ["path"], [], "read")
    sizes = profile(
        "list_directory_with_sizes",
        "list",
        "List a directory with sizes.",
        ["path"],
        ["sortBy"],
        "read",
    )
    tree = profile("directory_tree", None, "Show a folder tree.", ["path"], [], "read")
    found = closest(sizes, [plain, sizes, tree])
    assert found is not None and found[0].name == "list_directory"
    assert contrast(sizes, plain) == "Unlike list_directory, it also covers sizes and takes sortBy."
    assert contrast(plain, sizes) == "Unlike list_directory_with_sizes, it leaves out sizes."
    one = profile("get_user", "get", "Get a user.", ["id"], [], "read")
    many = profile("get_users", "get", "Get users.", [], [], "read", ["ids"])
    assert "works on one at a time" in contrast(one, many)
    delete = profile("delete_user", "delete", "Delete a user.", ["id"], [], "destructive")
    assert "can delete data" in contrast(delete, one)
    v2 = profile("search_v2", "search", "Search.", ["q"], [], "read")
    assert "is the v2 version" in contrast(
        v2, profile("search", "search", "Search.", ["q"], [], "read")
    )


def test_apart_names_the_product_as_users_write_it_not_its_fragments() -> None:
    mine = profile("create_merge_request", "create", "Create a merge request.", ["id"], [], "write")
    theirs = profile(
        "create_merge_request_note", "create", "Add a note to a merge request.", ["id"], [], "write"
    )
    said = apart(mine, [theirs], ("gitlab", "git", "lab"), "GitLab")
    assert said.startswith("What sets it apart: it works in GitLab")
    assert "gitlab" not in said and " git" not in said and " lab" not in said
    # within its own server (no product given) the product's words are not said at all
    assert "GitLab" not in apart(mine, [theirs])


def test_sql_statements_rank_by_what_they_do_and_get_examples_of_their_kind() -> None:
    write = "Execute an INSERT, UPDATE, or DELETE query on the SQLite database"
    assert sql_gloss(write) == ["add", "rows", "records", "change", "remove"]
    assert sql_gloss("Send a DELETE request to the URL.") == []  # not SQL
    query = {"query": {"type": "string", "description": "SQL query to execute"}}
    server = _server(
        "sqlite",
        tools=[
            {
                "name": "write_query",
                "description": write,
                "inputSchema": {"type": "object", "properties": query, "required": ["query"]},
            },
            {"name": "list_tables", "description": "List all tables in the SQLite database"},
        ],
    )
    card = generate_card(server, created_at="2026-12-06T00:00:00Z").card
    entry = card.tool("write_query")
    assert entry is not None
    assert {"add", "rows", "records"} <= set(entry.keywords)  # ranking-only words
    assert "rows" not in entry.summary  # never in what the agent reads
    assert entry.examples and entry.examples[0].arguments["query"].startswith("INSERT INTO ")


def test_apart_says_words_that_stand_side_by_side_as_one_phrase() -> None:
    mine = profile(
        "merge_table_cells",
        "merge",
        "Merge cells within a rectangular area of a table.",
        [],
        [],
        "write",
    )
    theirs = profile(
        "merge_table_cells_horizontal",
        "merge",
        "Merge cells horizontally in one row.",
        [],
        [],
        "write",
    )
    assert apart(mine, [theirs]) == "What sets it apart: it covers rectangular area."
    loose = profile(
        "get_entries", "get", "Fetch entries from the ledger of a tenant.", [], [], "read"
    )
    plain = profile("get_entry", "get", "Fetch one entry.", [], [], "read")
    assert apart(loose, [plain]) == "What sets it apart: it covers ledger and tenant."


def test_apart_leaves_out_words_that_say_nothing_of_what_the_tool_works_on() -> None:
    mine = profile(
        "create_workspace",
        "create",
        "Create a new collaborating workspace for a team.",
        [],
        [],
        "write",
    )
    theirs = profile("create_collection", "create", "Create a collection.", [], [], "write")
    assert apart(mine, [theirs]) == "What sets it apart: it covers workspace and team."
    # a participle the name itself says stays ("get_owned_repos")
    owned = profile("get_owned_repos", "get", "Get the repos.", [], [], "read")
    assert "owned" in apart(owned, [profile("get_repos", "get", "Get repos.", [], [], "read")])
