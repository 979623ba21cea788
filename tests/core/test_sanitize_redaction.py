"""Secrets are redacted (a marker naming the kind), controls stripped; the rest of the text stays."""

from __future__ import annotations

import pytest

from comind.sanitize import clean_text, find_secret


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY here", "aws-secret-key"),
        ("+    secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'", "aws-secret-key"),
        ("body MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi1YB5VZ9pQb9vR4t8gPhZ5kA7x\nrest", "high-entropy-string"),
        ("hook http://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX now", "slack-webhook-url"),
        ("db postgres://user:s3cretpw@db.internal/x", "url-password"),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_Xg", "jwt"),
        ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe-access-token"),
        ("maps AIzaSyA1234567890abcdefghijklmnopqrstuv", "gcp-api-key"),
        ("tok ghp_abcdefghij\u200bklmnopqrstuvwxyz0123456789AB", "github-pat"),
        ("tok ghp_abcdefghij\u00adklmnopqrstuvwxyz0123456789AB", "github-pat"),
    ],
)
def test_each_secret_is_replaced_by_a_marker_naming_its_kind(text: str, kind: str) -> None:
    cleaned = clean_text(text)
    assert f"[redacted:{kind}]" in cleaned, cleaned
    assert cleaned.split()[0] == text.split()[0]  # the rest of the text is kept
    assert find_secret(cleaned) is None


@pytest.mark.parametrize(
    "text",
    [
        "0123456789abcdef0123456789abcdef01234567",  # a commit id
        "AbstractSingletonProxyFactoryBean2ForTesting",
        "src/comind/harvest/approach/fingerprint/lines.py",
        "postgres://user:${DB_PASSWORD}@db/x",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert clean_text(text) == text


def test_terminal_controls_are_stripped() -> None:
    text = "a \x1b]8;;http://evil\x07link\x1b]8;;\x07 \x1b]0;title\x07\x1b[2J\x1bc end \x9b31m\x07\ttab\nline"
    assert clean_text(text) == "a link  end \ttab\nline"
