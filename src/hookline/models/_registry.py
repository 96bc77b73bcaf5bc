"""Resolves `"provider:model"` strings to `Model` objects.

Providers register a factory under their prefix, either by calling `register_provider`
or through the `hookline.models` entry-point group (name = prefix, value = a callable
taking the model name). The built-in adapters use the entry points too, as third-party
packages do.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from hookline.errors import ConfigError

if TYPE_CHECKING:
    from hookline.models.base import Model

ModelFactory = Callable[[str], "Model"]

_FACTORIES: dict[str, ModelFactory] = {}
_ENTRY_POINT_GROUP = "hookline.models"


def register_provider(prefix: str, factory: ModelFactory) -> None:
    """Make `"prefix:name"` strings build models with `factory(name)`."""
    if not prefix or ":" in prefix:
        raise ConfigError(f"invalid provider prefix {prefix!r}: use a non-empty name without ':'")
    _FACTORIES[prefix] = factory


def _known_prefixes() -> dict[str, ModelFactory | None]:
    known: dict[str, ModelFactory | None] = {ep.name: None for ep in entry_points(group=_ENTRY_POINT_GROUP)}
    known.update(_FACTORIES)
    return known


def _load(prefix: str) -> ModelFactory | None:
    if prefix in _FACTORIES:
        return _FACTORIES[prefix]
    for ep in entry_points(group=_ENTRY_POINT_GROUP, name=prefix):
        factory: ModelFactory = ep.load()
        _FACTORIES[prefix] = factory
        return factory
    return None


def resolve_model(spec: str | Model) -> Model:
    """The model `spec` names: a `Model` is returned as it is, a string is looked up.

    Raises:
        ConfigError: the string has no `provider:` prefix, or an unknown one.
    """
    from hookline.models.base import Model

    if isinstance(spec, Model):
        return spec
    if not isinstance(spec, str):
        raise ConfigError(f"model must be a 'provider:model' string or a Model, not {type(spec).__name__}")
    prefix, sep, name = spec.partition(":")
    known = ", ".join(sorted(_known_prefixes())) or "(none installed)"
    if not sep or not name:
        raise ConfigError(
            f"model {spec!r} must look like 'provider:model', e.g. 'openai:gpt-4o-mini'; known providers: {known}"
        )
    factory = _load(prefix)
    if factory is None:
        raise ConfigError(f"unknown model provider {prefix!r} in {spec!r}; known providers: {known}")
    return factory(name)
