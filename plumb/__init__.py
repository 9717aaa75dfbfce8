"""plumb: GitOps fleet configuration reconciler with policy-as-code for AI GPU clusters.

This package is the typer command line only: each command parses its options, calls
the service floor (``service``), prints and exits. The floors below it are
``inventory``, ``intent``, ``policies``, ``reconciler``, ``rollouts``, ``ci``, the lab
(``lab``), ``service`` and the controller (``serve``): docs/architecture.md.
"""

__version__ = "0.1.0"  # the one place the version is written (pyproject.toml reads it)
