"""``RNGState``: a PMAC message (nonce, static words, dynamic words) as a JAX pytree.

docs/spec.md section 2. Everything known where a state is used is folded into Python ints, so
the compiled program sees constants: a concrete nonce, the static labels, every dynamic block
whose words are all concrete. As a pytree, only the labels and the word counts are aux data;
the words are leaves (see ``RNGState.tree_flatten``), so crossing a ``jit`` boundary never
compiles a program per seed or uid. Appending a dynamic word only records it until a block of
four is full; the fifth word encrypts that block (at trace time if it is all concrete).
"""

from __future__ import annotations

import functools
import json
from typing import Optional, Sequence

import jax
import jax.export
import jax.numpy as jnp
import numpy as np

from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._lowering import _encrypt
from jaxpmac._message import _inputs

WORDS_PER_BLOCK = 4
ALL_ONES = w.MASK64
STATIC_TWEAK_WORD = ALL_ONES          # -1: tweak word 0 of static blocks
FINAL_TWEAK_FULL = ALL_ONES - 1       # -2: the last block held 4 words
FINAL_TWEAK_PADDED = ALL_ONES - 2     # -3: the last block was padded with 1, 0, ...

UID_ACCEPTS = ("Python ints in [-2**63, 2**64), integer scalar arrays or 1-D integer arrays "
               "(traced or not)")
SEED_ACCEPTS = "a Python int in [-2**63, 2**64) or an integer scalar array (traced or not)"


def _xor_words(a: Sequence[w.Word], b: Sequence[w.Word]) -> tuple[w.Word, ...]:
    return tuple(w.xor(x, y) for x, y in zip(a, b))


def _static_tweak(block_index: int, n_labels: int) -> tuple[int, int]:
    return (STATIC_TWEAK_WORD, block_index + (((n_labels - 1) & w.MASK32) << 32))


def _static_blocks(message: Sequence[w.Word]) -> list[tuple[w.Word, ...]]:
    padded = list(message) + [0] * (-len(message) % WORDS_PER_BLOCK)
    return [tuple(padded[i:i + WORDS_PER_BLOCK]) for i in range(0, len(padded), WORDS_PER_BLOCK)]


def full_block_term(block_index: w.Word, words: Sequence[w.Word]) -> tuple[w.Word, ...]:
    """What a full dynamic block ``D_b`` adds (XOR) to the hash: ``E(K, (b, 0), D_b)``."""
    return _encrypt.encrypt_words(_threefish.GENERATOR_KEY, (block_index, 0), words, native=False)


def last_block(words: Sequence[w.Word], count) -> tuple[w.Word, tuple[w.Word, ...]]:
    """``(f, block)``: the final tweak word and the last block as the hash takes it.

    A block of four words is taken as it is, under ``f = FINAL_TWEAK_FULL``; a shorter one is
    padded with a word 1 and then zeros, under ``f = FINAL_TWEAK_PADDED``. ``count`` is how
    many words the block holds: an int, with ``words`` those words (an ``RNGState``), or a
    traced ``uint32``, with ``words`` four ``Pair``s that are zero from ``count`` on (a
    ``jax.random`` key's data, whose count is a value, not structure).
    """
    if isinstance(count, int):
        if count == WORDS_PER_BLOCK:
            return FINAL_TWEAK_FULL, tuple(words)
        return FINAL_TWEAK_PADDED, tuple((*words, 1, 0, 0, 0)[:WORDS_PER_BLOCK])
    index = jnp.arange(WORDS_PER_BLOCK, dtype=jnp.uint32)
    pad_lo = (index == count).astype(jnp.uint32)
    block = tuple(w.Pair(x.hi, x.lo | pad_lo[i]) for i, x in enumerate(words))
    tweak_lo = jnp.where(count == WORDS_PER_BLOCK, np.uint32(FINAL_TWEAK_FULL & w.MASK32),
                         np.uint32(FINAL_TWEAK_PADDED & w.MASK32))
    return w.Pair(jnp.uint32(FINAL_TWEAK_FULL >> 32), tweak_lo), block


@functools.lru_cache(maxsize=4096)
def _static_sum_of_labels(nonce: Optional[int], labels: tuple[int, ...]) -> tuple[int, ...]:
    """XOR of the encrypted static blocks whose words are all static (all of them when the nonce
    is static; all but block 0 when ``nonce`` is None, i.e. traced)."""
    total = (0, 0, 0, 0)
    for j, block in enumerate(_static_blocks([0 if nonce is None else nonce, *labels])):
        if nonce is None and j == 0:
            continue
        total = _xor_words(total, _threefish.encrypt(
            _threefish.GENERATOR_KEY, _static_tweak(j, len(labels)), block))
    return total


def _leaf(word: w.Word) -> w.Pair:
    """A word as pytree leaves: static words become pairs of 0-d ``uint32`` arrays (arrays, not
    numpy scalars: checkpointers such as orbax's accept arrays as leaves of a restore target)."""
    if not w.is_static(word):
        return word
    hi, lo = w.pair_const(word)
    return w.Pair(np.asarray(hi), np.asarray(lo))


def _is_concrete_scalar(x) -> bool:
    if isinstance(x, int) and not isinstance(x, bool):
        return 0 <= x <= w.MASK32          # a leaf read back as a Python int (a checkpoint)
    return (isinstance(x, (np.ndarray, np.generic, jax.Array))
            and not _inputs.is_traced(x) and np.ndim(x) == 0
            and np.issubdtype(x.dtype, np.unsignedinteger))


def _word_of_leaf(leaf):
    """The word of a leaf pair: a static int where both halves are concrete scalars, else the
    pair as it is (traced, batched, or a placeholder JAX put in a leaf's place)."""
    if isinstance(leaf, w.Pair) and _is_concrete_scalar(leaf.hi) and _is_concrete_scalar(leaf.lo):
        return (int(leaf.hi) << 32) | int(leaf.lo)
    return leaf


@jax.tree_util.register_pytree_node_class
class RNGState:
    """A point of jaxpmac's family of independent random streams (a PMAC message).

    Make one with :func:`jaxpmac.key`, derive others with :meth:`split` (dynamic words: loop and
    example indices) and :meth:`split_static` (static labels), and draw with :func:`jaxpmac.bits`.
    States are immutable; deriving never changes the parent. A state is a pytree: it passes
    through ``jit``, ``vmap``, ``scan``, ``cond``, ``checkpoint`` and ``shard_map``.

    Example:
        >>> import jaxpmac as jp
        >>> s = jp.key(42)
        >>> a = jp.bits(s.split(0, 1), (2,))
        >>> bool((a == jp.bits(s.split(0).split(1), (2,))).all())
        True
    """

    __slots__ = ("_nonce", "_labels", "_dyn_static", "_dyn_traced", "_n_full_blocks", "_pending")

    def __init__(self, nonce: w.Word, labels: tuple[int, ...] = (),
                 dyn_static: tuple[int, ...] = (0, 0, 0, 0),
                 dyn_traced: Optional[tuple[w.Pair, ...]] = None, n_full_blocks: int = 0,
                 pending: tuple[w.Word, ...] = ()):
        # Private: use jaxpmac.key(). Fields are the parts of SPEC section 2's message:
        self._nonce = nonce                  # int, or a Pair when traced
        self._labels = labels                # static words s_1..s_k
        self._dyn_static = dyn_static        # XOR of encrypted all-concrete full dynamic blocks
        self._dyn_traced = dyn_traced        # XOR of encrypted full blocks with a traced word
        self._n_full_blocks = n_full_blocks  # full dynamic blocks so far (the next block index)
        self._pending = pending              # the last block's words (0..4), not yet encrypted

    # -- pytree ---------------------------------------------------------------------------
    # Aux data is structure only (the static labels, how many dynamic words): a seed or a uid is
    # never aux data, so a state passed into a jitted function compiles one program for every
    # seed and uid, as a jax.random key does. Every word is a leaf: the nonce, the last block's
    # words and, once a block is full, the XOR of the encrypted full blocks. Leaves that come
    # back concrete scalars (outside any trace) are static words again, so what is concrete
    # is still folded at trace time inside a function that builds or receives it concretely.
    def tree_flatten(self):
        words = (self._nonce, *self._pending, *self._dynamic_sum())
        return tuple(_leaf(x) for x in words), (self._labels, len(self._pending),
                                                self._n_full_blocks)

    @classmethod
    def tree_unflatten(cls, aux, children):
        labels, n_pending, n_full_blocks = aux
        nonce, *words = (_word_of_leaf(x) for x in children)
        pending, dynamic_sum = tuple(words[:n_pending]), tuple(words[n_pending:])
        if all(w.is_static(x) for x in dynamic_sum):
            dyn_static, dyn_traced = dynamic_sum or (0, 0, 0, 0), None
        else:
            dyn_static, dyn_traced = (0, 0, 0, 0), dynamic_sum
        return cls(nonce, labels, dyn_static, dyn_traced, n_full_blocks, pending)

    def _dynamic_sum(self) -> tuple[w.Word, ...]:
        """DynSum of SPEC section 2 (no words while no block is full)."""
        if not self._n_full_blocks:
            return ()
        if self._dyn_traced is None:
            return self._dyn_static
        return _xor_words(self._dyn_static, self._dyn_traced)

    def _replace(self, **changes) -> "RNGState":
        fields = {name.lstrip("_"): getattr(self, name) for name in self.__slots__}
        fields.update(changes)
        return RNGState(**fields)

    # -- deriving states ------------------------------------------------------------------
    def split(self, *uids) -> "RNGState":
        """Appends dynamic words (SPEC section 2), in order.

        Args:
            *uids: each a Python int in ``[-2**63, 2**64)``, an integer scalar array (one word)
                or a 1-D integer array (one word per element), traced or concrete. Signed
                values sign-extend to 64 bits, so ``split(-1) == split(2**64 - 1)``.

        Returns:
            A new state; ``s.split(a, b)`` equals ``s.split(a).split(b)``.

        Example:
            >>> import jax, jax.numpy as jnp, jaxpmac as jp
            >>> s = jp.key(0)
            >>> noise = jax.vmap(lambda i: jp.bits(s.split(i), (4,)))(jnp.arange(3))
            >>> noise.shape
            (3, 4)
        """
        state = self
        for position, uid in enumerate(uids):
            for word in _inputs.words_of(uid, name=f"split argument {position}",
                                         allow_vector=True, accepts=UID_ACCEPTS):
                state = state._append_dynamic(word)
        return state

    def _append_dynamic(self, word: w.Word) -> "RNGState":
        if len(self._pending) < WORDS_PER_BLOCK:
            return self._replace(pending=self._pending + (word,))
        # The pending block is full and a fifth word arrives: it is a full block D_b now.
        b = self._n_full_blocks
        encrypted = full_block_term(b, self._pending)
        changes = dict(n_full_blocks=b + 1, pending=(word,))
        if all(w.is_static(x) for x in encrypted):
            changes["dyn_static"] = _xor_words(self._dyn_static, encrypted)
        elif self._dyn_traced is None:
            changes["dyn_traced"] = encrypted
        else:
            changes["dyn_traced"] = _xor_words(self._dyn_traced, encrypted)
        return self._replace(**changes)

    def split_static(self, *labels) -> "RNGState":
        """Appends static words: labels known at trace time (SPEC section 2).

        Args:
            *labels: ints in ``[-2**63, 2**64)`` (one word each) or strs (a length word, then
                the UTF-8 bytes 8 per word). Traced values are a TypeError: use :meth:`split`.

        Example:
            >>> import jaxpmac as jp
            >>> jp.bits(jp.key(0).split_static("dropout", 3), (2,)).shape
            (2,)
        """
        words = []
        for position, label in enumerate(labels):
            words.extend(_inputs.label_words(label, name=f"label {position}"))
        return self._replace(labels=self._labels + tuple(words))

    # -- hashing ----------------------------------------------------------------------------
    def partial_hash(self) -> tuple[tuple[w.Word, ...], int, tuple[w.Word, ...]]:
        """``(StaticSum ^ DynSum, number of full dynamic blocks, last block's words)``.

        The hash before its last block (SPEC section 2): what a message still open to further
        dynamic words carries (``jaxpmac.as_jax_key`` packs it into a key). Words are static
        ints where everything is concrete, else dynamic ``Pair`` words.
        """
        static_nonce = self._nonce if w.is_static(self._nonce) else None
        total = _static_sum_of_labels(static_nonce, self._labels)
        if static_nonce is None:
            block0 = _static_blocks([self._nonce, *self._labels])[0]
            total = _xor_words(total, _encrypt.encrypt_words(
                _threefish.GENERATOR_KEY, _static_tweak(0, len(self._labels)), block0,
                native=False))
        total = _xor_words(total, self._dyn_static)
        if self._dyn_traced is not None:
            total = _xor_words(total, self._dyn_traced)
        return total, self._n_full_blocks, self._pending

    def message_hash(self) -> tuple[int, tuple[w.Word, ...]]:
        """``(f, H)``: the final tweak word and the hash of SPEC section 2 (static ints where
        everything is concrete, else dynamic ``Pair`` words)."""
        total, _, _ = self.partial_hash()
        final_tweak, last = last_block(self._pending, len(self._pending))
        return final_tweak, _xor_words(total, last)

    @property
    def is_static(self) -> bool:
        """True when every word of the message was known at trace time."""
        words = (self._nonce, *self._pending)
        return self._dyn_traced is None and all(w.is_static(x) for x in words)

    def _message(self) -> tuple:
        return (self._nonce, self._labels, self._dyn_static, self._n_full_blocks, self._pending)

    def __eq__(self, other) -> bool:
        """Concrete states are equal when they are the same message (so they draw the same
        streams): ``key(0).split(1, 2) == key(0).split(1).split(2)``. A state with traced
        words equals only itself."""
        if not isinstance(other, RNGState):
            return NotImplemented
        if self is other:
            return True
        return self.is_static and other.is_static and self._message() == other._message()

    def __hash__(self) -> int:
        return hash(self._message()) if self.is_static else id(self)

    def __repr__(self) -> str:
        nonce = hex(self._nonce) if w.is_static(self._nonce) else "<traced>"
        n_dynamic = WORDS_PER_BLOCK * self._n_full_blocks + len(self._pending)
        return (f"RNGState(nonce={nonce}, static_words={len(self._labels)}, "
                f"dynamic_words={n_dynamic})")


# What jaxpmac's other packages read of a state beyond its public methods (module functions,
# so that RNGState's public surface stays what users call).
def words_in_last_block(state: RNGState) -> int:
    """How many dynamic words the last block of ``state`` holds (0 to 4): that block is not
    encrypted yet, so a word appended there changes the hash only through it
    (``_samplers._hashed.family``)."""
    return len(state._pending)


def with_words(state: RNGState, words: Sequence[w.Word]) -> RNGState:
    """``state`` with ``words`` appended as dynamic words: words already (static ints or
    ``Pair``s), so unchecked, unlike :meth:`RNGState.split`'s user input."""
    for word in words:
        state = state._append_dynamic(word)
    return state


# jax.export serializes a state argument by its pytree structure: the aux data (labels and word
# counts, all ints) as JSON; the words are ordinary uint32 arguments.
def _aux_to_json(aux) -> bytes:
    labels, n_pending, n_full_blocks = aux
    return json.dumps([list(labels), n_pending, n_full_blocks]).encode()


def _aux_from_json(data: bytes):
    labels, n_pending, n_full_blocks = json.loads(data)
    return tuple(labels), n_pending, n_full_blocks


jax.export.register_pytree_node_serialization(
    RNGState, serialized_name="jaxpmac.RNGState", serialize_auxdata=_aux_to_json,
    deserialize_auxdata=_aux_from_json)
jax.export.register_namedtuple_serialization(w.Pair, serialized_name="jaxpmac.Pair")


def key(seed) -> RNGState:
    """The root state for ``seed``: the message's nonce (SPEC section 2).

    Args:
        seed: a Python int in ``[-2**63, 2**64)`` or an integer scalar array, traced or not.
            A concrete seed is folded at trace time; a state passed as a ``jit`` argument is
            traced, so one compiled program serves every seed.

    Example:
        >>> import jaxpmac as jp
        >>> jp.key(42)
        RNGState(nonce=0x2a, static_words=0, dynamic_words=0)
    """
    (nonce,) = _inputs.words_of(seed, name="key seed", allow_vector=False, accepts=SEED_ACCEPTS)
    return RNGState(nonce)
