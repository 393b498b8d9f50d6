"""One error per cause (issue 42): a finding that only follows from an earlier failure (an app, model, stack or
device whose file did not load) is shown as "(after the error above)" and not counted as a problem of its own."""

from __future__ import annotations

from generator.cli import main

from support.checks import set_app

FAST = "vllmqwen36turbo27bone"


def test_replaced_by_an_app_whose_file_failed_is_no_second_error(catalog_copy, capsys):
    """The fixture's older 27B apps name FAST as their replacement; FAST's file is broken."""
    followers = sorted(p.stem for p in (catalog_copy / "apps").glob("*.yaml")
                       if f"replaced_by: {FAST}" in p.read_text())
    assert followers
    (catalog_copy / "apps" / f"{FAST}.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    assert main(["check", "--catalog", str(catalog_copy), "--no-lint"]) == 1
    lines = capsys.readouterr().err.splitlines()
    cause = next(i for i, line in enumerate(lines) if f"{FAST}.yaml:" in line)
    after = [i for i, line in enumerate(lines) if "(after the error above)" in line]
    assert len(after) == len(followers) and all(i > cause for i in after), lines
    assert not any("unknown app" in line for line in lines) and "1 problem(s)." in lines[-1]


def test_an_app_naming_a_model_whose_file_failed_follows_that_error(catalog_copy, capsys):
    model = next((catalog_copy / "models").glob("*.yaml"))
    users = [p.stem for p in (catalog_copy / "apps").glob("*.yaml") if f"model: {model.stem}\n" in p.read_text()]
    assert users, model
    model.write_text("id: [unclosed\n", encoding="utf-8")
    assert main(["check", "--catalog", str(catalog_copy), "--no-lint"]) == 1
    err = capsys.readouterr().err
    assert f"unknown model '{model.stem}'" not in err
    assert err.count("(after the error above)") >= len(users) and "1 problem(s)" in err


def test_a_really_unknown_app_is_still_an_error(catalog_copy, capsys):
    follower = next(p.stem for p in sorted((catalog_copy / "apps").glob("*.yaml"))
                    if f"replaced_by: {FAST}" in p.read_text())
    set_app(catalog_copy, follower, replaced_by="nosuchapp")
    assert main(["check", "--catalog", str(catalog_copy), "--no-lint"]) == 1
    err = capsys.readouterr().err
    assert "unknown app 'nosuchapp'" in err and "(after the error above)" not in err
