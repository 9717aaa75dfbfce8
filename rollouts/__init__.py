"""Rollouts (stage 4): pure planning of stratified canary waves with caps, bake sizing
and pre-declared abort conditions, and a thin loop that executes waves durably.
"""
