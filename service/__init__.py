"""Service (the floor under both front doors): what the command line and the
controller both run, and the rules every writer obeys, written once.

The fleet context (no typer: errors are exceptions the front door prints), observe
and plan with progress as a callback, begin a rollout, the rollout runtime, saved
plans, interrupted runs, finishing a rollback, and the writer rules: lease and
fencing, freeze, pins, one writer per field (an active rollout's ownership).
``plumb/`` (the CLI) and ``serve/`` (the controller) stand on it; it imports neither.
"""
