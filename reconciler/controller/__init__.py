"""The continuous controller's pure core (``plumb serve``): sync windows, what to do
with each drifted field, push-webhook verification and notification payloads. The
loop that observes, applies, serves HTTP and sends lives in :mod:`plumb.serve`."""
