"""jaxpmac's two uses of JAX internals (``jax._src``), the only module that has any.

Both are registrations that JAX makes for its own key types and has no public function for:

* :func:`register_prng_name`: JAX resolves ``impl="<name>"`` only through a private registry of
  implementations, and checkpointing libraries (orbax) restore a typed key by that name;
* :func:`register_export_dtype`: ``jax.export`` serializes an array's dtype as a number from
  a private table, which JAX's own key types join the same way.

Each returns whether it registered, so a jax whose internals moved loses only what it enables.
"""

from __future__ import annotations


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
