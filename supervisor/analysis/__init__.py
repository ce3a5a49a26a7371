"""Offline analysis: replay recorded runs through the engine and report what it would have done.

`replay.analyze_events` replays one run's protocol events; `sources.load_runs` turns a path into
runs (protocol JSONL files and session directories, plus the formats of `importers`, read by
`foreign.runs_of`, and any loader added with `sources.register_loader`). Only `protocol` and
`engine` are imported here; `importers` when a path is not protocol.
"""
