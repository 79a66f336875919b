"""``state_of``: the :class:`RNGState` that a ``jax.random`` key of ``jaxpmac.prng_impl`` names.

A key holds the open hash of its message (``_jax_keys``), not the message: the nonce and static
labels went into the sum, and how many words the last block holds is a value, not structure.
So the state of a key is a :class:`RNGState` of its own kind, :class:`KeyState`, whose one leaf
is the key's data:

* drawing finishes the hash as ``jax.random.bits`` does, so every sampler draws what it draws
  from the state the key was made of (``state_of(as_jax_key(s))`` and ``s``), except where a
  sampler reads a static sub-stream (below);
* :meth:`KeyState.split` appends dynamic words as ``jax.random.fold_in`` does (a ``KeyState``
  again, and ``as_jax_key`` gives the key back);
* :meth:`KeyState.split_static` cannot append to the static part, which the key has already
  hashed (PMAC's static tweaks depend on the number of labels). It starts a new message
  instead: ``key(KEY_STATE_NONCE).split_static(*labels).split(H_0, H_1, H_2, H_3, f)`` of the
  key's hash ``(f, H)``. Samplers that read sub-streams of ``split_static`` (gamma, beta, t, f,
  dirichlet, generalized_normal, poisson, binomial, multinomial, ball, a precise uniform) so
  draw fixed values from a key's state that differ from the original state's.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxpmac._cipher import _words as w
from jaxpmac._interop import _jax_keys
from jaxpmac._message import _inputs
from jaxpmac._message import _state
from jaxpmac._message._state import UID_ACCEPTS, RNGState

# The nonce of the messages a key's state starts for static labels: "key-stat" in ASCII. Any
# nonce is some seed's, so this separates those messages from a user's by the 256-bit hash
# they also hold, not by the nonce alone.
KEY_STATE_NONCE = int.from_bytes(b"key-stat", "big")

STATE_OF_ACCEPTS = ("a typed jax.random key of jaxpmac.prng_impl (dtype key<pmac>: from "
                    "jaxpmac.as_jax_key, jax.random.key(seed, impl='pmac'), and their "
                    "split/fold_in), of any shape, traced or not")


def _static_words(pairs) -> tuple[int, ...]:
    return tuple(int(p.hi) << 32 | int(p.lo) for p in pairs)


@jax.tree_util.register_pytree_node_class
class KeyState(RNGState):
    """The state a ``jax.random`` key of ``jaxpmac.prng_impl`` names (see :func:`state_of`)."""

    __slots__ = ("_data",)

    def __init__(self, data):  # noqa: D107  (private: use jaxpmac.state_of)
        self._data = data      # the key's uint32[..., 19] data, traced or not

    # -- pytree: the key's data is the one leaf (batched by vmap like a key's) ----------------
    def tree_flatten(self):
        return (self._data,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0])

    def _one(self, what: str):
        data = self._data
        if getattr(data, "shape", None) != _jax_keys.KEY_SHAPE:
            raise ValueError(
                f"{what} needs the state of one key, but this state holds keys of shape "
                f"{tuple(data.shape[:-1])}: map over them with jax.vmap (the state is a "
                f"pytree whose leaf has the keys' shape in front)")
        return data

    @property
    def jax_key_data(self):
        """The key's data (what :func:`jaxpmac.as_jax_key` wraps back into the key)."""
        return self._data

    # -- deriving -------------------------------------------------------------------------
    def split(self, *uids) -> RNGState:
        """Appends dynamic words, as :meth:`RNGState.split` (and ``jax.random.fold_in``)."""
        data = self._one("split")
        for position, uid in enumerate(uids):
            for word in _inputs.words_of(uid, name=f"split argument {position}",
                                         allow_vector=True, accepts=UID_ACCEPTS):
                data = _jax_keys._append_word(jnp.asarray(data), w.to_pair(word))
        return KeyState(data)

    def split_static(self, *labels) -> RNGState:
        """A new message for static labels: ``key(KEY_STATE_NONCE).split_static(*labels)``
        then this state's hash ``H_0..H_3, f`` as dynamic words (see the module's docstring:
        a key has hashed its static part, so it cannot take more labels)."""
        final_tweak, h = self.message_hash()
        return _state.with_words(RNGState(KEY_STATE_NONCE).split_static(*labels),
                                 (*h, final_tweak))

    # -- hashing ----------------------------------------------------------------------------
    def message_hash(self):
        """``(f, H)`` as for :meth:`RNGState.message_hash`: static ints where the key is
        concrete, else dynamic ``Pair`` words (``f`` too: the key's word count is a value)."""
        data = self._one("drawing")
        if _inputs.is_traced(data):
            return _jax_keys._message_hash(data)
        final_tweak, h = _jax_keys._message_hash(jnp.asarray(data))
        return _static_words((final_tweak,))[0], _static_words(h)

    def partial_hash(self):
        raise TypeError("the state of a jax.random key holds the key's data, not a partial "
                        "hash: jaxpmac.as_jax_key(state) gives the key back")

    @property
    def is_static(self) -> bool:
        return not _inputs.is_traced(self._data)

    def _message(self) -> tuple:
        return ("key", tuple(np.asarray(self._data).reshape(-1).tolist()))

    def __eq__(self, other) -> bool:
        """Concrete states of keys with the same data are equal; otherwise as for
        :class:`RNGState` (a key's state never equals a state from ``jaxpmac.key``)."""
        if not isinstance(other, KeyState):
            return NotImplemented if not isinstance(other, RNGState) else False
        return self is other or (self.is_static and other.is_static
                                 and self._message() == other._message())

    def __hash__(self) -> int:
        return hash(self._message()) if self.is_static else id(self)

    def __repr__(self) -> str:
        shape = tuple(self._data.shape[:-1])
        where = "traced" if _inputs.is_traced(self._data) else "concrete"
        return f"RNGState(of a jax.random key<pmac>, {where}, key shape {shape})"


def state_of(key: jax.Array) -> RNGState:
    """The :class:`RNGState` that a ``jax.random`` key of ``jaxpmac.prng_impl`` names.

    The way back from :func:`as_jax_key`: code that is handed a key (Flax NNX ``Rngs``,
    Equinox, NumPyro) draws jaxpmac's fixed values with ``jp.normal(jp.state_of(key), ...)``.
    A state of a key draws what the key's state draws: ``jp.bits(state_of(k), shape)`` is
    ``jax.random.bits(k, shape)``, and ``state_of(as_jax_key(s))`` draws as ``s`` in every
    sampler that reads only its state's stream. Its ``split`` appends dynamic words as
    ``jax.random.fold_in`` does; ``split_static``, and so the samplers that read a static
    sub-stream (``gamma``, ``beta``, ``dirichlet``, ``t``, ``f``, ``generalized_normal``,
    ``poisson``, ``binomial``, ``multinomial``, ``ball``, ``uniform`` with ``precise=True``),
    start a message of their own from the key's hash (a key holds no labels to append to):
    fixed values, but not those of ``s``. ``jaxpmac.hail`` functions need a concrete key.

    Works under ``jit`` and ``vmap`` on traced keys. A key array of shape ``S`` gives one
    state whose leaf has ``S`` in front (a batch of states, as ``jax.vmap(jp.key)(seeds)``):
    ``jax.vmap`` over it draws per key; drawing from it directly is a ValueError.

    Args:
        key: a typed key array of ``jaxpmac.prng_impl`` (``key<pmac>``).

    Returns:
        An :class:`RNGState`; ``as_jax_key(state_of(k))`` is ``k`` (the same key data).

    Raises:
        TypeError: for any other key (e.g. JAX's default ``threefry2x32``), raw key data or
            a non-key.

    Example:
        >>> import jax, jax.numpy as jnp, jaxpmac as jp
        >>> s = jp.key(42).split_static("dropout")
        >>> k = jax.random.fold_in(jp.as_jax_key(s), 3)
        >>> bool((jp.normal(jp.state_of(k), (4,)) == jp.normal(s.split(3), (4,))).all())
        True
        >>> keys = jax.random.split(jp.as_jax_key(s), 5)
        >>> jax.vmap(lambda t: jp.uniform(t, (2,)))(jp.state_of(keys)).shape
        (5, 2)
    """
    key = _jax_keys.check_key(key, name="state_of key", accepts=STATE_OF_ACCEPTS)
    return KeyState(jax.random.key_data(key))
