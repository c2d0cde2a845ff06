"""The tests mirror the source: ``tests/<package>/test_<module>[_<aspect>].py`` tests
``src/cartograph/<package>/<module>.py`` (or a subpackage of that name). Scenarios that cross
packages live in ``tests/e2e/``, checks of the whole package in ``tests/package/``, and tests of
the benchmark and training scripts in ``tests/benchmarks/`` and ``tests/scripts/`` (named after
the script they test)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
SRC = REPO / "src" / "cartograph"
FREE = {"e2e", "package"}  # cross-package scenarios, whole-package checks
SCRIPTS = {"benchmarks", "scripts"}  # repository folders of scripts, mirrored by name
HELPERS = {"support", "servers", "fixtures", "__pycache__"}


def _names(folder: Path) -> set[str]:
    """The modules and subpackages of a source folder, by name."""
    mods = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    return mods | {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}


def _owner(test: Path) -> tuple[Path, set[str]] | None:
    """The source folder a test file mirrors and the module names it may be named after."""
    parts = test.relative_to(TESTS).parts[:-1]
    if parts and parts[0] in FREE:
        return None
    folder = REPO.joinpath(*parts) if parts[:1] and parts[0] in SCRIPTS else SRC.joinpath(*parts)
    return folder, (_names(folder) if folder.is_dir() else set())


def _mirrors(stem: str, names: set[str]) -> bool:
    return any(stem == n or stem.startswith(n + "_") for n in names)


def test_every_test_file_is_named_after_the_module_it_tests() -> None:
    wrong = []
    for test in sorted(TESTS.rglob("test_*.py")):
        if HELPERS & set(test.relative_to(TESTS).parts):
            continue
        owner = _owner(test)
        if owner is None:
            continue
        folder, names = owner
        stem = test.stem.removeprefix("test_")
        if not _mirrors(stem, names):
            where = folder.relative_to(REPO)
            wrong.append(f"{test.relative_to(REPO)}: no module {stem!r} (or a prefix) in {where}")
    assert not wrong, "\n".join(wrong)


def test_every_test_folder_is_a_source_package() -> None:
    stray = []
    for folder in sorted(p for p in TESTS.rglob("*") if p.is_dir()):
        rel = folder.relative_to(TESTS).parts
        if HELPERS & set(rel) or rel[0] in FREE or rel[0] in SCRIPTS:
            continue
        if not (SRC.joinpath(*rel) / "__init__.py").is_file():
            stray.append(str(folder.relative_to(REPO)))
    assert not stray, f"test folders without a source package: {stray}"


def test_the_rule_finds_a_misnamed_test() -> None:
    """The check can fail: a name that mirrors nothing is caught, a module-prefixed one is not."""
    names = _names(SRC / "proxy")
    assert _mirrors("server_tools", names) and _mirrors("server", names)
    assert not _mirrors("units", names) and not _mirrors("serverless", names)
