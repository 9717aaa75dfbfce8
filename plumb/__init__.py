"""plumb: GitOps fleet configuration reconciler with policy-as-code for AI GPU clusters.

This package is the command line only; the stages live in ``inventory``, ``intent``,
``policies``, ``reconciler``, ``rollouts`` and ``ci``.
"""

__version__ = "0.1.0"
