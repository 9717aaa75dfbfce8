"""CI templates shipped with plumb (plain files, see docs/ci.md): a GitHub Actions
workflow and a GitLab CI job that run ``plumb review`` on every change, and a
pre-commit configuration that runs ``plumb validate``."""
