"""The named secret formats of :mod:`memstone.domain.secrets`: one rule per provider token format.

Each rule is written from the provider's own description of its credentials (a documented prefix, length and
alphabet), never copied from another project's rule file. A rule is a :class:`FormatRule`: the finding's kind, the
pattern, the group holding the secret (0 = the whole match), the lowercase literals one of which must occur in the
lowercased text for the pattern to be tried at all (so most rules cost one substring test per text), and whether
the part after the prefix must look random (digits and letters, not a documentation placeholder).

What is *not* a secret stays out: publishable keys (Stripe ``pk_``, Supabase ``sb_publishable_``, Mercado Pago
``APP_USR-<uuid>`` public keys), account ids (Twilio ``AC…`` SIDs alone), and placeholders such as ``glpat-xxxx…``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .regex_gate import fold_ascii

__all__ = [
    "FORMAT_RULES",
    "CaseFree",
    "FormatRule",
    "anchored_rules",
    "b64decode_loose",
    "decodes_to",
    "file_magic",
    "fold_ascii",
    "text_base64",
]

_B = r"(?<![A-Za-z0-9_\-])"  # a token boundary that treats - and _ as word characters
_E = r"(?![A-Za-z0-9_\-])"


@dataclass(frozen=True, slots=True)
class FormatRule:
    kind: str
    source: str
    group: int = 0
    anchors: tuple[str, ...] = ()  # lowercase literals; the rule runs only if one occurs in text.lower()
    random_tail: int = -1  # ≥ 0: the match from this offset on must look random (see secrets._random_tail)
    flags: int = 0

    @property
    def pattern(self) -> re.Pattern[str]:
        """Compiled on first use and kept, so a hook that never sees a prefix never compiles its rule."""
        return _compiled(self.source, self.flags)


@functools.cache
def _compiled(source: str, flags: int) -> re.Pattern[str]:
    return re.compile(source, flags)


def _r(kind: str, pattern: str, *anchors: str, group: int = 0, random_tail: int = -1, flags: int = 0) -> FormatRule:
    return FormatRule(kind, pattern, group, anchors, random_tail, flags)


def b64decode_loose(value: str) -> bytes | None:
    """``value`` decoded as base64 or base64url with optional padding, or None when it is not base64."""
    v = value.replace("-", "+").replace("_", "/").rstrip("=")
    try:
        return base64.b64decode(v + "=" * (-len(v) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def text_base64(value: str) -> bool:
    """True when ``value`` decodes as base64 to readable text (test data such as ``SGVsbG8gd29ybGQ=``)."""
    raw = b64decode_loose(value)
    if not raw:
        return False
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in raw)
    return printable / len(raw) >= 0.9


_MAGIC = (b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"%PDF", b"RIFF", b"PK\x03\x04", b"\x1f\x8b", b"<svg", b"<?xml")


def file_magic(value: str) -> bool:
    """Base64 that decodes to a known file header (PNG, GIF, JPEG, PDF, WebP, zip, gzip, SVG, XML)."""
    raw = b64decode_loose(value[:24].rstrip("=")[: len(value[:24].rstrip("=")) // 4 * 4])
    return raw is not None and raw.startswith(_MAGIC)


def decodes_to(value: str, needle: bytes) -> bool:
    """True when ``value`` (base64 or base64url, padding optional) decodes to bytes containing ``needle``."""
    raw = b64decode_loose(value)
    return raw is not None and needle in raw


# A flag's value on a command line: not $VAR, <placeholder>, {template} or the next flag.
_ARG = r"['\"]?([^\s'\"$<{\-][^\s'\"]{5,})"


def _cli(before: str, *anchors: str) -> FormatRule:
    """A password or token given on a command line: ``before`` (the command and its flag), then the value."""
    return _r("cli_password", before + _ARG, *anchors, group=1)


_HEX32 = r"[0-9a-f]{32}"
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

FORMAT_RULES: tuple[FormatRule, ...] = (
    # ---------------------------------------------------------------- private keys (PEM, PGP, SSH2, PuTTY, kubeconfig)
    _r(
        "private_key",
        # a BEGIN line followed by a key body or PEM headers; the marker alone in code (_START = b"-----BEGIN …")
        # is not a key
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?=(?:\\[rn]|\s)*(?:[A-Za-z0-9+/=]{16}|Proc-Type:|Version:|Comment:|-----END))"
        r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?",
        "-----begin ",
        flags=re.S,
    ),
    _r("private_key", r"---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----", "---- begin ssh2"),
    _r("private_key", r"PuTTY-User-Key-File-[23]: .{0,2000}?\sPrivate-Lines: \d+", "putty-user-key-file-", flags=re.S),
    # A PEM private key pasted base64-encoded (kubeconfig client-key-data, Kubernetes Secret data).
    _r("private_key", r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}", "ls0tls1crudjti"),
    # ---------------------------------------------------------------- AI providers
    _r("anthropic_api_key", _B + r"sk-ant-[A-Za-z0-9_\-]{20,}", "sk-ant-"),
    _r("openai_api_key", _B + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}", "sk-"),
    _r("openai_api_key", _B + r"sk-(?!ant-)[A-Za-z0-9]{20,}T3BlbkFJ[A-Za-z0-9]{20,}", "t3blbkfj"),
    _r("openai_api_key", _B + r"sk-(?!ant-)(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{32,}" + _E, "sk-"),
    _r("openrouter_api_key", _B + r"sk-or-v1-[0-9a-f]{64}" + _E, "sk-or-v1-"),
    _r("groq_api_key", _B + r"gsk_[A-Za-z0-9]{40,}" + _E, "gsk_", random_tail=4),
    _r("replicate_token", _B + r"r8_[A-Za-z0-9]{30,}" + _E, "r8_", random_tail=3),
    _r("perplexity_api_key", _B + r"pplx-[A-Za-z0-9]{40,}" + _E, "pplx-", random_tail=5),
    _r("xai_api_key", _B + r"xai-[A-Za-z0-9]{60,}" + _E, "xai-", random_tail=4),
    _r("huggingface_token", _B + r"(?:hf_|api_org_)[A-Za-z0-9]{30,}" + _E, "hf_", "api_org_"),
    _r("langsmith_api_key", _B + r"lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}" + _E, "lsv2_"),
    _r("pinecone_api_key", _B + r"pcsk_[A-Za-z0-9_]{40,}" + _E, "pcsk_", random_tail=5),
    # ---------------------------------------------------------------- code hosting and CI
    _r("github_token", _B + r"gh[pousr]_[A-Za-z0-9]{30,}" + _E, "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _r("github_token", _B + r"github_pat_[A-Za-z0-9_]{22,}" + _E, "github_pat_"),
    _r(
        "gitlab_token",
        _B + r"gl(?:pat|dt|ptt|rt|rtr|oas|cbt|soat|ft|imt|agent|ffct|wt|dct)-[A-Za-z0-9_\-]{20,}" + _E,
        "gl",
        random_tail=6,
    ),
    _r("gitlab_token", _B + r"GR1348941[A-Za-z0-9_\-]{20,}" + _E, "gr1348941"),
    _r("bitbucket_app_password", _B + r"ATBB[A-Za-z0-9_=.\-]{28,}" + _E, "atbb", random_tail=4),
    _r("atlassian_api_token", _B + r"AT(?:ATT|CTT)3[A-Za-z0-9_\-=]{100,}", "atatt3", "atctt3"),
    _r("azure_devops_pat", r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{52}JQQJ9[A-Za-z0-9+/]{27,31}={0,2}", "jqqj9"),
    _r("terraform_cloud_token", _B + r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}", ".atlasv1."),
    _r("vault_token", _B + r"hv[sbr]\.[A-Za-z0-9_\-]{24,}" + _E, "hvs.", "hvb.", "hvr.", random_tail=4),
    # Vault's tokens before 1.10 (s./b. and 24 characters), only where Vault is named ("vault login s.…").
    _r(
        "vault_token",
        r"(?i:\bvault\b)[^\n]{0,60}?(?<![\w.])([sb]\.[A-Za-z0-9]{24})(?![\w.])",
        "vault",
        group=1,
        random_tail=2,
    ),
    _r("pulumi_token", _B + r"pul-[0-9a-f]{40}" + _E, "pul-"),
    _r("sonarqube_token", _B + r"sq[pau]_[0-9a-f]{40}" + _E, "sqp_", "sqa_", "squ_"),
    _r("buildkite_token", _B + r"bkua_[0-9a-f]{40}" + _E, "bkua_"),
    _r("postman_api_key", _B + r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}" + _E, "pmak-"),
    _r("planetscale_token", _B + r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-]{32,}" + _E, "pscale_", random_tail=10),
    _r("figma_token", _B + r"fig[dou]_[A-Za-z0-9_\-]{38,}" + _E, "figd_", "figo_", "figu_", random_tail=5),
    # ---------------------------------------------------------------- package registries
    _r("npm_token", _B + r"npm_[A-Za-z0-9]{36}" + _E, "npm_"),
    _r("pypi_token", _B + r"pypi-AgE[A-Za-z0-9_\-]{50,}", "pypi-age"),
    _r("crates_io_token", r"(?<![A-Za-z0-9])cio[A-Za-z0-9]{32}(?![A-Za-z0-9])", "cio"),
    _r("rubygems_token", _B + r"rubygems_[0-9a-f]{48}" + _E, "rubygems_"),
    _r("nuget_api_key", r"(?<![A-Za-z0-9])oy2[a-z0-9]{43}(?![A-Za-z0-9])", "oy2", random_tail=3),
    # .npmrc's legacy _auth = base64("user:password") (checked to decode to a pair).
    _r("npm_auth", r"(?<![\w\-])_auth\s*=\s*[\"']?([A-Za-z0-9+/]{8,}={0,2})", "_auth", group=1),
    _r("docker_hub_token", _B + r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{24,}" + _E, "dckr_", random_tail=9),
    # ---------------------------------------------------------------- chat, mail and messaging
    _r("slack_token", _B + r"xox[abposr]-(?:[0-9]+-)*[A-Za-z0-9\-]{10,}", "xox"),
    _r("slack_token", _B + r"(?:xapp|xoxe(?:\.xox[abp])?)-\d-[A-Za-z0-9\-]{40,}", "xapp-", "xoxe"),
    _r(
        "teams_webhook",
        r"https://[\w.\-]+\.webhook\.office\.com/webhookb2/[\w@\-]+/IncomingWebhook/[0-9a-f]{32}/[\w\-]+",
        "webhook.office.com",
    ),
    _r(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+"
        r"|workflows/T[A-Za-z0-9]+/A[A-Za-z0-9]+/\d+/[A-Za-z0-9]+|triggers/T[A-Za-z0-9]+/\d+/[0-9a-f]{20,})",
        "hooks.slack",
    ),
    # Incoming-webhook URLs whose path is the credential: Mattermost (26 lowercase letters and digits), Rocket.Chat
    # (/hooks/<id>/<token>), IFTTT Maker (/with/key/…), Zapier catch hooks.
    _r("webhook_url", r"https?://[\w.\-]+/hooks/([a-z0-9]{26})(?![\w\-])", "/hooks/", group=1, random_tail=0),
    _r(
        "webhook_url",
        r"https?://[\w.\-]+/hooks/[A-Za-z0-9]{17,24}/([A-Za-z0-9]{40,})",
        "/hooks/",
        group=1,
        random_tail=0,
    ),
    _r("webhook_url", r"maker\.ifttt\.com/(?:trigger/[^/\s]+/with/)?(?:key|use)/([\w\-]{20,})", "ifttt", group=1),
    _r("webhook_url", r"hooks\.zapier\.com/hooks/catch/\d+/[a-z0-9]{5,}", "hooks.zapier"),
    # DingTalk, Feishu/Lark custom bots: the hook URL is the credential; DingTalk signs with SEC + 64 hex.
    _r(
        "feishu_webhook",
        r"https://open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/v2/hook/[A-Za-z0-9\-]{20,}",
        "/bot/v2/hook/",
    ),
    _r("dingtalk_secret", r"(?<![A-Za-z0-9])SEC[0-9a-f]{64}(?![A-Za-z0-9])", "sec"),
    _r(
        "discord_webhook",
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d{16,20}/[\w\-]{60,}",
        "/webhooks/",
    ),
    # A Discord bot token: base64 of the bot's numeric id, a timestamp and an HMAC (checked in secrets.py).
    _r(
        "discord_bot_token",
        r"(?<![\w\-.])([MNO][A-Za-z0-9_\-]{22,27})\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![\w\-])",
    ),
    _r("telegram_bot_token", r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])", ":aa"),
    _r("sendgrid_api_key", _B + r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}" + _E, "sg."),
    _r("mailgun_api_key", _B + r"key-[0-9a-f]{32}" + _E, "key-"),
    _r("mailgun_api_key", r"(?<![0-9a-zA-Z\-])[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}(?![0-9a-zA-Z\-])", "-"),
    _r("mailchimp_api_key", r"(?<![0-9a-zA-Z])[0-9a-f]{32}-us\d{1,2}(?![0-9a-zA-Z])", "-us"),
    _r("resend_api_key", _B + r"re_[A-Za-z0-9]{6,12}_[A-Za-z0-9]{20,32}" + _E, "re_", random_tail=3),
    _r("twilio_api_key", r"(?<![A-Za-z0-9])SK[0-9a-f]{32}(?![A-Za-z0-9])", "sk"),
    _r("twilio_credentials", r"(?<![A-Za-z0-9])AC[0-9a-f]{32}:([0-9a-f]{32})(?![A-Za-z0-9])", "ac", group=1),
    _r("opsgenie_api_key", r"(?i)\bGenieKey\s+(" + _UUID + ")", "geniekey", group=1),
    # ---------------------------------------------------------------- payments and commerce
    _r("stripe_secret_key", _B + r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}" + _E, "_live_", "_test_"),
    _r("stripe_webhook_secret", _B + r"whsec_[A-Za-z0-9+/]{24,}" + _E, "whsec_"),
    _r("shopify_token", _B + r"shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}" + _E, "shp"),
    _r("square_token", _B + r"sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,}" + _E, "sq0"),
    _r("square_token", _B + r"EAAA[A-Za-z0-9_\-]{56,}" + _E, "eaaa", random_tail=4),
    _r("adyen_api_key", _B + r"AQE[A-Za-z0-9+/]{40,}={0,2}-[A-Za-z0-9+/]{30,}={0,2}", "aqe", random_tail=3),
    _r("shippo_token", _B + r"shippo_(?:live|test)_[0-9a-f]{40}" + _E, "shippo_"),
    _r("easypost_api_key", _B + r"EZ[AT]K[0-9a-f]{54}" + _E, "ezak", "eztk"),
    _r("lob_api_key", _B + r"(?:live|test)_[0-9a-f]{35}" + _E, "live_", "test_"),
    _r("braintree_access_token", r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}", "access_token$"),
    _r("paypal_access_token", _B + r"A21AA[A-Za-z0-9_\-]{50,}" + _E, "a21aa", random_tail=5),
    _r(
        "mercadopago_access_token",
        _B + r"(?:APP_USR|TEST)-\d{10,20}-\d{6}-[0-9a-f]{32}-\d{6,12}" + _E,
        "app_usr-",
        "test-",
    ),
    # ---------------------------------------------------------------- clouds
    _r(
        "aws_access_key_id",
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])",
        "akia",
        "asia",
        "abia",
        "acca",
        "a3t",
    ),
    _r("mapbox_secret_token", _B + r"(?:sk|tk)\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{16,}" + _E, "sk.eyj", "tk.eyj"),
    _r("tencent_secret_id", r"(?<![A-Za-z0-9])AKID[A-Za-z0-9]{32}(?![A-Za-z0-9])", "akid", random_tail=4),
    _r("alibaba_sts_token", r"(?<![A-Za-z0-9.])STS\.[A-Za-z0-9]{20,}(?![A-Za-z0-9])", "sts.", random_tail=4),
    # Twitter/X app-only bearer tokens: a run of A's, then the token (so the placeholder check skips this kind).
    _r("twitter_bearer_token", r"(?<![A-Za-z0-9])A{20,22}[A-Za-z0-9%]{40,}(?![A-Za-z0-9%])", "aaaaaaaaaaaaaaaaaaaa"),
    _r("alibaba_access_key_id", r"(?<![A-Za-z0-9])LTAI[A-Za-z0-9]{12,28}(?![A-Za-z0-9])", "ltai", random_tail=4),
    _r("flutterwave_secret_key", _B + r"FLWSECK(?:_TEST)?-[0-9a-f]{32}-X" + _E, "flwseck"),
    _r(
        "aws_session_token",
        r"(?<![A-Za-z0-9+/])(?:IQoJb3JpZ2lu|FwoGZXIvYXdz|FQoGZXIvYXdz)[A-Za-z0-9+/=]{80,}",
        "iqojb3jpz2lu",
        "fwogzxivyxdz",
        "fqogzxivyxdz",
    ),
    _r("azure_storage_key", r"(?i)AccountKey=([A-Za-z0-9+/]{40,}={0,2})", "accountkey=", group=1),
    _r("azure_shared_access_key", r"(?i)SharedAccessKey=([A-Za-z0-9+/]{32,}={0,2})", "sharedaccesskey=", group=1),
    _r(
        "azure_sas_token",
        r"(?i)(?:[?&]|\bsig=)(?:sig=)?((?:[A-Za-z0-9+/]|%2[Bb]|%2[Ff]){30,}(?:=|%3[Dd]){0,2})(?=[&\s\"'`]|$)",
        "?",
        "&",
        "sig=",
        group=1,
    ),
    _r(
        "azure_sas_token", r"(?i)SharedAccessSignature\s+sr=[^\s&]+&sig=([^\s&]{20,})", "sharedaccesssignature", group=1
    ),
    _r(
        "azure_client_secret",
        r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
        "q~",
    ),
    _r("google_api_key", _B + r"AIza[0-9A-Za-z_\-]{35}" + _E, "aiza"),
    _r("google_oauth_client_secret", _B + r"GOCSPX-[A-Za-z0-9_\-]{28}" + _E, "gocspx-"),
    _r("google_oauth_token", _B + r"ya29\.[A-Za-z0-9_\-]{30,}", "ya29."),
    _r("google_oauth_token", r"(?<![A-Za-z0-9/])1//0[A-Za-z0-9_\-]{40,}", "1//0"),
    # A GCP service-account key file pasted as JSON: the private key id (the PEM body is the private_key rule).
    _r("gcp_service_account", r'"private_key_id"\s*:\s*"([0-9a-f]{40})"', "private_key_id", group=1),
    _r("firebase_server_key", r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}", ":apa91b"),
    _r("supabase_token", _B + r"sbp_[0-9a-f]{40}" + _E, "sbp_"),
    _r("supabase_secret_key", _B + r"sb_secret_[A-Za-z0-9_\-]{20,}" + _E, "sb_secret_", random_tail=10),
    _r("digitalocean_token", _B + r"do[opr]_v1_[0-9a-f]{64}" + _E, "_v1_"),
    _r("cloudflare_origin_ca_key", _B + r"v1\.0-[0-9a-f]{24}-[0-9a-f]{146}" + _E, "v1.0-"),
    _r("databricks_token", _B + r"dapi[0-9a-f]{32}(?:-\d{1,2})?" + _E, "dapi"),  # -2: a workspace's suffix
    # ---------------------------------------------------------------- hosting and deploy
    _r(
        "vercel_token",
        _B + r"vc[pikar]_[A-Za-z0-9_\-]{24,}" + _E,
        "vcp_",
        "vci_",
        "vck_",
        "vca_",
        "vcr_",
        random_tail=4,
    ),
    _r("vercel_blob_token", _B + r"vercel_blob_rw_[A-Za-z0-9]{16}_[A-Za-z0-9]{24,}" + _E, "vercel_blob_rw_"),
    _r(
        "netlify_token",
        _B + r"nf[pcoub]_[A-Za-z0-9_\-]{30,}" + _E,
        "nfp_",
        "nfc_",
        "nfo_",
        "nfu_",
        "nfb_",
        random_tail=4,
    ),
    _r("heroku_api_key", _B + r"HRKU-[A-Za-z0-9_\-]{20,}" + _E, "hrku-", random_tail=5),
    _r("flyio_token", r"\bFlyV1 fm\d[a-z]?_[A-Za-z0-9+/=_\-,]{40,}", "flyv1 "),
    _r("flyio_token", _B + r"fo1_[A-Za-z0-9_\-]{30,}" + _E, "fo1_", random_tail=4),
    _r("render_api_key", _B + r"rnd_[A-Za-z0-9]{28,}" + _E, "rnd_", random_tail=4),
    _r("doppler_token", _B + r"dp\.(?:st|sa|ct|pt|scim|audit)\.[A-Za-z0-9_\-.]{32,}" + _E, "dp."),
    _r("openvpn_static_key", r"-----BEGIN OpenVPN Static key V1-----", "openvpn static key"),
    # Oracle's user/password@db in sqlplus and JDBC thin URLs (checked to look like a password).
    _r("url_password", r"(?i)(?:\bsqlplus\s+|jdbc:oracle:thin:)\w+/([^\s@/]{6,})@", "sqlplus", "jdbc:oracle", group=1),
    _r("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", "age-secret-key-1"),
    # ---------------------------------------------------------------- observability and work tools
    _r("grafana_token", _B + r"gl(?:sa|c)_[A-Za-z0-9_\-+/=]{32,}" + _E, "glsa_", "glc_"),
    _r("grafana_api_key", r"(?<![A-Za-z0-9+/])eyJrIjoi[A-Za-z0-9+/]{40,}={0,2}", "eyjrijoi"),
    _r("sentry_token", _B + r"sntry[su]?_[A-Za-z0-9_\-=+/]{32,}" + _E, "sntr"),
    _r(
        "newrelic_key",
        _B + r"NR(?:AK|II|IQ|RA)-[A-Za-z0-9_\-]{27,42}" + _E,
        "nrak-",
        "nrii-",
        "nriq-",
        "nrra-",
        random_tail=5,
    ),
    _r("newrelic_key", r"(?<![0-9a-zA-Z])[0-9a-f]{36}NRAL(?![0-9a-zA-Z])", "nral"),
    _r("hubspot_token", _B + r"pat-(?:na|eu|ap)\d-" + _UUID + _E, "pat-"),
    _r("launchdarkly_sdk_key", _B + r"sdk-" + _UUID + _E, "sdk-"),
    _r("nostr_private_key", _B + r"nsec1[02-9ac-hj-np-z]{58}" + _E, "nsec1"),
    _r("linear_api_key", _B + r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}" + _E, "lin_api_", "lin_oauth_"),
    _r("notion_token", _B + r"(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})" + _E, "ntn_", "secret_", random_tail=4),
    _r("airtable_token", _B + r"pat[A-Za-z0-9]{14}\.[0-9a-f]{64}" + _E, "pat"),
    _r("asana_token", r"(?<![\w/])[12]/\d{10,20}(?:/\d{10,20})?:[0-9a-f]{32}(?![0-9a-zA-Z])", ":"),
    # ---------------------------------------------------------------- generic shapes with a fixed part
    _r(
        "jwt",
        _B + r"e[yw][A-Za-z0-9_\-]{8,}\.e[yw][A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*" + _E,
        "ey",
        "ew",
    ),
    # scheme://user:password@host — the password group must not be a placeholder (checked in secrets.py).
    _r(
        "url_password", r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@\"'<>]*:([^\s/\"'<>]+)@[A-Za-z0-9.\-\[\]]", "://", group=1
    ),
    _r("bearer_token", r"(?i)\bBearer\s+([A-Za-z0-9\-._~+/]{16,}=*)", "bearer", group=1),
    _r("basic_auth", r"(?i)\bAuthorization:\s*Basic\s+([A-Za-z0-9+/]{12,}={0,2})", "basic", group=1),
    _r(
        "authorization_header",
        r"(?i)\bAuthorization:\s*(?:token|key|SSWS|apikey)\s+([A-Za-z0-9\-._~+/]{16,}=*)",
        "authorization",
        group=1,
    ),
    # scheme://KEY@host with a random user part and no password: a Sentry DSN, a token-in-URL.
    _r("url_credentials", r"\b[A-Za-z][A-Za-z0-9+.\-]*://([A-Za-z0-9_\-]{16,})@[A-Za-z0-9.\-]", "://", group=1),
    # Docker's config.json: "auth": base64("user:password").
    _r("docker_auth", r'"auth"\s*:\s*"([A-Za-z0-9+/]{12,}={0,2})"', '"auth"', group=1),
    # A password glued to a client's -p flag or after --password / --token on a command line.
    _r(
        "cli_password",
        r"\b(?:mysql|mysqldump|mariadb|mysqladmin)\b[^\n|;&]*?\s-p([^\s'\"\-][^\s'\"]{5,})",
        "mysql",
        "mariadb",
        group=1,
    ),
    _cli(r"\bsshpass\s+-p\s*", "sshpass"),
    # A user then a password flag on any command line (mosquitto_pub -u U -P …, a client's -u U -p …).
    _cli(
        r"(?<![\w\-])(?:-[uU]|--user(?:name)?)[\s=]+[\w.@\-]+\s+(?:-[pP]|--pass(?:word)?)[\s=]+"
        r"(?![\d.:]+(?:/\w+)?(?:[\s'\"]|$))",  # not a port mapping: docker run -u app -p 8080:80
        "-u",
        "--user",
    ),
    _cli(r"\bdocker\s+login\b[^\n|;&]*?\s-p\s+", "docker"),
    _r(
        "cli_password",
        r"\bcurl\b[^\n|;&]*?\s(?:-u|--user)\s*['\"]?[^\s:'\"]+:([^\s'\"$<{][^\s'\"]{5,})",
        "curl",
        group=1,
    ),
    # --password, --db-password, --client-secret, --secret-key, --auth-token=…: a flag that ends in a credential word
    # (not --password-file, --token-url) and its value
    _cli(
        r"(?i)(?<![\w\-])--(?:[a-z0-9]+-)*(?:password|passwd|pass|token|apikey|secret"
        r"|(?:api|secret|access|private|auth|client|master|signing|encryption|license)-key)(?:\s+|=)",
        "--",
    ),
    # The anchors hold what every match holds: "gh\tsecret" has no "gh secret", "-storepass\t…" no "pass ".
    _cli(r"\bgh\s+secret\s+set\b[^\n|;&]*?\s(?:-b|--body)[\s=]", "secret"),
    _cli(r"\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)\b[^\n|;&]*?\s-p\s+", "mongo"),
    _cli(r"(?<![\w\-])-(?:src|dest)?(?:storepass|keypass)\s+", "storepass", "keypass"),
    # kubectl create secret generic NAME --from-literal=KEY=VALUE: every literal is the secret's content
    _cli(r"\bkubectl\b[^\n|;&]*?\bcreate\s+secret\b[^\n|;&]*?\s--from-literal=[\w.\-]+=", "from-literal"),
    # archivers' passwords: zip -P …, 7z a -p…, unzip -P …; smbclient -U user%…; net use … /user:NAME …
    _cli(r"\b(?:zip|unzip|7z|7za|7zz)\b[^\n|;&]*?\s-[pP]\s*", "zip", "7z"),
    _cli(r"\bsmbclient\b[^\n|;&]*?\s-U\s*[\w.\\/@\-]+%", "smbclient"),
    _cli(r"(?i)\bnet\s+use\b[^\n|;&]*?\s/user:\S+\s+", "/user:"),
    _cli(r"\bcomposer\s+config\b[^\n|;&]*?\shttp-basic\.\S+\s+\S+\s+", "http-basic"),  # HOST USER PASSWORD
    _cli(r"\brabbitmqctl\s+(?:add_user|change_password)\s+\S+\s+", "rabbitmqctl"),
    _cli(r"\bredis-cli\b[^\n|;&]*?\s-a\s+", "redis-cli"),
    _cli(r"\bhtpasswd\s+-[a-zA-Z]*b[a-zA-Z]*\s+(?:-\w+\s+)*\S+\s+\S+\s+", "htpasswd"),  # -b FILE USER PASSWORD
    _cli(r"\bmc\s+alias\s+set\s+\S+\s+\S+\s+\S+\s+", "alias"),  # NAME URL ACCESS SECRET
    # SQL: CREATE/ALTER USER … IDENTIFIED [WITH plugin] BY '…' (PASSWORD '…' is an assignment)
    _r("sql_password", r"(?i)\bIDENTIFIED\s+(?:WITH\s+\w+\s+)?BY\s+'([^'\s]{6,})'", "identified", group=1),
)

# Every anchor once, and the rules that need none: a text is searched for each anchor once, not once per rule
# that names it, and the usual note (which holds none) runs only the unanchored rules.
_ANCHORS = tuple(dict.fromkeys(a for rule in FORMAT_RULES for a in rule.anchors))
_UNANCHORED = tuple(rule for rule in FORMAT_RULES if not rule.anchors)


# Anchors grouped under a root anchor that is a substring of each (``sk-`` under ``sk``): a text lacking the root
# lacks them all, so they are tested only when it is present (same set of present anchors, fewer tests).
_ROOTS = tuple(a for a in _ANCHORS if not any(b != a and b in a for b in _ANCHORS))
_ANCHOR_TREE = tuple(
    (root, tuple(a for a in _ANCHORS if a not in _ROOTS and root == next(r for r in _ROOTS if r in a)))
    for root in _ROOTS
)


@functools.lru_cache(maxsize=1024)
def _rules_for(present: frozenset[str]) -> tuple[FormatRule, ...]:
    return tuple(rule for rule in FORMAT_RULES if not rule.anchors or not present.isdisjoint(rule.anchors))


def anchored_rules(lower: str) -> tuple[FormatRule, ...]:
    """The format rules to run on a text whose lowercase form is ``lower``, in FORMAT_RULES order."""
    present = [a for root, under in _ANCHOR_TREE if root in lower for a in (root, *under) if a in lower]
    if not present:
        return _UNANCHORED
    return _rules_for(frozenset(present))


# What makes a ``(?i)`` pattern's twin unsafe: a ``(?-i)`` group, a named group (its name would be lowered), an
# escaped code point, or a class range with a non-ASCII end (its inside is not checked below).
_NO_TWIN = re.compile(r"\(\?-i|\(\?P|\\[uUxN0-7]|[^\x00-\x7f]-|-[^\x00-\x7f]")


class CaseFree:
    """A ``(?i)`` pattern, run on an ASCII text as its twin: the same pattern without ``(?i)``, its letters lowered,
    over the text's lower(). There both find the same spans (lower() keeps an ASCII text's length and its word
    characters, and no letter of the pattern matches an ASCII letter by case folding but the ASCII ones: checked at
    import), and the twin runs about twice as fast (sre folds no case per character). Other texts run the pattern."""

    def __init__(self, pattern: str) -> None:
        self.pattern = re.compile(pattern)
        if not pattern.startswith("(?i)") or _NO_TWIN.search(pattern):
            raise ValueError(f"no ASCII twin for {pattern!r}")
        if re.search(r"(?i)[a-z]", "".join(c for c in pattern if not c.isascii())):
            raise ValueError(f"a letter of {pattern!r} matches an ASCII letter by case folding")
        lowered = re.sub(r"\\.|[A-Z]", lambda m: m.group(0) if len(m.group(0)) == 2 else m.group(0).lower(), pattern)
        self.twin = re.compile(lowered[4:])

    def finditer(self, text: str, lower: str) -> Iterator[re.Match[str]]:
        """The pattern's matches in ``text`` (``lower`` is ``text.lower()``), by position; only spans are the same."""
        return self.twin.finditer(lower) if text.isascii() else self.pattern.finditer(text)

    def search(self, text: str) -> re.Match[str] | None:
        return self.twin.search(text.lower()) if text.isascii() else self.pattern.search(text)
