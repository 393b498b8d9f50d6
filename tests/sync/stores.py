"""Helpers of the sync tests: a sync record written as an earlier sync would have left it, and a git repository
made of a folder (real git)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from generator.yamlio.loader import read_document

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main",
       "-c", "commit.gpgsign=false"]


def listed(catalog: Path, *names: str, upstream: str = "https://example.org/up.git") -> None:
    """catalog/sync.yaml recording `names` as upstream's apps at their catalog versions (an earlier sync saw them)."""
    lines = [f"upstream: {upstream}", "apps:"]
    for name in names:
        version = read_document(catalog / "apps" / f"{name}.yaml").data["version"]
        lines += [f"  {name}:", f"    version: {version}"]
    (catalog / "sync.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def commit_all(folder: Path, message: str = "upstream") -> str:
    """`git add -A && git commit` in `folder` (a repository is made there first); the new HEAD."""
    if not (folder / ".git").exists():
        subprocess.run([*GIT, "init", "-q", str(folder)], check=True)
    subprocess.run([*GIT, "-C", str(folder), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(folder), "commit", "-qm", message, "--allow-empty"], check=True)
    return head(folder)


def head(folder: Path) -> str:
    return subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def files_of(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
