"""What differs between the jax versions jaxpmac supports, in one place.

The implicit pass reads the parameters of ``scan`` and ``while`` equations, which JAX spells
differently across versions and has no public helper for:

* jax <= 0.10: ``scan`` has ``num_consts`` and ``num_carry``;
* jax >= 0.11: ``scan`` has ``ft_in``, a flat tree of its operands grouped as
  ``(consts, carry, xs)``, whose groups give the same counts.

Every reader here either returns what the pass needs or raises :class:`UnreadableEquation`,
which says which primitive, which jax and what to do -- never a ``KeyError`` from inside the pass.

It also holds jaxpmac's two uses of JAX internals, both registrations that JAX makes for its
own key types and has no public function for:

* :func:`register_prng_name`: JAX resolves ``impl="<name>"`` only through a private registry of
  implementations, and checkpointing libraries (orbax) restore a typed key by that name;
* :func:`register_export_dtype`: ``jax.export`` serializes an array's dtype as a number from
  a private table, which JAX's own key types join the same way.
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


def register_prng_name(spec) -> bool:
    """Make ``spec``'s name resolve to it wherever JAX accepts an implementation's name.

    ``jax.random.key(seed, impl="pmac")`` and ``jax.random.wrap_key_data(data, impl="pmac")``
    look the name up in ``jax._src.random.prng.prngs``, which only JAX's own implementations
    join (``register_prng`` is not public). Orbax saves a typed key's implementation as
    ``str(jax.random.key_impl(key))`` and restores it by that name, so without this a checkpoint
    holding jaxpmac keys saves but cannot be restored. Returns whether the name is registered:
    on a jax whose internals moved it is not, and only lookups by name fail (with JAX's own
    "unrecognized PRNG implementation"); passing ``impl=jaxpmac.prng_impl`` always works.
    """
    try:
        from jax._src.random import prng as jax_prng
    except ImportError:
        return False
    registry = getattr(jax_prng, "prngs", None)
    impl = getattr(spec, "_impl", None)    # define_prng_impl wraps the PRNGImpl in a PRNGSpec
    if (not isinstance(registry, dict) or not callable(getattr(jax_prng, "register_prng", None))
            or not isinstance(getattr(impl, "name", None), str)):
        return False
    if registry.get(impl.name) is not impl:
        registry.pop(impl.name, None)   # a reloaded jaxpmac replaces its earlier impl
        jax_prng.register_prng(impl)
    return True


# The number ``jax.export`` stores for the dtype of a jaxpmac key. Its format holds a dtype as
# an int8 enum: JAX's own dtypes are 0..29 (jax 0.12; key<fry>, key<rbg> and key<unsafe_rbg>
# are 27..29), so 100 leaves room for JAX's future ones.
EXPORT_DTYPE_KIND = 100


def register_export_dtype(dtype, kind: int = EXPORT_DTYPE_KIND) -> bool:
    """Let ``jax.export`` serialize arrays of ``dtype`` (a typed key's dtype) as ``kind``.

    JAX registers its own key types the same way (``serialization.register_dtype_kind``), so an
    exported function whose arguments or results are jaxpmac keys serializes, and deserializes
    in any process that has imported jaxpmac. Returns whether it is registered: not on a jax
    whose internals moved, nor where ``kind`` already names another dtype (never taken from
    JAX); then serializing such a function fails with JAX's own ``KeyError``, and a key still
    crosses an export as ``jax.random.key_data``.
    """
    try:
        from jax._src.export import serialization
    except ImportError:
        return False
    table = getattr(serialization, "_dtype_kind_to_dtype", None)
    register = getattr(serialization, "register_dtype_kind", None)
    if not isinstance(table, dict) or not callable(register):
        return False
    registered = table.get(kind)
    if registered is not None and str(registered) != str(dtype):
        return False
    register(dtype, kind)   # a reloaded jaxpmac replaces its earlier dtype
    return True
