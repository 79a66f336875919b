"""The CPU lowering's plan: every layout choice of a stream window on a CPU, made in one place.

The rolled lowering of a stream window (:func:`._window.stream_window` on a CPU) makes its
values in a loop and writes them in place into one buffer. How is decided here, before any of it
is traced: :func:`plan` is a pure function of plain values (:class:`Window`, :class:`Host`,
:class:`Layout`) that returns a frozen :class:`CpuPlan`: the buffer, where a sampler's map runs,
the loop (none, chunks or tiles), the tiles' order, the lanes and the chunks' geometry. The
emitters (:mod:`._chunks`, :mod:`._stream_lanes`) execute a plan and decide nothing.

The tuning constants below state their reason and the command that measures it. The figures
were taken on a 2-core x86 CPU with 2 MiB of L2 cache per core, x64 off; their tables are in
benchmarks/README.md, "Constants of the CPU lowering". ``python -m benchmarks.cpu_plan`` times
and sizes jaxpmac's programs for workloads of ``benchmarks.quick`` under other values of these
constants (``--set NAME=V1,V2``) or a forced layout (``--layout``); what it prints is what the
reasons quote.

The host is read when a draw is traced (:func:`host`): the device count picks the buffer (XLA
partitions a program only with several devices) and the core count whether a map after the loop
pays. :func:`force_cpu_layout` overrides both, so that tests run every layout on any machine.
"""

from __future__ import annotations

import dataclasses
import math
import os

import jax

from jaxpmac._cipher._threefish import ROUNDS_PER_INJECTION
from jaxpmac._lowering._lanes import Boxes, chunk_box

# Rounds per step of the rolled cipher's loop (``_rolled.encrypt_rolled``), by the number of
# blocks it encrypts at once. Up to 8 blocks, one round: XLA's CPU backend compiles a while loop
# whose carried state is under 1 kB as one kernel, so the number of steps costs nothing and a
# one-round body is the smallest program. Up to 512 blocks (4096 uint32 values: a model's draw
# sites), two rounds: they compile in 15-20% less time than four for ~9% more run time (one
# round: 23% less compile time for 41% more run time). Larger inputs, and the chunks of long
# streams: a whole key-injection group of four rounds, the fastest to run (two rounds a step are
# 25% slower at 2**20 values).
# Measure: python -m benchmarks.cpu_plan --set TWO_ROUND_STEP_MAX_BLOCKS=8,512 model20 bits16
ONE_ROUND_STEP_MAX_BLOCKS = 8
TWO_ROUND_STEP_MAX_BLOCKS = 512


def rounds_per_step(n_blocks: int) -> int:
    """Rounds per step of the rolled cipher's loop for ``n_blocks`` blocks at once.

    Example:
        >>> [rounds_per_step(n) for n in (1, 8, 9, 512, 513)]
        [1, 1, 2, 2, 4]
    """
    if n_blocks <= ONE_ROUND_STEP_MAX_BLOCKS:
        return 1
    return 2 if n_blocks <= TWO_ROUND_STEP_MAX_BLOCKS else ROUNDS_PER_INJECTION


# Blocks per chunk of the chunk loop. The cipher's four uint64 words for 4096 blocks (128 KiB)
# stay in the L2 cache across the five key-injection groups, where whole-array passes stream
# every group through memory. Chunks of 1024-8192 blocks run within 5% of each other; chunks
# large enough for XLA to split a step over cores (16384 blocks and up) leave the cache and run
# 20-40% slower on two cores.
# Measure: python -m benchmarks.cpu_plan --set CPU_CHUNK_BLOCKS=1024,4096,16384 bits20 bits22
CPU_CHUNK_BLOCKS = 4096

# The smallest chunk of a small draw (see chunk_blocks). A chunk's working set, its four words
# and their next values, is ~86 bytes a block against 32 bytes of output, so a small draw takes
# chunks of at most a sixth of its blocks: 2**16 values peak at 1.35x their output, against
# 2.38x with full chunks, in the same time. Not under 1024 blocks: up to 512 blocks the cipher
# runs two rounds a step, not four (:data:`TWO_ROUND_STEP_MAX_BLOCKS`), so more steps.
# Measure (peak / output, then time):
#   python -m benchmarks.cpu_plan --set MIN_CPU_CHUNK_BLOCKS=512,1024,4096 bits16 norm16
MIN_CPU_CHUNK_BLOCKS = 1024

# The smallest one-stream draw whose one-word map (a sampler's function of each word) runs
# after the chunk loop. XLA's CPU backend never splits a kernel that writes into a buffer in
# place, so a map in the loop runs on one core and a map after it on all; below 2**17 values the
# pass's own kernel and memory sweep outweigh the second core (5-25% slower at 2**16).
# Measure: python -m benchmarks.cpu_plan --layout map_placement=after,in_loop norm16 norm20
MAP_AFTER_LOOP_MIN_ELEMENTS = 1 << 17

# Blocks per tile of vmapped lanes. A tile step also gathers its cells' words and writes a
# piece of the output, so larger tiles pay until the working words leave the L2 cache: tiles of
# 1024 / 4096 / 8192 / 16384 blocks take 16.1 / 15.6 / 14.3 / 24.5 ms for 4096 x 1024 values;
# 4096 keeps a margin below that edge.
# Measure: python -m benchmarks.cpu_plan --set TILE_BLOCKS=1024,4096,8192,16384 vmap
TILE_BLOCKS = 4096

# The smallest tile of whole lanes worth its loop. A tile runs on one core, while vmap of the
# one-stream lowering makes fusions over all lanes that XLA splits over every core: tiles of
# 128 / 256 / 512 / 1024 blocks take 26.5 / 20.7 / 17.8 / 15.4 ms where that takes 19-20 ms.
# Where no divisor of the lane count gives tiles this large, tiles take a power of two of lanes:
# strided tiles pad the lanes to whole tiles, at the price of a copy of the output; consecutive
# tiles overlap the last tile with the one before it instead.
# Measure: python -m benchmarks.cpu_plan --set TILE_BLOCKS=128,256,512,1024 vmap
MIN_TILE_BLOCKS = 512

# The smallest vmapped draw (values over all lanes) whose one-word map runs after the tile
# loop: lower than MAP_AFTER_LOOP_MIN_ELEMENTS, since in a tile a lane's few values are gathered
# from its blocks, which costs a map in the loop more than over a flat chunk. After the loop is
# 1.0-1.24x faster from 2**15 values (normal, exponential), 0.92x at 2**12-2**14.
# Measure: python -m benchmarks.cpu_plan --set LANES_MAP_AFTER_LOOP_MIN_ELEMENTS=32768,131072 \
#     vscalar
LANES_MAP_AFTER_LOOP_MIN_ELEMENTS = 1 << 15

# Lanes, and parts of a lane, that a tile spans where the shapes allow: an output sharded by
# lanes, by elements or both over up to this many devices then has every tile span the devices,
# each device computing its own cells with no collectives.
# Check: python -m pytest -n 0 tests/lowering/test_sharding_vmap.py (8 host devices)
SHARDING_WIDTH = 8

BUFFERS = ("flat", "rows")
MAP_PLACEMENTS = ("after", "in_loop")


@dataclasses.dataclass(frozen=True)
class Layout:
    """What :func:`force_cpu_layout` forces: a buffer and a map placement, None where free."""

    buffer: str | None = None
    map_placement: str | None = None


# What force_cpu_layout forces, as (buffer, map_placement). A JAX user context, so it is part
# of JAX's trace and compilation cache keys: a function traced under one layout is retraced
# under another.
_FORCED_LAYOUT = jax.make_user_context(default_value=(None, None))


def force_cpu_layout(*, buffer: str | None = None, map_placement: str | None = None):
    """A context in which the CPU lowering's chunk and tile loops use the given layout.

    Only speed and memory change, never a value; this is how the tests check that every
    layout gives the same values on any machine (the layouts are otherwise chosen from the
    device count, the host's cores and the draw's size: :func:`plan`).

    Args:
        buffer: ``"flat"`` (one buffer of the draw's values: one device) or ``"rows"`` (rows
            of a 2-D buffer, as with several devices), or None (by device count).
        map_placement: ``"after"`` (a sampler's map runs after the loop, where it can: a map
            whose values are as wide as its words, on a flat buffer) or ``"in_loop"``, or None
            (by draw size and cores).

    Example:
        >>> import numpy as np, jaxpmac as jp
        >>> from jaxpmac._lowering._cpu_plan import force_cpu_layout
        >>> with force_cpu_layout(buffer="rows", map_placement="in_loop"):
        ...     rows = jp.normal(jp.key(0), (70000,))
        >>> bool(np.array_equal(rows, jp.normal(jp.key(0), (70000,))))
        True
    """
    if buffer not in (*BUFFERS, None):
        raise ValueError(f"force_cpu_layout buffer accepts one of {BUFFERS} or None, but was "
                         f"given {buffer!r}")
    if map_placement not in (*MAP_PLACEMENTS, None):
        raise ValueError(f"force_cpu_layout map_placement accepts one of {MAP_PLACEMENTS} or "
                         f"None, but was given {map_placement!r}")
    return _FORCED_LAYOUT((buffer, map_placement))


def forced_layout() -> Layout:
    """The layout :func:`force_cpu_layout` forces in this thread."""
    return Layout(*_FORCED_LAYOUT.value)


@dataclasses.dataclass(frozen=True)
class Host:
    """What the plan reads of the machine: devices of the default backend, and CPU cores."""

    devices: int
    cores: int


def host() -> Host:
    """This process' :class:`Host`: ``jax.device_count()``, and the CPUs this process may run
    on (``os.sched_getaffinity``), the size of XLA's CPU thread pool."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return Host(devices=jax.device_count(), cores=cores)


@dataclasses.dataclass(frozen=True)
class Window:
    """What a plan is made for: a stream window, of one stream or of every lane of a vmap.

    Attributes:
        n: values per stream (lane).
        n_blocks: blocks of each stream, from the window's first block, that hold them.
        per_block: stream elements per 256-bit block (32 for uint8 ... 4 for uint64).
        skip: elements of the first block before the window; None where traced.
        map_keeps_width: whether a sampler maps the words to values as wide as the words (a
            map that can run after the loop, in place).
        map_shape: the shape the caller gives a stream's values (``_unit.WordMap.shape``), or
            None.
        lanes: None for one stream (no vmap), else the number of lanes (vmapped examples).
        folded: the axis sizes of the nested vmaps whose examples the lanes are, or None.
    """

    n: int
    n_blocks: int
    per_block: int
    skip: int | None = 0
    map_keeps_width: bool = False
    map_shape: tuple[int, ...] | None = None
    lanes: int | None = None
    folded: tuple[int, ...] | None = None


@dataclasses.dataclass(frozen=True)
class Tiling:
    """How vmapped lanes are cut into tiles of cells: whole lanes (``parts == 1``), or parts of
    lanes, equal ranges of consecutive blocks."""

    lanes_per_tile: int
    padded_lanes: int      # lanes rounded up to whole tiles (copies of the last lane)
    parts: int             # parts per lane (1: whole lanes)
    part_blocks: int       # blocks per part (parts * part_blocks >= the lane's blocks)
    parts_per_tile: int


@dataclasses.dataclass(frozen=True)
class Chunks:
    """The chunk loop's steps: each encrypts ``blocks`` blocks of one stream and writes a box of
    the buffer (:attr:`boxes`, whose first ``lane_axes`` axes are lanes).

    ``cut``: how a chunk's values are cut out of its blocks: ``"none"`` (they are the blocks),
    ``"static"`` (one slice at ``skips[0]``), ``"select"`` (two slices at static starts
    ``skips``, one picked) or ``"dynamic"`` (one slice at a traced start).
    """

    boxes: Boxes
    lane_axes: int
    blocks: int
    cut: str
    skips: tuple[int, ...] | None

    @property
    def values(self) -> int:
        """Values per chunk."""
        return math.prod(self.boxes.box)

    @property
    def stream_outers(self) -> int:
        """Runs of boxes within one stream: the axes before the box's, but for the lanes'."""
        return math.prod(self.boxes.shape[self.lane_axes:self.boxes.axis])

    @property
    def inner(self) -> int:
        """Values per index of the box's axis."""
        return math.prod(self.boxes.shape[self.boxes.axis + 1:])

    @property
    def axis_values(self) -> int:
        """Values per index of the axes before the box's."""
        return self.boxes.shape[self.boxes.axis] * self.inner


@dataclasses.dataclass(frozen=True)
class CpuPlan:
    """How the CPU lowering makes a window.

    Attributes:
        loop: ``"none"`` (one chunk: the blocks encrypted at once, cut, mapped), ``"chunks"``
            (the chunk loop: :attr:`chunks`) or ``"tiles"`` (vmapped lanes in tiles:
            :attr:`tiling`, :attr:`tile_order`).
        buffer: ``"flat"`` (one buffer of the values in their own shape, ``buffer_shape``) or
            ``"rows"`` (rows of a 2-D buffer: one chunk or cell a row, cut to the window after
            the loop; several devices).
        map_placement: ``"after"`` (the loop writes raw words, bitcast to the values' type,
            and a sampler's map runs after it in one pass) or ``"in_loop"``.
        lanes: the lanes' axes (the nested vmaps' sizes, or ``(L,)``); ``()`` for one stream.
        buffer_shape: the shape of the buffer the loop writes in place.
        chunks: the chunk loop's steps, for ``loop == "chunks"``.
        tiling: the tiles' cells, for ``loop == "tiles"``.
        tile_order: ``"consecutive"`` (tiles are boxes of the lane grid, the last of a run
            overlapping the one before) or ``"strided"`` (``_lanes.in_strided_tiles``), for
            ``loop == "tiles"``.
    """

    loop: str
    buffer: str
    map_placement: str
    lanes: tuple[int, ...]
    buffer_shape: tuple[int, ...]
    chunks: Chunks | None = None
    tiling: Tiling | None = None
    tile_order: str | None = None


def current(window: Window) -> CpuPlan:
    """:func:`plan` of ``window`` for this process: its :func:`host`, its
    :func:`forced_layout`."""
    return plan(window, host(), forced_layout())


def plan(window: Window, host: Host, forced: Layout = Layout()) -> CpuPlan:
    """How the CPU lowering makes ``window`` on ``host``, under ``forced``.

    The buffer is flat with one device, else rows: a buffer of the draw's own shape lets a map
    after the loop run in place (XLA reuses a buffer only for an elementwise result of the
    same shape and element type) and the last chunk end where the draw ends (no padding, no
    copy to cut it); but XLA's SPMD partitioner all-gathers a write at a dynamic offset of a
    sharded buffer, while it splits rows of a 2-D one without collectives.

    One stream: no loop where one chunk holds the window, else the chunk loop. Lanes: tiles
    (:func:`tiling`), consecutive where the cells are whole lanes and the buffer flat (no lane
    is padded, and the buffer has the final shape, nested vmaps' axes included), else strided
    (a sharded output needs them: each device computes its own cells). Long lanes (in parts,
    and longer than a chunk or cut from their parts) run the chunk loop over lanes on a flat
    buffer, a piece of one lane a step, where tiles of parts would be cut to the windows in a
    copy.
    """
    flat = forced.buffer == "flat" if forced.buffer is not None else host.devices == 1
    if window.lanes is None:
        return _one_stream(window, host, forced, flat)
    return _lanes(window, host, forced, flat)


def chunk_blocks(n_blocks: int) -> int:
    """Blocks per chunk for a draw of ``n_blocks`` blocks in all: :data:`CPU_CHUNK_BLOCKS`,
    or for small draws the largest power of two at most a sixth of the draw, not under
    :data:`MIN_CPU_CHUNK_BLOCKS` (why: there)."""
    sixth = max(n_blocks // 6, MIN_CPU_CHUNK_BLOCKS)
    return min(CPU_CHUNK_BLOCKS, 1 << (sixth.bit_length() - 1))


def _map_after(window: Window, host: Host, forced: Layout, *, flat: bool, values: int,
               min_elements: int) -> bool:
    """Whether a loop that makes ``values`` words writes them raw and the map runs after it.

    Only where the pass is in place: a map whose values are as wide as its words (the loop
    writes the words bitcast to the values' type) into a flat buffer. Then from
    ``min_elements`` values on a host of several cores (the pass runs on all cores, the map in
    the loop on one), or where forced.
    """
    in_place = window.map_keeps_width and flat
    if forced.map_placement is not None:
        return in_place and forced.map_placement == "after"
    return in_place and values >= min_elements and host.cores > 1


def _one_stream(window: Window, host: Host, forced: Layout, flat: bool) -> CpuPlan:
    chunk = chunk_blocks(window.n_blocks)
    if window.n <= chunk * window.per_block:
        return CpuPlan("none", "flat", "in_loop", (), (window.n,))
    if not flat:
        rows = (-(-window.n_blocks // chunk), chunk * window.per_block)
        return CpuPlan("chunks", "rows", "in_loop", (), rows,
                       chunks=Chunks(Boxes(rows, 0, 1), 0, chunk, "none", None))
    return _chunk_loop(window, host, forced, ())


def _chunk_loop(window: Window, host: Host, forced: Layout, lanes: tuple[int, ...]) -> CpuPlan:
    """The chunk loop into a flat buffer ``[*lanes, *values' shape]``, a box of one lane a
    step (``lanes``: ``()`` for one stream)."""
    n, per_block = window.n, window.per_block
    n_lanes = math.prod(lanes)
    chunk_values = chunk_blocks(-(-n * n_lanes // per_block)) * per_block
    after = _map_after(window, host, forced, flat=True, values=n * n_lanes,
                       min_elements=MAP_AFTER_LOOP_MIN_ELEMENTS)
    # A map after the loop runs in place only on a buffer of the shape its caller gives the
    # values, so there the buffer keeps that shape, each chunk a box of it.
    shape = (*lanes, n)
    if after and window.map_shape is not None and math.prod(window.map_shape) == n:
        shape = (*lanes, *window.map_shape)
    # A box never spans lanes: it is a box of one lane's shape.
    axis, box_length = chunk_box(shape[len(lanes):], chunk_values, per_block, runs=n_lanes)
    boxes = Boxes(shape, axis + len(lanes), box_length)
    geometry = Chunks(boxes, len(lanes), 0, "none", None)
    # Chunks whose values start and end on block boundaries are whole blocks; any other chunk
    # is cut out of the blocks that hold it as it is written (no copy of the output cuts it).
    offsets = (geometry.values, boxes.last_start * geometry.inner,
               geometry.axis_values if geometry.stream_outers > 1 else 0)
    whole = window.skip == 0 and all(offset % per_block == 0 for offset in offsets)
    blocks = (geometry.values // per_block if whole
              else -(-(geometry.values + per_block - 1) // per_block))
    # The elements a chunk skips in its first block, where known at trace time: chunks at the
    # same offset from a block boundary cut their blocks alike.
    skips = None
    if window.skip is not None:
        outers = range(min(geometry.stream_outers, per_block))
        starts = [*range(0, min(boxes.per_run - 1, per_block) * box_length, box_length),
                  boxes.last_start]
        skips = tuple(sorted({(outer * geometry.axis_values + start * geometry.inner
                               + window.skip) % per_block
                              for outer in outers for start in starts}))
    cut = "none" if whole else _cut(skips, per_block)
    return CpuPlan("chunks", "flat", "after" if after else "in_loop", lanes, shape,
                   chunks=dataclasses.replace(geometry, blocks=blocks, cut=cut, skips=skips))


def _cut(skips: tuple[int, ...] | None, per_block: int) -> str:
    """How a chunk not of whole blocks is cut from them. A slice at a traced start is emitted
    element by element for 8-bit elements (32 a block), slices at static starts vectorised;
    for wider elements the traced slice is as fast, and two static slices make XLA write the
    stream out first (uint32 10% slower)."""
    if skips is not None and len(skips) == 1:
        return "static"
    if skips is None or len(skips) > 2 or per_block < 32:
        return "dynamic"
    return "select"


def _lanes(window: Window, host: Host, forced: Layout, flat: bool) -> CpuPlan:
    n, per_block, n_lanes, folded = window.n, window.per_block, window.lanes, window.folded
    t = tiling(n_lanes, window.n_blocks)
    grid = tuple(folded) if folded and math.prod(folded) == n_lanes else (n_lanes,)
    parts_cut = t.parts * t.part_blocks * per_block != n or window.skip != 0
    long_lanes = t.parts > 1 and (n > CPU_CHUNK_BLOCKS * per_block or parts_cut)
    if long_lanes and flat:
        return _chunk_loop(window, host, forced, grid)
    # A map after the tile loop only into consecutive tiles of whole lanes, where the pass is
    # in place: the buffer then has the values' final shape [*lanes, *map_shape].
    after = (t.parts == 1 and window.map_shape is not None
             and math.prod(window.map_shape) == n
             and _map_after(window, host, forced, flat=flat, values=n_lanes * n,
                            min_elements=LANES_MAP_AFTER_LOOP_MIN_ELEMENTS))
    placement = "after" if after else "in_loop"
    if t.parts == 1 and flat:
        shape = (*grid, *(window.map_shape if after else (n,)))
        return CpuPlan("tiles", "flat", placement, grid, shape, tiling=t,
                       tile_order="consecutive")
    # Strided tiles write a row of cells a lane: whole lanes' windows (padded lanes included),
    # or the lanes' parts, cut to the windows after the loop.
    shape = ((t.padded_lanes, n) if t.parts == 1
             else (n_lanes, t.parts * t.part_blocks * per_block))
    return CpuPlan("tiles", "flat" if flat else "rows", placement, grid, shape, tiling=t,
                   tile_order="strided")


def _power_of_two_at_most(n: int) -> int:
    return 1 << (n.bit_length() - 1)


def _largest_power_of_two_dividing(n: int, at_most: int) -> int:
    p = 1
    while p * 2 <= at_most and n % (p * 2) == 0:
        p *= 2
    return p


def _largest_divisor_keeping_twos(n: int, at_most: int) -> int:
    """The largest divisor of ``n`` up to ``at_most`` that is a multiple of the largest power of
    two dividing ``n`` (up to ``at_most``): as large as it gets while a sharded lane axis, split
    in two, four, eight..., still splits the tiles evenly."""
    twos = _largest_power_of_two_dividing(n, at_most)
    rest = n // twos
    return twos * next(d for d in range(at_most // twos, 0, -1) if rest % d == 0)


def _whole_lanes(n_lanes: int, n_blocks: int) -> Tiling:
    """Whole lanes as cells: as many per tile as divide the lanes (see
    :func:`_largest_divisor_keeping_twos`), unless such tiles are under
    :data:`MIN_TILE_BLOCKS` blocks; then the lanes are padded to whole tiles."""
    most = TILE_BLOCKS // n_blocks
    if n_lanes <= most:
        return Tiling(n_lanes, n_lanes, 1, n_blocks, 1)
    per_tile = _largest_divisor_keeping_twos(n_lanes, most)
    if per_tile * n_blocks < MIN_TILE_BLOCKS:
        per_tile = _power_of_two_at_most(most)
    return Tiling(per_tile, -(-n_lanes // per_tile) * per_tile, 1, n_blocks, 1)


def _lane_parts(n_lanes: int, n_blocks: int, *, exact_only: bool) -> Tiling | None:
    """Parts of lanes as cells: tiles of up to :data:`SHARDING_WIDTH` lanes (a power of two
    dividing the lanes: never padded) by :data:`SHARDING_WIDTH` parts.

    The largest parts that split a lane exactly, in tiles of down to an eighth of
    :data:`TILE_BLOCKS`; if there are none, the smallest such parts (padding a lane with the
    fewest blocks), or None if ``exact_only``.
    """
    per_tile = _largest_power_of_two_dividing(n_lanes, SHARDING_WIDTH)
    largest = max(1, TILE_BLOCKS // (per_tile * SHARDING_WIDTH))   # blocks per part
    smallest = max(1, largest // 8)
    exact = [size for size in range(largest, smallest - 1, -1)
             if n_blocks % (size * SHARDING_WIDTH) == 0]
    if not exact and exact_only:
        return None
    part_blocks = exact[0] if exact else smallest
    parts = -(-n_blocks // part_blocks)
    parts = -(-parts // SHARDING_WIDTH) * SHARDING_WIDTH
    return Tiling(per_tile, n_lanes, parts, part_blocks, SHARDING_WIDTH)


def tiling(n_lanes: int, n_blocks: int) -> Tiling:
    """The tiles of ``n_lanes`` lanes of ``n_blocks`` blocks each.

    Whole lanes where a tile holds :data:`SHARDING_WIDTH` of them. Longer lanes are split into
    parts, so that tiles still span lanes and elements: always where a lane is longer than a
    tile, else only where parts split the lanes exactly. Why only then: tiles of whole lanes
    cut their lanes' windows themselves, while lanes padded with blocks (and windows at a
    traced offset, in parts) are cut to the output at the end, in a copy of it (with several
    devices; one device runs such lanes in the chunk loop, see :func:`plan`).
    """
    if n_blocks * SHARDING_WIDTH <= TILE_BLOCKS:
        return _whole_lanes(n_lanes, n_blocks)
    if n_blocks <= TILE_BLOCKS:
        return (_lane_parts(n_lanes, n_blocks, exact_only=True)
                or _whole_lanes(n_lanes, n_blocks))
    return _lane_parts(n_lanes, n_blocks, exact_only=False)
