"""``plumb review``: a change to a fleet repo (base revision -> head revision) as the
policies, plan, blast radius and rollout it implies, with a verdict.

``core`` computes a :class:`~ci.review.model.Review` from loaded fleets and recorded
states (pure); ``render`` turns it into Markdown, JSON, SARIF, JUnit or GitHub
annotations. Git, the disk and the state database are read by the command
(``plumb/cmd_review.py``) and by :mod:`ci.gitrev`.
"""
