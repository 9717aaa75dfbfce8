"""Serve (the controller, ``plumb serve``): the loop, one pass, leader election, git
polling, the HTTP endpoints, metrics, the notice sender, rollouts driven from the
journal and approvals, and the pure decisions they need (drift, sync windows,
corrections, notices, webhook signatures). It stands on ``service/``, the same floor
as the command line; see docs/serve.md for the module map.
"""
