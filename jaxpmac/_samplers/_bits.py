"""``bits``: a state's raw stream, reshaped (docs/spec.md section 2, "Output")."""

from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxpmac._cipher import _stream
from jaxpmac._cipher import _words as w
from jaxpmac._lowering import _platform, _window
from jaxpmac._message._state import RNGState
from jaxpmac._samplers import _sampler_args
from jaxpmac._samplers._registry import sampler


def use_native_words() -> bool:
    """The native-uint64 cipher path runs whenever 64-bit types are enabled, except inside a
    kernel (a Mosaic kernel has no 64-bit type; the pairs give the same bits)."""
    return w.x64_enabled() and not _platform.in_kernel()


def _offset_blocks(offset, per_block: int):
    """``(first_block, skip)`` of a stream offset: a block index word and the elements to skip
    in that block. Static offsets give static ints, traced ones dynamic values."""
    if w.is_static(offset):
        return divmod(offset, per_block)
    shift = per_block.bit_length() - 1
    first_block = w.Pair(offset.hi >> np.uint32(shift),
                         (offset.lo >> np.uint32(shift)) | (offset.hi << np.uint32(32 - shift)))
    return first_block, (offset.lo & np.uint32(per_block - 1)).astype(jnp.int32)


@partial(jax.jit, static_argnames=("final_tweak", "n", "dtype", "native", "static_skip",
                                   "word_map", "shape", "stride", "halves"))
def _stream_impl(h, first_block, dynamic_skip, dynamic_tweak=None, *, final_tweak: int | None,
                 n: int, dtype, native: bool, static_skip: int | None, word_map, shape,
                 stride: int, halves: bool):
    # The hash and block index arrive as arguments, not constants, so that eager draws from
    # many states share one compiled program; under an outer jit they are constants anyway.
    # A first block of 0 (every draw without an offset) arrives as None and stays the static
    # int 0: a vmapped draw of one block per example then runs the cipher under a static
    # tweak (_stream_lanes._cell_blocks), not with the tweak words as arrays.
    first_block = 0 if first_block is None else first_block
    # The final tweak is static for every state but one from a traced jax.random key
    # (jaxpmac.state_of), whose last block's word count -- and so its tweak -- is a value.
    final_tweak = dynamic_tweak if final_tweak is None else final_tweak
    if native:
        h = tuple(w.to_u64(x) for x in h)
        first_block = first_block if w.is_static(first_block) else w.to_u64(first_block)
        final_tweak = final_tweak if w.is_static(final_tweak) else w.to_u64(final_tweak)
    per_block = _stream.elements_per_block(dtype)
    window = dict(native=native, word_map=word_map, shape=shape, stride=stride, halves=halves)
    span = (n - 1) * stride + 1                 # stream elements from the first to the last
    if static_skip is not None:
        n_blocks = -(-(static_skip + span) // per_block)
        return _window.stream_window(h, final_tweak, first_block, static_skip, n, n_blocks,
                                     dtype, **window)
    n_blocks = -(-span // per_block) + 1
    return _window.stream_window(h, final_tweak, first_block, dynamic_skip, n, n_blocks, dtype,
                                 **window)


def hash_stream(h, final_tweak: w.Word, n: int, dtype, *, offset: w.Word = 0,
                native: bool | None = None, word_map=None, shape=None,
                stride: int = 1, halves: bool = False) -> jax.Array:
    """Stream elements ``offset .. offset + n - 1`` of the message hash ``(final_tweak, h)``,
    flat; ``shape`` is the shape the caller gives them (see ``_window.stream_window``);
    ``stride``: every ``stride``-th element from ``offset`` (inside kernels only); ``halves``
    (inside kernels only, ``dtype`` uint64): each word as its ``(low, high)`` uint32 halves.

    ``h`` holds four words and ``final_tweak`` is one (static ints or dynamic ``Pair``s: the
    tweak is dynamic only for a state of a traced key); ``offset`` is a static int or a
    dynamic ``Pair`` word; ``native`` forces the cipher path (default: native uint64 words when
    x64 is on); ``word_map`` (a ``_unit.WordMap``) gives its values of the elements instead.
    Inputs are not checked.
    """
    native = use_native_words() if native is None else native
    first_block, skip = _offset_blocks(offset, _stream.elements_per_block(dtype))
    static_skip = skip if isinstance(skip, int) else None
    first_block = None if w.is_static(first_block) and first_block == 0 else first_block
    return _stream_impl(tuple(w.to_pair(x) for x in h),
                        None if first_block is None else w.to_pair(first_block),
                        0 if static_skip is not None else skip,
                        None if w.is_static(final_tweak) else w.to_pair(final_tweak),
                        final_tweak=final_tweak if w.is_static(final_tweak) else None, n=n,
                        dtype=jnp.dtype(dtype), native=native, static_skip=static_skip,
                        word_map=word_map, shape=(n,) if shape is None else tuple(shape),
                        stride=stride, halves=halves)


def stream(state: RNGState, n: int, dtype, *, offset: w.Word = 0,
           native: bool | None = None, shape=None) -> jax.Array:
    """Stream elements ``offset .. offset + n - 1`` of ``state`` (see :func:`hash_stream`)."""
    final_tweak, h = state.message_hash()
    return hash_stream(h, final_tweak, n, dtype, offset=offset, native=native, shape=shape)


@sampler
def bits(state: RNGState, shape=(), dtype=jnp.uint32, *, offset=0) -> jax.Array:
    """Random bits: the state's stream of ``dtype`` elements, reshaped to ``shape``.

    Element ``i`` of the flattened output is stream element ``offset + i`` (SPEC section 2), so
    a draw can be made in pieces, or sharded, and agree with the whole. The 32-bit stream splits
    each 64-bit word low half first; 8- and 16-bit streams split the 32-bit one likewise.

    Args:
        state: an :class:`RNGState`.
        shape: the output shape (non-negative ints).
        dtype: ``uint8``, ``uint16``, ``uint32`` (default) or ``uint64`` (needs x64).
        offset: the index of the first stream element: a Python int in ``[0, 2**64)`` (so more
            than ``2**32`` blocks of one stream are reachable) or an integer scalar array.

    Returns:
        An array of ``shape`` and ``dtype``.

    Example:
        >>> import jax.numpy as jnp, jaxpmac as jp
        >>> s = jp.key(0).split_static("noise")
        >>> whole = jp.bits(s, (4, 8))
        >>> bool((jp.bits(s, (8,), offset=8) == whole[1]).all())
        True
    """
    dtype, _, shape, offset = _sampler_args.checked("bits", state, dtype, shape,
                                                    output=_sampler_args.STREAM, offset=offset)
    n = math.prod(shape)
    if w.is_static(offset) and offset + n > (1 << 64):
        raise ValueError(f"bits reads stream elements [offset, offset + {n}), which must end by "
                         f"2**64, but was given offset {offset}")
    return stream(state, n, dtype, offset=offset, shape=shape).reshape(shape)
