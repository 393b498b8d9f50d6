"""`catalog new`'s model on the real llama-server (CPU build, $LLAMA_SERVER): the GGUF the test writes (a qwen3 model
no catalog file describes), read by `catalog new` over loopback, then booted by llama-server at the app's context.
llama.cpp maps exactly the tensor bytes the model file recorded, and allocates the KV the fit says, which is the
header's bytes per token over the context."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.catalog import load_catalog
from support.bump import run_cli
from support.catalogs import MARKET_CATALOG
from support.hfhub import Hub
from support.newgguf import tiny_spec
from support.realshape import boot_log

pytestmark = pytest.mark.needs_llama_server
MIB = 2**20


def test_llama_server_allocates_what_catalog_new_recorded(capsys, tmp_path: Path) -> None:
    from generator.engines import engine_for
    from generator.engines.settings import settings_for
    from generator.fit.estimate import estimate
    from generator.fit.realshape import write_spec
    from generator.fit.sizing import sized

    catalog = tmp_path / "catalog"
    shutil.copytree(MARKET_CATALOG, catalog)
    path = write_spec(tiny_spec(), tmp_path / "Tiny-Qwen3-4L-Q8_0.gguf")
    hub = Hub(files={"testorg/Tiny-Qwen3-GGUF": {path.name: path}}).start()
    try:
        code, _, err = run_cli(capsys, "new", "tinyqwen", "--gguf",
                               f"{hub.url}/testorg/Tiny-Qwen3-GGUF/resolve/main/{path.name}", "--stack",
                               "llamacpp-b8740", "--device", "olares-one", "--title", "Tiny", "--icon",
                               "https://example.com/i.png", "--category", "LLM Chat", "--catalog", str(catalog))
    finally:
        hub.stop()
    assert code == 0, err
    r = sized(load_catalog(catalog).apps["tinyqwen"])
    fit = estimate(r, settings_for(r, engine_for(r)))
    header = r.model.weights[0].header
    assert header is not None
    parsed, log = boot_log(path, ["-c", str(r.app.context_length), "-np", "1"], tmp_path)
    assert sum(x.value for x in parsed.all("model_buffer")) == pytest.approx(header.tensor_bytes / MIB, rel=1e-3, abs=0.01)  # the log rounds to 0.01 MiB
    kv = fit.part("KV full attention")
    assert kv is not None
    assert sum(x.value for x in parsed.all("kv_buffer")) == pytest.approx(kv.mib, rel=1e-3), log[-2000:]
