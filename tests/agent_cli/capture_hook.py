"""A capture-only hook: `python3 capture_hook.py OUT.jsonl` appends the payload it gets on stdin
(`{"event": ..., "payload": ...}`) to OUT.jsonl and answers nothing, so the agent goes on as
without hooks. Stdlib only; it runs under whatever python3 the agent finds."""

import json
import sys


def main() -> int:
    raw = sys.stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = {"unparsed": raw}
    event = payload.get("hook_event_name") if isinstance(payload, dict) else None
    with open(sys.argv[1], "a", encoding="utf-8") as out:
        out.write(json.dumps({"event": event, "payload": payload}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
