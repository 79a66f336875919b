"""jaxpmac streams as typed ``jax.random`` keys: ``prng_impl``, ``as_jax_key``, ``fold_in_uids``.

A key's data is an open PMAC hash (docs/spec.md section 2) packed into ``uint32[19]``: the XOR of
every encrypted block so far (StaticSum ^ DynSum), the number of full dynamic blocks, and the
last block's words with their count. That is exactly what a message still open to more dynamic
words carries, so ``fold_in`` appends a dynamic word (an encryption only when a fifth word
arrives in a block, as in :meth:`RNGState.split`), ``split`` appends the child's index, and
``random_bits`` finishes the hash and reads the state's stream. The values therefore depend on
the message alone: ``jax.random.bits(as_jax_key(s), shape) == jaxpmac.bits(s, shape)``.
"""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend import random as jex_random

from jaxpmac._cipher import _stream, _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._interop import _jax_internals
from jaxpmac._lowering import _rolled, _tpu_kernel, _window
from jaxpmac._lowering._encrypt import words_on_lanes
from jaxpmac._lowering._draw_boundary import ends_draw
from jaxpmac._lowering._platform import by_platform
from jaxpmac._message import _inputs
from jaxpmac._samplers import _bits
from jaxpmac._samplers import _sampler_args
from jaxpmac._message._state import (FINAL_TWEAK_FULL, FINAL_TWEAK_PADDED, UID_ACCEPTS,
                                     WORDS_PER_BLOCK, RNGState, key as _state_key)

# Layout of a key's data: each 64-bit word is two uint32 entries, high half first.
_SUM = slice(0, 8)            # StaticSum ^ DynSum: 4 words
_N_FULL = slice(8, 10)        # number of full dynamic blocks (the next block's tweak word)
_PENDING = slice(10, 18)      # the last block's words, zero beyond the count: 4 words
_COUNT = 18                   # how many of the last block's words are set, 0..4
KEY_SHAPE = (19,)

KEY_ACCEPTS = "a typed jax.random key of jaxpmac.prng_impl (from jaxpmac.as_jax_key)"


# -- packing ------------------------------------------------------------------------------
def _pack_words(words) -> jax.Array:
    pairs = [w.to_pair(x) for x in words]
    return jnp.stack([half for p in pairs for half in (p.hi, p.lo)])


def _unpack_words(data: jax.Array) -> tuple[w.Pair, ...]:
    return tuple(w.Pair(data[i], data[i + 1]) for i in range(0, data.shape[0], 2))


def _key_data_of_state(state: RNGState) -> jax.Array:
    """The ``uint32[19]`` data of a state's open hash (traced where the state is)."""
    blocks_sum, n_full_blocks, pending = state.partial_hash()
    padded = tuple(pending) + (0,) * (WORDS_PER_BLOCK - len(pending))
    if all(w.is_static(x) for x in (*blocks_sum, *padded)):
        # All concrete: a numpy constant, so nothing reaches the compiled program.
        words = (*blocks_sum, n_full_blocks, *padded)
        return np.array([half for x in words for half in (x >> 32, x & w.MASK32)]
                        + [len(pending)], np.uint32)
    return jnp.concatenate([_pack_words((*blocks_sum, n_full_blocks, *padded)),
                            jnp.full((1,), len(pending), jnp.uint32)])


# -- a few blocks' cipher -------------------------------------------------------------------
# A key's operations encrypt a few blocks at a time under tweaks ``(t0, c)``: a full dynamic block
# ``D_b`` under ``(b, 0)`` (a flush) and the output blocks ``c = 0, 1, ...`` of a small draw under
# ``(f, c)``. Both run here on the key's own layout: a block is ``uint32[8]``, each 64-bit word
# high half first, and so is each result. On a CPU the cipher is ``_rolled.encrypt_few_blocks``,
# a loop whose step is one kernel for a few blocks (the stream's rolled cipher, about five
# kernels a round, dominates programs that split and draw a few values many times, such as
# NumPyro's NUTS); on GPUs the blocks on lanes (``_lane_blocks``); on TPUs a kernel a block
# (``_kernel_blocks``).
#: Draws of up to this many output blocks (64 uint32 values) take this cipher; longer ones the
#: stream's (``_window.counter_stream``).
SMALL_DRAW_MAX_BLOCKS = 8


def _words64(halves: jax.Array) -> jax.Array:
    """``uint32`` halves on the key layout (high half first) as ``uint64`` words; x64 on."""
    pairs = halves.reshape(-1, 2).astype(jnp.uint64)
    return (pairs[:, 0] << np.uint64(32)) | pairs[:, 1]


# Jitted: by_platform traces its branch when it lowers it, so unjitted this was traced anew at
# every split, fold_in and small draw of a program; jitted, once per block count and lowered
# once per program (benchmarks/README.md, "NumPyro with a pmac key").
@partial(jax.jit, static_argnums=2)
def _rolled_blocks(t0: jax.Array, block: jax.Array, n_blocks: int) -> jax.Array:
    """The cipher on a CPU: ``t0`` a ``uint32[2]`` word, ``block`` ``uint32[8]``; blocks
    ``c = 0 .. n_blocks - 1`` under tweak ``(t0, c)``, ``uint32[n_blocks, 8]``."""
    with jax.enable_x64(True):
        out = _rolled.encrypt_few_blocks(_words64(t0), _words64(block), n_blocks)  # [n, 4]
        return jnp.stack([(out >> np.uint64(32)).astype(jnp.uint32),
                          out.astype(jnp.uint32)], axis=2).reshape(n_blocks, 8)


def _lane_blocks(t0: jax.Array, block: jax.Array, n_blocks: int) -> jax.Array:
    """The cipher on GPUs: the blocks on lanes (``_encrypt.words_on_lanes``), each ``uint64``
    word split into its halves by a bitcast, high half first: no concatenation of the words'
    halves, which XLA's GPU emitter computed once per ``uint32`` (a chain of ten ``split`` and
    ``fold_in`` compiled for minutes)."""
    with jax.enable_x64(True):
        (tweak_word,), block_words = _words64(t0), _words64(block)
        counter = jnp.arange(n_blocks, dtype=jnp.uint64)
        words = words_on_lanes(_threefish.GENERATOR_KEY, (tweak_word, counter),
                               [block_words[j] for j in range(WORDS_PER_BLOCK)])
        halves = lax.bitcast_convert_type(words, jnp.uint32)       # [n, 4, 2], low half first
        return halves[..., ::-1].reshape(n_blocks, 8)


def _kernel_blocks(t0: jax.Array, block: jax.Array, n_blocks: int) -> jax.Array:
    """The cipher on TPUs: each block in the one-block kernel that a draw's message hash uses
    there, the counter a static tweak word; the kernel's first column is the block on the key
    layout (``_tpu_kernel.encrypt_block_halves``). XLA's TPU compiler leaves a cipher of
    scalars unfused and compiles it slowly; the kernels all share one trace and compile in
    less time than threefry's key operations (benchmarks/README.md, "A framework's key
    operations on accelerators")."""
    tweak_word, words = w.Pair(t0[0], t0[1]), _unpack_words(block)
    return jnp.stack([_tpu_kernel.encrypt_block_halves(_threefish.GENERATOR_KEY,
                                                       (tweak_word, counter), words,
                                                       rounds=_threefish.ROUNDS)
                      for counter in range(n_blocks)])


def _encrypt_blocks(t0: jax.Array, block: jax.Array, n_blocks: int = 1) -> jax.Array:
    """``E(K, (t0, c), block)`` for ``c < n_blocks`` on the key layout: ``t0`` ``uint32[2]``,
    ``block`` ``uint32[8]``, the result ``uint32[n_blocks, 8]``."""
    def branch(encrypt):
        return lambda t0, block: encrypt(t0, block, n_blocks)
    return by_platform(t0, block, rolled=branch(_rolled_blocks),
                       elementwise=branch(_lane_blocks),
                       elementwise_pairs=branch(_kernel_blocks),
                       result=jax.ShapeDtypeStruct((n_blocks, 8), jnp.uint32))


# -- the implementation's operations (each on one key's data) ----------------------------
def _flush_full_block(data: jax.Array) -> jax.Array:
    """Adds a full last block to the sum and leaves an empty last block."""
    term = _encrypt_blocks(data[_N_FULL], data[_PENDING])[0]
    (n_full,) = _unpack_words(data[_N_FULL])
    return jnp.concatenate([data[_SUM] ^ term, _pack_words([w.add(n_full, 1)]),
                            jnp.zeros((9,), jnp.uint32)])


def _make_room(data: jax.Array) -> jax.Array:
    """The same open hash with room in its last block for one more word."""
    # A cond, so the encryption runs only when a fifth word arrives (under vmap it becomes a
    # select and runs always; the values are the same either way).
    return lax.cond(data[_COUNT] == WORDS_PER_BLOCK, _flush_full_block, lambda d: d, data)


def _place_word(data: jax.Array, word: w.Pair) -> jax.Array:
    """Writes ``word`` into the free slot of a last block that has room."""
    count = data[_COUNT]
    slot = jnp.arange(WORDS_PER_BLOCK, dtype=jnp.uint32) == count
    pending = data[_PENDING].reshape(WORDS_PER_BLOCK, 2)
    new = jnp.stack([jnp.asarray(word.hi, jnp.uint32), jnp.asarray(word.lo, jnp.uint32)])
    pending = jnp.where(slot[:, None], new[None, :], pending).reshape(-1)
    return jnp.concatenate([data[:_PENDING.start], pending, (count + 1)[None]])


def _append_word(data: jax.Array, word: w.Pair) -> jax.Array:
    return _place_word(_make_room(data), word)


def _message_hash(data: jax.Array) -> tuple[w.Pair, tuple[w.Pair, ...]]:
    """``(f, H)`` of the key's message, both dynamic ``Pair`` words (the count decides the
    padding)."""
    final_tweak, h = _message_hash_data(data)
    return w.Pair(final_tweak[0], final_tweak[1]), _unpack_words(h)


def _message_hash_data(data: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(f, H)`` of the key's message on the key layout (``uint32[2]``, ``uint32[8]``): the
    last block's words padded with a word 1 where it is not full (the count is a value)."""
    count = data[_COUNT]
    lo_slots = jnp.arange(2 * WORDS_PER_BLOCK, dtype=jnp.uint32)
    pad = (lo_slots == 2 * count + 1).astype(jnp.uint32)    # the low half of word ``count``
    h = data[_SUM] ^ data[_PENDING] ^ pad
    f_lo = jnp.where(count == WORDS_PER_BLOCK, np.uint32(FINAL_TWEAK_FULL & w.MASK32),
                     np.uint32(FINAL_TWEAK_PADDED & w.MASK32))
    return jnp.stack([jnp.uint32(FINAL_TWEAK_FULL >> 32), f_lo]), h


@jax.jit
def _seed_data(seed: jax.Array) -> jax.Array:
    # ``jax.random.key`` hands over an int32 (int64 with x64) scalar; jaxpmac.key sign-extends
    # it to the nonce word exactly as for ``jaxpmac.key(seed)``.
    return _key_data_of_state(_state_key(seed))


@jax.jit
def _fold_in_data(data: jax.Array, message: jax.Array) -> jax.Array:
    # ``jax.random.fold_in`` has already cast ``message`` to uint32 (see docs/interop.md):
    # the word is that value, zero-extended.
    message = jnp.asarray(message, jnp.uint32)
    return _append_word(data, w.Pair(jnp.zeros_like(message), message))


@partial(jax.jit, static_argnums=1)
def _split_data(data: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    # Child i (row-major flat index over ``shape``) is fold_in(key, i); the room is made once.
    room = _make_room(data)
    n = math.prod(shape)
    if n > 1 << 32:
        raise ValueError(f"jax.random.split with jaxpmac keys makes at most 2**32 keys, "
                         f"but was asked for shape {shape}")
    index = lax.iota(jnp.uint32, n)
    children = jax.vmap(lambda i: _place_word(room, w.Pair(jnp.zeros_like(i), i)))(index)
    return children.reshape(*shape, *KEY_SHAPE)


@partial(jax.jit, static_argnums=(1, 2))
@ends_draw
def _random_bits_data(data: jax.Array, bit_width: int, shape: tuple[int, ...]) -> jax.Array:
    dtype = jnp.dtype(f"uint{bit_width}")
    n = math.prod(shape)
    final_tweak, h = _message_hash_data(data)
    n_blocks = -(-n // _stream.elements_per_block(dtype))
    if n_blocks <= SMALL_DRAW_MAX_BLOCKS:
        # A few output blocks (NumPyro's and Flax's draws of a few values): their cipher alone.
        blocks = _encrypt_blocks(final_tweak, h, n_blocks)
        return jnp.concatenate([_block_elements(b, bit_width) for b in blocks])[:n].reshape(shape)
    native = _bits.use_native_words()
    final_tweak, h = w.Pair(final_tweak[0], final_tweak[1]), _unpack_words(h)
    if native:
        final_tweak, h = w.to_u64(final_tweak), tuple(w.to_u64(x) for x in h)
    flat = _window.counter_stream(h, final_tweak, 0, n_blocks, dtype, native=native)
    return flat[:n].reshape(shape)


def _block_elements(block: jax.Array, bit_width: int) -> jax.Array:
    """The stream elements of one output block (``uint32[8]``, high halves first) in order."""
    pairs = block.reshape(WORDS_PER_BLOCK, 2)
    if bit_width == 64:
        return (pairs[:, 0].astype(jnp.uint64) << np.uint64(32)) | pairs[:, 1]
    low_first = pairs[:, ::-1].reshape(-1)                    # the 32-bit stream
    if bit_width == 32:
        return low_first
    parts = 32 // bit_width
    shifts = np.arange(parts, dtype=np.uint32) * np.uint32(bit_width)
    pieces = (low_first[:, None] >> shifts) & np.uint32((1 << bit_width) - 1)
    return pieces.reshape(-1).astype(jnp.dtype(f"uint{bit_width}"))


# jaxpmac's generator as a jax.random implementation: ``jax.random.key(seed, impl=prng_impl)`` is
# ``as_jax_key(jaxpmac.key(seed))``; fold_in appends a dynamic word, split(k, n)[i] is
# fold_in(k, i), random_bits is the state's stream (see docs/interop.md).
# The impl's functions are plain module-level functions, so that pickle finds each by its name
# (a key array pickles its impl, e.g. inside ``nnx.Rngs``); a jitted function does not pickle.
def _seed(seed):
    return _seed_data(seed)


def _split(data, shape):
    return _split_data(data, shape)


def _random_bits(data, bit_width, shape):
    return _random_bits_data(data, bit_width, shape)


def _fold_in(data, message):
    return _fold_in_data(data, message)


# Its name is its tag: orbax saves a key's implementation as str(key_impl), the tag, and
# restores it by name.
IMPL_NAME = "pmac"
prng_impl = jex_random.define_prng_impl(
    key_shape=KEY_SHAPE, seed=_seed, split=_split, random_bits=_random_bits, fold_in=_fold_in,
    name=IMPL_NAME, tag=IMPL_NAME)
_jax_internals.register_prng_name(prng_impl)
_jax_internals.register_export_dtype(
    jax.eval_shape(lambda: jax.random.key(0, impl=prng_impl)).dtype)


# -- public helpers -----------------------------------------------------------------------
def as_jax_key(state: RNGState) -> jax.Array:
    """A typed ``jax.random`` key drawing ``state``'s stream.

    Any state works, traced or not, with its static part already folded in; the key carries
    the open hash, so ``jax.random.fold_in`` and ``jax.random.split`` continue the message.

    Args:
        state: an :class:`RNGState`.

    Returns:
        A scalar key array of ``jaxpmac.prng_impl`` such that
        ``jax.random.bits(as_jax_key(s), shape, jnp.uint32) == jaxpmac.bits(s, shape)`` and
        ``jax.random.fold_in(as_jax_key(s), d)`` draws as ``as_jax_key(s.split(d))`` for
        ``d`` in ``[0, 2**32)``.

    Example:
        >>> import jax, jax.numpy as jnp, jaxpmac as jp
        >>> s = jp.key(42).split_static("dropout")
        >>> k = jp.as_jax_key(s)
        >>> bool((jax.random.bits(k, (4,), jnp.uint32) == jp.bits(s, (4,))).all())
        True
        >>> bool((jax.random.bits(jax.random.fold_in(k, 7), (4,), jnp.uint32)
        ...       == jp.bits(s.split(7), (4,))).all())
        True
    """
    _sampler_args.check_state(state, name="as_jax_key")
    # The state of a key (jaxpmac.state_of, in _key_states, which builds on this module) holds
    # that key's data and says so; any other state is packed from its partial hash.
    data_of_key = getattr(state, "jax_key_data", None)
    if data_of_key is not None:
        return jax.random.wrap_key_data(data_of_key, impl=prng_impl)
    return jax.random.wrap_key_data(_key_data_of_state(state), impl=prng_impl)


def is_pmac_key(value) -> bool:
    """Whether ``value`` is a typed key array of ``prng_impl``."""
    return (isinstance(value, jax.Array)
            and jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key)
            # key_impl gives a registered implementation's name, an unregistered one's spec.
            and jax.random.key_impl(value) in (IMPL_NAME, prng_impl))


def describe_key(value) -> str:
    """What a bad key argument is, for error messages: a typed key names its impl."""
    if isinstance(value, jax.Array) and jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
        return f"a jax.random key of impl {jax.random.key_impl(value)} (dtype {value.dtype})"
    return _inputs.describe(value)


def check_key(key, *, name: str = "fold_in_uids key", accepts: str = KEY_ACCEPTS) -> jax.Array:
    if not is_pmac_key(key):
        raise TypeError(f"{name} accepts {accepts}, but was given {describe_key(key)}")
    return key


_check_key = check_key


def fold_in_uids(key: jax.Array, *uids) -> jax.Array:
    """Appends full 64-bit dynamic words to jaxpmac keys: ``RNGState.split`` for keys.

    ``jax.random.fold_in`` casts its data to uint32 before any implementation sees it, so it
    cannot carry uids of 2**32 or more (a concrete numpy/int64 value wraps silently) nor
    negative ones as ``split`` does (it wraps them mod 2**32). This function takes uids as
    :meth:`RNGState.split` does, so ``fold_in_uids(as_jax_key(s), *uids)`` draws as
    ``as_jax_key(s.split(*uids))``; for uids in ``[0, 2**32)`` it equals
    ``jax.random.fold_in``.

    Args:
        key: a key array (any shape) of ``jaxpmac.prng_impl``.
        *uids: each a Python int in ``[-2**63, 2**64)``, an integer scalar array or a 1-D
            integer array (one word per element), traced or concrete. Signed values
            sign-extend to 64 bits.

    Returns:
        A key array of ``key``'s shape.

    Example:
        >>> import jax, jax.numpy as jnp, jaxpmac as jp
        >>> s = jp.key(0)
        >>> k = jp.fold_in_uids(jp.as_jax_key(s), 2**40 + 3)
        >>> bool((jax.random.bits(k, (2,), jnp.uint32) == jp.bits(s.split(2**40 + 3), (2,))).all())
        True
    """
    key = _check_key(key)
    words = []
    for position, uid in enumerate(uids):
        words.extend(_inputs.words_of(uid, name=f"fold_in_uids argument {position}",
                                      allow_vector=True, accepts=UID_ACCEPTS))
    if not words:
        return key
    data = jax.random.key_data(key)
    pairs = [w.to_pair(x) for x in words]
    his = jnp.stack([p.hi for p in pairs])
    los = jnp.stack([p.lo for p in pairs])
    flat = _append_words(data.reshape(-1, *KEY_SHAPE), his, los)
    return jax.random.wrap_key_data(flat.reshape(data.shape), impl=prng_impl)


@jax.jit
def _append_words(flat_data: jax.Array, his: jax.Array, los: jax.Array) -> jax.Array:
    """Appends the words ``(his[j], los[j])``, in order, to every key of ``flat_data``."""

    def append_all(data):
        # A scan, so the cipher of the flush is compiled once however many words arrive.
        def step(data, word):
            return _append_word(data, w.Pair(*word)), None
        return lax.scan(step, data, (his, los))[0]

    if flat_data.shape[0] == 1:  # a single key: no vmap, so the flush stays a cond
        return append_all(flat_data[0])[None]
    return jax.vmap(append_all)(flat_data)
