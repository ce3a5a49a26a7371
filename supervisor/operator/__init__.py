"""The operator's side of a decision: what is refused before anything is written
(`refusals.py`) and the one writer of decision lines (`send.py`).

The dashboard, the web page and the CLI send through here; the agent's side (`guard`) never
imports it, so an operator's answer does not pass through the agent's package, and what a sender
checks or writes is said once for every sender. It reads the store and the decision kinds
(`supervisor.protocol.decisions`), and the engine only for its words (what a reset clears).
"""
