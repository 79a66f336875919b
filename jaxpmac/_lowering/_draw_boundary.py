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

from jaxpmac._cipher._words import is_traced
from jaxpmac._lowering._platform import cpu_barrier


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
    """``values`` as values known only when the program runs, on a CPU (elsewhere as they are).

    Why: XLA folds functions of constants (a concrete parameter closed over by ``jit``) with its
    own evaluator at compile time, whose ``log``, ``log1p``, ``rsqrt`` and ``pow`` round
    differently from the compiled code, so a draw's values would depend on whether its
    parameters were traced; an ``optimization_barrier`` is opaque to that folding. The same
    holds for a derivative rule's primal values, which a tangent computed in their fusion would
    change. Not on GPUs and TPUs, where a draw's program holds no barrier (see
    :func:`ends_draw`); there the backend's own math already decides the last bits.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> at_run_time(jnp.float32(1.5))
        (Array(1.5, dtype=float32),)
    """
    return cpu_barrier(values)
