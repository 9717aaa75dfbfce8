"""Device drivers: the I/O edge of the reconciler. Every driver implements the contract
in ``reconciler.drivers.base`` and passes the same conformance suite."""
