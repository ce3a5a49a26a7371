"""Notifications of escalations through the services operators use (ntfy, Slack, Telegram, ...,
through apprise), and the record of what became of each (`notification` events).

The guard starts `supervisor notify deliver` beside the agent when it writes an escalation
(`supervisor.guard.announce`), so a notification goes out for every kind of session whether or
not a dashboard is open; see docs/notify.md for why there and not elsewhere. apprise is imported
only by the process that sends, never on a hook's path.
"""
