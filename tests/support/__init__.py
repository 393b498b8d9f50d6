"""Helpers the test modules share that are not fixtures (fixtures live in tests/conftest.py).

Test modules import these (`from support.smoke import llama_server`), never each other: pytest puts tests/ on
`sys.path` (rootdir-relative "prepend" import mode, tests/ has no __init__.py), so `support` is this package.
"""
