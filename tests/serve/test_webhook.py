"""Push webhooks: GitHub's HMAC signature and GitLab's token, verified or refused."""

from __future__ import annotations

import json

import pytest

from serve.webhook import WebhookRefused, github_signature, verify_push

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
