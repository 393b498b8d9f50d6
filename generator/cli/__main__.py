"""`python -m generator.cli ...` is the `catalog` command."""

import sys

from generator.cli import entry

sys.exit(entry())
