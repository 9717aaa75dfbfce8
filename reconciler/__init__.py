"""Reconciler (stage 3): pure render of desired device state, diff against observed
state, invariant-preserving ordering of the plan, and drivers at the edge that observe
and apply it.
"""
