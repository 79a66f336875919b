"""Which lowering a draw gets: chosen per platform when the program is lowered, or forced.

jaxpmac has three lowerings of its cipher and stream, with the same bits:

* ``"rolled"``: the cipher as a loop over rounds, over cache-sized chunks of the stream (XLA's
  CPU backend compiles a long unrolled chain of word operations into slow code);
* ``"elementwise"``: each output element computed from its own index by the unrolled cipher,
  one elementwise expression that GPU and TPU compilers fuse into the code that uses it, on
  ``uint64`` words (GPUs have 64-bit adds with carry and funnel shifts, so the program is
  much smaller than on 32-bit pairs and compiles faster: benchmarks/README.md, "Constants of
  the CPU lowering");
* ``"elementwise_pairs"``: the same on ``(hi, lo)`` uint32 pairs, for TPUs (XLA emulates
  ``uint64`` there with more operations than the pairs take).

and a fourth that no platform gets, only :func:`force_lowering`: ``"kernel"``, for draws traced
inside a Pallas kernel body (:data:`KERNEL_LOWERING`).

:func:`by_platform` is one primitive whose lowering jax picks per platform, as it does
``jax.random``'s threefry: only the platform's own branch is traced, when the program is lowered
(each platform's, in a multi-platform ``jax.export``), so a program lowered for ``cuda`` or
``tpu`` from a CPU host gets the elementwise lowering, and tracing a draw traces no cipher it
will not run. Nothing here reads the process' backend or devices while a program is traced (an
eager call, under ``jax.disable_jit``, runs the branch of the default backend).

:func:`force_lowering` overrides the choice at trace time, so that either lowering can be run
and tested on any machine.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Callable, Optional, Sequence

import jax
import jax.extend as jex
import jax.numpy as jnp
from jax import lax
from jax.interpreters import batching, mlir

from jaxpmac._cipher._words import x64_enabled

LOWERINGS = ("rolled", "elementwise", "elementwise_pairs")
#: The lowering of each platform named here; every other platform (``cuda``, ``rocm``, ...)
#: gets :data:`DEFAULT_LOWERING`.
PLATFORM_LOWERINGS = {"cpu": "rolled", "tpu": "elementwise_pairs"}
#: The lowering of a draw traced inside a Pallas kernel body, asked for with
#: ``force_lowering(KERNEL_LOWERING)`` (docs/kernels.md): ``elementwise_pairs`` with nothing a
#: kernel cannot hold (no platform choice, no Pallas call of its own, no barrier, the
#: backend's own division and square root). Never chosen by a platform.
KERNEL_LOWERING = "kernel"
#: The kernel lowering for a Mosaic GPU kernel with lane semantics (``plgpu.kernel(...,
#: compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))``):
#: the same program, with each ``iota`` given Mosaic GPU's strided layout, which lane
#: semantics asks of every ``iota``. (Under warpgroup semantics, Mosaic GPU's layout inference
#: did not finish on ``truncated_normal`` and ``randint``: docs/kernels.md.)
MOSAIC_GPU_LANE_LOWERING = "mosaic_gpu_lane"
KERNEL_LOWERINGS = (KERNEL_LOWERING, MOSAIC_GPU_LANE_LOWERING)
FORCIBLE_LOWERINGS = (*LOWERINGS, *KERNEL_LOWERINGS)
DEFAULT_LOWERING = "elementwise"

# The forced lowering, a value jax's caches are keyed by (``jax.make_user_context``): a function
# jitted outside a ``force_lowering`` block and called inside it is traced again, so the
# samplers' jitted helpers cannot hand a forced block the trace of another lowering.
_forced = jax.make_user_context(default_value=None)


def forced_lowering() -> Optional[str]:
    """The lowering forced by :func:`force_lowering` in this thread, or None."""
    return _forced.value


def in_kernel() -> bool:
    """Whether draws are traced for inside a Pallas kernel body (``force_lowering("kernel")``),
    where only operations the kernel's backend lowers may appear."""
    return forced_lowering() in KERNEL_LOWERINGS


def kernel_iota(dtype, shape: tuple[int, ...], dimension: int) -> jax.Array:
    """``lax.broadcasted_iota``, with Mosaic GPU's strided layout under
    ``force_lowering("mosaic_gpu_lane")``."""
    iota = lax.broadcasted_iota(dtype, shape, dimension)
    if forced_lowering() != MOSAIC_GPU_LANE_LOWERING:
        return iota
    from jax.experimental.pallas import mosaic_gpu as plgpu     # only where asked for
    return plgpu.layout_cast(iota, plgpu.Layout.WG_STRIDED(tuple(shape), vec_size=1))


def force_lowering(name: Optional[str]) -> contextlib.AbstractContextManager:
    """A context in which jaxpmac draws are traced with lowering ``name`` on every platform
    (``None``: each platform's own).

    The choice is made when a draw is traced, and ``jax.jit`` keys its caches by it: a
    function traced outside the block is traced again inside it. Every lowering gives the same
    bits; forcing one only changes speed and compile time.

    Args:
        name: ``"rolled"`` (the CPU lowering), ``"elementwise"`` (the GPU lowering),
            ``"elementwise_pairs"`` (the TPU lowering), ``"kernel"`` (for draws traced inside
            a Pallas kernel body: docs/kernels.md), ``"mosaic_gpu_lane"`` (the same, inside a
            Mosaic GPU kernel with lane semantics) or None.

    Example:
        >>> import jax, jaxpmac as jp
        >>> with jp.force_lowering("elementwise"):
        ...     x = jax.jit(lambda: jp.bits(jp.key(1), (4,)))()
        >>> bool((x == jp.bits(jp.key(1), (4,))).all())
        True
    """
    if name is not None and name not in FORCIBLE_LOWERINGS:
        raise ValueError(f"force_lowering name accepts one of {FORCIBLE_LOWERINGS} or None, "
                         f"but was given {name!r}")
    return _forced(name)


def dynamic_part(values: Sequence) -> dict:
    """The dynamic entries of ``values`` by position: what crosses :func:`by_platform`. The
    static ones (Python ints) stay out of it, folded into each branch by :func:`with_dynamic`."""
    return {i: x for i, x in enumerate(values) if not isinstance(x, int)}


def with_dynamic(values: Sequence, dynamic: dict) -> tuple:
    """``values`` with the entries of ``dynamic`` put in place (the static ones kept)."""
    return tuple(dynamic.get(i, x) for i, x in enumerate(values))


def by_platform(*args, rolled: Callable, elementwise: Callable,
                elementwise_pairs: Callable | None = None, kernel: Callable | None = None,
                result):
    """The branch of the lowering the program runs with, applied to ``args``.

    ``rolled`` on CPUs, ``elementwise_pairs`` on TPUs (default: ``elementwise``),
    ``elementwise`` elsewhere; ``kernel`` (default: ``elementwise_pairs``) only where forced.
    All must return ``result``: a pytree of ``jax.ShapeDtypeStruct``.
    Decided when the program is lowered: the call is one equation of the jaxpr whose lowering
    jax picks per platform, so only the platform's own branch is traced, and only when it is
    lowered (a multi-platform ``jax.export`` lowers each platform's). :func:`force_lowering`
    picks one at trace time. Not differentiable: for the stream and the cipher, whose inputs
    are integer words.
    """
    elementwise_pairs = elementwise_pairs or elementwise
    branches = {"rolled": rolled, "elementwise": elementwise,
                "elementwise_pairs": elementwise_pairs,
                KERNEL_LOWERING: kernel or elementwise_pairs}
    branches[MOSAIC_GPU_LANE_LOWERING] = branches[KERNEL_LOWERING]
    name = forced_lowering()
    if name is not None:
        return branches[name](*args)
    flat_args, in_tree = jax.tree.flatten(args)
    flat_result, out_tree = jax.tree.flatten(result)
    flat_branches = tuple((lowering, _flat(branches[lowering], in_tree, out_tree))
                          for lowering in LOWERINGS)
    out = _by_platform_p.bind(
        *flat_args, branches=flat_branches, x64=x64_enabled(),
        result=tuple(jax.ShapeDtypeStruct(jnp.shape(r), r.dtype) for r in flat_result))
    return jax.tree.unflatten(out_tree, out)


def _flat(branch: Callable, in_tree, out_tree) -> Callable:
    def flat(*flat_args):
        out = branch(*jax.tree.unflatten(in_tree, flat_args))
        leaves, tree = jax.tree.flatten(out)
        if tree != out_tree:
            raise TypeError(f"by_platform: a branch returned {tree}, not {out_tree}")
        return leaves
    return flat


# A platform choice as one primitive, as jax.random's threefry2x32 is: its abstract value is
# the stated result, its lowering on each platform that platform's branch, traced only then
# (``lax.platform_dependent`` traces every branch while the program is traced, and lowers each
# for every platform of the module). ``branches`` are flat functions, ``(lowering, function)``
# pairs; ``x64`` the flag they were traced under, restored when they are lowered.
_by_platform_p = jex.core.Primitive("jaxpmac_by_platform")
_by_platform_p.multiple_results = True


@_by_platform_p.def_abstract_eval
def _by_platform_abstract(*avals, branches, result, x64):
    del branches, x64
    varying = max((a for a in avals if _varying(a)), key=lambda a: len(_varying(a)),
                  default=None)
    if varying is None:
        return [jax.core.ShapedArray(r.shape, r.dtype) for r in result]
    # Under shard_map, the result varies over the mesh axes its inputs vary over.
    sharding = jax.sharding.NamedSharding(varying.sharding.mesh, jax.sharding.PartitionSpec())
    return [varying.update(shape=r.shape, dtype=r.dtype, weak_type=False, sharding=sharding)
            for r in result]


def _varying(aval) -> frozenset:
    mat = getattr(aval, "manual_axis_type", None)
    return getattr(mat, "varying", frozenset())


def _branch_rule(lowering: str):
    def rule(ctx, *args, branches, result, x64):
        branch = dict(branches)[lowering]

        def checked(*flat_args):
            with jax.enable_x64(x64):
                out = branch(*flat_args)
            for got, want in zip(out, result):
                if (jnp.shape(got), got.dtype) != (want.shape, want.dtype):
                    raise TypeError(f"by_platform: the {lowering!r} branch returned "
                                    f"{got.dtype}{list(jnp.shape(got))}, not {want}")
            return out
        return mlir.lower_fun(checked, multiple_results=True)(ctx, *args)
    return rule


mlir.register_lowering(_by_platform_p, _branch_rule(DEFAULT_LOWERING))
for _platform, _lowering in PLATFORM_LOWERINGS.items():
    mlir.register_lowering(_by_platform_p, _branch_rule(_lowering), platform=_platform)


@_by_platform_p.def_impl
def _by_platform_impl(*args, branches, result, x64):
    # Run eagerly (``jax.disable_jit``): the branch of the backend the arrays live on.
    lowering = PLATFORM_LOWERINGS.get(jax.default_backend(), DEFAULT_LOWERING)
    with jax.enable_x64(x64):
        return dict(branches)[lowering](*args)


def _by_platform_batched(args, dims, *, branches, result, x64):
    # An argument that is not batched has dimension None (jax's ``not_mapped``).
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    vmapped = tuple((lowering, jax.vmap(branch, in_axes=tuple(dims)))
                    for lowering, branch in branches)
    out = _by_platform_p.bind(*args, branches=vmapped, x64=x64, result=tuple(
        jax.ShapeDtypeStruct((size, *r.shape), r.dtype) for r in result))
    return out, [0] * len(out)


batching.primitive_batchers[_by_platform_p] = _by_platform_batched


def cpu_barrier(values):
    """``values`` through an ``optimization_barrier`` on a CPU, as they are elsewhere (a GPU or
    TPU program holds no barrier): ``jax.lax.platform_dependent``, differentiable, and cheap
    to trace for every platform. :func:`force_lowering` picks one at trace time."""
    name = forced_lowering()
    if name is not None:
        return lax.optimization_barrier(values) if name == "rolled" else values
    return lax.platform_dependent(values, cpu=lax.optimization_barrier, default=lambda x: x)


def def_compiled_impl(primitive: jex.core.Primitive) -> None:
    """Gives ``primitive`` an eager rule (calls outside ``jit``, ``jax.disable_jit``) that runs
    it compiled, one jitted program per set of parameters, so that op by op it has the lowering
    (and the values) that a jitted program gives it on the arrays' platform, as JAX runs its own
    primitives."""
    @functools.lru_cache(maxsize=None)
    def compiled(params: tuple) -> Callable:
        return jax.jit(functools.partial(primitive.bind, **dict(params)))

    def impl(*operands, **params):
        with jax.disable_jit(False):
            return compiled(tuple(sorted(params.items())))(*operands)

    primitive.def_impl(impl)
