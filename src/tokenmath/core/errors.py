"""The errors a user can cause: each carries one line that says what was wrong and what to do."""

import difflib

__all__ = ["TokenmathError", "InputError", "CatalogError", "not_one_of"]


class TokenmathError(ValueError):
    """Base of every error the CLI reports as one line with a non-zero exit."""


class InputError(TokenmathError):
    """An impossible or absurd input value (negative batch, zero chips, unknown precision...)."""


class CatalogError(TokenmathError):
    """A catalog name that does not exist, or an entry that does not validate; one line for the user."""


def not_one_of(option: str, value: str, allowed) -> InputError:
    """`option value` is not a choice: one line with the nearest choice first (the same name in another case,
    else the closest spelling: 'FP8' -> fp8, 'fp8_e4m3' -> fp8), then every choice."""
    allowed = list(allowed)
    low = {a.lower(): a for a in allowed}
    near = low.get(value.lower()) or next(iter(difflib.get_close_matches(value.lower(), list(low), n=1, cutoff=0.6)
                                               or [a for a in low if a in value.lower()][:1]), None)
    if near is None:
        return InputError(f"{option} {value!r} is not one of {', '.join(allowed)}")
    return InputError(f"{option} {value!r}: did you mean {low[near]}? (one of {', '.join(allowed)})")
