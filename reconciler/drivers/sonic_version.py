"""SONiC build versions -> the branch plumb compares (pure).

sonic-buildimage names a build in ``functions.sh`` (``sonic_get_version``) and ``show
version`` prints it after ``SONiC.``:

=====================================  ================================================
build                                  form
=====================================  ================================================
``202012.01``, ``M.20220531.01``       a tag (a clean build on a tagged commit)
``202405.123456-6b1f2e5c4``            ``<branch>.<BUILD_NUMBER>-<short commit>``
``master.0-dirty-20231110.101010``     ``<branch>.<N>-dirty-<BUILD_TIMESTAMP>`` (a build
                                       of a tree with uncommitted changes)
``202012.01-dirty-20210102.030405``    a tag, dirty
``master-20200712``                    a dated tag
``20220531.45``                        an Azure pipeline build: ``<YYYYMMDD>.<N>``
``release-1.1-7d94c0c28``              a branch name holding ``-`` or ``.``, then the
                                       commit
=====================================  ================================================

(``/`` in a branch name becomes ``_``.) :func:`nos_version` gives the branch
(``202405``, ``master``, ``20220531``; what firmware bundles pin and what ``{version}``
in an image URL becomes); :func:`release` the SONiC release whose tools the build
carries (``202405``, ``202205`` for ``20220531``, ``master``). A string neither can read
is ``None``: that field is unknown, the device stays observable.
"""

from __future__ import annotations

import re

_PREFIX = re.compile(r"^SONiC\.", re.IGNORECASE)
_DIRTY = re.compile(r"-dirty(?:-[0-9]{8}\.[0-9]{6})?$")
_COMMIT = re.compile(r"-g?[0-9a-f]{7,40}$")
_PIPELINE = re.compile(r"^(?:M\.)?([0-9]{8})\.[0-9]+$")
_BRANCH_BUILD = re.compile(r"^([A-Za-z0-9_]+)\.[0-9]+$")
_DATED_TAG = re.compile(r"^([A-Za-z0-9_]+)-[0-9]{8}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
_RELEASE = re.compile(r"^(20[0-9]{4})")


def nos_version(build: str) -> str | None:
    """The branch a build version names, or None when it cannot be read."""
    head = _PREFIX.sub("", build.strip())
    head = _DIRTY.sub("", head)
    if _COMMIT.search(head) and not _PIPELINE.match(head):
        head = _COMMIT.sub("", head)
    for form in (_PIPELINE, _BRANCH_BUILD, _DATED_TAG):
        found = form.match(head)
        if found is not None:
            return found.group(1)
    return head if _NAME.match(head) else None


def release(version: object) -> str | None:
    """The SONiC release a branch belongs to: ``202405``, ``202205`` (``20220531``),
    ``master``; None for a branch that names none."""
    if not isinstance(version, str):
        return None
    if version == "master":
        return "master"
    found = _RELEASE.match(version)
    return None if found is None else found.group(1)
