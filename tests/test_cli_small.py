"""Issue 42's small ones: the top-level help shows each command's first sentence whole; `explain --device` with one
app does not say "No two of these apps fit"; a git install from a local path says why CI cannot reach it."""

from __future__ import annotations

import re

from generator.cli import main
from generator.cli.app import app as typer_app
from generator.cli.app import first_sentence


def test_the_top_level_help_shows_each_command_s_first_sentence_whole(capsys, monkeypatch):
    import typer

    monkeypatch.setenv("COLUMNS", "80")
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    commands = out.split("Commands:", 1)[1]
    assert "..." not in commands
    flat = " ".join(commands.split())
    group = typer.main.get_group(typer_app)
    for name, command in group.commands.items():
        sentence = first_sentence(command.help or "")
        assert sentence and f"{name} {sentence}" in flat, (name, sentence)
        assert sentence.endswith(".") or "." not in sentence


def test_first_sentence():
    assert first_sentence("Check apps: a, b.\n\nMore text.") == "Check apps: a, b."
    assert first_sentence("One line\nwrapped here. Second sentence.") == "One line wrapped here."
    assert first_sentence("No full stop") == "No full stop"


def test_explain_device_with_one_app_says_so(catalog_copy, capsys, monkeypatch):
    for path in (catalog_copy / "apps").glob("*.yaml"):
        if path.stem != "gemma4e2bone":
            path.unlink()
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["explain", "--device", "olares-one", "--catalog", str(catalog_copy)]) == 0
    out = capsys.readouterr().out
    assert "No two of these apps" not in out and "One app on this card" in out


def test_a_git_install_from_a_local_path_says_it_is_a_path_not_credentials():
    from generator.cli.install_source import from_record

    source = from_record({"url": "file:///home/me/catalog", "vcs_info": {"vcs": "git", "commit_id": "0" * 40}},
                         "0.1.0")
    assert source.requirement is None and "without credentials" not in source.warning
    assert re.search(r"cannot reach file:///home/me/catalog: it is a path on this machine", source.warning)
