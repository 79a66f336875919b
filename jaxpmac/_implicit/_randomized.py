"""``randomized``: implicit randomness, elaborated the way Hail's IR pass does.

``jaxpmac.randomized(f)`` turns a function that draws with keyless samplers
(:mod:`jaxpmac.rand`) into a function of ``(state, *args)``. It traces ``f`` to a jaxpr, builds
the flat equation table and gives every draw site a static bit string by Hail's halving split
(:mod:`jaxpmac._implicit._table`), then evaluates the jaxpr with explicit states
(:mod:`jaxpmac._implicit._eval`). Draw site ``d`` at vmap lanes ``l...`` (outermost vmap first)
and loop iterations ``t...`` (outermost loop first) draws from::

    state.split_static(*site.static_words).split(*l, *t)

which :func:`draw_sites` reports, so explicit and implicit styles can be mixed and audited.
"""

from __future__ import annotations

import dataclasses
import functools

import jax

from jaxpmac._implicit import _draw as draw
from jaxpmac._implicit import _eval as evaluation
from jaxpmac._implicit import _table as tbl
from jaxpmac._samplers._sampler_args import check_state


@dataclasses.dataclass(frozen=True)
class DrawSite:
    """One keyless draw site of a randomized function and the explicit state it draws from.

    Attributes:
        sampler: the explicit sampler (``"normal"`` is ``jaxpmac.normal``, ``"hail_rand_int32"``
            is ``jaxpmac.hail.rand_int32``).
        bits: the site's bit string from Hail's halving split ("" for a named site).
        static_words: the labels to pass to ``split_static`` (one int: ``int("1" + bits, 2)``;
            a named site: ``("jaxpmac.rand.name", name)``).
        uid_names: the dynamic words, in ``split`` order: ``"vmap lane j"`` (outermost vmap
            first), then ``"<scan|while> iteration @path"`` (outermost loop first).
        path: the draw equation's position: ``(sub-jaxpr, equation index)`` steps from the top.
        static: the sampler's static keyword arguments.
        name: the draw's ``name=``, or None.
    """
    sampler: str
    bits: str
    static_words: tuple
    uid_names: tuple
    path: tuple
    static: tuple
    name: str | None = None

    def state(self, root):
        """The site's state before its dynamic words: ``root.split_static(*static_words)``."""
        return root.split_static(*self.static_words)


def _trace(f, args, kwargs):
    flat, in_tree = jax.tree_util.tree_flatten((args, kwargs))
    out_tree = []

    def flat_f(*leaves):
        with draw.root_context():
            call_args, call_kwargs = jax.tree_util.tree_unflatten(in_tree, leaves)
            out = f(*call_args, **call_kwargs)
        out_leaves, tree = jax.tree_util.tree_flatten(out)
        out_tree.append(tree)
        return out_leaves

    # Traced with jit enabled even under ``jax.disable_jit``, which would otherwise unroll
    # ``scan``s and ``fori_loop``s into separate draw sites (other bits from every one) and
    # run ``cond``s and ``while_loop``s in Python: the jaxpr, so the draw sites and their
    # states, is the one the jitted function has. The evaluation still runs op by op.
    with jax.disable_jit(False):
        closed = jax.make_jaxpr(flat_f)(*flat)
    return closed, flat, out_tree[0]


def _sites(table: tbl.Table) -> list[DrawSite]:
    sites = []
    for row in table.draw_rows():
        eqn = table.eqns[row]
        n_lanes = eqn.invars[-1].aval.shape[-1]
        keyed = eqn.params["keyed"]
        names = ["keyed_by uid"] if keyed else []
        names += [f"vmap lane {j}" for j in range(n_lanes)]
        for loop in table.loops_of(row):
            if keyed and loop in table.keyed_loops[row]:
                continue
            where = "/".join(f"{s}:{i}" for s, i in table.path(loop))
            names.append(f"{table.eqns[loop].primitive.name} iteration @{where}")
        sites.append(DrawSite(eqn.params["sampler"], table.bits[row], table.static_words(row),
                              tuple(names), table.path(row), eqn.params["static"],
                              table.names[row]))
    return sites


class Randomized:
    """A function with implicit randomness, called as ``g(state, *args, **kwargs)``; see
    :func:`randomized`."""

    def __init__(self, f):
        self._f = f
        functools.update_wrapper(self, f)

    def __call__(self, state, *args, **kwargs):
        check_state(state, name="randomized function's first argument (the state)")
        closed, flat, out_tree = _trace(self._f, args, kwargs)
        table = tbl.build(closed.jaxpr)
        outs = evaluation.evaluate(closed, flat, table, state)
        return jax.tree_util.tree_unflatten(out_tree, outs)

    def sites(self, *args, **kwargs) -> list[DrawSite]:
        """The draw sites of this function for these arguments, in equation order."""
        closed, _, _ = _trace(self._f, args, kwargs)
        return _sites(tbl.build(closed.jaxpr))


def randomized(f) -> Randomized:
    """Makes ``f``'s keyless draws (:mod:`jaxpmac.rand`) explicit: ``g(state, *args)``.

    ``f`` is traced to a jaxpr; each draw equation (a *site*) gets a static bit string by Hail's
    halving split of the random children of its scope (the top level or a loop body), and a
    dynamic word per enclosing ``vmap`` lane and loop iteration (``scan``, ``map``,
    ``fori_loop``, ``while_loop``). ``cond``/``switch``, ``jit``, ``checkpoint`` and custom
    derivatives are looked through, so neither the lowering of a ``cond`` nor wrapping code in
    ``jit`` changes a draw. Loops stay loops (``lax.scan``/``lax.while_loop``).

    The same call gives the same values; distinct sites, lanes and iterations draw from
    distinct states, i.e. independent streams. Site ``d`` at lanes ``l...`` and loop indices
    ``t...`` draws exactly ``jaxpmac.<sampler>(state.split_static(*d.static_words)
    .split(*l, *t), ...)`` (see :func:`draw_sites`).

    Args:
        f: a function of arrays (pytrees) that draws with ``jaxpmac.rand.*``.

    Returns:
        A callable ``g(state, *args, **kwargs)`` (with ``g.sites(*args, **kwargs)``), usable
        under ``jit``/``vmap``; positional and keyword arguments are pytrees of arrays, as for
        ``jax.jit``.

    Example:
        >>> import jax, jax.numpy as jnp, jaxpmac as jp
        >>> @jp.randomized
        ... def noisy(x):
        ...     return x + jp.rand.normal(x.shape)
        >>> y = noisy(jp.key(0), jnp.zeros(3))
        >>> bool((y == jax.jit(noisy)(jp.key(0), jnp.zeros(3))).all())
        True
        >>> (site,) = noisy.sites(jnp.zeros(3))
        >>> bool((y == jp.normal(site.state(jp.key(0)), (3,))).all())
        True
    """
    if not callable(f):
        raise TypeError(f"randomized accepts a callable, but was given {type(f).__name__}")
    return Randomized(f)


def draw_sites(f, *args) -> list[DrawSite]:
    """The draw sites of a randomized function (or of a plain function that uses
    ``jaxpmac.rand``) for these arguments, in equation order; see :class:`DrawSite`.

    Example:
        >>> import jax.numpy as jnp, jaxpmac as jp
        >>> f = jp.randomized(lambda x: x + jp.rand.uniform() + jp.rand.normal())
        >>> [(s.sampler, s.bits, s.static_words) for s in jp.draw_sites(f, 1.0)]
        [('uniform', '0', (2,)), ('normal', '1', (3,))]
    """
    if isinstance(f, Randomized):
        return f.sites(*args)
    if not callable(f):
        raise TypeError(f"draw_sites accepts a callable, but was given {type(f).__name__}")
    return Randomized(f).sites(*args)
