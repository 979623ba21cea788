"""Secrets are redacted (a marker naming the kind), controls stripped; the rest of the text stays."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from comind.sanitize import _random_looking, clean_path, clean_text, find_secret, shown


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
        ("env DB_PASSWORD=s3cretvalue42", "password"),
        ('json "password": "jsonpass123"', "password"),
        ("js dbPassword: 'camelpass99'", "password"),
        ("env AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-key"),
        ("cache redis://:foobared123@localhost:6379", "url-password"),
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
        "apiKey: process.env.API_KEY",  # where the secret is read from, not the secret
        "session.token = request.token",
        "maxTokens=4096",
        "The secret: keep it small",  # `secret` alone is prose; JWT_SECRET=… is a name
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert clean_text(text) == text


def test_a_url_password_holding_an_at_sign_is_redacted_whole() -> None:
    # the host starts after the userinfo's last `@`: `p@ss` kept `ss` as the host's
    assert clean_text("push https://user:p@ss@host/x and mail me@x.com") == (
        "push https://user:[redacted:url-password]@host/x and mail me@x.com"
    )


def test_terminal_controls_are_stripped() -> None:
    text = "a \x1b]8;;http://evil\x07link\x1b]8;;\x07 \x1b]0;title\x07\x1b[2J\x1bc end \x9b31m\x07\ttab\nline"
    assert clean_text(text) == "a link  end \ttab\nline"


# --- the filter under fuzzing: never raises, idempotent, never grows a secret back -----------------

SECRETS = [
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "xoxb-123456789012-abcdefghijkl",
    "AKIAIOSFODNN7ABCDEFG",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_Xg",
]
# What may sit around a secret, including what redaction itself writes and invisible characters.
NOISE = st.lists(
    st.sampled_from([*"aZ09 /+=:_-.'\"@\n\t[]()", "\u200b", "\u00ad", "\x1b[31m", "[redacted:", "]"]),
    max_size=30,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(NOISE, st.sampled_from(SECRETS)), max_size=6), st.text(max_size=60))
def test_redaction_is_idempotent_and_keeps_no_secret(parts: list[str], extra: str) -> None:
    text = " ".join(parts) + " " + extra
    once = clean_text(text)
    assert clean_text(once) == once  # idempotent: a marker is never redacted again, nothing new appears
    assert find_secret(once) is None
    for secret in SECRETS:
        if secret in text:
            assert secret not in once


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SECRETS), st.integers(0, 40), st.sampled_from(["\u200b", "\u00ad", "\u2060", "\ufeff"]))
def test_an_invisible_character_inside_a_secret_does_not_hide_it(secret: str, at: int, mark: str) -> None:
    at = min(at, len(secret))
    cleaned = clean_text(f"token {secret[:at]}{mark}{secret[at:]} end")
    assert secret not in cleaned and "[redacted:" in cleaned and cleaned.endswith(" end")


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300))
def test_the_filter_never_raises_and_never_lengthens_a_secret_free_text(text: str) -> None:
    cleaned = clean_text(text)
    assert clean_text(cleaned) == cleaned
    assert shown(cleaned, multiline=True) == cleaned  # stored text needs no cleaning to be shown


# --- text shown to people --------------------------------------------------------------------------

HOSTILE = "a\x1b]8;;http://evil\x07link\x1b]8;;\x07\x1b]0;title\x07\x1b[2J\x9b31m\u202eevil\u202c\U000e0041\x00b"


def test_shown_text_has_no_control_of_any_kind() -> None:
    assert shown(HOSTILE) == "alinkevilb"
    assert shown("two\nlines\tand a tab") == "two lines and a tab"
    assert shown("two\nlines\tand a tab", multiline=True) == "two\nlines\tand a tab"


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=200), st.booleans())
def test_nothing_shown_can_drive_a_terminal(text: str, multiline: bool) -> None:
    out = shown(text, multiline=multiline)
    allowed = "\n\t" if multiline else ""
    assert not any(
        (ord(c) < 0x20 and c not in allowed) or 0x7F <= ord(c) <= 0x9F or unicodedata.category(c) == "Cf" for c in out
    ), repr(out)
    assert shown(out, multiline=multiline) == out


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(NOISE, st.sampled_from(SECRETS)), max_size=6))
def test_redaction_of_run_together_text_is_idempotent(parts: list[str]) -> None:
    once = clean_text("".join(parts))
    assert clean_text(once) == once
    assert find_secret(once) is None


@settings(max_examples=300)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(SECRETS),
            st.sampled_from(["password", "API_KEY", "Token", "://", "gh", "glpat-", "earer ", "=", ": ", "'", "@"]),
            st.sampled_from(["postgres://user:s3cretpw@db", "passwd: 'hunter22x'", "Bearer abcdefghijklmnopqrstuvwx"]),
            st.text(alphabet="abcXYZ019/+=_-. \n", max_size=50),
            st.text(max_size=20),
        ),
        max_size=8,
    )
)
def test_text_looked_over_first_is_redacted_as_the_patterns_redact_it(parts: list[str]) -> None:
    """`redact_secrets` skips the patterns for ASCII text holding none of their words: the same
    answer as running them (`__wrapped__` past its cache; the look-over patched out)."""
    import comind.sanitize as sanitize

    text = "".join(parts)
    fast = sanitize._redacted.__wrapped__(text, True)  # type: ignore[attr-defined]
    looks, sanitize._may_hold_secret = sanitize._may_hold_secret, lambda _text: True
    try:
        assert fast == sanitize._redacted.__wrapped__(text, True)  # type: ignore[attr-defined]
    finally:
        sanitize._may_hold_secret = looks
    assert not sanitize._may_hold_secret("const total = items.reduce((sum, item) => sum + item.price, 0);")


JVM_PATHS = [
    "okhttp/src/jvmTest/java/okhttp3/internal/tls/CertificatePinnerChainValidationTest.java",
    "okhttp/src/commonJvmAndroid/kotlin/okhttp3/internal/IsProbablyUtf8.kt",
    "gson/src/main/java/com/google/gson/internal/bind/util/ISO8601Utils.java",
    "handler/src/main/java/io/netty/handler/ssl/OpenSslJavaxX509Certificate.java",
]


@pytest.mark.parametrize("path", JVM_PATHS)
def test_a_path_of_the_tree_is_kept_whole_where_text_is_not(path: str) -> None:
    # the shape of a base64 key: in free text it cannot be told from one, in a path field it need not be
    assert clean_path(path) == path
    assert "[redacted:high-entropy-string]" in clean_text(path)
    assert find_secret(path, path=True) is None and find_secret(path) == "high-entropy-string"


@pytest.mark.parametrize("key", ["ghp_abcdefghijklmnopqrstuvwxyz0123456789AB", "AKIAIOSFODNN7EXAMPLE"])
def test_a_prefixed_key_in_a_path_is_still_redacted(key: str) -> None:
    assert "[redacted:" in clean_path(f"config/{key}.json")


@settings(max_examples=500)
@given(st.binary(min_size=31, max_size=70), st.sampled_from(["", "api/v1/keys/", "secrets/prod/aws/", "a/b/c/"]))
def test_a_random_key_in_text_is_redacted_whatever_precedes_it(raw: bytes, prefix: str) -> None:
    import base64

    key = base64.b64encode(raw).decode().rstrip("=")
    if _random_looking(prefix + key):  # (what the patterns call a key: upper, lower, digits, high entropy)
        assert "[redacted:" in clean_text(f"key {prefix}{key} here")


@pytest.mark.parametrize(
    "key",
    [
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "x/lculn/fikZydUD576vlQEDOl4tGgC1mrcihdxF0iM9Ddxp20zgmdIJAFy",  # word-like folders, random name
        "api/v1/keys/TQNFpjEJLDWEBcltyRkgGsikrz4WVFQ0BbkCnb2l",
        "qDjt558d/i8/TlA3OApzmlDl3XxCBtsll3zbZQDcx",
    ],
)
def test_a_key_with_word_like_folders_is_still_redacted(key: str) -> None:
    assert "[redacted:" in clean_text(key)
