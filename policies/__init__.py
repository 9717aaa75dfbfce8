"""Policy-as-code: pure checks from a loaded fleet to a PolicyReport (stage 2 of the flow).

``policies.engine`` holds the registry and evaluation, ``policies.builtin`` the
shipped library, ``policies.repo`` the loader for a fleet repo's own ``policies/*.py``.
"""
