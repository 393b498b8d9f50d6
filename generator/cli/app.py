"""The typer application and shared options; commands register themselves in generator/cli/."""


from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from generator.catalog import Catalog

class _Commands(typer.core.TyperGroup):
    """The top-level help lists each command with its docstring's first sentence whole, wrapped, never cut at `...`
    (click shortens a short help to what fits one line)."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:  # click's Context and HelpFormatter
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, first_sentence(cmd.help or cmd.short_help or "")))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def first_sentence(text: str) -> str:
    """The first sentence of a docstring (to its first `. ` or blank line), on one line."""
    para = " ".join(text.strip().split("\n\n", 1)[0].split())
    cut = para.find(". ")
    return para if cut < 0 else para[:cut + 1]


app = typer.Typer(
    cls=_Commands,
    name="catalog",
    help="Typed local-LLM app catalog -> Olares Market charts: init, render, check, bump, publish, smoke, prune.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: importing rich's help formatter costs ~150 ms of every `--help`
    context_settings={"help_option_names": ["-h", "--help"]},  # click's setting, for every command
)


def version() -> str:
    """`catalog VERSION`, the installed distribution's version (a source checkout that is not installed has none)."""
    from importlib import metadata

    from generator.cli.install_source import DISTRIBUTION

    try:
        return f"catalog {metadata.version(DISTRIBUTION)}"
    except metadata.PackageNotFoundError:
        return "catalog (a source checkout, not installed: no version)"


def _version(value: bool) -> None:
    if value:
        print(version())
        raise typer.Exit(0)


@app.callback()
def _main(show_version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_version, help="Print the version and exit.")] = False) -> None:
    """Typed local-LLM app catalog -> Olares Market charts: init, render, check, bump, publish, smoke, prune."""

CatalogOpt = Annotated[Path | None, typer.Option(
    "--catalog", help="Catalog folder (default: $CATALOG_DIR, else the nearest catalog/ above the current folder, "
                      "else the embedded read-only catalog).")]
AppsArg = Annotated[list[str] | None, typer.Argument(help="App names (default: every app).", show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for machines instead of a table.")]

DEFAULT_OUT = Path("charts")


def load_catalog(root: Path | None = None) -> "Catalog":
    """The catalog, imported on use: pydantic model building stays out of `catalog --help`."""
    from generator.catalog import load_catalog as load

    return load(root)


def display_path(path: Path) -> str:
    from generator.catalog import display_path as show

    return show(path)


def use_catalog(option: Path | None, *, command: str, writes: bool, into_catalog: bool = True,
                quiet: bool = False) -> Path:
    """The catalog `command` works on, said on stderr (generator/cli/discovery.py)."""
    from generator.cli.discovery import use_catalog as use

    return use(option, command=command, writes=writes, into_catalog=into_catalog, quiet=quiet)


def refuse_inside_package(path: Path, command: str) -> None:
    """An output folder given on the command line may not be inside the installed package."""
    from generator.core import inside_package

    if inside_package(path):
        from generator.core import UsageError

        raise UsageError(f"`catalog {command}` would write into {path}, inside the installed tool; "
                         "give a folder of your own (`catalog init DIR` starts a store)")


def default_out(catalog: Path | None) -> Path:
    """charts/ beside the catalog folder (the repository layout), else ./charts."""
    if catalog is not None:
        return catalog.resolve().parent / "charts"
    from generator.catalog import EMBEDDED

    return EMBEDDED.parent / "charts"
