"""The hot path's CPython tricks, in one place, each beside a plain twin that any Python runs.

A run builds a few pydantic objects per turn, hands each model call a list of messages, and
a store decodes long logs; on CPython (3.11 and later, with the GIL) a few tricks make that
cheaper in time or in memory. Each changes nothing a program can see, and each relies on an
invariant stated where it is defined:

- `blank`, `without_validation`: pydantic's slots set through their descriptors, one
  fields-set shared by every trusted instance of a class; for the messages, results and
  events the loop and the stores build. Twin: `model_construct`.
- `share_keys`: a class's instances share one table of attribute keys (`TextPart`,
  `ToolResultPart`, `Message`). Twin: nothing.
- `share_fields_sets`: frozen parts validated alike share one fields-set (every model answer
  the loop keeps). Twin: nothing.
- `COUNTS_REFERENCES`, `references`: `sys.getrefcount` tells that nothing else holds a list,
  so `PromptView` extends the last call's list rather than copy the conversation. Twin:
  never extend.
- `collector_paused`: the cyclic garbage collector paused while a long log decodes
  (`sessions._codec.decode_events`). Twin: nothing.
- the hook points, read off their enum once for the loop. The same objects either way: no
  twin.

`HOOKLINE_PLAIN_HOT_PATH=1`, read once when this module is imported, swaps every trick for
its twin, written with documented APIs only. CI runs a core subset of the suite that way
(`tests/core/test_plain_hot_path.py`), so the plain path keeps working and a trick that
stops holding (a new pydantic, PyPy, a free-threaded CPython) has a fallback ready. What
each trick saves is measured in docs/perf/README.md, not here.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel

from hookline.hook_points import HookPoint

__all__ = [
    "AFTER_LLM", "AFTER_RUN", "AFTER_TOOL", "BEFORE_LLM", "BEFORE_RUN", "BEFORE_TOOL", "COUNTS_REFERENCES", "ON_EXIT",
    "PLAIN", "PLAIN_ENV", "blank", "collector_paused", "references", "set_field", "share_fields_sets", "share_keys",
    "trusted_factory", "without_validation",
]

PLAIN_ENV = "HOOKLINE_PLAIN_HOT_PATH"
"""The environment variable that, set to 1, turns every trick of this module off."""

PLAIN = os.environ.get(PLAIN_ENV) == "1"
"""Whether the plain twins are in use."""

_ModelT = TypeVar("_ModelT", bound=BaseModel)

set_field = object.__setattr__
"""Set an attribute of a pydantic object the caller is building: pydantic's own `__setattr__`
refuses frozen models, and `Message`'s notes an edit. (Plain Python: both modes use it.)"""

# --- pydantic objects built without validation --------------------------------------------
#
# Invariant: the caller gives every field a valid value (it built them itself, or read them
# from an instance of the same class). pydantic keeps an instance's state in four slots of
# `BaseModel`; their descriptors set them without the attribute look-up of
# `object.__setattr__`, and since every field is set, one fields-set per class serves them all
# (pydantic adds to it only on assignment, and it holds every field already).

_slots = BaseModel.__dict__
_set_dict = _slots["__dict__"].__set__
_set_fields_set = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__
_new = object.__new__
_EVERY_FIELD: dict[type[BaseModel], set[str]] = {}  # by class: the fields-set its trusted instances share


if PLAIN:

    def blank(cls: type[_ModelT]) -> _ModelT:
        """A new instance of `cls` whose fields the caller then sets, every one, with `set_field`."""
        return cls.model_construct(_fields_set=set(cls.model_fields))

    def without_validation(cls: type[_ModelT], values: dict[str, Any]) -> _ModelT:
        """An instance of `cls` holding `values`, one for every field, trusted to be valid."""
        return cls.model_construct(**values)

    def trusted_factory(cls: type[_ModelT]) -> Callable[[dict[str, Any]], _ModelT]:
        """`without_validation` for one class."""
        return partial(without_validation, cls)

else:

    def blank(cls: type[_ModelT]) -> _ModelT:
        """A new instance of `cls` whose fields the caller then sets, every one, with `set_field`.

        Set one by one in the same order, the fields of a class's instances share one table
        of keys (see `share_keys`), and an instance holds no dict of its own until something
        asks for its `__dict__`: a run keeps every result it makes, so the loop builds them so.
        """
        instance = _new(cls)
        every = _EVERY_FIELD.get(cls)
        if every is None:
            every = _EVERY_FIELD[cls] = set(cls.model_fields)
        _set_fields_set(instance, every)
        _set_extra(instance, None)
        _set_private(instance, None)
        return instance

    def without_validation(cls: type[_ModelT], values: dict[str, Any]) -> _ModelT:
        """An instance of `cls` holding `values`, one for every field, trusted to be valid.

        What `model_construct` does, less its per-field default handling, which costs more
        than validation itself.
        """
        instance = _new(cls)  # `blank`'s work, inline: the loop builds a few of these a turn
        _set_dict(instance, values)
        every = _EVERY_FIELD.get(cls)
        if every is None:
            every = _EVERY_FIELD[cls] = set(cls.model_fields)
        _set_fields_set(instance, every)
        _set_extra(instance, None)
        _set_private(instance, None)
        return instance

    def trusted_factory(cls: type[_ModelT]) -> Callable[[dict[str, Any]], _ModelT]:
        """`without_validation` for one class, its fields-set looked up once: for the classes a run builds most.

        A status event and its text part cost 1.0 µs so, 1.4 through `without_validation`
        and 4 validated (CPython 3.11): a run streaming its status builds several a turn.
        """
        every = _EVERY_FIELD.setdefault(cls, set(cls.model_fields))
        new, set_dict, set_fields_set = _new, _set_dict, _set_fields_set
        set_extra, set_private = _set_extra, _set_private

        def build(values: dict[str, Any]) -> _ModelT:  # its setters read from its closure: cheaper than globals
            instance = new(cls)
            set_dict(instance, values)
            set_fields_set(instance, every)
            set_extra(instance, None)
            set_private(instance, None)
            return instance

        return build


def share_keys(cls: type[BaseModel]) -> None:
    """Fix the table of keys that `cls`'s instances filled by `blank` share: its fields, in order (plain: nothing).

    Invariant: CPython's instances of a class share one table of attribute keys, fixed by
    the first instance given attributes, and only while few instances exist (each one made
    before shrinks what the table may hold). Filling one at import, before any other is
    made, keeps that from depending on what a program builds first.
    """
    if PLAIN:
        return
    instance = _new(cls)
    for name in cls.model_fields:
        set_field(instance, name, None)


_SHARED_FIELDS_SET: dict[type[BaseModel], set[str] | None] = {}  # by class: the set its parts share (None: not frozen)


def share_fields_sets(parts: Iterable[BaseModel]) -> None:
    """Let frozen parts validated alike share one fields-set, rather than a set each (plain: nothing).

    A validated `ToolCallPart(id=..., name=..., arguments=...)` holds its own set of the
    fields it was given. Invariant: a frozen model's set never changes (pydantic adds to it
    only on assignment, and `model_copy` copies it), so parts with equal sets may hold one.
    Models that are not frozen are left as they are.
    """
    if PLAIN:
        return
    for part in parts:
        fields, cls = part.__pydantic_fields_set__, type(part)
        if cls not in _SHARED_FIELDS_SET:  # the first of its class: its set is the one to share
            _SHARED_FIELDS_SET[cls] = fields if part.model_config.get("frozen") else None
        shared = _SHARED_FIELDS_SET[cls]
        if shared is not None and shared is not fields and shared == fields:
            _set_fields_set(part, shared)


# --- a list nothing else holds --------------------------------------------------------------
#
# Invariant: with the GIL, `sys.getrefcount(x)` counts every reference to `x`, the call's own
# argument included; PyPy has no such count and a free-threaded build defers some.

COUNTS_REFERENCES = not PLAIN and hasattr(sys, "getrefcount") and getattr(sys, "_is_gil_enabled", lambda: True)()
"""Whether `references` tells that nothing else holds an object (else it is never asked)."""

references: Callable[[object], int] = sys.getrefcount if COUNTS_REFERENCES else (lambda thing: 0)
"""The references to an object, the argument of this call included (`sys.getrefcount`)."""


# --- the garbage collector ------------------------------------------------------------------


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (plain: leave it running).

    Decoding a long log creates a great many objects at once, and the collector, run by
    allocation counts, would walk them over and over. Invariant: nothing made in the block
    forms a reference cycle, so nothing is left for the collector to find afterwards.
    """
    if PLAIN or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# --- the hook points, read once ---------------------------------------------------------------
#
# A member read off an `Enum` class goes through the class's `__getattr__` machinery; the loop
# checks a few points on every turn, so it reads these module globals instead. The same
# objects either way: there is no twin.

BEFORE_RUN, BEFORE_LLM, AFTER_LLM = HookPoint.BEFORE_RUN, HookPoint.BEFORE_LLM, HookPoint.AFTER_LLM
BEFORE_TOOL, AFTER_TOOL = HookPoint.BEFORE_TOOL, HookPoint.AFTER_TOOL
ON_EXIT, AFTER_RUN = HookPoint.ON_EXIT, HookPoint.AFTER_RUN
