"""``plumb serve``: the continuous controller's I/O shell around
:mod:`reconciler.controller`: the reconcile loop, leadership, HTTP (webhook, health,
metrics) and the notification sender."""
