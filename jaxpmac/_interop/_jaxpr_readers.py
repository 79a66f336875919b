"""Readers of the jaxpr equations whose parameters differ between the jax versions jaxpmac
supports.

The implicit pass reads the parameters of ``scan`` and ``while`` equations, which JAX spells
differently across versions and has no public helper for:

* jax <= 0.10: ``scan`` has ``num_consts`` and ``num_carry``;
* jax >= 0.11: ``scan`` has ``ft_in``, a flat tree of its operands grouped as
  ``(consts, carry, xs)``, whose groups give the same counts.

Every reader here either returns what the pass needs or raises :class:`UnreadableEquation`,
which says which primitive, which jax and what to do -- never a ``KeyError`` from inside the pass.
"""

from __future__ import annotations

import jax

# The jax versions CI tests; pyproject.toml and the README state the same range.
OLDEST_TESTED_JAX = "0.10.2"
NEWEST_TESTED_JAX = "0.12.0.1"


class UnreadableEquation(NotImplementedError):
    """An equation whose parameters this jaxpmac cannot read on the installed jax."""


def unreadable(primitive: str, params, expected: str) -> UnreadableEquation:
    """The error for a ``primitive`` equation whose ``params`` lack what the pass reads."""
    return UnreadableEquation(
        f"jaxpmac.randomized cannot read the parameters of a '{primitive}' equation on jax "
        f"{jax.__version__}: expected {expected}, found {sorted(params)}. jaxpmac is tested on "
        f"jax {OLDEST_TESTED_JAX} to {NEWEST_TESTED_JAX}; install a jax in that range "
        f"(pip install 'jax<={NEWEST_TESTED_JAX}') or a jaxpmac release that supports jax "
        f"{jax.__version__}, and please report this message.")


def scan_layout(params) -> tuple[int, int]:
    """``(number of consts, number of carries)`` of a ``scan`` equation's operands; the rest are
    the scanned ``xs``. The body's inputs are ``consts + carry + xs`` and its outputs
    ``carry + ys``."""
    if "num_consts" in params and "num_carry" in params:
        return int(params["num_consts"]), int(params["num_carry"])
    groups = params.get("ft_in")
    unpack = getattr(groups, "unpack", None)
    if unpack is not None:
        parts = unpack()
        if len(parts) == 3:
            consts, carry, _ = parts
            return len(consts), len(carry)
    raise unreadable("scan", params, "'num_consts' and 'num_carry', or 'ft_in' of three groups")


def while_layout(params) -> tuple[int, int]:
    """``(number of cond consts, number of body consts)`` of a ``while`` equation; the rest of
    its operands are the carry."""
    try:
        return int(params["cond_nconsts"]), int(params["body_nconsts"])
    except KeyError:
        raise unreadable("while", params, "'cond_nconsts' and 'body_nconsts'") from None


def scan_options(params) -> dict:
    """``length``, ``reverse`` and ``unroll`` of a ``scan`` equation, as ``lax.scan`` takes them."""
    try:
        return {name: params[name] for name in ("length", "reverse", "unroll")}
    except KeyError:
        raise unreadable("scan", params, "'length', 'reverse' and 'unroll'") from None
