"""The on-disk cache of validated flag tables (generator/flags/cache.py): keyed by content, never trusted, best
effort. Real files in a temporary cache folder and real `catalog` processes; nothing is stood in for."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.flags import cache as table_cache
from generator.flags import tables
from support.catalogs import MARKET_CATALOG

TABLE = MARKET_CATALOG / "flags" / "atomic-mtp.yaml"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("CATALOG_CACHE_DIR", str(where))
    monkeypatch.setattr(tables, "_PARSED", {})  # this process's own memo would answer before the disk
    return where / "flag-tables"


def _copy(tmp_path: Path, text: str | None = None) -> Path:
    path = tmp_path / "flags" / "atomic-mtp.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else TABLE.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def _entries(where: Path) -> list[Path]:
    return sorted(where.glob("*.json")) if where.is_dir() else []


def _no_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("the YAML was parsed although the cache holds the table")

    monkeypatch.setattr(tables, "_fast", refuse)
    monkeypatch.setattr(tables, "refuse_aliases", refuse)


def test_a_table_read_once_is_read_from_the_cache_by_content(tmp_path: Path, cache_dir: Path,
                                                              monkeypatch: pytest.MonkeyPatch):
    path = _copy(tmp_path)
    first = tables.load_table(path)
    [entry] = _entries(cache_dir)
    assert entry.name.startswith(hashlib.sha256(path.read_bytes()).hexdigest() + "-")
    assert oct(cache_dir.stat().st_mode & 0o777) == "0o700"
    monkeypatch.setattr(tables, "_PARSED", {})
    _no_yaml(monkeypatch)
    assert tables.load_table(path) == first


def test_an_edited_table_never_meets_the_old_entry(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch):
    path = _copy(tmp_path)
    before = tables.load_table(path)
    text = path.read_text(encoding="utf-8").replace("version: ", "version: 9", 1)
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(tables, "_PARSED", {})
    after = tables.load_table(path)
    assert after.version != before.version and after.version.startswith("9")
    assert len(_entries(cache_dir)) == 2


@pytest.mark.parametrize("damage", [b"{not json", b'{"id": "atomic-mtp"}', b"\0" * 100])
def test_a_damaged_entry_is_ignored_and_replaced(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                 damage: bytes):
    path = _copy(tmp_path)
    good = tables.load_table(path)
    [entry] = _entries(cache_dir)
    entry.write_bytes(damage)
    monkeypatch.setattr(tables, "_PARSED", {})
    assert tables.load_table(path) == good
    assert entry.read_bytes() != damage  # rewritten whole


def test_a_symlinked_entry_is_not_followed(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch):
    path = _copy(tmp_path)
    good = tables.load_table(path)
    [entry] = _entries(cache_dir)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(entry.read_bytes())
    entry.unlink()
    entry.symlink_to(elsewhere)
    assert table_cache.get(entry.name.split("-")[0], tables.FlagTable) is None
    monkeypatch.setattr(tables, "_PARSED", {})
    assert tables.load_table(path) == good


def test_an_oversized_entry_is_ignored(tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch):
    path = _copy(tmp_path)
    tables.load_table(path)
    [entry] = _entries(cache_dir)
    monkeypatch.setattr(table_cache, "MAX_ENTRY_BYTES", entry.stat().st_size - 1)
    assert table_cache.get(entry.name.split("-")[0], tables.FlagTable) is None


def test_an_invalid_table_is_never_cached(tmp_path: Path, cache_dir: Path):
    path = _copy(tmp_path, TABLE.read_text(encoding="utf-8").replace("id: atomic-mtp", "id: [atomic]", 1))
    with pytest.raises(tables.InputError):
        tables.load_table(path)
    assert _entries(cache_dir) == []


def _check(catalog: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator.cli", "check", "--no-lint", "--catalog", str(catalog),
                           "gemma4e2bone"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})


def test_cache_off_writes_nothing(catalog_copy: Path, tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    proc = _check(catalog_copy, {"CATALOG_CACHE_DIR": "", "HOME": str(home), "XDG_CACHE_HOME": str(home / "xdg")})
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    assert list(home.iterdir()) == []


def test_default_folder_is_the_xdg_cache(catalog_copy: Path, tmp_path: Path):
    xdg = tmp_path / "xdg"
    env = {"XDG_CACHE_HOME": str(xdg)}
    proc = subprocess.run([sys.executable, "-c", "import os; os.environ.pop('CATALOG_CACHE_DIR', None); "
                           "from generator.cli import main; main()", "check", "--no-lint", "--catalog",
                           str(catalog_copy), "gemma4e2bone"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    assert _entries(xdg / "catalog" / "flag-tables"), "no entry in $XDG_CACHE_HOME/catalog/flag-tables"


def test_an_unwritable_cache_never_fails_a_command(catalog_copy: Path, tmp_path: Path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder would be", encoding="utf-8")
    with_cache = _check(catalog_copy, {"CATALOG_CACHE_DIR": str(blocker)})
    without = _check(catalog_copy, {"CATALOG_CACHE_DIR": ""})
    assert "Traceback" not in with_cache.stderr, with_cache.stderr
    assert (with_cache.returncode, with_cache.stdout) == (without.returncode, without.stdout)
    assert blocker.read_text(encoding="utf-8").startswith("a file")
