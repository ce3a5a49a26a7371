"""`supervisor web`: the "needs you" queue in a browser (a phone first), for the operator's own
user, signed in by a one-time link (`logins`; `server` says who may connect).

A small page of our own over a JSON API (docs/web.md says why not textual-serve): the queue is
folded by the dashboard's own model (`supervisor.tui.model.DashboardModel`) from the store's
follower, and answers go through the same refusal checks and decision writer as the terminal.
"""
