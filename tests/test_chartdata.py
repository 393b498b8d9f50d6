"""Chart files read by libyaml (generator/yamlio/chartdata.py) give what ruamel.yaml's safe loader gives, so every
content hash stays byte-identical: releases.yaml's recorded hashes never move when the reader changes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from generator.core.errors import InputError, Problem
from generator.versions import state
from generator.yamlio import chartdata

ROOT = Path(__file__).resolve().parent.parent


def _ruamel_canonical(rel: str, text: str) -> str:
    """The canonical form as versions/state.py computed it before libyaml: ruamel's safe load, then the same steps."""
    if not state._is_data_file(rel):
        return state.canonical(rel, text)
    data = YAML(typ="safe").load(text)
    if "*" in text and state._shared(data):
        raise InputError([Problem(rel, None, None, "alias")])
    for path in state.VOLATILE.get(rel.rsplit("/", 1)[-1], ()):
        state._drop(data, path)
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as exc:  # noqa: BLE001 - the test compares which error each reader raises
        return "error", type(exc).__name__ if not isinstance(exc, ValueError) else "ValueError"


def _chart_files() -> list[tuple[str, str]]:
    """Every data file of the charts the repository holds (rendered charts of both formats, golden charts)."""
    out = []
    for top in ("charts", "tests/golden", "tests/golden_v2"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and path.suffix in (".yaml", ".yml"):
                rel = path.name if "templates" not in path.parts else f"templates/{path.name}"
                out.append((rel, path.read_text(encoding="utf-8")))
    return out


def test_every_chart_file_of_the_repository_hashes_as_with_ruamel():
    files = _chart_files()
    assert len(files) > 100, "the repository's charts were not found"
    for rel, text in files:
        state.canonical.cache_clear()
        assert state.canonical(rel, text) == _ruamel_canonical(rel, text), rel


VARIED = [
    "a: 1\nb: [1, 2.5, -0.0, .5, 1e3, 0x1F, 0o17, 017, +7, 1_000]\n",
    "on: yes\noff: NO\ny: n\nt: True\nf: FALSE\nnull_: ~\nempty:\nq: 'x'\nd: \"\\x41\\u00e9\\N\\t\"\n",
    "date: 2026-01-02\nstamp: 2026-01-02 10:00:00\nmidnight: 2026-01-02 00:00:00\ntime: 12:30\n",
    "inf: .inf\nninf: -.Inf\nnan: .NaN\nbig: 123456789012345678901234567890\nneg: -12\n",
    "base: &b {x: 1}\nother: *b\n",
    "base: &b {x: 1}\nmerged:\n  <<: *b\n  y: 2\n",
    "1: one\n2: two\n",
    "a: 1\na: 2\n",
    "%YAML 1.1\n---\nk: yes\n",
    "k: a\x85b\n",
    "---\na: 1\n---\nb: 2\n",
    "k: !!binary aGVsbG8=\n",
    "k: !!set {a, b}\n",
    "k: !custom x\n",
    "k: !!str 12\nn: !!int '7'\nf: !!float '3'\n",
    "k: !!int x\n",
    "k: [unclosed\n",
    "? [a, b]\n: c\n",
    "description: >\n  folded\n  text\n\n  more\nliteral: |-\n  keep\n    this\n",
    "plain: multi\n  line plain\n  scalar\nq: \"a\\\n  b\"\n",
    "",
    "# only a comment\n",
    "- 1\n- a: [x, {y: z}]\n",
    "k: {a: 1, b: [2, 3], c: 'it''s'}\n",
    "version: 1.0\napiVersion: v2\nappVersion: '1.0'\n",
    "metadata:\n  version: 2.0.1\nspec:\n  versionName: x\n  upgradeDescription: y\n  keep: z\n",
    "k: '\\t tab'\nj: \"\ttab\"\n",
    "k:\t1\n",
    "\ufeffk: bom\n",
    "k: =\n",
    "k: \"=\"\nj: [=]\n",
    "k: \"=\"\nj: ['=']\n",
    "k: 0b101\nj: 1:20\n",
    "a: &x 1\nb: *x\n",
]


@pytest.mark.parametrize("text", VARIED)
@pytest.mark.parametrize("rel", ["values.yaml", "Chart.yaml", "OlaresManifest.yaml"])
def test_varied_yaml_hashes_as_with_ruamel(rel, text):
    state.canonical.cache_clear()
    assert _outcome(state.canonical, rel, text) == _outcome(_ruamel_canonical, rel, text)


@pytest.mark.parametrize("text", VARIED)
def test_varied_yaml_loads_as_with_ruamel(text):
    def ruamel(t: str):
        return YAML(typ="safe").load(t)

    got, want = _outcome(chartdata.load, text), _outcome(ruamel, text)
    assert got[0] == want[0]
    if got[0] == "ok":
        assert repr(got[1]) == repr(want[1])  # repr tells 1 from 1.0 and "1", a date from a datetime


def test_the_embedded_charts_recorded_hashes_do_not_move():
    """The hash `catalog bump` recorded for each chart in charts/ is what content_hash gives now."""
    recorded = (ROOT / "catalog" / "releases.yaml").read_text(encoding="utf-8")
    checked = 0
    for folder in sorted(p for p in (ROOT / "charts").iterdir() if (p / "Chart.yaml").is_file()):
        tree = {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file()}
        digest = state.content_hash(tree)
        assert digest.startswith(state.HASH_PREFIX) and len(hashlib.sha256().hexdigest()) == len(digest) - 7
        checked += digest in recorded
    assert checked >= 10


# ---- the cache on disk -------------------------------------------------------------------------------------------

MANIFEST = "olaresManifest.version: 0.12.0\nmetadata:\n  name: x\n  version: 1.0.0\nspec:\n  limits: [1, 2.5, true]\n"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CATALOG_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / chartdata.KIND


def _packs(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def test_a_miss_is_written_and_the_next_build_reads_it_back(cache_dir, tmp_path):
    with chartdata.disk_cache(tmp_path / "charts") as first:
        value = chartdata.load(MANIFEST)
    assert first is not None and (first.hits, first.written) == (0, 1) and len(_packs(cache_dir)) == 1
    with chartdata.disk_cache(tmp_path / "charts") as second:
        again = chartdata.load(MANIFEST)
    assert second is not None and (second.hits, second.written) == (1, 0)
    assert repr(again) == repr(value) == repr(YAML(typ="safe").load(MANIFEST))
    assert (cache_dir.stat().st_mode & 0o777) == 0o700 and (_packs(cache_dir)[0].stat().st_mode & 0o777) == 0o600


def test_each_store_has_its_own_pack(cache_dir, tmp_path):
    for store in ("a", "b"):
        with chartdata.disk_cache(tmp_path / store / "charts"):
            chartdata.load(MANIFEST)
    assert len(_packs(cache_dir)) == 2


@pytest.mark.parametrize("damage", [b"", b"not a pack", b"catalog-chart-data 00 11\n{}", "flip", "other-store"])
def test_a_damaged_or_foreign_pack_is_ignored_and_written_again(cache_dir, tmp_path, damage):
    with chartdata.disk_cache(tmp_path / "charts"):
        chartdata.load(MANIFEST)
    [pack] = _packs(cache_dir)
    good = pack.read_bytes()
    if damage == "other-store":  # a whole, sealed pack of another store, copied over this one
        with chartdata.disk_cache(tmp_path / "other"):
            chartdata.load(MANIFEST)
        damage = chartdata.pack_name(tmp_path / "other")[0]
        damage = (cache_dir / damage).read_bytes()
    pack.write_bytes(good[:-3] + b"9}}" if damage == "flip" else damage)
    with chartdata.disk_cache(tmp_path / "charts") as stats:
        value = chartdata.load(MANIFEST)
    assert stats is not None and stats.hits == 0 and stats.written == 1
    assert repr(value) == repr(YAML(typ="safe").load(MANIFEST)) and pack.read_bytes() == good


def test_a_sealed_pack_holding_a_value_that_is_not_json_is_written_again(cache_dir, tmp_path):
    with chartdata.disk_cache(tmp_path / "charts"):
        chartdata.load(MANIFEST)
    [pack] = _packs(cache_dir)
    name, key = chartdata.pack_name(tmp_path / "charts")
    assert pack.name == name
    [entry] = json.loads(pack.read_bytes().partition(b"\n")[2])
    pack.write_bytes(chartdata.diskcache.sealed(b"catalog-chart-data", key, json.dumps({entry: "{not json"}).encode()))
    with chartdata.disk_cache(tmp_path / "charts") as stats:
        assert chartdata.load(MANIFEST)["spec"]["limits"] == [1, 2.5, True]
    assert stats is not None and stats.hits == 0 and stats.written == 1
    with chartdata.disk_cache(tmp_path / "charts") as again:
        chartdata.load(MANIFEST)
    assert again is not None and again.hits == 1


def test_edited_content_is_another_key_never_the_stale_value(cache_dir, tmp_path):
    with chartdata.disk_cache(tmp_path / "charts"):
        chartdata.load(MANIFEST)
    edited = MANIFEST.replace("2.5", "3.5")
    with chartdata.disk_cache(tmp_path / "charts") as stats:
        assert chartdata.load(edited)["spec"]["limits"] == [1, 3.5, True]
    assert stats is not None and stats.hits == 0 and stats.written == 1


def test_values_json_cannot_give_back_are_not_cached(cache_dir, tmp_path):
    with chartdata.disk_cache(tmp_path / "charts") as stats:
        assert repr(chartdata.load("d: 2026-01-02\n")) == "{'d': datetime.date(2026, 1, 2)}"
        chartdata.load("f: .inf\n")
        chartdata.load("1: one\n")
    assert stats is not None and stats.written == 0 and _packs(cache_dir) == []


def test_an_error_is_ruamels_and_writes_nothing(cache_dir, tmp_path):
    with chartdata.disk_cache(tmp_path / "charts"), pytest.raises(Exception) as got:
        chartdata.load("a: 1\na: 2\n")
    assert type(got.value).__name__ == "DuplicateKeyError" and _packs(cache_dir) == []


def test_the_folder_is_bounded(cache_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(chartdata, "MAX_PACKS", 2)
    for store in range(4):
        with chartdata.disk_cache(tmp_path / str(store)) as stats:
            chartdata.load(MANIFEST)
    assert stats is not None and stats.pruned == 1 and len(_packs(cache_dir)) == 2
    assert chartdata.pack_name(tmp_path / "3")[0] in {p.name for p in _packs(cache_dir)}  # the newest stays


def test_a_pack_drops_the_old_texts_once_they_are_most_of_it(cache_dir, tmp_path):
    with chartdata.disk_cache(tmp_path / "charts"):
        for i in range(4):
            chartdata.load(f"k: {i}\n")
    with chartdata.disk_cache(tmp_path / "charts") as stats:  # an edit: one old text read, one new
        chartdata.load("k: 0\n")
        chartdata.load("k: 9\n")
    assert stats is not None and (stats.hits, stats.written, stats.dropped) == (1, 1, 3)
    with chartdata.disk_cache(tmp_path / "charts") as again:
        for i in (0, 1, 9):
            chartdata.load(f"k: {i}\n")
    assert again is not None and again.hits == 2


def test_the_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("CATALOG_CACHE_DIR", "")
    with chartdata.disk_cache(tmp_path / "charts") as stats:
        assert chartdata.load("k: 1\n") == {"k": 1}
    assert stats is None and not any(tmp_path.iterdir())


def test_the_cache_is_used_only_inside_its_context(cache_dir):
    chartdata.load(MANIFEST)
    assert _packs(cache_dir) == []
