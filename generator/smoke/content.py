"""Is a generated answer sane? Empty output and degenerate loops fail even when HTTP said 200.

TurboQuant + speculative-decoding bugs answer 200 with garbage: an empty message or one token (or a
short cycle of them) repeated to max_tokens (docs/domain.md, issues #40831 and #40880). Two checks:
- one streamed piece (~ one token) makes up most of the pieces;
- a short period (up to MAX_PERIOD characters) repeats over most of the text.
Short answers are never called degenerate: a model may rightly answer "4".
"""

from __future__ import annotations

from collections import Counter

MIN_PIECES = 16  # fewer streamed pieces than this: too short to judge repetition
MIN_CHARS = 48
DOMINANT_SHARE = 0.6  # one piece is more than 60 % of all pieces
MAX_PERIOD = 32  # characters in the longest cycle we look for
COVERED_SHARE = 0.6  # the repeating stretch covers more than 60 % of the text
MIN_REPEATS = 4
ANALYSED_CHARS = 64 * 1024  # a longer answer is judged on its first 64 KiB (the scan is O(chars x MAX_PERIOD))


def problems(text: str, pieces: list[str], expect: str | None) -> list[str]:
    """Reasons this answer is not sane (empty list: it is)."""
    if not text.strip():
        return ["the answer is empty (HTTP 200 with no generated text)"]
    out = []
    loop = degenerate(text, pieces)
    if loop:
        out.append(loop)
    if expect is not None and expect not in text:
        out.append(f"the answer does not contain the expected text {expect!r}")
    return out


def degenerate(text: str, pieces: list[str]) -> str | None:
    """A one-line description of the repetition, or None."""
    return _dominant_piece(pieces) or _short_cycle(text[:ANALYSED_CHARS])


def _dominant_piece(pieces: list[str]) -> str | None:
    pieces = [p for p in pieces if p]
    if len(pieces) < MIN_PIECES:
        return None
    piece, count = Counter(pieces).most_common(1)[0]
    share = count / len(pieces)
    if share > DOMINANT_SHARE:
        return f"degenerate output: one token {piece!r} is {share:.0%} of {len(pieces)} generated pieces"
    return None


def _short_cycle(text: str) -> str | None:
    if len(text) < MIN_CHARS:
        return None
    for period in range(1, MAX_PERIOD + 1):
        start, length = _longest_periodic(text, period)
        covered = length + period
        if covered / len(text) > COVERED_SHARE and covered >= MIN_REPEATS * period:
            cycle = text[start:start + period]
            return (f"degenerate output: {cycle!r} repeats {covered // period} times over "
                    f"{covered / len(text):.0%} of the answer")
    return None


def _longest_periodic(text: str, period: int) -> tuple[int, int]:
    """Start and length of the longest run where text[i] == text[i + period]."""
    best_start = best_len = run_start = run_len = 0
    for i in range(len(text) - period):
        if text[i] == text[i + period]:
            if run_len == 0:
                run_start = i
            run_len += 1
            if run_len > best_len:
                best_start, best_len = run_start, run_len
        else:
            run_len = 0
    return best_start, best_len
