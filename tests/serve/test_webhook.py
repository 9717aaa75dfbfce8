"""Push webhooks: GitHub's HMAC signature and GitLab's token, verified or refused."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from serve.webhook import MAX_DEPTH, WebhookRefused, github_signature, json_depth, verify_push

SECRET = b"s3cret"
BODY = json.dumps({"ref": "refs/heads/main", "after": "a" * 40}).encode()


def test_github_push_with_the_right_signature() -> None:
    """A push signed with the shared secret names its branch and commit."""
    headers = {"X-Hub-Signature-256": github_signature(SECRET, BODY), "X-GitHub-Event": "push"}
    push = verify_push(headers, BODY, SECRET)
    assert push is not None and (push.forge, push.branch, push.commit) == (
        "github",
        "main",
        "a" * 40,
    )


def test_github_signature_of_another_body_is_refused() -> None:
    """A signature over different bytes (a tampered body) is refused with 401."""
    headers = {"X-Hub-Signature-256": github_signature(SECRET, b"{}"), "X-GitHub-Event": "push"}
    with pytest.raises(WebhookRefused) as refused:
        verify_push(headers, BODY, SECRET)
    assert refused.value.status == 401


def test_github_ping_is_verified_but_not_a_push() -> None:
    """A signed ping is accepted and triggers nothing."""
    headers = {"x-hub-signature-256": github_signature(SECRET, b"{}"), "x-github-event": "ping"}
    assert verify_push(headers, b"{}", SECRET) is None


def test_gitlab_token_checked() -> None:
    """GitLab's token must equal the secret."""
    good = {"X-Gitlab-Token": "s3cret", "X-Gitlab-Event": "Push Hook"}
    push = verify_push(good, BODY, SECRET)
    assert push is not None and push.forge == "gitlab"
    with pytest.raises(WebhookRefused):
        verify_push({**good, "X-Gitlab-Token": "guess"}, BODY, SECRET)


def test_unsigned_or_secretless_requests_are_refused() -> None:
    """No signature: 401; no secret configured: 503 (never accept unverified pushes)."""
    with pytest.raises(WebhookRefused) as unsigned:
        verify_push({"X-GitHub-Event": "push"}, BODY, SECRET)
    assert unsigned.value.status == 401
    with pytest.raises(WebhookRefused) as no_secret:
        verify_push({"X-Gitlab-Token": ""}, BODY, b"")
    assert no_secret.value.status == 503


def test_a_push_without_ref_is_a_bad_request() -> None:
    """A verified push whose payload lacks ref/after is refused with 400."""
    body = b'{"after": "x"}'
    headers = {"X-Hub-Signature-256": github_signature(SECRET, body), "X-GitHub-Event": "push"}
    with pytest.raises(WebhookRefused) as bad:
        verify_push(headers, body, SECRET)
    assert bad.value.status == 400


def _signed_push(body: bytes) -> dict[str, str]:
    return {"X-Hub-Signature-256": github_signature(SECRET, body), "X-GitHub-Event": "push"}


def test_a_deeply_nested_payload_is_a_bad_request_not_a_recursion_error() -> None:
    """A signed 100,000-deep array is refused with 400 before the parser recurses."""
    body = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(WebhookRefused) as deep:
        verify_push(_signed_push(body), body, SECRET)
    assert deep.value.status == 400 and f"deeper than {MAX_DEPTH}" in str(deep.value)


def test_a_payload_at_the_depth_limit_is_parsed() -> None:
    """Nesting of exactly MAX_DEPTH levels reaches the parser (here: the push is read)."""
    inner: object = "x"
    for _ in range(MAX_DEPTH - 1):
        inner = [inner]
    body = json.dumps({"ref": "refs/heads/main", "after": "b" * 40, "deep": inner}).encode()
    assert json_depth(body) == MAX_DEPTH
    push = verify_push(_signed_push(body), body, SECRET)
    assert push is not None and push.commit == "b" * 40


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab\n\u00e9'),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet='[]{}"\\k', max_size=3), inner, max_size=3)
    ),
    max_leaves=20,
)


def _depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    return 0


@given(JSON, st.booleans())
def test_json_depth_is_the_nesting_of_the_parsed_value(value: object, ascii_only: bool) -> None:
    """The scan's depth equals the depth of the value json.loads builds, whatever brackets,
    quotes and backslashes its strings hold."""
    text = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert json_depth(text) == _depth(value)


@given(JSON, st.integers(min_value=0, max_value=4))
def test_json_depth_stops_just_above_the_bound(value: object, bound: int) -> None:
    """With a bound, the scan reports the true depth up to it and bound + 1 past it."""
    text = json.dumps(value).encode()
    assert json_depth(text, bound) == min(_depth(value), bound + 1)
