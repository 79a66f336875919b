"""The elementwise lowering of a stream, for GPUs and TPUs: each element from its own index.

Element ``i`` of a window that starts ``skip`` elements into block ``first_block`` is a part of
word ``k`` of output block ``first_block + (skip + i) // per_block``; the lowering computes that
block's cipher for every element, from an iota in the output's own shape, and selects the part.
The whole draw is one elementwise expression of the index: no loop, no barrier, no buffer of
blocks, so XLA fuses it into one kernel with the code that uses it, and shards it like an iota.

Why not one cipher per block, then an interleave of its words: the interleave is an array with
a minor axis of 8 that TPUs pad to 128 lanes, which multiplies the bytes moved, and XLA's GPU
backend then splits the cipher into several kernels passing block-sized arrays through
memory. The cost here is arithmetic: a TPU computes one cipher per element (8 per block of
uint32), a GPU shares one between the 4 elements each thread stores (benchmarks/README.md,
"Constants of the CPU lowering"). A window whose words are not mapped where they are made
(``jp.bits``; words a sampler reads several at a time) is computed on a GPU as its ``uint64``
words, 4 to a thread, one cipher per block (:func:`_from_words`): half the instructions per
value, in a kernel of its own (fusing it into a consumer would repeat each word's cipher).
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend import core as jax_core
from jax.extend.core.primitives import jit_p

from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._lowering._platform import force_lowering, kernel_iota

WORD_BITS = 64
BLOCK_WORDS = 4


def _linear_index(shape: tuple[int, ...], dtype) -> jax.Array:
    """The row-major flat index of every element of ``shape``, in ``shape``."""
    index = jnp.zeros(shape, dtype)
    stride = 1
    for axis in reversed(range(len(shape))):
        term = kernel_iota(dtype, shape, axis)
        index = index + (term * np.array(stride, dtype) if stride != 1 else term)
        stride *= shape[axis]
    return index


def _positions(shape, skip, per_block: int, *, wide: bool, stride: int = 1):
    """``(block, within)`` of every element of the window: its block, counted from the window's
    first block (``uint64``, or a ``Pair`` unless ``wide``), and its place in that block
    (uint32). Element ``i`` of the window is stream element ``skip + stride * i``. ``wide``
    needs x64 on."""
    shift = per_block.bit_length() - 1
    skip = np.uint32(skip) if isinstance(skip, int) else jnp.asarray(skip).astype(jnp.uint32)
    if math.prod(shape) * stride + per_block > 1 << 32:    # positions need more than 32 bits
        with jax.enable_x64(True):
            position = _linear_index(shape, jnp.uint64)
            if stride != 1:
                position = position * np.uint64(stride)
            position = position + skip.astype(jnp.uint64)
            block = position >> np.uint64(shift)
            within = (position & np.uint64(per_block - 1)).astype(jnp.uint32)
            return (block if wide else w.to_pair(block)), within
    position = _linear_index(shape, jnp.uint32)
    position = (position * np.uint32(stride) if stride != 1 else position) + skip
    block = position >> np.uint32(shift)
    block = block.astype(jnp.uint64) if wide else w.Pair(jnp.zeros_like(block), block)
    return block, position & np.uint32(per_block - 1)


def _select(index: jax.Array, options: list) -> jax.Array:
    """``options[index]`` elementwise, for a small static list of options."""
    out = options[-1]
    for k in range(len(options) - 2, -1, -1):
        out = jnp.where(index == np.uint32(k), options[k], out)
    return out


def _part(word: w.Word, part: jax.Array, bits: int, dtype) -> jax.Array:
    """Bits ``[part * bits, (part + 1) * bits)`` of each 64-bit word, as ``dtype``."""
    if isinstance(word, w.Pair):
        parts_per_half = 32 // bits
        half = jnp.where(part < np.uint32(parts_per_half), word.lo, word.hi)
        if bits == 32:
            return half
        return (half >> ((part & np.uint32(parts_per_half - 1)) * np.uint32(bits))).astype(dtype)
    return (word >> (part * np.uint32(bits)).astype(jnp.uint64)).astype(dtype)


def stream_window(h, final_tweak, first_block, skip, *, shape: tuple[int, ...], dtype,
                  wide: bool, whole_blocks: bool = False, stride: int = 1,
                  halves: bool = False) -> jax.Array:
    """Stream elements ``skip .. skip + prod(shape) - 1`` counted from block ``first_block``,
    in ``shape`` (row-major), of the hash ``(final_tweak, h)``; with ``stride``, every
    ``stride``-th element from ``skip`` instead.

    Words may be static ints, ``Pair`` or ``uint64`` arrays (scalars); ``skip`` is a static int
    or an integer scalar below a block's elements; ``dtype`` a stream dtype (uint64 needs x64
    on). ``wide``: the cipher runs on ``uint64`` words (x64 is enabled for them here), else on
    ``Pair``s; the bits are the same. ``whole_blocks`` (with ``wide``): one cipher per block
    of the stream (:func:`_from_words`), for a window whose words are not mapped where they are
    made (a mapped one stays fused into its map, a cipher per element's block). ``halves``
    (``dtype`` uint64, ``wide`` False): the words as a pair ``(low, high)`` of uint32 arrays.
    """
    dtype = jnp.dtype(dtype)
    bits = dtype.itemsize * 8
    per_word = WORD_BITS // bits
    per_block = BLOCK_WORDS * per_word
    if math.prod(shape) == 0:
        return jnp.zeros(shape, dtype)
    if wide and whole_blocks and bits < WORD_BITS and stride == 1:
        return _from_words(h, final_tweak, first_block, skip, shape=shape, dtype=dtype)
    with jax.enable_x64(wide or w.x64_enabled()):
        def word(x):
            return x if w.is_static(x) else (w.to_u64(x) if wide else w.to_pair(x))

        block, within = _positions(shape, skip, per_block, wide=wide, stride=stride)
        if wide:
            final_tweak, *h = _varying_by_element((final_tweak, *h), block)
        tweak = (word(final_tweak), w.add(word(first_block), block))
        words = _threefish.encrypt(_threefish.GENERATOR_KEY, tweak, [word(x) for x in h])
        index = within >> np.uint32(per_word.bit_length() - 1)
        if wide:
            chosen = _select(index, [jnp.broadcast_to(w.to_u64(x), shape) for x in words])
        else:
            words = [w.to_pair(x, shape) for x in words]
            chosen = w.Pair(_select(index, [x.hi for x in words]),
                            _select(index, [x.lo for x in words]))
        if halves:
            return chosen.lo, chosen.hi
        if bits == WORD_BITS:
            return w.to_u64(chosen)
        return _part(chosen, within & np.uint32(per_word - 1), bits, dtype)


def _varying_by_element(words, block: jax.Array) -> list:
    """``words`` (static ints, ``Pair``s or ``uint64`` scalars) xored with a zero made from each
    element's ``block`` (``uint64``): ``block >> 63``, which XLA keeps and LLVM folds to 0 (a
    block number has its top bits clear), so the bits are the same.

    Why, on GPUs: XLA computes the stream's operations on the hash alone (joining a ``Pair``'s
    halves, the first key injection and MIX of the counter-free words) in a small kernel of
    their own between the hash's and the stream's. As functions of the element they stay in
    the stream's kernel, where LLVM computes them once per thread: a draw is the hash's kernel
    and its own (benchmarks/README.md, "H100 ALU per value")."""
    zero = block >> np.uint64(63)
    zero32 = zero.astype(jnp.uint32)

    def varying(x):
        if w.is_static(x):
            return x
        if isinstance(x, w.Pair):
            return w.Pair(x.hi ^ zero32, x.lo ^ zero32)
        return x ^ zero
    return [varying(x) for x in words]


#: The largest map (equations of its jaxpr, nested ones included) that :func:`mapped_window`
#: takes. XLA's GPU backend (H100, deviceless) kept the cipher and the map in one kernel for
#: maps of 4-465 operations (uniform, laplace, cauchy, exponential, gumbel), and split normal's
#: 548 into two kernels with the words through memory, where the fused form is one kernel
#: (benchmarks/README.md, "The elementwise lowering").
MAX_MAPPED_WINDOW_OPS = 512
#: The smallest window that :func:`mapped_window` takes. Its program holds the map once per
#: element of a word (twice for 32-bit elements), which XLA compiles in up to twice the time
#: (deviceless H100: 5 sites of ``normal((64, 64))`` 13.6 s packed against 8.7 s fused); below
#: this size a draw's compile time weighs more than its instructions per value
#: (benchmarks/README.md, "Many draw sites on accelerators").
MIN_MAPPED_WINDOW_ELEMENTS = 2 ** 16


def maps_words(word_map, dtype, out_dtype, n: int) -> bool:
    """Whether :func:`mapped_window` applies to a window of ``n`` elements: at least
    :data:`MIN_MAPPED_WINDOW_ELEMENTS` of a stream dtype narrower than a word, mapped to
    numbers (not bool) whose elements of a word pack into 16, 32 or 64 bits, by a map of at
    most :data:`MAX_MAPPED_WINDOW_OPS` operations."""
    bits, out_bits = jnp.dtype(dtype).itemsize * 8, jnp.dtype(out_dtype).itemsize * 8
    return (n >= MIN_MAPPED_WINDOW_ELEMENTS and bits < WORD_BITS
            and jnp.dtype(out_dtype) != jnp.bool_
            and WORD_BITS // bits * out_bits in (16, 32, 64)
            and _operations(word_map, jnp.dtype(dtype), w.x64_enabled(), n)
            <= MAX_MAPPED_WINDOW_OPS)


@functools.lru_cache(maxsize=256)
def _operations(word_map: Callable, dtype, x64: bool, n: int) -> int:
    """The equations of ``word_map``'s jaxpr on ``n`` elements (a map may take another form
    for another size), nested jaxprs included, as this lowering traces it (forced, so that
    a platform choice inside the map is counted as its branch here)."""
    def count(jaxpr) -> int:
        # A jitted function (``_fixed_math.rounded``'s body is one) counts as its body, as it
        # did inlined: its own equation, one per call, pushed normal's map past the limit and
        # left it unpacked (benchmarks/README.md, "H100 ALU per value").
        return sum((eqn.primitive is not jit_p)
                   + sum(count(getattr(sub, "jaxpr", sub))
                         for sub in jax_core.jaxprs_in_params(eqn.params))
                   for eqn in jaxpr.eqns)
    with jax.enable_x64(x64), force_lowering("elementwise"):
        return count(jax.make_jaxpr(word_map)(jax.ShapeDtypeStruct((n,), dtype)).jaxpr)


def mapped_window(h, final_tweak, first_block, skip, *, n: int, dtype, word_map: Callable,
                  out_dtype) -> jax.Array:
    """``word_map`` of :func:`stream_window`'s ``n`` elements (``wide``), flat, one cipher per
    block, where :func:`maps_words` holds.

    The window's ``uint64`` words, one element each (as :func:`_from_words`), are split into
    their elements, each part mapped, and the results packed back into one unsigned integer
    per word (a word's first element in its low bits), which is bitcast to ``out_dtype`` in the
    stream's order and cut to the window. So the program's elements are the words: XLA's GPU
    backend gives each thread 4 of them, a block, and LLVM computes its cipher once for its 8
    uint32, where a map of the fused form's elements computes a block per 4 values.

    ``word_map`` must be elementwise (a ``_unit.WordMap``); it is traced with x64 as the caller
    has it.
    """
    dtype, out_dtype = jnp.dtype(dtype), jnp.dtype(out_dtype)
    bits, out_bits = dtype.itemsize * 8, out_dtype.itemsize * 8
    per_word = WORD_BITS // bits
    x64 = w.x64_enabled()
    words, cut = _window_words(h, final_tweak, first_block, skip, n, per_word)
    with jax.enable_x64(True):
        parts = [_part(words, np.uint32(k), bits, dtype) for k in range(per_word)]
    with jax.enable_x64(x64):
        mapped = [word_map(part) for part in parts]
    with jax.enable_x64(True):
        packed_dtype = jnp.dtype(f"uint{per_word * out_bits}")
        out_unsigned = jnp.dtype(f"uint{out_bits}")
        packed = functools.reduce(operator.or_, [
            lax.bitcast_convert_type(value, out_unsigned).astype(packed_dtype)
            << packed_dtype.type(k * out_bits) for k, value in enumerate(mapped)])
        return cut(lax.bitcast_convert_type(packed, out_dtype).reshape(-1))


def _window_words(h, final_tweak, first_block, skip, n: int, per_word: int):
    """``(words, cut)``: the stream's ``uint64`` words, one element each, that hold elements
    ``skip .. skip + n - 1`` of a dtype with ``per_word`` elements to a word (``skip`` below a
    block's elements), and the function that cuts those elements from the words' flat
    ``[n_words * per_word]`` elements; with a traced skip, enough words for any skip's part
    of a word."""
    static_skip = isinstance(skip, int)
    if not static_skip:
        skip = jnp.asarray(skip).astype(jnp.uint32)
    part, first_word = skip % per_word, skip // per_word
    n_words = -(-((part if static_skip else per_word - 1) + n) // per_word)
    with jax.enable_x64(True):
        words = stream_window(h, final_tweak, first_block, first_word, shape=(n_words,),
                              dtype=jnp.uint64, wide=True)

    def cut(elements):
        if static_skip:
            return lax.slice(elements, (part,), (part + n,))
        return lax.dynamic_slice(elements, (part.astype(jnp.int32),), (n,))

    return words, cut


def _from_words(h, final_tweak, first_block, skip, *, shape: tuple[int, ...], dtype) -> jax.Array:
    """:func:`stream_window` of a dtype narrower than a word, on ``uint64`` words: the window's
    stream words, one element each (4 consecutive elements are one block), split into the
    dtype's elements (a word's low bits first, the stream's order) and cut to the window.

    Why: XLA's GPU backend computes several consecutive elements in each thread (4 of 64 bits),
    and LLVM computes their block's cipher once for all of them, where elements of 32 bits or
    less each take their own selection of a block computed per 4 of them.
    """
    per_word = WORD_BITS // (dtype.itemsize * 8)
    words, cut = _window_words(h, final_tweak, first_block, skip, math.prod(shape), per_word)
    with jax.enable_x64(True):
        elements = lax.bitcast_convert_type(words, dtype).reshape(-1)
    return cut(elements).reshape(shape)
