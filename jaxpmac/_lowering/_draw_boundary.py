"""The last operation of every public draw: on a CPU, an ``optimization_barrier``.

Why: XLA's ``reshape-mover`` pass sinks a reshape through an elementwise operation whose
operands are all equivalent reshapes (or constants), one level per run, and its simplification
pipeline reruns to a fixed point (at most 25 times) while anything changes. A draw of the
rolled (CPU) lowering ends in a reshape (the chunk loop's buffer reshaped to the requested
shape), so in a sum of many draws of one shape, ``total = total + draw_j``, it would move one
draw further on every run: about 25 runs of the whole simplification pipeline instead of 3,
most of a program's compile time beyond 40 draws (200 draws of 64x64 compile in 15 s with the
barrier, 26 s without: benchmarks/README.md, "Constants of the CPU lowering"). A barrier's
result is neither a reshape nor elementwise, so nothing moves across it.

Not on GPUs and TPUs (``by_platform``, decided when lowering): there a draw is computed in its
own shape (no reshape to move), and a barrier would keep it from fusing into its consumer.

It only separates the draw from the code that uses it: the values are the same, it has
``jit``, ``vmap``, ``grad`` and sharding rules, and an eager draw (a concrete array) is
returned as it is.
"""

from __future__ import annotations

import functools

import jax
from jax import lax

from jaxpmac._cipher._words import is_traced
from jaxpmac._lowering._platform import cpu_barrier, in_kernel


def ends_draw(draw):
    """Decorates a public draw function: its traced result passes an optimization barrier.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> twice = ends_draw(lambda x: 2 * x)
        >>> 'optimization_barrier' in str(jax.make_jaxpr(twice)(jnp.ones(2)))
        True
    """

    @functools.wraps(draw)
    def ended(*args, **kwargs):
        result = draw(*args, **kwargs)
        if any(is_traced(leaf) for leaf in jax.tree.leaves(result)):
            return cpu_barrier(result)
        return result

    return ended


def at_run_time(*values):
    """``values`` as values known only when the program runs, on every platform (in a Pallas
    kernel body, as they are).

    Why: XLA folds functions of constants (a concrete parameter closed over by ``jit``) at
    compile time, with its own evaluator and its own rewrites around constants, so a draw's
    values would depend on whether its parameters were traced; an ``optimization_barrier`` is
    opaque to that folding. On a CPU, XLA's evaluator rounds ``log``, ``log1p``, ``rsqrt`` and
    ``pow`` differently from the compiled code. On a GPU too: on an H200 (jax 0.11.2,
    2026-11-28) Marsaglia-Tsang's gamma in log space gave other values in 408 of 1024 places
    with ``alpha`` a constant than with ``alpha`` an argument: the golden ``generalized_normal``
    and ``ball`` in float32 differed there for that reason alone, and not under the ``rolled``
    lowering, which had the barrier (``benchmarks/gpu_float_stages.py``). Unlike
    :func:`ends_draw`'s barrier on a draw's result, one on its parameters does not keep the
    draw from fusing into its consumer: it only keeps the parameters' producers out of the
    draw's fusion. Put it on the parameters as given, before they are broadcast: a barrier's
    operand is held in memory. A Pallas kernel cannot hold a barrier, and its parameters are
    the kernel's values at run time anyway.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> at_run_time(jnp.float32(1.5))
        (Array(1.5, dtype=float32),)
        >>> 'optimization_barrier' in str(jax.make_jaxpr(at_run_time)(jnp.float32(1.5)))
        True
    """
    if in_kernel():
        return values
    return lax.optimization_barrier(values)
