"""How the PostgreSQL store reports what the driver and the network raise: as hookline's errors, without secrets.

asyncpg words its errors with what it was given, and a DSN may hold a password: each
message is scrubbed of the DSN's secrets (and of anything `redact` takes for one), and the
driver's exception is kept as the cause only when nothing in its chain names a secret.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg  # type: ignore[import-untyped]  # asyncpg ships no type information

from hookline._redact import REDACTED, redact
from hookline.errors import ConfigError, HooklineError, StoreError

__all__ = ["CANNOT_STORE", "DriverErrors"]

CANNOT_STORE = "PostgreSQL cannot store this text (ids, names and authors may not hold NUL (\\x00) or lone surrogates)"
_BAD_TEXT = (
    asyncpg.CharacterNotInRepertoireError,
    asyncpg.UntranslatableCharacterError,
    UnicodeEncodeError,
)


class DriverErrors:
    """Turns the exceptions of one database's driver into hookline's errors.

    Args:
        where: The database as messages name it (`host:port/db`).
        secrets: What the DSN holds that no message may show (its password, ...).
    """

    __slots__ = ("_secrets", "where")

    def __init__(self, where: str, secrets: tuple[str, ...]) -> None:
        self.where = where
        self._secrets = secrets

    @contextmanager
    def translated(self) -> Iterator[None]:
        """Raise what the block raises as `ConfigError` (bad text, a bad DSN) or `StoreError`."""
        try:
            yield
        except _BAD_TEXT as exc:
            raise self.failure(ConfigError, CANNOT_STORE, exc)  # noqa: B904
        except asyncpg.DataError as exc:  # a parameter asyncpg could not encode
            kind = ConfigError if isinstance(exc.__cause__ or exc.__context__, UnicodeError) else StoreError
            raise self.failure(kind, CANNOT_STORE if kind is ConfigError else self.failed, exc)  # noqa: B904
        except asyncpg.ClientConfigurationError as exc:
            raise self.failure(ConfigError, f"invalid PostgreSQL DSN for {self.where}", exc)  # noqa: B904
        except asyncpg.PostgresError as exc:
            raise self.failure(StoreError, self.failed, exc)  # noqa: B904
        except (OSError, TimeoutError, asyncpg.InterfaceError, asyncpg.InternalClientError) as exc:
            # InternalClientError: asyncpg's state after a connection dropped mid-statement
            raise self.failure(StoreError, f"cannot reach PostgreSQL database {self.where}", exc)  # noqa: B904

    @property
    def failed(self) -> str:
        """What a failure of the database itself says."""
        return f"PostgreSQL database {self.where} failed"

    def failure(self, kind: type[HooklineError], message: str, exc: BaseException) -> HooklineError:
        """Return a `kind` error saying `message` and the driver's words, with every secret taken out.

        The driver's exception stays the `__cause__` only when no exception in its chain
        names a secret (tracebacks print the whole chain); the implicit context is hidden.
        """
        text = f"{message}: {self._scrub(str(exc)) or type(exc).__name__}"
        error = StoreError(text, where=self.where) if kind is StoreError else kind(text)
        error.__cause__ = exc if self._clean(exc) else None
        error.__suppress_context__ = True
        return error

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return redact(text)

    def _clean(self, exc: BaseException) -> bool:
        seen: set[int] = set()
        current: BaseException | None = exc
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            words = f"{current} {current.args!r}"
            if any(secret in words for secret in self._secrets) or redact(words) != words:
                return False
            current = current.__cause__ or current.__context__
        return True
