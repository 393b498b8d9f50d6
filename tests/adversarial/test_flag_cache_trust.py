"""Issue 40 cause 7: the flag-table cache (generator/flags/cache.py) is used only when nothing but this user could
have written it. An entry must carry the hash in its name and its own body's hash; the folder is reached without
following a link at any component; a folder or entry another user owns, or anyone else may write, is not used.

Each test plants a forged entry that WOULD change the table (the control test shows it does in a trusted folder),
then checks the table read is the real one."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from generator.flags import cache as table_cache
from generator.flags import tables
from generator.flags.tables import FlagTable
from support.catalogs import MARKET_CATALOG

TABLE = MARKET_CATALOG / "flags" / "atomic-mtp.yaml"
NOBODY = 65534


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "home" / "cache"
    monkeypatch.setenv("CATALOG_CACHE_DIR", str(root))
    monkeypatch.setattr(tables, "_PARSED", {})
    path = tmp_path / "flags" / "atomic-mtp.yaml"
    path.parent.mkdir(parents=True)
    path.write_bytes(TABLE.read_bytes())
    real = tables.load_table(path)  # writes the honest entry
    monkeypatch.setattr(tables, "_PARSED", {})
    [entry] = sorted((root / "flag-tables").glob("*.json"))
    return path, real, entry


def _forged_body(real: FlagTable) -> bytes:
    data = json.loads(real.model_dump_json())
    data["version"] = "forged-9.9"
    return json.dumps(data).encode()


def _read(path: Path, monkeypatch: pytest.MonkeyPatch) -> FlagTable:
    monkeypatch.setattr(tables, "_PARSED", {})
    return tables.load_table(path)


def test_control_a_forged_entry_sealed_with_its_hash_is_read_from_a_trusted_folder(setup, monkeypatch):
    path, real, entry = setup
    key = hashlib.sha256(path.read_bytes()).hexdigest()
    entry.write_bytes(table_cache._sealed(key, _forged_body(real)))
    assert _read(path, monkeypatch).version == "forged-9.9"  # the planted entry is what the other tests refuse


@pytest.mark.parametrize("edit", ["body", "header", "other-table", "plain-json"])
def test_an_entry_not_matching_the_hashes_it_carries_is_ignored(setup, monkeypatch, edit):
    path, real, entry = setup
    key = hashlib.sha256(path.read_bytes()).hexdigest()
    data = entry.read_bytes()
    head, _, body = data.partition(b"\n")
    forged = _forged_body(real)
    planted = {"body": head + b"\n" + forged,  # an added alias or any edit of the JSON: its hash no longer fits
               "header": table_cache._sealed("0" * 64, forged),  # sealed for another table file
               "other-table": table_cache._sealed(key.replace(key[0], "f" if key[0] != "f" else "e", 1), forged),
               "plain-json": forged}[edit]
    entry.write_bytes(planted)
    assert _read(path, monkeypatch) == real


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722, 0o702])
def test_a_cache_folder_others_may_write_is_not_used(setup, monkeypatch, mode):
    path, real, entry = setup
    key = hashlib.sha256(path.read_bytes()).hexdigest()
    entry.write_bytes(table_cache._sealed(key, _forged_body(real)))
    entry.parent.chmod(mode)
    assert _read(path, monkeypatch) == real
    assert table_cache._sealed(key, _forged_body(real)) == entry.read_bytes()  # not written into either


@pytest.mark.parametrize("owned", ["folder", "parent", "entry"])
def test_a_cache_another_user_owns_is_not_used(setup, monkeypatch, owned):
    if os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    path, real, entry = setup
    key = hashlib.sha256(path.read_bytes()).hexdigest()
    entry.write_bytes(table_cache._sealed(key, _forged_body(real)))
    target = {"folder": entry.parent, "parent": entry.parent.parent, "entry": entry}[owned]
    os.chown(target, NOBODY, NOBODY)
    if owned == "parent":
        target.chmod(0o777)  # the other user may rename flag-tables/ itself
    assert _read(path, monkeypatch) == real


@pytest.mark.parametrize("linked", ["flag-tables", "cache", "home"])
def test_no_link_is_followed_at_any_component(setup, tmp_path, monkeypatch, linked):
    """A link anywhere on the way (the folder, its parent, a folder above): the planted cache behind it is neither
    read nor written."""
    path, real, entry = setup
    key = hashlib.sha256(path.read_bytes()).hexdigest()
    elsewhere = tmp_path / "planted"
    (elsewhere / "flag-tables").mkdir(parents=True, mode=0o700)
    planted = elsewhere / "flag-tables" / entry.name
    planted.write_bytes(table_cache._sealed(key, _forged_body(real)))
    before = planted.read_bytes()
    component = {"flag-tables": entry.parent, "cache": entry.parent.parent, "home": entry.parent.parent.parent}[linked]
    target = {"flag-tables": elsewhere / "flag-tables", "cache": elsewhere, "home": tmp_path / "planted-home"}[linked]
    if linked == "home":
        (target).mkdir()
        os.symlink(elsewhere, target / "cache")
    os.rename(component, tmp_path / "moved")
    os.symlink(target, component)
    assert _read(path, monkeypatch) == real
    assert planted.read_bytes() == before and sorted(p.name for p in planted.parent.iterdir()) == [entry.name]
