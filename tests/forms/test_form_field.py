"""`form: single | shared` in catalog/market.yaml or an app file (docs/forms.md): an unknown form is a file:line error.

Real parts: copies of the market fixture's catalog and the real loader.
"""

from __future__ import annotations

import pytest

from generator.catalog import load_catalog
from generator.core.errors import InputError

from support.checks import A3B, set_app


def test_an_unknown_form_is_a_file_line_error(catalog_copy):
    with (catalog_copy / "market.yaml").open("a", encoding="utf-8") as fh:
        fh.write("form: multi\n")
    with pytest.raises(InputError) as err:
        load_catalog(catalog_copy)
    text = str(err.value)
    assert "market.yaml:1:" in text and "form" in text and "'single' or 'shared'" in text


def test_an_apps_unknown_form_is_a_file_line_error(catalog_copy):
    set_app(catalog_copy, A3B, form="shard")
    with pytest.raises(InputError) as err:
        load_catalog(catalog_copy)
    assert f"{A3B}.yaml:" in str(err.value) and "form" in str(err.value)


def test_the_form_is_the_apps_else_the_stores(catalog_copy):
    (catalog_copy / "market.yaml").write_text("form: shared\n", encoding="utf-8")
    set_app(catalog_copy, A3B, form="single")
    apps = load_catalog(catalog_copy).apps
    assert apps[A3B].form == "single" and {r.form for n, r in apps.items() if n != A3B} == {"shared"}
