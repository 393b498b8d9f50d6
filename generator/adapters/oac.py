"""The Olares platform's own chart validator (beclab/Olares `framework/oac`), the program: found and run on folders.

Which program, first found wins:
- `$CATALOG_OACLINT`: a binary built from tools/oaclint/ (`oaclint DIR...`, one `DIR: ok` or `DIR: <error>` line per
  folder);
- `<cache>/oaclint/oaclint` (`$CATALOG_CACHE`, default `~/.cache/catalog`): where .ci/run builds tools/oaclint/;
- `olares-cli` on PATH: `olares-cli chart lint DIR` (prints `DIR: OK`, exits non-zero with the error otherwise;
  beclab/Olares@59eeacf065df5619e9836f94f56b7d3e6b60f184 cli/cmd/ctl/chart/lint.go runLint).
Both call `oac.Lint(dir, oac.WithAutoOwnerScenarios())`. None found: `find` says why, and `catalog check` says the
platform's validator did not run. Every run has a deadline.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from generator.adapters.deadline import run_process

LINT_S = 120.0  # one chart: oac renders it with Helm under both owner scenarios
HOW = ("build tools/oaclint/ (Go and the Go module proxy: `bash .ci/build-oaclint.sh`), set CATALOG_OACLINT to the "
       "binary, or install olares-cli")


@dataclass(frozen=True)
class OacVerdict:
    """The validator's answer for one chart folder: `error` None when it passed."""

    folder: Path
    error: str | None


@dataclass(frozen=True)
class Oac:
    argv: tuple[str, ...]  # the program and the arguments before the folder
    label: str  # what ran, for messages: "oaclint (<path>)" or "olares-cli chart lint"

    @classmethod
    def find(cls, env: dict[str, str] | None = None) -> Oac | str:
        """The validator, or a sentence saying why none is here."""
        env = dict(os.environ) if env is None else env
        given = env.get("CATALOG_OACLINT")
        if given:
            path = Path(given).expanduser()
            if not (path.is_file() and os.access(path, os.X_OK)):
                return f"CATALOG_OACLINT={given} is not an executable file"
            return cls((str(path),), f"oaclint ({path})")
        root = Path(env["CATALOG_CACHE"]) if env.get("CATALOG_CACHE") else \
            Path(env.get("HOME", "~")).expanduser() / ".cache" / "catalog"
        built = root / "oaclint" / "oaclint"
        if built.is_file() and os.access(built, os.X_OK):
            return cls((str(built),), f"oaclint ({built})")
        cli = shutil.which("olares-cli", path=env.get("PATH"))
        if cli:
            return cls((cli, "chart", "lint"), "olares-cli chart lint")
        return f"neither an oaclint binary ({built}, CATALOG_OACLINT) nor olares-cli is here; {HOW}"

    def lint(self, folder: Path) -> OacVerdict:
        """Run the validator on one chart folder."""
        done = run_process([*self.argv, str(folder)], what=self.label, seconds=LINT_S)
        out = (done.stdout + done.stderr).decode("utf-8", "replace")
        if done.returncode == 0:
            return OacVerdict(folder, None)
        prefix = f"{folder}: "
        lines = [line[len(prefix):] if line.startswith(prefix) else line for line in out.splitlines() if line.strip()]
        return OacVerdict(folder, " ".join(" ".join(lines).split()) or f"exit status {done.returncode}")


__all__ = ["HOW", "Oac", "OacVerdict"]
