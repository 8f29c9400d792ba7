"""Argument checks shared by the verbs. Each raises ValidationError naming
the argument and what is accepted, before anything touches the file."""
from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

from .errors import EmbeddingDimensionError, ValidationError

MAX_TEXT_CHARS = 1_000_000
MAX_NAME_CHARS = 1_000
MAX_ID = 2**63 - 1


def text(value: Any, argument: str, *, max_chars: int = MAX_TEXT_CHARS) -> str:
    if not isinstance(value, str):
        raise ValidationError(argument, f"expected a string, got {type(value).__name__}", "non-blank text")
    if not value.strip():
        raise ValidationError(argument, "is empty or blank", "text with at least one visible character")
    if "\x00" in value:
        raise ValidationError(argument, "contains a NUL character", "text without NUL bytes")
    if len(value) > max_chars:
        raise ValidationError(argument, f"is {len(value)} characters long", f"at most {max_chars} characters")
    if not value.isascii():     # ASCII text has no surrogates: skip the trial encoding (hot in remember_many)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValidationError(argument, "contains unpaired surrogates", "valid Unicode text") from None
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
    for v in values:
        n = name(v, argument)
        seen.setdefault(name_key(n), n)
    return list(seen.values())


def identifier(value: Any, argument: str) -> int:
    """Ids arrive as int or decimal string (JSON clients send strings)."""
    if isinstance(value, bool):
        raise ValidationError(argument, "is a bool", "an id as int or decimal string")
    if isinstance(value, str):
        s = value.strip()
        if not s.isdigit() or not s.isascii():
            raise ValidationError(argument, f"{value!r} is not a decimal id", "an id as int or decimal string")
        if len(s.lstrip("0")) > 19:  # beyond any 64-bit id (and Python refuses int() of 4,300+ digits)
            raise ValidationError(argument, f"{s[:24]}... ({len(s)} digits) is out of range", "a positive 64-bit id")
        value = int(s)
    if not isinstance(value, int):
        raise ValidationError(argument, f"expected an id, got {type(value).__name__}",
                              "an id as int or decimal string")
    if value <= 0 or value > MAX_ID:
        shown = str(value) if value.bit_length() <= 64 else f"an integer of {value.bit_length()} bits"
        raise ValidationError(argument, f"{shown} is out of range", "a positive 64-bit id")
    return value


def tenant(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("tenant", f"expected an int, got {type(value).__name__}",
                              "an integer from 0 to 2**63-1")
    if value < 0 or value > MAX_ID:
        raise ValidationError("tenant", f"{value} is out of range", "an integer from 0 to 2**63-1")
    return value


def positive_int(value: Any, argument: str, *, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(argument, f"expected an int, got {type(value).__name__}", "a positive integer")
    if value <= 0:
        raise ValidationError(argument, f"{value} is not positive", "a positive integer")
    if maximum is not None and value > maximum:
        raise ValidationError(argument, f"{value} is too large", f"at most {maximum}")
    return value


def finite_number(value: Any, argument: str, *, low: float | None = None, high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(argument, f"expected a number, got {type(value).__name__}", "a finite number")
    try:
        f = float(value)
    except OverflowError:  # an int beyond any float: typed like infinity, not Python's own error
        raise ValidationError(argument, "is beyond the float range", "a finite number") from None
    if not math.isfinite(f):
        raise ValidationError(argument, f"{value} is not finite", "a finite number")
    if (low is not None and f < low) or (high is not None and f > high):
        raise ValidationError(argument, f"{value} is out of range", f"a number from {low} to {high}")
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
    if not isinstance(values, (list, tuple, set, frozenset)) or not values:
        raise ValidationError(argument, "expected a non-empty list of kinds", "a list of strings, or None")
    return sorted({name(v, argument) for v in values})


def one_of(value: Any, argument: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValidationError(argument, f"{value!r} is not allowed", ", ".join(map(repr, allowed)))
    return value


def ids(values: Iterable[Any], argument: str) -> list[int]:
    return [identifier(v, argument) for v in values]
