"""The smoke ledger never follows or replaces a symbolic link (issue 22, a minor; docs/security.md "Symbolic
links"): `catalog/ledger/<app>.yaml -> elsewhere` is refused before anything is read or written, the link and its
target stay as they were, and the result is reported as not recorded."""

from __future__ import annotations

import pytest

from generator.core.errors import CatalogError
from generator.smoke.ledger import SmokeRecord, append, history

from support.adversarial import snapshot

APP = "qwenlab"


def _record() -> SmokeRecord:
    return SmokeRecord(app=APP, endpoint="http://127.0.0.1:8000", chart_version="1.0.0", image="img",
                       date="2026-11-29T12:00:00Z", runs=(), tokens_per_s=90.0, acceptance=None,
                       baseline_tokens_per_s=None, verdict="pass", reasons=())


@pytest.mark.parametrize("target_exists", [True, False])
def test_ledger_symlinked_file_refused_target_untouched(small_catalog, tmp_path, target_exists):
    victim = tmp_path / "victim.yaml"
    if target_exists:
        victim.write_text("precious: true\n")
    (small_catalog / "ledger").mkdir(exist_ok=True)
    (small_catalog / "ledger" / f"{APP}.yaml").symlink_to(victim)
    before = snapshot(tmp_path)
    with pytest.raises(CatalogError) as caught:
        append(small_catalog, _record())
    assert "symbolic link" in str(caught.value)
    assert snapshot(tmp_path) == before  # still a link, the target as it was (or still absent)
    with pytest.raises(CatalogError):
        history(small_catalog, APP)


def test_ledger_regular_file_still_appends_atomically(small_catalog):
    path = append(small_catalog, _record())
    path2 = append(small_catalog, _record())
    assert path == path2 and len(history(small_catalog, APP)) == 2
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temp file left
