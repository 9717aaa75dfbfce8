"""Inventory: what physically exists and how it is cabled (stage 1 of the flow).

Also home of the located YAML loader (``inventory.source``) and of the problem
vocabulary (``inventory.problems``) that every later stage uses to point at a file
and line.
"""
