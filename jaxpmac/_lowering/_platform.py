"""Which lowering a draw gets: chosen per platform when the program is lowered, or forced.

jaxpmac has two lowerings of its cipher and stream, with the same bits:

* ``"rolled"``: the cipher as a loop over rounds, over cache-sized chunks of the stream (XLA's
  CPU backend compiles a long unrolled chain of word operations into slow code);
* ``"elementwise"``: each output element computed from its own index by the unrolled cipher,
  one elementwise expression that GPU and TPU compilers fuse into the code that uses it, on
  ``uint64`` words (GPUs have 64-bit adds with carry and funnel shifts, so the program is
  much smaller than on 32-bit pairs and compiles faster: benchmarks/README.md, "Constants of
  the CPU lowering");
* ``"elementwise_pairs"``: the same on ``(hi, lo)`` uint32 pairs, for TPUs (XLA emulates
  ``uint64`` there with more operations than the pairs take).

:func:`by_platform` stages both with ``jax.lax.platform_dependent``: JAX keeps only the branch
of the platform it lowers for (both, selected at compile time, in a multi-platform
``jax.export``), so a program lowered for ``cuda`` or ``tpu`` from a CPU host gets the
elementwise lowering. Nothing here reads the process' backend or devices.

:func:`force_lowering` overrides the choice at trace time, so that either lowering can be run
and tested on any machine.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import Callable, Iterator, Optional, Sequence

import jax
from jax import lax

LOWERINGS = ("rolled", "elementwise", "elementwise_pairs")
#: The lowering of each platform named here; every other platform (``cuda``, ``rocm``, ...)
#: gets :data:`DEFAULT_LOWERING`.
PLATFORM_LOWERINGS = {"cpu": "rolled", "tpu": "elementwise_pairs"}
DEFAULT_LOWERING = "elementwise"

_forced = threading.local()


def forced_lowering() -> Optional[str]:
    """The lowering forced by :func:`force_lowering` in this thread, or None."""
    return getattr(_forced, "name", None)


def force_lowering(name: Optional[str]) -> contextlib.AbstractContextManager:
    """A context in which jaxpmac draws are traced with lowering ``name`` on every platform
    (``None``: each platform's own).

    The choice is made when a draw is traced: a function traced inside the block keeps the
    lowering it got (``jax.jit`` caches its trace), so trace inside it what should use it.
    Every lowering gives the same bits; forcing one only changes speed and compile time.

    Args:
        name: ``"rolled"`` (the CPU lowering), ``"elementwise"`` (the GPU lowering),
            ``"elementwise_pairs"`` (the TPU lowering) or None.

    Example:
        >>> import jax, jaxpmac as jp
        >>> with jp.force_lowering("elementwise"):
        ...     x = jax.jit(lambda: jp.bits(jp.key(1), (4,)))()
        >>> bool((x == jp.bits(jp.key(1), (4,))).all())
        True
    """
    if name is not None and name not in LOWERINGS:
        raise ValueError(f"force_lowering name accepts one of {LOWERINGS} or None, but was "
                         f"given {name!r}")
    return _forced_as(name)


@contextlib.contextmanager
def _forced_as(name: Optional[str]) -> Iterator[None]:
    previous = forced_lowering()
    _forced.name = name
    try:
        yield
    finally:
        _forced.name = previous


def dynamic_part(values: Sequence) -> dict:
    """The dynamic entries of ``values`` by position: what crosses :func:`by_platform`. The
    static ones (Python ints) stay out of it, folded into each branch by :func:`with_dynamic`."""
    return {i: x for i, x in enumerate(values) if not isinstance(x, int)}


def with_dynamic(values: Sequence, dynamic: dict) -> tuple:
    """``values`` with the entries of ``dynamic`` put in place (the static ones kept)."""
    return tuple(dynamic.get(i, x) for i, x in enumerate(values))


def by_platform(*args, rolled: Callable, elementwise: Callable,
                elementwise_pairs: Callable | None = None):
    """The branch of the lowering the program runs with, applied to ``args``.

    ``rolled`` on CPUs, ``elementwise_pairs`` on TPUs (default: ``elementwise``),
    ``elementwise`` elsewhere. All must return the same values (pytrees of the same shapes and
    types). Decided when the program is lowered (``jax.lax.platform_dependent``), unless
    :func:`force_lowering` is in effect, which picks one at trace time.
    """
    branches = {"rolled": rolled, "elementwise": elementwise,
                "elementwise_pairs": elementwise_pairs or elementwise}
    name = forced_lowering()
    if name is not None:
        return branches[name](*args)
    per_platform = {platform: branches[name] for platform, name in PLATFORM_LOWERINGS.items()}
    return lax.platform_dependent(*args, **per_platform, default=branches[DEFAULT_LOWERING])


def jit_per_lowering(fun: Callable, **jit_options) -> Callable:
    """``jax.jit(fun, **jit_options)`` whose cache is keyed by the forced lowering too.

    Why: :func:`force_lowering` acts at trace time, and ``jax.jit`` caches a trace by function
    and arguments only, so a jitted helper would otherwise reuse a trace made under another
    lowering.
    """
    def keyed(*args, forced, **kwargs):
        del forced  # only a cache key
        return fun(*args, **kwargs)

    static_argnames = (*jit_options.pop("static_argnames", ()), "forced")
    jitted = jax.jit(keyed, static_argnames=static_argnames, **jit_options)

    @functools.wraps(fun)
    def call(*args, **kwargs):
        return jitted(*args, forced=forced_lowering(), **kwargs)

    return call
