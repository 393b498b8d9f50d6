"""market: the Olares Market Source API (`catalog serve`) and the store page (`catalog site`); see
docs/market-source.md. The files the maintainer's worker reads are built by generator/publish/market.py, and
this stage answers from that same build."""
