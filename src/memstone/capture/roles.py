"""What a named tool is for: a change of tool in one role revises the entry that names the old one (issue 16).

An unmarked correction often names nothing but the new tool: "我们现在用 pnpm 了。" after "管理后台的依赖用 npm 装。",
"Recurring jobs are scheduled by Quartz.NET." after "Background jobs run in Hangfire …". The two share no subject
word a lexical rule could count, in any language, but both name a tool of one *role* (a JavaScript package
manager, a job scheduler): the role is the subject, and the tool is the value. :data:`ROLES` lists well-known
tools of common roles (general knowledge, not fitted to any line); :func:`roles` finds them in a text, in any
language (a name is written the same way in Chinese, Spanish or English prose), and :func:`role_change` picks the
entry a candidate changes that way.

The rule (tried when no rule on the words of an entry matched, before the weighted-overlap rule: a tool named in
its role is stronger evidence than rare shared words):

- the candidate names a tool of a role that the entry does not name, and the entry names another tool of that
  role that the candidate does not (``pnpm`` / ``npm``; "Bun, pnpm-lock.yaml was deleted" / "pnpm, not npm"), or
  only tools the candidate names too ("Kafka …; Redpanda was dropped" / "… Redpanda", capcorr5);
- and the candidate says that something changed (a correction: "now", "改用", "desde"), or the two share a subject
  token besides the tools ("jobs"): two rules that merely name two tools of one role in different places ("the
  web app uses pnpm" / "the mobile app uses yarn") share neither;
- of the entries it takes, the one sharing most subject tokens wins, then the newest.

Without a role, two tool names say nothing about each other, so nothing else is joined.
"""

from __future__ import annotations

import re
from collections.abc import KeysView, Sequence
from functools import cache

from ._text import subject_tokens
from .targets import Target

__all__ = ["ROLES", "role_change", "role_holders", "roles"]

# Well-known tools by role. Names that are ordinary words of a language the capture reads (kind, black, parcel,
# vite, got, temporal, cron) are left out or only taken as written (see _EXACT): a role must not come from prose.
ROLES: dict[str, tuple[str, ...]] = {
    "js-packages": ("npm", "pnpm", "yarn", "bun"),
    "py-packages": ("pip", "pip-tools", "poetry", "uv", "pipenv", "conda", "pdm", "hatch", "rye"),
    "jobs": ("hangfire", "quartz", "quartz.net", "celery", "sidekiq", "resque", "dramatiq", "bullmq", "rq", "huey",
             "good_job", "solid_queue", "oban", "arq", "apscheduler", "delayed_job", "faktory", "asynq"),
    "object-storage": ("S3", "OSS", "COS", "GCS", "R2", "minio", "seaweedfs", "azure blob", "七牛云", "kodo"),
    "orm": ("prisma", "typeorm", "drizzle", "sequelize", "sqlalchemy", "hibernate", "ef core", "dapper", "gorm",
            "diesel", "sqlx", "mikro-orm", "knex", "kysely", "peewee", "tortoise", "doctrine", "eloquent", "mybatis",
            "jooq", "ecto", "sqlc"),
    "validation": ("zod", "valibot", "yup", "joi", "ajv", "pydantic", "marshmallow", "class-validator", "superstruct",
                   "arktype"),
    "payments": ("stripe", "adyen", "paypal", "braintree", "mollie", "square", "razorpay", "paddle", "klarna"),
    "js-tests": ("jest", "vitest", "mocha", "jasmine", "karma", "ava"),
    "bundler": ("webpack", "rollup", "esbuild", "turbopack", "rspack", "Vite"),
    "e2e": ("cypress", "playwright", "selenium", "puppeteer", "detox", "maestro", "appium"),
    "email": ("sendgrid", "mailgun", "postmark", "SES", "mailchimp", "mandrill", "resend", "sparkpost"),
    "ci": ("github actions", "gitlab ci", "jenkins", "circleci", "travis", "buildkite", "drone", "teamcity",
           "azure pipelines", "bitbucket pipelines"),
    "state": ("redux", "mobx", "zustand", "riverpod", "pinia", "vuex", "ngrx", "recoil", "jotai", "getx", "valtio"),
    "errors": ("sentry", "bugsnag", "rollbar", "crashlytics", "honeybadger", "datadog", "new relic", "glitchtip",
               "airbrake", "raygun", "appsignal"),
    "js-lint": ("eslint", "biome", "tslint", "oxlint", "standard"),
    "py-lint": ("ruff", "flake8", "pylint", "pyflakes"),
    "http-client": ("axios", "ky", "superagent", "httpx", "aiohttp", "okhttp", "retrofit", "alamofire", "dio"),
    "push": ("FCM", "APNs", "onesignal", "极光推送", "极光", "个推", "jpush", "getui", "pusher", "expo push"),
    "cache": ("redis", "memcached", "valkey", "keydb", "hazelcast", "ehcache"),
    "broker": ("kafka", "rabbitmq", "redis", "nats", "SQS", "pulsar", "activemq", "kinesis", "nsq", "redpanda",
               "rocketmq", "mqtt", "mosquitto", "emqx", "google pub/sub", "azure service bus", "event hubs"),
    "local-k8s": ("k3d", "minikube", "k3s", "microk8s", "kind", "rancher desktop", "docker desktop"),
    "iac": ("terraform", "pulumi", "opentofu", "cloudformation", "cdk"),
    "docs": ("sphinx", "mkdocs", "docusaurus", "vitepress", "hugo", "jekyll", "gitbook", "storybook"),
    "auth": ("auth0", "keycloak", "cognito", "okta", "clerk", "firebase auth", "supabase auth"),
    "search": ("elasticsearch", "opensearch", "meilisearch", "algolia", "typesense", "solr"),
    "gitops": ("argo cd", "argocd", "Flux", "fluxcd", "spinnaker", "jenkins x"),
    "secrets": ("doppler", "Vault", "aws secrets manager", "infisical", "sops", "1password", "azure key vault",
                "gcp secret manager", "sealed secrets"),
    "db-migrations": ("goose", "Atlas", "flyway", "liquibase", "alembic", "dbmate", "golang-migrate", "sqitch",
                      "prisma migrate"),
    "barcode": ("code 128", "code128", "datamatrix", "data matrix", "qr code", "ean-13", "ean13", "pdf417",
                "code 39"),
    "build": ("maven", "gradle", "bazel", "sbt"),
    "py-tests": ("pytest", "unittest", "nose2"),
    "py-types": ("mypy", "pyright", "pyre", "pytype"),
    "formatter": ("Prettier", "Black", "rustfmt", "gofmt", "ktlint", "spotless"),
    "scheduler": ("airflow", "dagster", "Prefect", "Luigi", "argo workflows"),
    "hosting": ("heroku", "fly.io", "vercel", "netlify", "cloud run", "app engine"),
    "metrics": ("prometheus", "influxdb", "graphite", "victoriametrics", "datadog metrics"),
    "logs": ("Loki", "ELK", "logstash", "fluentd", "fluent bit", "papertrail", "splunk", "graylog"),
    "feature-flags": ("launchdarkly", "unleash", "flagsmith", "growthbook", "configcat"),
    "cdn": ("cloudflare", "fastly", "cloudfront", "akamai"),
    "database": ("postgresql", "postgres", "mysql", "mariadb", "sqlite", "mongodb", "cockroachdb", "sql server",
                 "Oracle", "dynamodb", "cassandra", "tidb"),
    "i18n": ("i18next", "formatjs", "lingui", "gettext"),
}  # fmt: skip
# Taken only as written (case-sensitive): an acronym ("SES", "COS" are words in other languages) or a word of prose
# ("Vite" is French for "quickly", "square", "standard", "drone", "maestro" English or Spanish words).
_EXACT = frozenset(
    ("S3", "OSS", "COS", "GCS", "R2", "SES", "FCM", "APNs", "SQS", "Vite", "Flux", "Vault", "Atlas", "Prettier",
     "Black", "Prefect", "Luigi", "Loki", "ELK", "Oracle")
)  # fmt: skip
_PROSE = frozenset(("square", "standard", "drone", "maestro", "hugo", "clerk", "ava", "ky", "dio", "kind"))


_CODE = re.compile(r"`[^`\n]*`")
# Function words of the Latin-script languages capture reads that subject tokens keep: sharing one is no shared
# subject ("Les topics Kafka …" / "Les tests … Redpanda", capcorr5).
_FUNCTION_WORDS = frozenset(
    ("les", "des", "une", "avec", "pour", "dans", "sur", "est", "sont", "par", "aux", "du", "et", "los", "las", "del",
     "una", "con", "por", "para", "que", "com", "das", "dos", "uma", "não", "und", "mit", "für", "auf", "von", "dem",
     "den", "zu", "il", "lo", "gli", "per", "che", "di", "da", "nel", "della", "con", "sono", "het", "een", "van",
     "voor", "met")
)  # fmt: skip


@cache
def _pattern(name: str) -> re.Pattern[str]:
    body = re.escape(name.replace("_", " ")).replace(r"\ ", r"[\s_-]?")  # "Solid Queue" is solid_queue
    if not name.isascii():
        return re.compile(body)  # a CJK name: no word boundaries in CJK prose
    flags = 0 if name in _EXACT else re.IGNORECASE
    return re.compile(rf"(?<![\w.@/]){body}(?![\w]|\.\w)", flags)


def _found(text: str) -> dict[str, dict[str, int]]:
    """The tools of each role ``text`` names, each with where it is first named (a name taken only in a code
    span: the end of ``text``)."""
    code = " ".join(m.group()[1:-1] for m in _CODE.finditer(text))
    out: dict[str, dict[str, int]] = {}
    for role, names in ROLES.items():
        spans: dict[str, list[tuple[int, int]]] = {}
        for name in names:
            where = code if name in _PROSE else text
            found = [m.span() for m in _pattern(name).finditer(where)]
            if found:
                spans[name.lower()] = found if name not in _PROSE else [(len(text), len(text) + 1)]
        # A name only inside a longer one of its role ("quartz" in "quartz.net", "极光" in "极光推送") is that one.
        kept = {
            name: min(a for a, b in where if not _inside(a, b, name, spans))
            for name, where in spans.items()
            if any(not _inside(a, b, name, spans) for a, b in where)
        }
        if kept:
            out[role] = kept
    return out


def _replaces(mine: KeysView[str], theirs: KeysView[str]) -> bool:
    """Whether a candidate naming tools ``mine`` of a role names another tool than the entry's ``theirs``: the
    entry names one the candidate does not, or the candidate names the entry's as well as a new one ("… a real
    Kafka through Testcontainers; Redpanda was dropped" for "… Testcontainers and Redpanda", capcorr5)."""
    return bool(mine - theirs) and (bool(theirs - mine) or theirs < mine)


def _inside(a: int, b: int, name: str, spans: dict[str, list[tuple[int, int]]]) -> bool:
    return any(x <= a and b <= y and (x, y) != (a, b) for other, s in spans.items() if other != name for x, y in s)


def roles(text: str) -> dict[str, frozenset[str]]:
    """The tools of each role that ``text`` names (lowercased; the longest of overlapping names of one role).
    A name of :data:`_PROSE` counts only in a code span.

    >>> roles("我们现在用 pnpm 了，pnpm-lock.yaml 也提交。")
    {'js-packages': frozenset({'pnpm'})}
    """
    return {role: frozenset(found) for role, found in _found(text).items()}


def role_holders(role: str, targets: Sequence[Target]) -> list[tuple[Target, frozenset[str]]]:
    """The targets that name a tool of ``role``, each with the tools of it they name (capcorr7, resets.py)."""
    names = tuple(n.lower() for n in ROLES[role])
    out = []
    for t in targets:
        if any(n in t.text.lower() for n in names) and (found := roles(t.text).get(role)):
            out.append((t, found))
    return out


def role_change(text: str, targets: Sequence[Target], *, stated: bool) -> Target | None:
    """The entry whose tool in some role the candidate ``text`` replaces with another, or None (module doc).
    ``stated``: the candidate says that something changed (it is a correction)."""
    mine = _found(text)
    if not mine:
        return None
    tools = frozenset().union(*(subject_tokens(n) for found in mine.values() for n in found))
    own = subject_tokens(text) - tools - _FUNCTION_WORDS
    names = tuple({n.lower() for role in mine for n in ROLES[role]})  # a cheap look before the patterns run
    best: tuple[int, str, Target] | None = None
    for t in targets:
        low = t.text.lower()
        if t.kind == "working_note" or not any(n in low for n in names):
            continue
        theirs = _found(t.text)
        if any(len(mine[r]) > 1 and mine[r].keys() == theirs[r].keys() for r in mine.keys() & theirs.keys()):
            return None  # the same tools of a role as an entry: a restatement of that choice changes no other entry
        if not any(_replaces(mine[r].keys(), theirs[r].keys()) for r in mine.keys() & theirs.keys()):
            continue
        shared = len(own & (t.tokens - tools))
        # Naming the entry's tool beside a new one of its role is itself the subject ("Sentry から GlitchTip に").
        named_old = any(theirs[r].keys() < mine[r].keys() for r in mine.keys() & theirs.keys())
        if (stated or shared >= 1 or named_old) and (best is None or (shared, t.written) > best[:2]):
            best = (shared, t.written, t)
    return None if best is None else best[2]
