"""The secret detector: every format it promises, the false positives it must avoid, and no echo of the secret."""

# ruff: noqa: E501  (tables of realistic-looking fake keys read better unwrapped)

from __future__ import annotations

import pytest

from memstone.domain.secrets import SecretFinding, describe_findings, find_secrets, redact, shannon_entropy

# Fake but realistic-looking values (random characters in each provider's format).
OPENAI = "sk-proj-" + "Qh7Zk2Lm9Xw4Rt1Vb8Nc3Jp6Yd5Fs0Ga" * 3
ANTHROPIC = "sk-ant-api03-" + "Zx8Cv7Bn6Mm5Kl4Jh3Gf2Ds1Aq0Wp9Ei" * 3
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----"
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36"

POSITIVES = [
    pytest.param(f"here is the key {OPENAI} for the judge", "openai_api_key", id="openai-proj"),
    pytest.param("OPENAI_API_KEY=sk-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3", "openai_api_key", id="openai-legacy"),
    pytest.param(f"use {ANTHROPIC}", "anthropic_api_key", id="anthropic"),
    pytest.param(f"token {GITHUB}", "github_token", id="github-ghp"),
    pytest.param("gho_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8", "github_token", id="github-gho"),
    pytest.param("github_pat_11ABCDEFG0" + "x7Yz9Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz", "github_token", id="github-pat"),
    pytest.param("AWS key AKIAZ7Q3XK2M9PLW4RTB here", "aws_access_key_id", id="aws-key-id"),
    pytest.param("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "credential_assignment", id="aws-secret-assignment"),
    pytest.param("AKIAZ7Q3XK2M9PLW4RTB and then wJa1rXUtnFEMI/K7MDENG+bPxRfiCY9zq8Lw2Kx4", "aws_access_key_id", id="aws-pair"),
    pytest.param("slack: xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack_token", id="slack"),
    pytest.param("maps AIzaSyD3x9Kq2Lm8Np4Rt6Vw1Yb5Zc7Fh0Jk2Ml", "google_api_key", id="google"),
    pytest.param("sk_live_51H" + "a8Bc7De6Fg5Hi4Jk3Lm2No1Pq0Rs9Tu8Vw", "stripe_secret_key", id="stripe-live"),
    pytest.param("rk_test_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe_secret_key", id="stripe-restricted-test"),
    pytest.param(f"deploy key:\n{PEM}", "private_key", id="pem-rsa"),
    pytest.param("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE", "private_key", id="pem-openssh-unterminated"),
    pytest.param(f"Authorization: Bearer {JWT}", "jwt", id="bearer-jwt"),
    pytest.param("Authorization: Bearer Zq8Rw2Lk5Np9Xt3Vb7Mc1Hd4Tp6Ys0", "bearer_token", id="bearer-opaque"),
    pytest.param(f"the test jwt is {JWT}", "jwt", id="jwt"),
    pytest.param("postgres://app:Tr0ub4dor-x9Qm@db.internal:5432/app", "url_password", id="url-password"),
    pytest.param("redis://:s3cr3tP4ss@cache:6379/0", "url_password", id="url-password-no-user"),
    pytest.param("password=hunter2x!", "password_assignment", id="password-assignment"),
    pytest.param('"db_password": "correct-horse-9"', "password_assignment", id="password-json"),
    pytest.param("api_key: 0123456789abcdef0123456789abcdef", "credential_assignment", id="hex-api-key-assignment"),
    pytest.param("the crates.io token is cioAbCdEfGhIjKlMnOpQrStUvWxYz012345", "crates_io_token", id="crates-io"),
    pytest.param("the huggingface token so you can pull it: hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "huggingface_token", id="hf"),
    pytest.param("sendgrid key for the mailer: SG.AbCdEfGhIjKlMnOpQrStUv.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfG", "sendgrid_api_key", id="sendgrid"),
    pytest.param("Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==", "basic_auth", id="basic-auth"),
    pytest.param("my key, use it for the staging calls: Zq8Rw2Lk5Np9Xt3Vb7Mc1Hd4", "credential_near_keyword", id="generic-near-keyword"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "kind"), POSITIVES)
def test_finds_each_secret_format(text: str, kind: str) -> None:
    found = find_secrets(text)
    assert found, text
    assert kind in {f.kind for f in found}


NEGATIVES = [
    pytest.param("Tag v1.3.0 is commit 9c1d4f2e7a3b5c8d0e6f1a2b3c4d5e6f7a8b9c0d.", id="commit-hash"),
    pytest.param("short sha 9c1d4f2 fixed it", id="short-sha"),
    pytest.param("image postgres:16.3@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", id="sha256"),
    pytest.param("integrity: sha512-Vq2mtg8xM3hQ1X2YpJt3o8r6gKQz0ZlC1gXy8m7nT9sD3eFqR2aB4cD5eF6gH7iJ8kL9mN0oP1q", id="sri-hash"),
    pytest.param("keys are UUIDv4 like 3fa85f64-5717-4562-b3fc-2c963f66afa6", id="uuid"),
    pytest.param("run ids are ULIDs, e.g. 01HZX3K9P2M4N6Q8R0S2T4V6W8, and the token is the run id", id="ulid"),
    pytest.param("Never log passwords, tokens or API keys.", id="prose-passwords-tokens"),
    pytest.param("The password field is required; token rotation happens daily.", id="prose-required"),
    pytest.param("password: required", id="yaml-prose"),
    pytest.param("def login(token: str, password: Optional[str]) -> None:", id="type-annotations"),
    pytest.param("token = os.environ['GITHUB_TOKEN']", id="env-reference"),
    pytest.param("password=${DB_PASSWORD}", id="env-placeholder"),
    pytest.param("api_key=<your-api-key>", id="angle-placeholder"),
    pytest.param("token: ${{ secrets.GITHUB_TOKEN }}", id="actions-secret-ref"),
    pytest.param("postgres://user:password@localhost/db", id="url-placeholder-password"),
    pytest.param("DATABASE_URL=postgres://ledger:${DB_PASSWORD}@db:5432/ledger", id="url-env-password"),
    pytest.param("max_tokens: 4096 and tokenizer: bert-base-uncased", id="token-config"),
    pytest.param("use the design tokens from @acme/design-tokens", id="design-tokens"),
    pytest.param("AKIAIOSFODNN7EXAMPLE is the AWS documentation example", id="aws-doc-example"),
    pytest.param("the key is in src/riverflow/transforms/orders_dedupe.py", id="key-near-path"),
    pytest.param("the secret lives in com.acme.stockroom.security.SecretsProvider", id="key-near-dotted-name"),
    pytest.param("Authorization: Bearer <token>", id="bearer-placeholder"),
    pytest.param("pk_live_51HabcdefghijklmnopqrstuVWXYZ is the publishable key", id="stripe-publishable"),
]  # fmt: skip


@pytest.mark.parametrize("text", NEGATIVES)
def test_does_not_flag_hashes_ids_prose_or_placeholders(text: str) -> None:
    assert find_secrets(text) == ()


def test_findings_and_messages_never_contain_the_secret() -> None:
    text = f"remember {OPENAI} and {GITHUB}"
    found = find_secrets(text)
    assert [text[f.start : f.end] for f in found] == [OPENAI, GITHUB]
    for shown in (*map(str, found), *map(repr, found), describe_findings(found), str([f.to_dict() for f in found])):
        assert OPENAI not in shown and GITHUB not in shown
        assert OPENAI[10:30] not in shown


def test_redact_replaces_every_span() -> None:
    assert redact(f"a {GITHUB} b") == "a [REDACTED:github_token] b"
    assert redact("nothing here") == "nothing here"


def test_overlapping_findings_merge() -> None:
    found = find_secrets(f"OPENAI_API_KEY={OPENAI}")
    assert len(found) == 1 and isinstance(found[0], SecretFinding)


def test_entropy() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == 2.0


# ------------------------------------------------------------------------------------- issue 16: more formats
AZ_KEY = (
    "Zx8Cv7Bn6Mm5Kl4Jh3Gf2Ds1Aq0Wp9Ei+Rt5Yu7Io9Pa1Sd3Fg5Hj7Kl9Zx1Cv3Bn5Mm7Qw9Er1Ty3Ui5Op7As9Df1Gh3Jk5Lz7Xc9Vb1Nm3Qw==="[
        :86
    ]
    + "=="
)
GCP_JSON = (
    '{"type": "service_account", "project_id": "northwind-staging", "private_key_id": "3f9c0e2d7a1b4c8e9f0a1b2c3d4e5f6a7b8c9d0e", '
    '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\\n-----END PRIVATE KEY-----\\n", '
    '"client_email": "ci-runner@northwind-staging.iam.gserviceaccount.com"}'
)
MORE_POSITIVES = [
    pytest.param("Slack bot token for the notifier: xoxb-712707707179-1702365080695-EGQ80YRP10eougTfIhpazOc6", "slack_token", id="slack-bot"),
    pytest.param("npm publish token npm_OTsoYtxqAYfwFBHPl8KsLcsf1YaHxpFjttuD", "npm_token", id="npm"),
    pytest.param("pypi-AgEIcHlwaS5vcmc" + "Qh7Zk2Lm9Xw4Rt1Vb8Nc3Jp6Yd5Fs0Ga-Qh7Zk2Lm9Xw4Rt1Vb8Nc3Jp6Yd5Fs0Ga", "pypi_token", id="pypi"),
    pytest.param("CI mirror token glpat-ogYtGEwbEFonsIX0eZ77", "gitlab_token", id="gitlab"),
    pytest.param(f"DefaultEndpointsProtocol=https;AccountName=stnorthwind;AccountKey={AZ_KEY};EndpointSuffix=core.windows.net", "azure_storage_key", id="azure-storage-connection-string"),
    pytest.param("Endpoint=sb://orders-relay.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=Zx8Cv7Bn6Mm5Kl4Jh3Gf2Ds1Aq0Wp9Ei+Rt5Yu7Io9P=", "azure_shared_access_key", id="azure-service-bus"),
    pytest.param("https://stnorthwind.blob.core.windows.net/backups?sv=2021-08-06&ss=bf&sp=r&se=2028-03-15T12:00:00Z&spr=https&sig=Zx8Cv7Bn6Mm5Kl4Jh3Gf2Ds1Aq0Wp9Ei%2BRt5Yu7Io9P%3D", "azure_sas_token", id="azure-sas-url"),
    pytest.param(f"CI runner credentials: {GCP_JSON}", "private_key", id="gcp-service-account-json"),
    pytest.param("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGVx0ZoBCADk8Zx8Cv7Bn6Mm5Kl4Jh3Gf2Ds1Aq0Wp9Ei\n=Zx8C\n-----END PGP PRIVATE KEY BLOCK-----", "private_key", id="pgp-private-key"),
    pytest.param("mysql://yunpan:9Mqb5#ZMQObD79@10.0.3.15:3306/yunpan_test", "url_password", id="mysql-url"),
    pytest.param("mongodb+srv://app:Xk29mPq77Lw@cluster0.abcde.mongodb.net/prod", "url_password", id="mongodb-url"),
    pytest.param("errors go to https://7099a49078040ee979b8d2bfd591920b@o451.ingest.sentry.io/5523", "url_credentials", id="sentry-dsn"),
    pytest.param(".env for prod:\nSESSION_SEAL=Qh7Zk2Lm9Xw4Rt1Vb8Nc3Jp6Yd5Fs0Ga\nDEBUG=False", "env_assignment", id="env-line-any-name"),
    pytest.param("Das Passwort für die Staging-Datenbank ist xEEsA#CaA2QT43", "password_near_keyword", id="password-german"),
    pytest.param("测试库的密码是 Xk29!mPq77，别外传", "password_near_keyword", id="password-chinese"),
    pytest.param("the keystore password for release signing, as agreed: Tr0ub4dor&3x", "password_near_keyword", id="password-pass-word"),
    pytest.param("whsec_Qh7Zk2Lm9Xw4Rt1Vb8Nc3Jp6Yd5Fs0Ga for the local webhook", "stripe_webhook_secret", id="stripe-webhook"),
    pytest.param("grafana glsa_DqcdbTmBQq79GygZnhAOgshDBj1zpi4i_cd7c5bf5", "grafana_token", id="grafana"),
    pytest.param("PagerDuty routing Qh7Zk2Lm9Xw4Rt1Vb8Nc3Jp6Yd5Fs0Ga7q for billing", "high_entropy_token", id="unknown-format-entropy"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "kind"), MORE_POSITIVES)
def test_finds_the_formats_a_developer_pastes(text: str, kind: str) -> None:
    found = find_secrets(text)
    assert kind in {f.kind for f in found}, (text, found)


MORE_NEGATIVES = [
    pytest.param("expected = 'SGVsbG8sIFdvcmxkISBUaGlzIGlzIHRlc3QgZGF0YSBmb3IgYmFzZTY0Lg=='", id="base64-test-data"),
    pytest.param("digest sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==", id="sri-integrity"),
    pytest.param("sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709 and md5 d41d8cd98f00b204e9800998ecf8427e", id="hex-digests"),
    pytest.param("request_id = '3fa85f64-5717-4562-b3fc-2c963f66afa6'", id="uuid-assignment-not-a-credential-name"),
    pytest.param('ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"', id="alphabet"),
    pytest.param("BEFORE_FIELD = QuerystringState.BEFORE_FIELD", id="python-constant"),
    pytest.param("HTML_OPEN_CLOSE_TAG_RE = re.compile(HTML_OPEN_CLOSE_TAG_STR)", id="python-call"),
    pytest.param("progress_token: NotRequired[ProgressToken]", id="type-subscript"),
    pytest.param("username, password = get_auth_from_url(proxy)", id="call-result"),
    pytest.param('ExtensionOID.PRIVATE_KEY_USAGE_PERIOD: "privateKeyUsagePeriod",', id="oid-name"),
    pytest.param('pool = ConnectionPool("postgresql://postgres:postgres@localhost:5432")', id="default-db-url"),
    pytest.param("see https://github.com/astral-sh/ruff/blob/4f1c2d3e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d/README.md", id="url-with-commit"),
    pytest.param("class TestSerializeDeserializeRoundTripWithUnicodeKeys2024:", id="camel-identifier"),
    pytest.param("Das Passwort muss mindestens zwölf Zeichen lang sein.", id="password-prose-german"),
    pytest.param("密码至少要十二位，并且包含数字。", id="password-prose-chinese"),
    pytest.param("BUILD_DIR=/var/lib/ci/build-cache-2024-11", id="env-path"),
    pytest.param("LOG_FORMAT=json_with_timestamps_v2", id="env-word-value"),
]  # fmt: skip


@pytest.mark.parametrize("text", MORE_NEGATIVES)
def test_does_not_refuse_common_code_shapes(text: str) -> None:
    assert find_secrets(text) == ()


def test_a_named_format_wins_over_a_generic_rule_on_the_same_span() -> None:
    found = find_secrets("NPM_PUBLISH=npm_OTsoYtxqAYfwFBHPl8KsLcsf1YaHxpFjttuD")
    assert [f.kind for f in found] == ["npm_token"]


# Issue 16: the false positives bench/bench_secrets_fp.py found in PyMySQL's sources and README (the shapes of
# those lines), next to true positives of the same shapes that must still be refused.
DRIVER_DOC_NEGATIVES = [
    pytest.param("# https://dev.mysql.com/doc/internals/en/secure-password-authentication.html#packet-Authentication::Native41", id="password-word-in-a-url"),
    pytest.param('"""Encrypt password with salt and public_key.\n\n    Used for sha256_password and caching_sha2_password.\n    """', id="plugin-names-in-the-next-paragraph"),
    pytest.param("    :param passwd: **DEPRECATED** Alias for password.", id="rest-emphasis-after-passwd"),
    pytest.param("    `password` varchar(255) COLLATE utf8_bin NOT NULL,", id="sql-column-and-collation"),
    pytest.param("The password is hashed with sha256_password on the server.", id="snake-plugin-name-in-prose"),
    pytest.param("See docs/password-reset.md and the Passwort-Manager page for rotation.", id="password-word-in-names"),
]  # fmt: skip
DRIVER_DOC_POSITIVES = [
    pytest.param("    :param passwd: **Xk29mPq77** for the staging box", "password_assignment", id="emphasised-real-password"),
    pytest.param("the password for utf8 test db: Tr0ub4dor&3x", "password_near_keyword", id="password-after-word"),
    pytest.param("Encrypt password with salt.\nOn staging we use Summer_2024!x", "password_near_keyword", id="same-paragraph"),
    pytest.param("Das Datenbank-Passwort ist xEEsA#CaA2QT43", "password_near_keyword", id="hyphenated-german-compound"),
]  # fmt: skip


@pytest.mark.parametrize("text", DRIVER_DOC_NEGATIVES)
def test_a_password_word_in_a_name_url_or_docstring_is_not_a_password(text: str) -> None:
    assert find_secrets(text) == ()


@pytest.mark.parametrize(("text", "kind"), DRIVER_DOC_POSITIVES)
def test_the_same_shapes_with_a_real_password_are_still_refused(text: str, kind: str) -> None:
    assert kind in {f.kind for f in find_secrets(text)}
