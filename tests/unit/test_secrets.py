"""The secret detector: every format it promises, the false positives it must avoid, and no echo of the secret."""

# ruff: noqa: E501  (tables of realistic-looking fake keys read better unwrapped)

from __future__ import annotations

import base64
import random
import re
import string
from pathlib import Path

import pytest

from memstone import EntryInput, open_service
from memstone.capture import UserPrompt, capture
from memstone.domain.errors import SecretRefusedError
from memstone.domain.model import EntryPatch
from memstone.domain.secret_formats import fold_ascii
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


# --------------------------------------------------------------- issue 16 item 4: every common developer format
# Each row: a paste in a provider's documented format (fake, random characters from a seeded generator, so no
# scanner mistakes this file for a leak), the kind it must be refused as, and a near miss of the same shape that
# must not be refused (a placeholder, a prefix alone, a public key, an id, a digest). None of these kinds existed
# before this table.
_RNG = random.Random(16)
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"


def rnd(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def uuid4() -> str:
    h = rnd(32, HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


TWILIO_SID = "AC" + rnd(32, HEX)
DISCORD_ID = b64url(b"1098765432109876543")
SPACED_JWT = (
    b64url(b'{ "alg": "HS256", "typ": "JWT" }')
    + "."
    + b64url(b'{ "sub": "svc", "role": "service_role" }')
    + "."
    + rnd(43, URLSAFE)
)
KUBE_KEY = base64.b64encode(b"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" + rnd(60).encode()).decode()
KUBE_CERT = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIDBTCCAe2gAwIBAgIIb" + rnd(60).encode()).decode()
PUTTY = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n"
    + rnd(64)
    + "\n"
    + rnd(20)
    + "\nPrivate-Lines: 1\n"
    + rnd(44)
)

FORMATS = [
    # code hosting, CI, infrastructure tools
    ("gitlab-job-token", f"the pipeline fetched artifacts with glcbt-{rnd(20)} yesterday", "gitlab_token", "glcbt-" + "x" * 20 + " in the docs"),
    ("gitlab-runner-registration", f"gitlab-runner register --registration-token GR1348941{rnd(20, URLSAFE)}", "gitlab_token", "runner tokens start with GR1348941"),
    ("bitbucket-app-password", f"mirror job pushes with ATBB{rnd(32)} to bitbucket", "bitbucket_app_password", "ATBB" + "X" * 32 + " (placeholder)"),
    ("atlassian-api-token", f"jira: ATATT3xFfGF0{rnd(170, URLSAFE)}=7DAE497F", "atlassian_api_token", "Atlassian tokens begin with ATATT3xFfGF0"),
    ("azure-devops-pat", f"ado pat {rnd(52)}JQQJ99{rnd(22)}AZDO{rnd(2)}", "azure_devops_pat", "the JQQJ9 signature marks new Azure keys"),
    ("terraform-cloud", f"credentials app.terraform.io {{ token = {rnd(14)}.atlasv1.{rnd(67)} }}", "terraform_cloud_token", "TFC tokens contain .atlasv1. in the middle"),
    ("vault-service-token", f"VAULT_TOKEN is now hvs.CAESI{rnd(86, URLSAFE)}", "vault_token", "vault login hvs.example"),
    ("figma", f"figma figd_{rnd(40, URLSAFE)}", "figma_token", "figd_" + "x" * 40),
    ("rubygems", f"gem push with rubygems_{rnd(48, HEX)}", "rubygems_token", "rubygems_api_key_goes_here"),
    ("nuget", f"dotnet nuget push -k oy2{rnd(43, string.ascii_lowercase + string.digits)}", "nuget_api_key", "dotnet nuget push -k convoy2 settings"),
    ("docker-hub", f"docker login -u ci --password-stdin <<< dckr_pat_{rnd(27, URLSAFE)}", "docker_hub_token", "Docker's API reference shows dckr_pat_124509ugsdjga93"),
    # chat and mail
    ("slack-app-token", f"socket mode xapp-1-A0{rnd(9, string.ascii_uppercase + string.digits)}-{rnd(13, string.digits)}-{rnd(64, HEX)}", "slack_token", "xapp-1- tokens are app-level"),
    ("discord-bot-token", f"bot: {DISCORD_ID}.{rnd(6, URLSAFE)}.{rnd(38, URLSAFE)}", "discord_bot_token", "MyModuleNameIsLongEnough1.abcdef.ghijklmnopqrstuvwxyz0123456789"),
    ("discord-webhook", f"alerts go to https://discord.com/api/webhooks/1098765432109876543/{rnd(68, URLSAFE)}", "discord_webhook", "https://discord.com/api/webhooks/<id>/<token>"),
    ("mailgun-new-key", f"mailgun {rnd(32, HEX)}-{rnd(8, HEX)}-{rnd(8, HEX)}", "mailgun_api_key", "request 3fa85f64-5717-4562-b3fc-2c963f66afa6 failed"),
    ("mailchimp", f"mailchimp {rnd(32, HEX)}-us21 for the newsletter", "mailchimp_api_key", "md5 d41d8cd98f00b204e9800998ecf8427e-usa"),
    ("resend", f"resend re_{rnd(8)}_{rnd(24)} sends the receipts", "resend_api_key", "re_findall_multilineStringWithoutDigits"),
    ("twilio-auth-token", f"Twilio {TWILIO_SID} / {rnd(32, HEX)}", "twilio_auth_token", f"Twilio account {TWILIO_SID}, fixed in {rnd(40, HEX)}"),
    ("opsgenie", f"curl -H 'Authorization: GenieKey {uuid4()}' https://api.opsgenie.com/v2/alerts", "opsgenie_api_key", "Authorization: GenieKey <key>"),
    ("postmark-uuid", f"Postmark server token {uuid4()} for transactional mail", "credential_near_keyword", f"Postmark message id {uuid4()}"),
    ("heroku-uuid", f"the Heroku API key {uuid4()} deploys staging", "credential_near_keyword", f"the Heroku app id {uuid4()}"),
    ("datadog-hex", f"Datadog API key {rnd(32, HEX)} goes in the agent config", "credential_near_keyword", f"Datadog trace id {rnd(32, HEX)}"),
    ("pagerduty-integration", f"integration key {rnd(32, HEX)} for billing alerts", "credential_near_keyword", f"integration commit {rnd(40, HEX)}"),
    ("authorization-token-hex", f"Authorization: Token {rnd(40, HEX)}", "authorization_header", "Authorization: Token <token>"),
    # payments
    ("square-access-token", f"square EAAA{rnd(60, URLSAFE)}", "square_token", "EAAA" + "x" * 60),
    ("braintree", f"BT: access_token$production${rnd(16, string.ascii_lowercase + string.digits)}${rnd(32, HEX)}", "braintree_access_token", "access_token$production$<merchant_id>$<hash>"),
    ("paypal-access-token", f"paypal bearer A21AA{rnd(90, URLSAFE)}", "paypal_access_token", "PayPal access tokens start with A21AA"),
    ("mercadopago", f"MP APP_USR-{rnd(16, string.digits)}-{rnd(6, string.digits)}-{rnd(32, HEX)}-{rnd(9, string.digits)}", "mercadopago_access_token", f"public key APP_USR-{uuid4()}"),
    # clouds
    ("aws-session-token", f"session: IQoJb3JpZ2luX2VjE{rnd(300, ALNUM + '+/')}", "aws_session_token", "STS tokens often begin IQoJb3JpZ2lu"),
    ("azure-client-secret", f"entra app secret {rnd(3)}8Q~{rnd(34, URLSAFE + '~.')}", "azure_client_secret", "abc8Q~short"),
    ("google-oauth-client-secret", f"GOCSPX-{rnd(28, URLSAFE)} is the web client's", "google_oauth_client_secret", "client_secret: GOCSPX-<secret>"),
    ("google-access-token", f"gcloud printed ya29.{rnd(120, URLSAFE)}", "google_oauth_token", "ya29.a0AfH6SM" + "x" * 30),
    ("google-refresh-token", f"refresh 1//0{rnd(90, URLSAFE)}", "google_oauth_token", "see 1//0 in the docs"),
    ("supabase-pat", f"supabase login sbp_{rnd(40, HEX)}", "supabase_token", "sbp_token_for_supabase_cli_login_command"),
    ("supabase-secret-key", f"server uses sb_secret_{rnd(31, URLSAFE)}", "supabase_secret_key", f"browser uses sb_publishable_{rnd(31, URLSAFE)}"),
    ("supabase-service-role-jwt", f"service role {SPACED_JWT}", "jwt", b64url(b'{ "name": "x" }') + "." + b64url(b'{ "v": 1, "w": 2 }') + "." + "abcdefghij"),
    ("unsigned-jwt", "session " + b64url(b'{"alg":"none"}') + "." + b64url(b'{"sub":"admin","exp":4102444800}') + ".", "jwt", "call eyJzb21lIjoib2JqIn0.eyJ2IjoxfQ. in the parser"),
    ("cloudflare-origin-ca", f"origin ca v1.0-{rnd(24, HEX)}-{rnd(146, HEX)}", "cloudflare_origin_ca_key", "released v1.0-beta and v1.0-rc1"),
    ("vercel", f"vercel deploy --token vcp_{rnd(56)}", "vercel_token", "vcp_config_loader_module_name"),
    ("vercel-blob", f"vercel_blob_rw_{rnd(16)}_{rnd(30)}", "vercel_blob_token", "BLOB_READ_WRITE_TOKEN=vercel_blob_rw_<store>_<secret>"),
    ("netlify", f"netlify nfp_{rnd(36)}", "netlify_token", "nfp_" + "x" * 36),
    ("heroku-new", f"heroku HRKU-AA{rnd(58, URLSAFE)}", "heroku_api_key", "HRKU-AA prefixes new Heroku keys"),
    ("flyio", f"FLY: FlyV1 fm2_{rnd(200, ALNUM + '+/=')}", "flyio_token", "FlyV1 fm2_<token>"),
    ("render", f"render rnd_{rnd(32)}", "render_api_key", "rnd_seed_value_for_the_tests"),
    # AI providers
    ("groq", f"groq gsk_{rnd(52)}", "groq_api_key", "gsk_" + "x" * 52),
    ("replicate", f"replicate r8_{rnd(37)}", "replicate_token", "r8_" + "X" * 37),
    ("openrouter", f"sk-or-v1-{rnd(64, HEX)}", "openrouter_api_key", "sk-or-v1-abc"),
    ("huggingface-org", f"api_org_{rnd(34)}", "huggingface_token", "api_org_settings_page_for_the_admins"),
    # observability and work tools
    ("newrelic-user-key", f"NRAK-{rnd(27, string.ascii_uppercase + string.digits)}", "newrelic_key", "NRAK-" + "X" * 27),
    ("newrelic-license", f"license {rnd(36, HEX)}NRAL", "newrelic_key", f"sha1 {rnd(40, HEX)}"),
    ("grafana-legacy-key", f"grafana eyJrIjoi{rnd(80, ALNUM + '+/')}", "grafana_api_key", "eyJrIjoi is base64 for {\"k\":"),
    ("linear-oauth", f"lin_oauth_{rnd(64, HEX)}", "linear_api_key", "lin_oauth_"),
    ("notion", f"notion ntn_{rnd(46)}", "notion_token", "ntn_" + "x" * 46),
    ("airtable", f"airtable pat{rnd(14)}.{rnd(64, HEX)}", "airtable_token", f"patches.{rnd(64, HEX)}"),
    ("asana", f"asana 2/{rnd(16, string.digits)}/{rnd(16, string.digits)}:{rnd(32, HEX)}", "asana_token", "serves 1/2 cup: 120 g"),
    # keys, files, command lines, URLs
    ("putty-private-key", PUTTY, "private_key", "PuTTY-User-Key-File-3: ssh-ed25519"),
    ("kubeconfig-client-key", f"client-key-data: {KUBE_KEY}", "private_key", f"certificate-authority-data: {KUBE_CERT}"),
    ("docker-config-auth", '{"auths": {"registry.acme.io": {"auth": "' + base64.b64encode(f"deploybot:{rnd(20)}".encode()).decode() + '"}}}', "docker_auth", '{"auth": "' + base64.b64encode(b"service-account-name").decode() + '"}'),
    ("mysql-p-flag", f"mysql -h db -u root -p{rnd(10)}x! shop", "cli_password", "mysql -u root -p shop"),
    ("password-flag", f"docker login -u ci --password {rnd(12)}9x registry.acme.io", "cli_password", "docker login -u ci --password $REGISTRY_PASSWORD"),
    ("sshpass", f"sshpass -p '{rnd(12)}9x' ssh deploy@10.0.3.15", "cli_password", "sshpass -p \"$SSH_PASS\" ssh deploy@10.0.3.15"),
    ("docker-login-p", f"docker login -u ci -p {rnd(12)}9x registry.acme.io", "cli_password", "docker login -u ci -p $CI_REGISTRY_PASSWORD registry.acme.io"),
    ("curl-user-password", f"curl -u admin:{rnd(12)}9x https://grafana.acme.io/api/dashboards", "cli_password", "curl -u admin:$GRAFANA_PASSWORD https://grafana.acme.io/api/dashboards"),
    ("env-password-no-digit", "DB_PASSWORD=correcthorse", "password_assignment", "POSTGRES_PASSWORD=postgres"),
    ("private-key-0x-hex", f"wallet private key 0x{rnd(64, HEX)}", "credential_near_keyword", f"tx hash 0x{rnd(64, HEX)}"),
    ("teams-webhook", f"https://acme.webhook.office.com/webhookb2/{uuid4()}@{uuid4()}/IncomingWebhook/{rnd(32, HEX)}/{uuid4()}", "teams_webhook", "https://acme.webhook.office.com/webhookb2/<id>"),
    ("url-password-with-at", f"postgres://app:p@ss-W0rd-{rnd(6)}@db:5432/app", "url_password", "postgres://postgres:postgres@localhost"),
    # passwords in prose without spaces or with a local word
    ("password-japanese", f"ステージングのパスワードは{rnd(6)}!x9です", "password_near_keyword", "パスワードは12文字以上にしてください"),
    ("password-chinese-quotes", f"数据库密码：「{rnd(8)}#7q」", "password_near_keyword", "密码：「至少十二位」"),
    ("password-french-mdp", f"le mdp du wifi : {rnd(8)}#7q", "password_near_keyword", "le mdp doit contenir 12 caractères"),
    ("password-spanish-clave", f"la clave del servidor es {rnd(8)}#7q", "password_near_keyword", "la clave primaria es user_id"),
    ("password-pw", f"PW: {rnd(9)}!4", "password_near_keyword", "PW: see the vault"),
    ("key-word-french", "la clé API : Zq8Rw2Lk5Np9Xt3Vb7Mc1Hd4", "credential_near_keyword", "la clé API est dans le coffre"),
    ("key-word-japanese", "APIキー：Hd4Tp6Ys0Zq8Rw2Lk5Np9Xt3", "credential_near_keyword", "APIキーは環境変数に入れる"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "kind"), [pytest.param(t, k, id=i) for i, t, k, _ in FORMATS])
def test_each_documented_format_is_refused(text: str, kind: str) -> None:
    assert kind in {f.kind for f in find_secrets(text)}, (text, find_secrets(text))


COMMON_SHAPES = [
    pytest.param('client_secret="my-client-secret",', id="placeholder-client-secret"),
    pytest.param('    "api_key": "secret_key_123"\n  the password field', id="doc-example-value"),
    pytest.param('password = request.form["password"]\nauthorization = b"Basic " + base64.b64encode(userpass)', id="code-call-after-password"),
    pytest.param("The API key id 3fa85f64-5717-4562-b3fc-2c963f66afa6 is logged, never the key.", id="key-id-uuid"),
    pytest.param(f"token format: a UUID such as {uuid4()}", id="token-format-example"),
    pytest.param("access token 00000000-0000-0000-0000-000000000000", id="nil-uuid"),
    pytest.param("version 1.2.3-rc.4+build.5, wheel sha256 " + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", id="version-and-digest"),
    pytest.param("ExampleToken.eyJpc3MiOiJ0ZXN0In0.part", id="dotted-name-with-ey"),
    # bench_secrets_fp.py hits in huggingface_hub and mypy (refused before this change too)
    pytest.param('_TOKEN_EXCHANGE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange"', id="urn-value"),
    pytest.param('"refresh_token": "hf_oauth__refresh_token",', id="double-underscore-name"),
    pytest.param("last_pass = DEFAULT_LAST_PASS", id="constant-name"),
    pytest.param("or passing :py:const:`None` value returns it. Otherwise a valid", id="passing-prose"),
    pytest.param("pass_context = jinja2.pass_context", id="pass-context"),
    pytest.param("key: PKCS12PrivateKeyTypes | None,", id="camel-type-after-key"),
    pytest.param("credentials_list = [cast(Credentials, credentials)]", id="bracketed-call"),
    pytest.param('_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"', id="pem-marker-in-code"),
]  # fmt: skip


@pytest.mark.parametrize("text", [pytest.param(n, id=i) for i, _, _, n in FORMATS] + COMMON_SHAPES)
def test_each_formats_near_miss_and_common_code_shapes_are_not_refused(text: str) -> None:
    assert find_secrets(text) == ()


async def test_every_format_is_refused_by_every_write_path_of_the_service_and_by_capture(tmp_path: Path) -> None:
    """One detector: the service's remember, update, evidence and capture's whole-event refusal all use it."""
    url = f"sqlite:///{tmp_path / 'm.db'}"
    scope = "memstone://orgs/acme/projects/web"
    async with open_service(url, embedding=None) as svc:
        rev = await svc.remember(None, entries=[EntryInput(kind="fact", text="We deploy with uv.")], scope=scope)
        assert rev is not None
        entry = rev.changes[0].entry_id
        for name, text, _, _ in FORMATS:
            paste = f"Remember this for {name}: {text}"
            with pytest.raises(SecretRefusedError):
                await svc.remember(None, entries=[EntryInput(kind="fact", text=paste)], scope=scope)
            with pytest.raises(SecretRefusedError):
                await svc.update(entry, EntryPatch(text=paste))
            with pytest.raises(SecretRefusedError):
                await svc.record_source("transcript", paste)
            result = await capture(svc, UserPrompt(text=f"Always use this: {text}"), scope=scope)
            assert result.status == "refused" and result.findings, name
        current = await svc.get(entry)
        assert (current.version, current.text) == (1, "We deploy with uv.")
    raw = (tmp_path / "m.db").read_bytes()
    assert not [name for name, text, _, _ in FORMATS if text[-16:].encode() in raw]


# Issue 16, item 4: generic shapes no provider list names. Each rule: a hit, and a near miss that must pass.
GENERIC_HITS = [
    pytest.param("https://maps.example.com/api?key=iCDmO46ayJKP4GY08vDuPngU30ZP7T&q=x", "url_query_credential",
                 id="query-key"),
    pytest.param("https://cdn.example.net/f.zip?expires=1700000000&signature=q7Rt%2Bk9Lm2Xw4Zp6Vb8Nc3Jd5Fs0Ga1Hy3Ke5%3D",
                 "url_query_credential", id="query-sig-percent-encoded"),
    pytest.param('<Setting name="ApiSecret">6T2bwGfcCvJAXrF6bnZ3eBZclIvRY6</Setting>', "credential_near_keyword",
                 id="xml-camel-name"),
    pytest.param("login: admin / 09xhTGOWvG!", "credential_pair", id="login-pair"),
    pytest.param("user admin, pass R1mZeEgbcWJN", "credential_pair", id="user-pass-prose"),
    pytest.param("credentials are admin:G5KEjmlhnl1k", "credential_pair", id="credentials-colon"),
    pytest.param("abc_live_n3dwHjhxCiQADMqOLRAxXVH0", "prefixed_token", id="prefix-live"),
    pytest.param("xk-i8sUipEhG5tYGN2wrrNRUK", "prefixed_token", id="prefix-dash"),
    pytest.param("La contraseña del admin es CXlMaXZjljEN", "password_near_keyword", id="es-prose-letters-only"),
    pytest.param("A senha do banco é UhJduRHHJEYX", "password_near_keyword", id="pt-prose-letters-only"),
    pytest.param("LTAI5tKq9bP1ZBeLItYIfvfr", "alibaba_access_key_id", id="alibaba-id"),
    pytest.param("FLWSECK-6ed8c4b4a95db3ea22dfe9029629fa94-X", "flutterwave_secret_key", id="flutterwave"),
    pytest.param("开发者 APPKEY：Q7RZK2M9XW4T1VB8NC3JP6YD", "credential_near_keyword", id="upper-name-upper-key"),
    pytest.param("signer key for the testnet: 0x" + "3c9f" * 4 + "a1b2c3d4e5f60718" * 3, "credential_near_keyword", id="hex-key"),
    pytest.param("if the vault is locked the passphrase is copper violin 17 slowly", "passphrase_in_prose",
                 id="passphrase-words"),
    pytest.param("mapbox: sk.eyJ1IjoiYWNtZSIsImEiOiJja3h5ejEyMzQifQ.Zx8Cv7Bn6Mm5Kl4Jh3Gf2D", "mapbox_secret_token",
                 id="mapbox-secret"),
]  # fmt: skip

GENERIC_NEAR_MISSES = [
    "https://maps.example.com/api?key=YOUR_API_KEY&q=1",
    "https://example.com/api?token=${API_TOKEN}",
    "https://example.com/search?keyword=postgresql18release",
    '<Setting name="ApiSecret">${API_SECRET}</Setting>',
    "const accessToken = useAccessToken(sessionStore);",
    "login: admin / changeme",
    "credentials are admin:admin",
    "Log in as alice.smith / AliceSmithAccount on staging",
    "The login form posts to /api/session/create",
    "abc_live_xxxxxxxxxxxxxxxxxxxxxxxx",
    "test_PasswordResetFlow2Works",
    "api_v1_UsersController2024Index",
    "user-service_7f9c2ba4e88f827d616045507605853e",
    "La contraseña se guarda en el gestor de secretos.",
    "A senha fica no Vault, nunca no código.",
    "Use MyOwnPassword as the field label",
    "LTAIxxxxxxxxxxxxxxxx",
    "开发者 APPKEY：见 1Password 的 打印机 条目",
    "tx hash 0x" + "3c9f" * 4 + "a1b2c3d4e5f60718" * 3,
    "the cache key is the sha256 of 0x" + "3c9f" * 4 + "a1b2c3d4e5f60718" * 3,
    "the passphrase is stored in the team vault",
    "the password is at least 12 characters long",
    "mot de passe : voir le coffre 1Password",
    "logo (data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    "icon: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "mapbox: pk.eyJ1IjoiYWNtZSIsImEiOiJja3h5ejEyMzQifQ.Zx8Cv7Bn6Mm5Kl4Jh3Gf2D",
]


@pytest.mark.parametrize(("text", "kind"), GENERIC_HITS)
def test_generic_shapes_no_list_names_are_found(text: str, kind: str) -> None:
    assert kind in {f.kind for f in find_secrets(text)}


@pytest.mark.parametrize("text", GENERIC_NEAR_MISSES)
def test_generic_shapes_near_misses_are_not_refused(text: str) -> None:
    assert find_secrets(text) == ()


async def test_generic_shapes_are_refused_by_remember_and_capture_and_near_misses_stored(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'g.db'}"
    scope = "memstone://orgs/acme/projects/web"
    async with open_service(url, embedding=None) as svc:
        for param in GENERIC_HITS:
            text = str(param.values[0])
            with pytest.raises(SecretRefusedError):
                await svc.remember(None, entries=[EntryInput(kind="fact", text=f"Staging uses {text}")], scope=scope)
            result = await capture(svc, UserPrompt(text=f"Always use this for staging: {text}"), scope=scope)
            assert result.status == "refused" and result.findings, param.id
        for i, near in enumerate(GENERIC_NEAR_MISSES):
            stored = await svc.remember(
                None, entries=[EntryInput(kind="fact", text=f"Staging note {i}: {near}")], scope=scope
            )
            assert stored is not None, near
        kept = await capture(
            svc, UserPrompt(text="A senha do banco fica sempre no Vault, nunca no código."), scope=scope
        )
        assert kept.status == "stored"
    raw = (tmp_path / "g.db").read_bytes()
    assert b"CXlMaXZjljEN" not in raw and b"09xhTGOWvG" not in raw


# ------------------------------------------------------- issue 16 item 4, capsec pass: coverage by provider and phrase
# Written from each provider's documented token shape and from the ways a developer states a password, not from the
# capture data (dev already stored 0 of its 73 secrets; the held-out misses were formats and phrasings the rules did
# not know). Each row: a paste, its kind, and a near miss of the same shape that must be stored (a placeholder, a
# documentation example, a publishable key, a hash, a UUID, prose). Main at ae97122 let 51 of the 58 hits
# through and refused the other 7 under a generic kind.
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
BASE32_LOWER = string.ascii_lowercase + "234567"
CAPSEC = [
    # payments, commerce, shipping
    ("adyen", f"adyen checkout key AQE{rnd(6)}hmfxK{rnd(70, ALNUM + '/')}=-{rnd(43, ALNUM + '+/')}=-{rnd(12)}", "adyen_api_key", "Adyen API keys begin with AQE and hold two base64 parts"),
    ("shippo", f"labels are bought with shippo_live_{rnd(40, HEX)}", "shippo_token", "SHIPPO_TOKEN=shippo_live_<token>"),
    ("easypost", f"EasyPost production EZAK{rnd(54, HEX)}", "easypost_api_key", "EasyPost keys start with EZAK (production) or EZTK (test)"),
    ("lob", f"lob secret live_{rnd(35, HEX)}", "lob_api_key", f"lob publishable live_pub_{rnd(35, HEX)}"),
    ("plaid-secret", f"plaid secret {rnd(30, HEX)} for the sandbox", "credential_near_keyword", f"plaid client id {rnd(24, HEX)}"),
    # infrastructure, CI, code quality, API tools
    ("pulumi", f"pulumi login with pul-{rnd(40, HEX)}", "pulumi_token", "Pulumi access tokens look like pul-<40 hex digits>"),
    ("sonarqube", f"sonar-scanner -Dsonar.host.url=https://sonar.acme.io sqp_{rnd(40, HEX)}", "sonarqube_token", "squ_" + "0" * 40),
    ("buildkite", f"buildkite agent bkua_{rnd(40, HEX)}", "buildkite_token", "bkua_" + "f" * 40),
    ("postman", f"postman PMAK-{rnd(24, HEX)}-{rnd(34, HEX)}", "postman_api_key", "Postman keys: PMAK-<id>-<secret>"),
    ("planetscale", f"pscale_pw_{rnd(43, URLSAFE)} for the main branch", "planetscale_token", "DATABASE_PASSWORD=pscale_pw_<password>"),
    ("vault-legacy-token", f"vault login s.{rnd(24)}", "vault_token", "vault login s.xxxxxxxxxxxxxxxxxxxxxxxx"),
    ("sentry-user-token", f"sentry-cli uses sntryu_{rnd(64, HEX)}", "sentry_token", "sntryu_" + "0" * 64),
    ("hubspot", f"hubspot private app pat-na1-{uuid4()}", "hubspot_token", f"hubspot portal na1, request {uuid4()}"),
    ("launchdarkly-sdk", f"LD_SDK_KEY is sdk-{uuid4()} for prod", "launchdarkly_sdk_key", f"LD client-side id {rnd(24, HEX)}"),
    ("npmrc-auth", "_auth=" + base64.b64encode(f"deploy:{rnd(14)}".encode()).decode(), "npm_auth", "_auth=${NPM_AUTH}"),
    ("rails-master-key", f"config/master.key: {rnd(32, HEX)}", "credential_near_keyword", f"config/master.key is gitignored; the commit {rnd(40, HEX)} removed it"),
    ("azure-devops-pat-legacy", f"ado PAT {rnd(52, BASE32_LOWER)}", "credential_near_keyword", "PAT stands for personal access token; make one under User settings"),
    # chat and bots
    ("slack-workflow-webhook", f"https://hooks.slack.com/workflows/T{rnd(8, string.ascii_uppercase)}/A{rnd(10, string.ascii_uppercase)}/{rnd(18, string.digits)}/{rnd(24)}", "slack_webhook", "https://hooks.slack.com/workflows/<team>/<app>/<id>/<token>"),
    ("slack-trigger", f"https://hooks.slack.com/triggers/T{rnd(8, string.ascii_uppercase)}/{rnd(13, string.digits)}/{rnd(32, HEX)}", "slack_webhook", "https://hooks.slack.com/triggers/<team>/<id>/<secret>"),
    ("feishu-webhook", f"飞书群机器人 https://open.feishu.cn/open-apis/bot/v2/hook/{uuid4()}", "feishu_webhook", "https://open.feishu.cn/open-apis/bot/v2/hook/<token>"),
    ("lark-webhook", f"https://open.larksuite.com/open-apis/bot/v2/hook/{uuid4()}", "feishu_webhook", "https://open.larksuite.com/open-apis/im/v1/messages"),
    ("dingtalk-sign-secret", f"钉钉机器人加签 SEC{rnd(64, HEX)}", "dingtalk_secret", f"sha256 {rnd(64, HEX)}"),
    # clouds and keys
    ("tencent-secret-id", f"腾讯云 SecretId AKID{rnd(32)}", "tencent_secret_id", "SecretId 形如 AKIDEXAMPLE"),
    ("wechat-appsecret-fullwidth-colon", f"微信 AppSecret：{rnd(32, HEX)}", "credential_assignment", "微信 AppSecret：见公众平台后台"),
    ("wechat-appsecret-shi", f"公众号的 appsecret 是 {rnd(32, HEX)}", "credential_assignment", "公众号的 appsecret 是 32 位的"),
    ("nostr-nsec", f"nostr key nsec1{rnd(58, BECH32)}", "nostr_private_key", f"follow npub1{rnd(58, BECH32)}"),
    ("seed-phrase", "seed phrase: " + " ".join(["harbor", "velvet", "cactus", "lunar", "orbit", "pepper", "timber", "quartz", "saddle", "violin", "meadow", "garlic"]), "seed_phrase", "the seed phrase is written on paper and kept in the office safe with the other keys"),
    # literal name/value pairs in code and config
    ("appsettings-password", f'<add key="ClearTextPassword" value="{rnd(14)}7!" />', "credential_assignment", '<add key="PasswordMinLength" value="12" />'),
    ("php-define", f"define('AUTH_KEY', '{rnd(20)}!@{rnd(20)}');", "credential_assignment", "define('AUTH_KEY', 'put your unique phrase here');"),
    ("config-set", f'config.set("api_key", "{rnd(32, HEX)}")', "credential_assignment", 'config.set("api_key_header", "X-Api-Key")'),
    # command lines and SQL
    ("flag-db-password", "migrate --db-password hunter2x! up", "cli_password", "migrate --db-password-file /run/secrets/db up"),
    ("flag-client-secret", f"oauth-cli --client-secret {rnd(12)}9x", "cli_password", "oauth-cli --client-secret $CLIENT_SECRET"),
    ("flag-secret-key-eq", f"minio-client --secret-key={rnd(12)}9x", "cli_password", "minio-client --secret-key-file=./minio.key"),
    ("redis-cli-a", f"redis-cli -h cache -a {rnd(12)}9x ping", "cli_password", "redis-cli -h cache -a $REDIS_PASSWORD ping"),
    ("htpasswd-b", f"htpasswd -bc .htpasswd admin {rnd(10)}9x", "cli_password", "htpasswd -c .htpasswd admin"),
    ("mc-alias", f"mc alias set prod https://s3.acme.io deploy {rnd(20)}", "cli_password", "mc alias set local http://localhost:9000 $MINIO_USER $MINIO_PASSWORD"),
    ("gh-secret-body", f"gh secret set API_KEY -b {rnd(24)}", "cli_password", "gh secret set NPM_TOKEN < token.txt"),
    ("mongosh-p", f"mongosh -u admin -p {rnd(10)}9x", "cli_password", "mongosh -u admin -p"),
    ("keytool-storepass", f"keytool -list -keystore release.jks -storepass {rnd(10)}9x", "cli_password", "keytool -list -keystore release.jks"),
    ("rabbitmqctl", f"rabbitmqctl add_user orders {rnd(10)}9x", "cli_password", "rabbitmqctl add_user orders"),
    ("sql-identified-by", f"CREATE USER 'app'@'%' IDENTIFIED BY '{rnd(10)}9x';", "sql_password", "CREATE USER 'app'@'%' IDENTIFIED BY '${DB_PASSWORD}';"),
    ("bearer-16", f'curl https://api.acme.io -H "Authorization: Bearer {rnd(14)}7q"', "bearer_token", 'curl -H "Authorization: Bearer tokenFromTheServer" https://api.acme.io'),
    # passwords and keys stated in prose, in the languages teams write in
    ("stated-es", "la contraseña es hunter22", "password_near_keyword", "la contraseña es obligatoria"),
    ("stated-it", "la password del database è hunter22", "password_near_keyword", "la password è salvata nel vault"),
    ("stated-it-parola", "la parola d'ordine è hunter22", "password_near_keyword", "la parola d'ordine è nel vault"),
    ("stated-fr-hyphen", "le mot-de-passe est hunter22", "password_near_keyword", "le mot-de-passe est dans le coffre"),
    ("stated-de", "das Kennwort lautet hunter22", "password_near_keyword", "das Kennwort lautet wie der Benutzername"),
    ("stated-pt", "a senha é hunter22", "password_near_keyword", "a senha é obrigatória"),
    ("stated-zh", "用户名 admin 密码 hunter22", "password_near_keyword", "用户名和密码都保存在 Vault 里"),
    ("stated-ja", "パスワード: hunter22", "password_near_keyword", "パスワード: 12文字以上"),
    ("stated-en", "the password for the staging db is hunter22", "password_near_keyword", "the password is hashed with argon2id"),
    ("pair-zh-account", "数据库账号 root / Tr0ub4dor9x", "credential_pair", "数据库账号 root / 见 1Password"),
    ("pair-fr", "identifiants : admin / Tr0ub4dor9", "credential_pair", "identifiants : voir le coffre"),
    ("key-it-chiave", f"la chiave API è {rnd(32)}", "credential_near_keyword", "la chiave API è nel vault"),
    ("secret-es", f"el secreto del cliente es {rnd(24)}", "credential_near_keyword", "el secreto del cliente está en el vault"),
    ("token-letters-one-digit", "el token es VberACpdclsxHKifxi5CvQUS", "credential_near_keyword", "the token is TokenRefreshHandlerFactoryImpl"),
    ("huawei-ak-label", f"华为云 AK: {rnd(20, string.ascii_uppercase + string.digits)}", "access_key_pair", "AK 是访问密钥 ID，SK 是秘密访问密钥，都在 IAM 控制台里"),
    ("huawei-sdk-env", f"HUAWEICLOUD_SDK_AK={rnd(20, string.ascii_uppercase + string.digits)}", "access_key_pair", "HUAWEICLOUD_SDK_AK=${HUAWEICLOUD_AK}"),
    ("aliyun-sts", f"临时凭证 STS.{rnd(25)}", "alibaba_sts_token", "STS.AssumeRole returns a temporary key"),
    ("twitter-bearer", f"X API bearer {'A' * 21}{rnd(60)}", "twitter_bearer_token", "app-only bearer tokens begin with " + "A" * 21),
    ("mattermost-webhook", f"https://chat.acme.io/hooks/{rnd(26, string.ascii_lowercase + string.digits)}", "webhook_url", "https://chat.acme.io/hooks/incomingwebhookdocsversion"),
    ("rocketchat-webhook", f"https://rocket.acme.io/hooks/{rnd(24)}/{rnd(48)}", "webhook_url", "https://rocket.acme.io/hooks/<id>/<token>"),
    ("ifttt-key", f"https://maker.ifttt.com/trigger/deploy/with/key/{rnd(22, URLSAFE)}", "webhook_url", "https://maker.ifttt.com/use/<your-key>"),
    ("zapier-catch", f"https://hooks.zapier.com/hooks/catch/{rnd(7, string.digits)}/{rnd(6, string.ascii_lowercase)}/", "webhook_url", "https://zapier.com/apps/webhook/integrations"),
    ("openvpn-static-key", "-----BEGIN OpenVPN Static key V1-----\n" + rnd(32, HEX), "openvpn_static_key", "tls-auth ta.key 1 (the OpenVPN static key file)"),
    ("oracle-sqlplus", f"sqlplus system/{rnd(10)}9@//db:1521/ORCLPDB1", "url_password", "sqlplus system/${ORACLE_PWD}@//db:1521/ORCLPDB1"),
    ("oracle-jdbc-thin", f"jdbc:oracle:thin:scott/{rnd(10)}9@db:1521:orcl", "url_password", "jdbc:oracle:thin:@db:1521:orcl"),
    ("stated-nl", "het wachtwoord is hunter22", "password_near_keyword", "het wachtwoord is verplicht"),
    ("stated-pl", "hasło: Xk29mPq77", "password_near_keyword", "hasło: zobacz sejf"),
    ("stated-tr", "şifre: Xk29mPq77", "password_near_keyword", "şifre: kasada"),
    ("stated-sv", "lösenordet är hunter22", "password_near_keyword", "lösenordet är hemligt"),
    ("stated-cs", "heslo je hunter22", "password_near_keyword", "heslo je v trezoru"),
    ("stated-vi", "mật khẩu là Xk29mPq77", "password_near_keyword", "mật khẩu là bắt buộc"),
    ("stated-id", "kata sandi: Xk29mPq77", "password_near_keyword", "kata sandi: lihat brankas"),
]  # fmt: skip


# Prose about a password and flags naming a key file: what the stated-password and flag rules must leave alone.
CAPSEC_PROSE = [
    pytest.param("the password hash is argon2id", id="hash-is"),
    pytest.param("密码是必填项", id="zh-required"),
    pytest.param("パスワードは必須です", id="ja-required"),
    pytest.param("la contraseña es demasiado corta", id="es-too-short"),
    pytest.param("the password is in 1Password", id="in-1password"),
    pytest.param("the token is generated by uuid4()", id="token-generated-by"),
    pytest.param("docker login --password-stdin -u ci", id="password-stdin"),
    pytest.param("ansible-playbook site.yml --private-key ~/.ssh/id_rsa", id="private-key-path"),
    pytest.param("--encryption-key kms://projects/p/locations/l/keyRings/r/cryptoKeys/k", id="kms-uri"),
    pytest.param("--master-key-id arn:aws:kms:eu-west-1:1234:key/abcd", id="key-id-flag"),
    pytest.param('<add key="TokenLifetimeMinutes" value="60" />', id="appsettings-number"),
    pytest.param('config.get("secret_key", "changeme")', id="config-placeholder"),
    pytest.param(
        "seed phrase of 12 words must be stored offline and never typed into a computer or phone", id="seed-prose"
    ),
]


@pytest.mark.parametrize(("text", "kind"), [pytest.param(t, k, id=i) for i, t, k, _ in CAPSEC])
def test_capsec_formats_and_phrasings_are_found(text: str, kind: str) -> None:
    test_each_documented_format_is_refused(text, kind)


@pytest.mark.parametrize("text", [pytest.param(n, id=i) for i, _, _, n in CAPSEC] + CAPSEC_PROSE)
def test_capsec_near_misses_are_not_refused(text: str) -> None:
    test_each_formats_near_miss_and_common_code_shapes_are_not_refused(text)


async def test_capsec_rows_are_refused_by_remember_and_capture_and_their_near_misses_stored(tmp_path: Path) -> None:
    await refused_by_remember_and_capture_near_misses_stored(tmp_path, CAPSEC)


async def refused_by_remember_and_capture_near_misses_stored(
    tmp_path: Path, rows: list[tuple[str, str, str, str]], also_stored: tuple[str, ...] = (), min_len: int = 0
) -> None:
    """Each row's text is refused by ``remember`` and ``capture()``, its near miss (and ``also_stored``) is stored, and
    no found secret reaches the database file (of ``min_len`` characters or more: a 4-digit PIN's bytes can occur
    by chance in a ULID or a page of the file; a found secret of fewer than 6 characters is searched with the 6
    characters of the text before it, which a chance match does not carry)."""
    url = f"sqlite:///{tmp_path / 'c.db'}"
    scope = "memstone://orgs/acme/projects/web"
    async with open_service(url, embedding=None) as svc:
        for name, text, _, near in rows:
            with pytest.raises(SecretRefusedError):
                await svc.remember(None, entries=[EntryInput(kind="fact", text=f"For {name}: {text}")], scope=scope)
            result = await capture(svc, UserPrompt(text=f"Always use this for staging: {text}"), scope=scope)
            assert result.status == "refused" and result.findings, name
            stored = await svc.remember(
                None, entries=[EntryInput(kind="fact", text=f"Note on {name}: {near}")], scope=scope
            )
            assert stored is not None, near
        for text in also_stored:
            assert await svc.remember(None, entries=[EntryInput(kind="fact", text=text)], scope=scope), text
    raw = (tmp_path / "c.db").read_bytes()
    secrets = {
        name: [text[f.start if f.end - f.start >= 6 else max(0, f.start - 6) : f.end] for f in find_secrets(text)]
        for name, text, _, _ in rows
    }
    assert not [name for name, vals in secrets.items() if any(v.encode() in raw for v in vals if len(v) >= min_len)]
    assert not [name for name, text, _, _ in rows if text.encode() in raw]


def test_fold_ascii_keeps_every_case_insensitive_match_of_an_ascii_letter() -> None:
    # The literal pre-checks test words on fold_ascii(text.lower()); a (?i) pattern also matches ſ, ı, K and İ.
    any_letter = re.compile("(?i)[a-z]")
    folding = [ch for ch in map(chr, range(0x80, 0x110000)) if any_letter.fullmatch(ch)]
    assert len(folding) == 4  # ſ ı K İ
    for ch in folding:
        letters = [c for c in string.ascii_lowercase if re.fullmatch("(?i)" + c, ch)]
        assert [fold_ascii(ch.lower())] == letters, hex(ord(ch))
    assert find_secrets("paſsword = Hunter22!x")[0].kind == "password_assignment"
    assert find_secrets("credentİals: Zx9Qw3Er5Ty7Ui9Op1As3")[0].kind == "credential_assignment"


# Secrets with no format of their own (capsec4): told by the word that names them, or by a check (Luhn, BIP39,
# Basic decoding); each with a near miss of the same subject that must be stored. All fail on the detector before.
_BASIC_PW = base64.b64encode(b"lockapi:Hytte!2024sommer").decode()
NAMED = [
    ("door-code", "The keypad code for the back door is 7351, guests get it by mail.", "named_pin_or_code", "Door keypad codes are always 4 digits and rotate every Monday at 12:00."),
    ("alarm-disarm", "alarm panel in the shed: disarm with 9026 then #", "named_pin_or_code", "The alarm panel integration listens on port 5020, firmware 3.4.1."),
    ("pin-colon", "PIN for the alarm panel at the Gangnam store: 4471", "named_pin_or_code", "The PIN is 4 digits and is never logged (issue #3380 is about the keypad)."),
    ("safe-pl", "Kod do sejfu w schronisku to 3-7-1-9, zmienimy go po sezonie.", "named_pin_or_code", "Kod HTTP 423 oznacza, że zamek jest zablokowany."),
    ("padlock-fr", "Code du cadenas du local technique : 0468.", "named_pin_or_code", "Le code HTTP 423 veut dire que la serrure est bloquée."),
    ("pincode-nl", "De pincode van de kluis bij de receptie is 2580.", "named_pin_or_code", "De pincode is 1234 in de testomgeving en heeft 4 cijfers."),
    ("locker-zh", "前台储物柜的密码：582931", "named_pin_or_code", "储物柜密码必须是 6 位数字，每月更换一次。"),
    ("wifi-words", "Wifi in the hut: SSID Guest, the WPA2 key is kantorhytta-baalpanne-77", "named_password", "The gateways take the PSK from the WIFI_PSK env var, never from the image."),
    ("still-nl", "Het wachtwoord van de beheerder is nog steeds raspberry42.", "named_password", "Wachtwoorden bewaren we alleen als argon2id-hash (settings.PASSWORD_HASHERS)."),
    ("sudo-words", "Your sudo on the gateways is the same as the hut wifi: nordlys-over-jotunheimen", "named_password", "sudo on the gateways needs the fjellbu group; see docs/ops.md."),
    ("quoted-passphrase", "The GPG key that signs our apt repo has the passphrase 'quiet lynx under the birch'.", "named_password", "The passphrase is four words from the EFF long list, joined by hyphens."),
    ("security-answer", "For the registrar the security question is mother's maiden name, and the answer we set is Bakkevold.", "security_answer", "Every registrar account needs a security question; answers live in the office safe."),
    ("auth-tuple", 'resp = client.post(url, auth=("lockapi", "Brattli#Ski88"), timeout=5)', "password_literal", 'resp = client.post(url, auth=(user, password), timeout=5)'),
    ("card", "Do a test booking with my card: 4929 9328 2062 6269, exp 09/27, cvv 418.", "card_number", "Card tests use Stripe's 4242 4242 4242 4242 with any future date and any CVC."),
    ("seed-words", "the hardware wallet was set up with: ripple canvas orbit velvet tunnel glimpse ozone harvest pilot frozen mango deputy", "seed_phrase", "the wallet words are stored offline and never typed into a computer, a phone or a chat"),
    ("passcode-its", "The front desk iPads have a guided-access passcode, it's 836204 on all of them.", "named_pin_or_code", "The passcode is rotated by the gym manager and lives in 1Password, never in the repo."),
    ("door-takes", "Staff room: the door takes 2 9 1 7 and then the key symbol.", "named_pin_or_code", "The staff room doors are Nuki Keypad 2.0 on port 8080 of the bridge."),
    ("padlock-es", "El candado de las taquillas del personal se abre con 0-5-8-3.", "named_pin_or_code", "El puerto del lector de tarjetas es 9100 y la versión del firmware es 1.8.2."),
    ("digicode-fr", "Le digicode de l'entrée de service c'est 4B792.", "named_pin_or_code", "Le digicode est changé chaque mois par le gardien (ticket #231)."),
    ("hash-code-zh", "上海店员工休息室门禁密码是 #4821", "named_pin_or_code", "门禁系统的接口文档在 docs/access-control.md，端口 8080，版本 v2.3.1。"),
    ("combination", "her locker combination again: 38-12-27", "named_pin_or_code", "Lockers use 3-number combination padlocks, written on paper at the desk."),
    ("stated-later", "We use the same password everywhere for the kiosks. It's ClimbOn plus the postcode, so for Part-Dieu it is ClimbOn69003.", "named_password", "Kiosk passwords must be unique per gym; `bin/rotate-kiosk-passwords` generates them with SecureRandom."),
    ("recipe-eg", "Kiosk admin password is the gym's name in lowercase followed by a dash, e.g. for Wall Street it's the name, then 2019 and '-' at the end.", "described_password", "Kiosk admin passwords are at least 16 characters, e.g. three words and 2 digits."),
    ("backup-digits", "2FA backup codes for the team account (each works once):\n79784683 61832998 52859460\n77605564 94120118", "otp_or_recovery_code", "Backup codes are 8 digits each and go to the ops vault; 2FA is mandatory since 2024-06-01."),
    ("answer-i-put", "For the recovery they asked the security question; the name of my first gym, I put Bloc Session.", "security_answer", "Security questions are answered by the account owner only; I put the policy in docs/accounts.md."),
    ("basic-lowercase", 'headers={"authorization": "basic ZnJvbnRkZXNrOkNyaW1wJlNsb3BlcjMx"}', "basic_auth_credentials", "The basic plan has 3 gyms and basic reporting; Basic auth only on /sidekiq."),
    ("basic-in-dict", 'headers = {"Authorization": "Basic YWRtaW46czNjcjN0IQ=="}', "basic_auth_credentials", "The lock vendor API only supports HTTP Basic auth (user:password in base64)."),
]  # fmt: skip


@pytest.mark.parametrize(("text", "kind"), [pytest.param(t, k, id=i) for i, t, k, _ in NAMED])
def test_secrets_without_a_format_are_found_by_their_name_or_check(text: str, kind: str) -> None:
    test_each_documented_format_is_refused(text, kind)


@pytest.mark.parametrize("text", [pytest.param(n, id=i) for i, _, _, n in NAMED])
def test_their_near_misses_are_not_refused(text: str) -> None:
    test_each_formats_near_miss_and_common_code_shapes_are_not_refused(text)


async def test_secrets_without_a_format_are_refused_by_remember_and_capture_near_misses_stored(tmp_path: Path) -> None:
    await refused_by_remember_and_capture_near_misses_stored(tmp_path, NAMED, min_len=6)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("use sudo's -H flag.", id="apostrophe-not-a-quote"),
        pytest.param('username="jo@gmail.com", password="a secret"', id="doc-example-prose-value"),
        pytest.param('# Replace "username" and/or "password" with "userinfo".', id="quoted-name-with"),
        pytest.param("MUST_CHANGE_PASSWORD = 1820", id="error-code-constant"),
        pytest.param("if member['login'].startswith(prefix)", id="login-key-in-code"),
        pytest.param("exit code is 1234 when the lock is offline", id="exit-code"),
        pytest.param("the PIN is 0000 on every new panel until setup", id="factory-pin"),
        pytest.param("invoice 4929 9328 2062 6260 is overdue", id="not-luhn"),
        pytest.param("order id 1700000000000123 was retried", id="timestamp-like-id"),
        pytest.param("Basic auth header is `Basic dXNlcjo=`", id="basic-empty-password"),
        pytest.param(
            "abandon ability able about above absent absorb abstract: the first words of the list", id="bip39-short"
        ),
    ],
)
def test_named_secret_rules_leave_ordinary_text_alone(text: str) -> None:
    assert find_secrets(text) == ()
