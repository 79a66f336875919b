"""The TPU lowering of a uint32 window: a Pallas (Mosaic) kernel, one cipher per block.

The elementwise lowering computes a block's cipher once per output element, 8 times per block
of uint32 on a TPU, because XLA cannot share one block among 8 lanes without materialising it
in an interleave that TPUs pad to 128 lanes. This kernel computes each block once, in one lane
of a ``[16, R]`` tile (block ``16 r + j`` of a line at sublane ``j``, lane ``r``); its 8 uint32
(word ``k``'s low half first) stacked to ``[16, 8, R]`` are rows ``8 j + k`` of ``[128, R]``,
and one transpose (the TPU's transpose unit) gives ``[R, 128]``: row ``r`` holds blocks
``16 r .. 16 r + 15`` in the stream's own order. So the stream's element order is unchanged.

The output is the caller's shape where its last axis is a multiple of 128 (lanes) and the others
a multiple of ``SUB_ROWS`` lines, so no copy follows (a 1-D window is cut into lines and copied
back). Any other window (a small draw, a shape not in whole lines, a window that starts inside
a block) is cut from a kernel output of whole steps of 128 lines of 128 values, in a copy: on
TPU v5e (deviceless, libtpu's estimated cycles) that is still cheaper than the elementwise
lowering, and a program of many small draws compiles in a fraction of the
time (``benchmarks/README.md``, "TPU v5e"); a window of less than a step keeps only its own
lines, and a small one (:data:`MAX_MAPPED_ELEMENTS`) applies its sampler's map in the kernel,
so that a program's many small draws have one map for Mosaic to compile, not an XLA fusion
each (``benchmarks/README.md``, "Many draw sites on accelerators"). The kernel is a primitive
whose lowering jax picks per platform: on a TPU a Mosaic kernel; elsewhere (a lowering forced
on another platform, as the tests do, or a multi-platform export's other programs) the same
kernel in Pallas' interpret mode, with a small window's map after it. The cipher in the kernel
is on ``Pair`` words of uint32 (Mosaic has no 64-bit type), and a map's values are 32-bit.

XLA's SPMD partitioner cannot split a Mosaic call: a draw sharded over TPUs through this kernel
is computed whole on every device (the same values; the elementwise lowering is computed where
it lives).
"""

from __future__ import annotations

import functools
import math

import jax
import jax.extend as jex
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.interpreters import batching, mlir

from jaxpmac._cipher import _threefish
from jaxpmac._cipher import _words as w
from jaxpmac._lowering._platform import KERNEL_LOWERING, force_lowering
from jaxpmac._lowering._word_maps import map_words, mapped_dtype

LANES = 128                              # a TPU vector register's lanes
BLOCK_VALUES = 8                         # uint32 per Threefish-256 block
LINE_BLOCKS = LANES // BLOCK_VALUES      # blocks per 128 consecutive values
SUB_ROWS = 128                           # output rows one step computes: a [16, 128] tile
TILE_ROWS = (512, 256, 128)              # output rows per grid step, the largest that divides
#: The smallest window the kernel computes (elements); smaller ones stay elementwise. From
#: libtpu's estimated cycles of single draws (benchmarks/README.md, "TPU v5e"): the kernel,
#: cut, is the cheaper at every size measured, 64 values the smallest (libtpu's profile has
#: no estimate for the elementwise form of fewer).
MIN_ELEMENTS = 1 << 6
_TILE_LINES = 8                          # sublanes of a (8, 128) uint32 tile
#: Under ``vmap`` the kernel computes at least a whole step (``SUB_ROWS`` lines of 128 values)
#: for every example: a vmapped window smaller than that stays elementwise.
MIN_VMAPPED_ELEMENTS = SUB_ROWS * LANES
#: Windows of at most this many elements apply their sampler's map inside the kernel
#: (:func:`maps_in_kernel`): a program of many small draws then compiles the map once, in
#: Mosaic, not once per draw site in XLA (deviceless TPU v5e, 200 sites of ``normal((64,
#: 64))``: 10 s against 118 s; benchmarks/README.md, "Many draw sites on accelerators").
#: Mosaic's compile time and the kernel lowering's integer division grow with the lines a
#: kernel maps: from 8192 values XLA's map compiles faster and runs in fewer cycles.
MAX_MAPPED_ELEMENTS = 1 << 12
# The dynamic words (hash, final tweak, first block) as uint32 halves, one per sublane row of
# a [16, 128] VMEM input: a vector operand (scalar prefetch into SMEM also works, but libtpu's
# static profiler cannot estimate its DMA, and the deviceless cycle counts need it).
_WORD_ROWS = 16


def _lines(shape: tuple[int, ...]) -> tuple[int, int]:
    """``(lines, length)``: the kernel's 2-D output, the caller's shape with its leading axes
    merged (free on a TPU), or a 1-D shape cut into lines of 128 (a copy follows)."""
    if len(shape) == 1:
        return shape[0] // LANES, LANES
    return math.prod(shape[:-1]), shape[-1]


def applies(shape: tuple[int, ...], dtype, skip) -> bool:
    """Whether a window of ``shape`` elements of ``dtype`` from element ``skip`` of its first
    block is computed by the kernel: uint32, a static skip, at least MIN_ELEMENTS."""
    return (jnp.dtype(dtype) == jnp.uint32 and isinstance(skip, int)
            and math.prod(shape) >= MIN_ELEMENTS)


def maps_in_kernel(word_map, n: int, *, x64: bool) -> bool:
    """Whether a window of ``n`` uint32 elements applies ``word_map`` in the kernel: at most
    :data:`MAX_MAPPED_ELEMENTS`, x64 off (the kernel traces the map with x64 off), and a map to
    a 32-bit type (a whole ``(8, 128)`` tile per vector register, as the words)."""
    return (word_map is not None and not x64 and n <= MAX_MAPPED_ELEMENTS
            and mapped_dtype(word_map, jnp.uint32, x64=False).itemsize == 4)


def _fits(shape, skip) -> bool:
    """Whether the kernel's output is the window itself: from a block's start, whole steps of
    lines of 128 lanes."""
    if skip != 0 or not shape or shape[-1] % LANES:
        return False
    lines, _ = _lines(shape)
    return lines % SUB_ROWS == 0


def _word_halves(words) -> jax.Array:
    """The words' ``(hi, lo)`` halves as rows of a ``[16, 128]`` uint32 array."""
    # Each half broadcast along its own row, the rows concatenated: libtpu's profile puts a
    # column of stacked halves broadcast along the lanes at most of a small draw's cycles
    # (benchmarks/README.md, "TPU v5e").
    rows = []
    for x in words:
        pair = w.to_pair(x)
        rows += [jnp.broadcast_to(jnp.reshape(half, (1, 1)).astype(jnp.uint32), (1, LANES))
                 for half in (pair.hi, pair.lo)]
    rows.append(jnp.zeros((_WORD_ROWS - len(rows), LANES), jnp.uint32))
    return jnp.concatenate(rows)


def _dynamic_halves(words) -> jax.Array:
    """:func:`_word_halves` of the dynamic words (a static word's rows are unused zeros: the
    kernel has it as a constant)."""
    return _word_halves([0 if w.is_static(x) else x for x in words])


def _words_of_rows(rows, static_words):
    """The words of ``static_words`` with the dynamic ones read from ``rows(k)``, a
    ``(hi, lo)`` pair for word ``k``."""
    return [x if x is not None else w.Pair(*rows(k)) for k, x in enumerate(static_words)]


def _row_halves(halves_in):
    """``rows`` for :func:`_words_of_rows` in a kernel: word ``k``'s halves are rows ``2k``
    and ``2k + 1`` of the ``[16, 128]`` input."""
    return lambda k: (halves_in[pl.ds(2 * k, 1), :], halves_in[pl.ds(2 * k + 1, 1), :])


def _kernel(halves_in, out_ref, values_ref, *, static_words, tile_rows: int, line_blocks: int,
            word_map):
    *h, final_tweak, first_block = _words_of_rows(_row_halves(halves_in), static_words)
    tile, column = pl.program_id(0), pl.program_id(1)
    shape = (LINE_BLOCKS, SUB_ROWS)
    j = lax.broadcasted_iota(jnp.uint32, shape, 0)
    r = lax.broadcasted_iota(jnp.uint32, shape, 1)
    block_in_step = r * np.uint32(line_blocks) + j

    def step(s, carry):
        first_row = (tile * tile_rows + s * SUB_ROWS).astype(jnp.uint32)
        offset = block_in_step + (first_row * np.uint32(line_blocks)
                                  + column.astype(jnp.uint32) * np.uint32(LINE_BLOCKS))
        counter = w.add(first_block, w.Pair(jnp.zeros(shape, jnp.uint32), offset))
        words = _threefish.encrypt(_threefish.GENERATOR_KEY, (final_tweak, counter), h)
        # Through VMEM: in interpret mode XLA's CPU compiler would otherwise fuse the whole
        # cipher into the interleave once per value of the block (90 s to compile, not 1 s).
        pairs = [w.to_pair(word, shape) for word in words]
        for k, half in enumerate(half for pair in pairs for half in (pair.lo, pair.hi)):
            values_ref[k] = half
        stacked = jnp.stack([values_ref[k] for k in range(BLOCK_VALUES)], axis=1)
        rows = stacked.reshape(LINE_BLOCKS * BLOCK_VALUES, SUB_ROWS)
        # A window of less than a step keeps (and maps) only its own lines.
        step_rows = min(tile_rows, SUB_ROWS)
        with force_lowering(KERNEL_LOWERING):
            values = map_words(word_map, rows.T[:step_rows], x64=False)
        out_ref[pl.ds(pl.multiple_of(s * SUB_ROWS, SUB_ROWS), step_rows), :] = values
        return carry

    steps = max(tile_rows // SUB_ROWS, 1)
    if steps == 1:
        step(0, 0)
    else:
        # Two steps an iteration: libtpu schedules their independent ciphers side by side, in
        # fewer cycles; all steps unrolled, fewer still but a slower compile
        # (benchmarks/README.md, "TPU v5e").
        lax.fori_loop(0, steps, step, 0, unroll=2)


def _call(halves, *, static_words, lines: int, length: int, word_map,
          interpret: bool) -> jax.Array:
    tile_rows = lines if lines < SUB_ROWS else next(rows for rows in TILE_ROWS
                                                     if lines % rows == 0)
    kernel = functools.partial(_kernel, static_words=static_words, tile_rows=tile_rows,
                               line_blocks=length // BLOCK_VALUES, word_map=word_map)
    return pl.pallas_call(
        kernel,
        # Varying over a shard_map's axes as the dynamic words do (check_vma needs it said).
        out_shape=jax.ShapeDtypeStruct((lines, length),
                                       mapped_dtype(word_map, jnp.uint32, x64=False),
                                       manual_axis_type=jax.typeof(halves).manual_axis_type),
        grid=(lines // tile_rows, length // LANES),
        in_specs=[pl.BlockSpec((_WORD_ROWS, LANES), lambda i, c: (0, 0))],
        out_specs=pl.BlockSpec((tile_rows, LANES), lambda i, c: (i, c)),
        scratch_shapes=[pltpu.VMEM((BLOCK_VALUES, LINE_BLOCKS, SUB_ROWS), jnp.uint32)],
        interpret=interpret,
    )(halves)


def stream_window(h, final_tweak, first_block, *, shape: tuple[int, ...],
                  skip: int = 0, word_map=None) -> jax.Array:
    """uint32 stream elements ``skip .. skip + prod(shape) - 1`` of the blocks from
    ``first_block`` of the hash ``(final_tweak, h)``, in ``shape`` (:func:`applies` must hold);
    with ``word_map``, its values of them, mapped in the kernel (:func:`maps_in_kernel` must
    hold). Words are static ints or dynamic scalar words (``Pair`` or uint64)."""
    words = (*h, final_tweak, first_block)
    static_words = tuple(x if w.is_static(x) else None for x in words)
    n = math.prod(shape)
    fits = _fits(shape, skip)
    if fits:
        lines, length = _lines(shape)
    else:
        # Whole steps, or the lines of a window within one step (in whole (8, 128) tiles).
        step_values, lines_needed = SUB_ROWS * LANES, -(-(skip + n) // LANES)
        lines = (-(-lines_needed // _TILE_LINES) * _TILE_LINES if lines_needed < SUB_ROWS
                 else -(-(skip + n) // step_values) * SUB_ROWS)
        length = LANES
    halves = _dynamic_halves(words)       # in the caller's x64 mode: words may be uint64
    out = _window_p.bind(halves, static_words=static_words, lines=lines, length=length,
                         word_map=word_map)
    if fits:
        return out.reshape(shape)
    return lax.slice(out.reshape(-1), (skip,), (skip + n,)).reshape(shape)


# The kernel as a primitive of its own, lowered per platform by jax: a Mosaic call on TPUs,
# Pallas' interpret mode elsewhere. Not ``lax.platform_dependent``: jax lowers each branch of a
# platform choice for every platform of the module, and Pallas refuses a Mosaic call lowered for
# a CPU, so a program exported for a CPU and a TPU at once could not hold the kernel; a
# platform's own lowering rule is lowered for that platform alone. The input is the words'
# halves, ``[..., 16, 128]``; leading axes (from ``vmap``) are examples, each its own window.
_window_p = jex.core.Primitive("jaxpmac_tpu_stream_window")


@_window_p.def_abstract_eval
def _window_abstract(halves, *, static_words, lines: int, length: int, word_map):
    del static_words
    # Its halves' type otherwise (sharding, varying manual axes under shard_map).
    return halves.update(shape=(*halves.shape[:-2], lines, length),
                         dtype=mapped_dtype(word_map, jnp.uint32, x64=False))


def _window(halves, *, interpret: bool, word_map, **params):
    """The primitive's computation: the kernel, once per example of ``halves``' leading axes.

    In interpret mode a ``word_map`` maps the kernel's words after it, with XLA, as the draws
    of larger windows do: the same values (every map's kernel lowering has its other
    lowerings' values: ``tests/lowering/test_kernel_draws.py``), and the kernel lowering's
    integer division compiled by XLA's CPU backend takes minutes on the newest jax
    (benchmarks/README.md, "Draws inside Pallas kernels")."""
    with jax.enable_x64(False):       # Mosaic has no 64-bit type
        call = functools.partial(_call, interpret=interpret,
                                 word_map=None if interpret else word_map, **params)
        for _ in halves.shape[:-2]:
            call = jax.vmap(call)
        out = call(halves)
        return map_words(word_map, out, x64=False) if interpret else out


def _kernel_rule(compute, *, interpret: bool):
    """The lowering rule of a kernel primitive whose computation is ``compute(halves,
    interpret=..., **params)``: a Mosaic call, or Pallas' interpret mode."""
    def rule(ctx, halves, **params):
        if interpret:
            # Pallas' interpreter mixes the kernel's values with device-invariant ones, which
            # shard_map's check_vma rejects: it gets plain types (a lowering has no use for
            # them; the primitive's own type carries the varying axes).
            ctx = ctx.replace(avals_in=[_plain(a) for a in ctx.avals_in],
                              avals_out=[_plain(a) for a in ctx.avals_out])
        return mlir.lower_fun(functools.partial(compute, interpret=interpret),
                              multiple_results=False)(ctx, halves, **params)
    return rule


def _plain(aval):
    return jax.core.ShapedArray(aval.shape, aval.dtype)


mlir.register_lowering(_window_p, _kernel_rule(_window, interpret=True))
mlir.register_lowering(_window_p, _kernel_rule(_window, interpret=False), platform="tpu")


@_window_p.def_impl
def _window_impl(halves, **params):
    # Run eagerly (``force_lowering`` without ``jit``, ``jax.disable_jit``): the kernel where
    # the array lives.
    return _window(halves, interpret=jax.default_backend() != "tpu", **params)


def _window_batched(args, dims, **params):
    (halves,), (dim,) = args, dims
    return _window_p.bind(jnp.moveaxis(halves, dim, 0), **params), 0


batching.primitive_batchers[_window_p] = _window_batched


# --------------------------------------------------------------------------------------------
# The message hash's cipher of one block in a kernel
# --------------------------------------------------------------------------------------------
# A message hash's traced block (a traced seed beside a draw site's static labels) is one
# block of scalar words. XLA's TPU compiler leaves its ~600 scalar uint32 operations unfused
# and takes ~0.15 s per draw site to compile them (20 draw sites of a traced seed: 2.5 s of
# jax.random's 1.1; benchmarks/README.md, "TPU v5e"); Mosaic compiles the same cipher on one
# vector row in a few milliseconds.
_BLOCK_ROWS = 2 * 4                      # a block's 4 words as (hi, lo) rows


def encrypt_block(key, tweak, block, *, rounds: int) -> tuple[w.Pair, ...]:
    """``_threefish.encrypt(key, tweak, block)`` of scalar words (static ints, ``Pair`` or
    uint64, at least one dynamic) in a kernel: the block's 4 words as ``Pair``s of scalars.

    Every word, static ones too, is an input row, so that all of a program's draw sites share
    one kernel, traced and lowered once (a kernel per site's labels traced in ~50 ms each),
    and the rows are made by one jitted function, traced once for all the sites too."""
    out = _block_rows(key, tweak, block, rounds=rounds)
    return tuple(w.Pair(out[..., 2 * k, 0], out[..., 2 * k + 1, 0]) for k in range(4))


def encrypt_block_halves(key, tweak, block, *, rounds: int) -> jax.Array:
    """:func:`encrypt_block` as one ``uint32[8]`` vector, each word's high half, then its low
    half, in order: the kernel's first column. Where a vector is wanted this is cheaper than
    the halves as scalars stacked again (benchmarks/README.md, "A framework's key operations
    on accelerators")."""
    return _block_rows(key, tweak, block, rounds=rounds)[..., :, 0]


def _block_rows(key, tweak, block, *, rounds: int) -> jax.Array:
    """:func:`_encrypt_block` of the words, static ones as constant ``Pair``s."""
    words = tuple(w.pair_const(x) if w.is_static(x) else x for x in (*tweak, *block))
    return _encrypt_block(words, key=tuple(key), n_tweak=len(tweak), rounds=rounds)


@functools.partial(jax.jit, static_argnames=("key", "n_tweak", "rounds"))
def _encrypt_block(words, *, key, n_tweak: int, rounds: int) -> jax.Array:
    """The kernel's output rows, ``[..., 8, 128]``: row ``2k`` word ``k``'s high half, row
    ``2k + 1`` its low half, the same in every lane."""
    return _encrypt_p.bind(_word_halves(words), key=key, n_tweak=n_tweak, rounds=rounds)


def _cipher_of_rows(rows, *, key, n_tweak: int, rounds: int) -> tuple[w.Word, ...]:
    """The cipher of the tweak and block words whose halves ``rows(k)`` reads (both forms of
    the hash's primitive: the kernel's, and XLA's)."""
    words = _words_of_rows(rows, (None,) * (n_tweak + 4))
    return _threefish.encrypt(key, words[:n_tweak], words[n_tweak:], rounds=rounds)


def _encrypt_kernel(halves_in, out_ref, **params):
    for k, word in enumerate(_cipher_of_rows(_row_halves(halves_in), **params)):
        pair = w.to_pair(word, (1, LANES))
        out_ref[pl.ds(2 * k, 1), :] = pair.hi
        out_ref[pl.ds(2 * k + 1, 1), :] = pair.lo


@functools.partial(jax.jit, static_argnames=("interpret", "key", "n_tweak", "rounds"))
def _encrypt(halves, *, interpret: bool, **params):
    """The hash kernel's computation on one ``[16, 128]`` input (jitted: traced once for all
    the draw sites of a program)."""
    with jax.enable_x64(False):
        return pl.pallas_call(
            functools.partial(_encrypt_kernel, **params),
            out_shape=jax.ShapeDtypeStruct((_BLOCK_ROWS, LANES), jnp.uint32,
                                           manual_axis_type=jax.typeof(halves).manual_axis_type),
            interpret=interpret)(halves)


_encrypt_p = jex.core.Primitive("jaxpmac_tpu_encrypt_block")


@_encrypt_p.def_abstract_eval
def _encrypt_abstract(halves, **params):
    del params
    return halves.update(shape=(*halves.shape[:-2], _BLOCK_ROWS, LANES))


def _encrypt_rows(halves, *, key, n_tweak: int, rounds: int):
    """The kernel's output rows computed by XLA, for any leading axes of ``halves``: the
    unrolled cipher on each example's words (lane 0 of its rows), broadcast along the lanes.
    Under ``vmap`` the blocks are vectors of examples, which XLA fuses well as they are; on
    other platforms (a lowering forced, as the tests do) this is the kernel's computation
    without Pallas' interpreter, whose compile time every traced-seed draw would pay (the
    kernel's own values: ``tests/lowering/test_tpu_kernel.py``)."""
    out = _cipher_of_rows(lambda k: (halves[..., 2 * k, 0], halves[..., 2 * k + 1, 0]),
                          key=key, n_tweak=n_tweak, rounds=rounds)
    batch = halves.shape[:-2]
    rows = [jnp.broadcast_to(half[..., None, None], (*batch, 1, LANES))
            for word in out for half in w.to_pair(word, batch)]
    return jnp.concatenate(rows, axis=-2)


mlir.register_lowering(_encrypt_p, mlir.lower_fun(_encrypt_rows, multiple_results=False))
mlir.register_lowering(_encrypt_p, _kernel_rule(_encrypt, interpret=False), platform="tpu")


@_encrypt_p.def_impl
def _encrypt_impl(halves, **params):
    if jax.default_backend() == "tpu":
        return _encrypt(halves, interpret=False, **params)
    return _encrypt_rows(halves, **params)


def _encrypt_batched(args, dims, **params):
    (halves,), (dim,) = args, dims
    return _encrypt_rows(jnp.moveaxis(halves, dim, 0), **params), 0


batching.primitive_batchers[_encrypt_p] = _encrypt_batched
