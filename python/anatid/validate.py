"""Argument checks shared by the verbs. Each raises ValidationError naming
the argument and what is accepted, before anything touches the file."""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

from .errors import EmbeddingDimensionError, ValidationError

MAX_TEXT_CHARS = 1_000_000
MAX_NAME_CHARS = 1_000
MAX_ID = 2**63 - 1


def shown(value: Any, limit: int = 80) -> str:
    """repr() for an error message, cut to `limit` characters; a value whose own __repr__
    raises is shown by its type, so the error raised is still ours."""
    try:
        r = repr(value)
    except Exception:
        return f"<{type(value).__name__} whose repr() raised>"
    return r if len(r) <= limit else r[:limit] + "..."


def members(values: Any) -> Any:
    """A list, tuple, set or frozenset to iterate: a subclass is read through its base's own
    iterator, so its overridden __iter__/__len__ never run inside a check."""
    t = type(values)
    if t is list or t is tuple or t is set or t is frozenset:
        return values
    for base in (list, tuple, set, frozenset):
        if isinstance(values, base):
            return list(base.__iter__(values))
    return values


def text(value: Any, argument: str, *, max_chars: int = MAX_TEXT_CHARS) -> str:
    if type(value) is not str:
        if not isinstance(value, str):
            raise ValidationError(argument, f"expected a string, got {type(value).__name__}", "non-blank text")
        value = str.__str__(value)  # a str subclass as the plain str it holds: its methods never run
    if not value.strip():
        raise ValidationError(argument, "is empty or blank", "text with at least one visible character")
    if "\x00" in value:
        raise ValidationError(argument, "contains a NUL character", "text without NUL bytes")
    if len(value) > max_chars:
        raise ValidationError(argument, f"is {len(value)} characters long", f"at most {max_chars} characters")
    return encodable(value, argument)


def encodable(value: str, argument: str, accepted: str = "valid Unicode text") -> str:
    """`value` (a plain str), refused if it holds unpaired surrogates: UTF-8 cannot encode
    them, so DuckDB and the filesystem would raise their own errors."""
    if not value.isascii():     # ASCII text has no surrogates: skip the trial encoding (hot in remember_many)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValidationError(argument, "contains unpaired surrogates", accepted) from None
    return value


def optional_text(value: Any, argument: str) -> str | None:
    return None if value is None else text(value, argument, max_chars=MAX_NAME_CHARS)


def name(value: Any, argument: str) -> str:
    return text(value, argument, max_chars=MAX_NAME_CHARS).strip()


def name_key(value: str) -> str:
    """How entity names are matched: whitespace collapsed, lower-cased."""
    return " ".join(value.split()).lower()


def names(values: Any, argument: str) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, (list, tuple, set, frozenset)):
        raise ValidationError(argument, f"expected a list of names, got {type(values).__name__}",
                              "a list of non-blank strings")
    seen: dict[str, str] = {}
    for v in members(values):
        n = name(v, argument)
        seen.setdefault(name_key(n), n)
    return list(seen.values())


def identifier(value: Any, argument: str) -> int:
    """Ids arrive as int or decimal string (JSON clients send strings)."""
    if isinstance(value, bool):
        raise ValidationError(argument, "is a bool", "an id as int or decimal string")
    if isinstance(value, str):
        value = str.__str__(value)
        s = value.strip()
        if not s.isdigit() or not s.isascii():
            raise ValidationError(argument, f"{shown(value)} is not a decimal id", "an id as int or decimal string")
        if len(s.lstrip("0")) > 19:  # beyond any 64-bit id (and Python refuses int() of 4,300+ digits)
            raise ValidationError(argument, f"{s[:24]}... ({len(s)} digits) is out of range", "a positive 64-bit id")
        value = int(s)
    if not isinstance(value, int):
        raise ValidationError(argument, f"expected an id, got {type(value).__name__}",
                              "an id as int or decimal string")
    if type(value) is not int:
        value = int.__index__(value)  # an int subclass as the int it holds: its own methods never run
    if value <= 0 or value > MAX_ID:
        what = str(value) if value.bit_length() <= 64 else f"an integer of {value.bit_length()} bits"
        raise ValidationError(argument, f"{what} is out of range", "a positive 64-bit id")
    return value


def tenant(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("tenant", f"expected an int, got {type(value).__name__}",
                              "an integer from 0 to 2**63-1")
    if type(value) is not int:
        value = int.__index__(value)
    if value < 0 or value > MAX_ID:
        raise ValidationError("tenant", f"{value} is out of range", "an integer from 0 to 2**63-1")
    return value


def positive_int(value: Any, argument: str, *, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(argument, f"expected an int, got {type(value).__name__}", "a positive integer")
    if type(value) is not int:
        value = int.__index__(value)
    if value <= 0:
        raise ValidationError(argument, f"{value} is not positive", "a positive integer")
    if maximum is not None and value > maximum:
        raise ValidationError(argument, f"{value} is too large", f"at most {maximum}")
    return value


def finite_number(value: Any, argument: str, *, low: float | None = None, high: float | None = None) -> float:
    if type(value) is float:
        f = value
    else:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValidationError(argument, f"expected a number, got {type(value).__name__}", "a finite number")
        # a subclass (numpy.float64 is one) is converted by its base type: its own
        # __float__/__repr__ never run
        as_int = type(value) is int or isinstance(value, int)
        try:
            f = float(value if type(value) is int else int.__index__(value)) if as_int else float.__float__(value)
        except OverflowError:  # an int beyond any float: typed like infinity, not Python's own error
            raise ValidationError(argument, "is beyond the float range", "a finite number") from None
    if not math.isfinite(f):
        raise ValidationError(argument, f"{f} is not finite", "a finite number")
    if (low is not None and f < low) or (high is not None and f > high):
        raise ValidationError(argument, f"{f} is out of range", f"a number from {low} to {high}")
    return f


def embedding(value: Any, dim: int | None, argument: str = "embedding") -> list[float]:
    """A finite, non-zero vector of the file's dimension."""
    try:
        import numpy as np
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationError(argument, "is not a sequence of numbers", "a list or 1-d array of floats") from None
    except OverflowError:  # an int beyond any float
        raise ValidationError(argument, "has values beyond float32 range", "finite float32 values") from None
    except MemoryError:
        raise
    except Exception as exc:  # raised by the caller's own __len__/__iter__/__float__ while numpy reads it
        raise ValidationError(argument, f"could not be read as numbers ({type(exc).__name__} from the value's "
                              "own methods)", "a list or 1-d array of floats") from exc
    if arr.ndim != 1 or arr.size == 0:
        raise ValidationError(argument, f"has shape {arr.shape}", "a non-empty 1-d sequence of floats")
    if dim is not None and arr.size != dim:
        raise EmbeddingDimensionError(argument, f"has length {arr.size}", f"length {dim}, the file's embedding_dim")
    if not np.all(np.isfinite(arr)):
        raise ValidationError(argument, "contains NaN or infinity", "finite floats")
    with np.errstate(over="ignore"):  # overflow is reported just below, as a ValidationError
        as_float32 = arr.astype(np.float32)
    if not np.all(np.isfinite(as_float32)):
        raise ValidationError(argument, "has values beyond float32 range", "finite float32 values")
    if not np.any(as_float32):
        raise ValidationError(argument, "is all zeros (no direction for cosine)", "a non-zero vector")
    return as_float32.tolist()


def kinds(values: Any, argument: str = "kinds") -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, (list, tuple, set, frozenset)):
        raise ValidationError(argument, "expected a non-empty list of kinds", "a list of strings, or None")
    values = members(values)
    if not values:
        raise ValidationError(argument, "expected a non-empty list of kinds", "a list of strings, or None")
    return sorted({name(v, argument) for v in values})


def one_of(value: Any, argument: str, allowed: Sequence[str]) -> str:
    if not isinstance(value, str) or str.__str__(value) not in allowed:  # plain str: a caller's __eq__ never runs
        raise ValidationError(argument, f"{shown(value)} is not allowed", ", ".join(map(repr, allowed)))
    return str.__str__(value)


def ids(values: Iterable[Any], argument: str) -> list[int]:
    return [identifier(v, argument) for v in values]
