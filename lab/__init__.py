"""The lab (one room): a simulated fleet in SQLite with its store, virtual clock,
fault injection, metrics generator, driver, rollout runtime and metrics source.

Production paths reach it only through the same interfaces as real devices: it is a
registered driver (``plumb.drivers`` entry point ``lab``) whose plugin also supplies
the rollout clock, maintenance and metrics source for lab devices.
"""
