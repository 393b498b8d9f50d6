#!/usr/bin/env python3
"""Compile the chart templates ahead into templates/compiled/ (generator/chart/render.py `compile_ahead`).

    python scripts/compile_templates.py

Run it after editing a template in templates/ or changing the Jinja version the project is built with, and commit
templates/compiled/: tests/test_render_compiled.py fails while the compiled copy is stale. A stale copy never
changes a chart (render compiles the templates from source instead), it only costs the start-up time it saves.
"""

from __future__ import annotations

import sys

from generator.chart.render import COMPILED, compile_ahead


def main() -> int:
    compile_ahead(COMPILED)
    print(f"compiled the templates into {COMPILED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
