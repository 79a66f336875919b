"""Evaluating a randomized jaxpr with explicit states (the second half of the pass).

An interpreter over the jaxpr and its :class:`~jaxpmac._implicit._table.Table`. Equations that
use no randomness are bound as they are (sub-jaxprs included). Random ones:

* a draw computes its explicit state ``root.split_static(*static_words).split(lanes, *loops)``
  (``lanes``: its vmap lane indices, outermost first; ``loops``: the iteration index of each
  enclosing loop, outermost first) and calls the explicit sampler, per example of its batch;
* ``scan`` is re-emitted as ``lax.scan`` over ``(xs, element index)``: the uid is the index of
  the element of ``xs`` (so ``reverse=True`` counts down);
* ``while`` is re-emitted as ``lax.while_loop`` with an int32 iteration counter in the carry
  (the predicate at iteration ``t`` and the body that follows it both see ``t``);
* ``cond`` is re-emitted as ``lax.switch`` of interpreted branches; ``jit`` and
  ``checkpoint`` are inlined;
* ``shard_map`` (and ``pmap``, which JAX traces as one) is re-emitted with ``jax.shard_map``
  over the interpreted body; a draw in it that varies over manual axes (``Table.shard_axes``)
  reads its shard's window of the site's stream, ``offset = i * size(local shape)`` at linear
  shard position ``i``: its block of the global draw (docs/implicit.md, "shard_map and pmap");
* ``custom_jvp_call`` and ``custom_vjp_call`` are inlined for their values, inside a
  ``jax.custom_jvp`` whose rule refuses: the user's derivative rule would run the function's
  keyless draws again, outside the pass, so it cannot be kept, and differentiating the inlined
  code would silently use the plain derivative instead. A forward call draws as everywhere; a
  derivative through such a function is a ``NotImplementedError`` when it is traced.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax import lax
from jax.extend import core as jex

from jaxpmac._implicit import _draw as draw
from jaxpmac._implicit import _table as tbl
from jaxpmac._interop import _jaxpr_readers
from jaxpmac._samplers import _stream_marks

# Call primitives that carry a user's derivative rule (jax's names across versions).
CUSTOM_DERIVATIVES = frozenset({"custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"})


class Evaluator:
    def __init__(self, table: tbl.Table, root):
        self.table = table
        self.root = root

    # -- generic -----------------------------------------------------------------------
    def run(self, jaxpr, consts, args, owner: int, sub: int, loops: tuple):
        env = {}

        def read(v):
            return v.val if isinstance(v, jex.Literal) else env[v]

        def write(v, value):
            if not isinstance(v, jex.DropVar):
                env[v] = value

        for v, value in zip(jaxpr.constvars, consts):
            write(v, value)
        for v, value in zip(jaxpr.invars, args):
            write(v, value)
        for i, eqn in enumerate(jaxpr.eqns):
            row = self.table.row_of[(owner, sub, i)]
            invals = [read(v) for v in eqn.invars]
            if self.table.uses_randomness[row]:
                outs = self.random_eqn(row, eqn, invals, loops)
            else:
                outs = bind(eqn, invals)
            for v, value in zip(eqn.outvars, outs):
                write(v, value)
        return [read(v) for v in jaxpr.outvars]

    def run_sub(self, row: int, param: str, position: int, args, loops):
        """Interprets the sub-jaxpr ``params[param]`` (``[position]``) of row ``row``."""
        subs = tbl.sub_jaxprs(self.table.eqns[row].params)
        s = next(k for k, (name, pos, _) in enumerate(subs) if name == param and pos == position)
        jaxpr = subs[s][2]
        consts = jaxpr.consts if isinstance(jaxpr, jex.ClosedJaxpr) else []
        return self.run(tbl.open_jaxpr(jaxpr), consts, args, row, s, loops)

    # -- random equations --------------------------------------------------------------
    def random_eqn(self, row, eqn, invals, loops):
        kind = tbl.KINDS[self.table.kind[row]]
        if kind == "draw":
            return [self.draw(row, eqn, invals, loops)]
        name = eqn.primitive.name
        if name == "scan":
            return self.scan(row, eqn, invals, loops)
        if name == "while":
            return self.while_loop(row, eqn, invals, loops)
        if name == "cond":
            return self.cond(row, eqn, invals, loops)
        if name == tbl.SHARD_MAP:
            return self.shard_map(row, eqn, invals, loops)
        # jit, checkpoint, custom_jvp_call, custom_vjp_call, closed_call: inline the call.
        (param, position, _), = [s for s in tbl.sub_jaxprs(eqn.params)]
        if name in CUSTOM_DERIVATIVES:
            return self.without_derivative(row, param, position, invals, loops)
        return self.run_sub(row, param, position, invals, loops)

    def without_derivative(self, row, param, position, invals, loops):
        """The custom-derivative call of ``row`` inlined, its derivative refused (module
        docstring). Its operands and loop indices are arguments, not closed over."""
        n_operands = len(invals)

        @jax.custom_jvp
        def inlined(*operands_and_loops):
            operands, inner_loops = operands_and_loops[:n_operands], operands_and_loops[n_operands:]
            return tuple(self.run_sub(row, param, position, list(operands), tuple(inner_loops)))

        @inlined.defjvp
        def _refused(primals, tangents):
            del primals, tangents
            where = "/".join(f"{s}:{i}" for s, i in self.table.path(row))
            raise NotImplementedError(
                f"jaxpmac.randomized: the function with a custom derivative rule "
                f"({self.table.eqns[row].primitive.name} at equation path {where}) draws "
                "keyless random numbers. The pass gives its draws their states but cannot keep "
                "its rule (the rule would draw again, outside the pass), so its derivative is "
                "refused rather than silently replaced by the plain one. Draw outside that "
                "function and pass the noise in, or give it an explicit state.")

        return list(inlined(*invals, *loops))

    def draw(self, row, eqn, invals, loops):
        params = eqn.params
        *operands, uids = invals
        site = self.root.split_static(*self.table.static_words(row))
        explicit = draw.sampler(params["sampler"])
        batch_ndim = params["batch_ndim"]
        n_lanes = uids.shape[-1]

        # Only a check_streams trace reads the site's description (a walk of its traceback).
        where = self.site_description(row, eqn) if _stream_marks.active() else None
        if params["keyed"]:
            # keyed_by: its uid first, then the lanes and loop indices it does not vary with.
            dropped = self.table.keyed_loops[row]
            loops = tuple(t for loop, t in zip(self.table.loops_of(row), loops)
                          if loop not in dropped)

        axes = self.table.shard_axes.get(row, ())
        # Inside a shard_map: this shard's window of the global draw (its linear position over
        # the axes the draw varies over, in the order the table gives, times the local size).
        window = None
        if axes:
            shard = lax.axis_index(axes if len(axes) > 1 else axes[0])
            window = shard.astype(jnp.uint32) * jnp.uint32(math.prod(params["base_shape"]))

        def one(lane_uids, *arrays, shape_and_window=None):
            if params["keyed"]:
                *arrays, uid = arrays
                words = (uid, lane_uids) if n_lanes else (uid,)
            else:
                words = (lane_uids,) if n_lanes else ()
            state = site.split(*words, *loops)
            kwargs = draw.split_kwargs(params["static"], params["operand_names"], arrays)
            if shape_and_window is not None:     # a run of a laid-out draw
                kwargs["shape"], start = shape_and_window
                kwargs["offset"] = start + jnp.asarray(kwargs.get("offset", 0), jnp.uint32)
            elif window is not None:
                kwargs["offset"] = window + jnp.asarray(kwargs.get("offset", 0), jnp.uint32)
            with _stream_marks.at_site(where):
                return explicit(state, **kwargs)

        if batch_ndim == 0 and row in self.table.shard_layouts:
            return self.draw_laid_out(row, one, uids, operands)
        if batch_ndim == 0:
            return one(uids, *operands)
        batch_shape = uids.shape[:batch_ndim]
        size = math.prod(batch_shape)
        flat = [x.reshape((size,) + x.shape[batch_ndim:]) for x in (uids, *operands)]
        out = jax.vmap(one)(*flat)
        return out.reshape(batch_shape + out.shape[1:])

    def draw_laid_out(self, row, one, uids, operands):
        """A draw laid out as an output whose out_specs shard dimensions ``d`` over axes: its
        elements are those of the global draw (each sharded dimension ``k_d`` times longer) at
        the global indices of this shard's block. The block is contiguous in the global stream
        from the last sharded dimension on, so it is drawn in such runs, each at its offset."""
        eqn = self.table.eqns[row]
        params = eqn.params
        layout = self.table.shard_layouts[row]
        mesh = self._mesh_of(row)
        local = tuple(params["base_shape"])
        sizes = [math.prod(mesh.shape[a] for a in axes) for axes in layout]
        glob = [n * k for n, k in zip(local, sizes)]
        last = max(d for d, axes in enumerate(layout) if axes)
        strides = [math.prod(glob[d + 1:]) for d in range(len(glob))]
        offset = jnp.uint32(0)
        for d, axes in enumerate(layout):
            if axes:
                position = lax.axis_index(axes if len(axes) > 1 else axes[0])
                offset = offset + position.astype(jnp.uint32) * jnp.uint32(local[d] * strides[d])
        # The runs' first elements: every index of the dimensions before ``last``.
        grid = jnp.indices(local[:last], dtype=jnp.uint32).reshape(last, -1)
        starts = offset + sum((grid[d] * jnp.uint32(strides[d]) for d in range(last)),
                              jnp.uint32(0))
        run_shape = local[last:]
        names = params["operand_names"]
        shaped = [jnp.broadcast_to(x, local).reshape((-1,) + run_shape)
                  if name != "offset" else x for name, x in zip(names, operands)]
        axes_in = [0 if name != "offset" else None for name in names]
        static = dict(params["static"])
        static["shape"] = run_shape

        def run(start, *arrays):
            return one(uids, *arrays, shape_and_window=(run_shape, start))

        out = jax.vmap(run, in_axes=(0, *axes_in))(starts.reshape(-1), *shaped)
        return out.reshape(local)

    def _mesh_of(self, row):
        above = int(self.table.parent[row])
        while self.table.eqns[above].primitive.name != tbl.SHARD_MAP:
            above = int(self.table.parent[above])
        return self.table.eqns[above].params["mesh"]

    def site_description(self, row, eqn) -> str:
        """Where a keyless draw is, for check_streams: its line and its site's path."""
        traceback = eqn.source_info.traceback
        frames = [(f.file_name, f.line_num) for f in traceback.frames] if traceback else []
        path = "/".join(f"{s}:{i}" for s, i in self.table.path(row))
        return (f"{_stream_marks.user_line(frames)} (jp.rand.{eqn.params['sampler']}, "
                f"implicit site @{path})")

    def shard_map(self, row, eqn, invals, loops):
        """``shard_map`` re-emitted over the interpreted body; its draws take their windows
        (:meth:`draw`). The state and the loop indices are replicated arguments."""
        params = eqn.params
        replicated = jax.sharding.PartitionSpec()

        def body(root, operands, inner_loops):
            outer_root, self.root = self.root, root
            try:
                return tuple(self.run_sub(row, "jaxpr", -1, list(operands), tuple(inner_loops)))
            finally:
                self.root = outer_root

        mapped = jax.shard_map(
            body, mesh=params["mesh"],
            in_specs=(replicated, tuple(params["in_specs"]), tuple(replicated for _ in loops)),
            out_specs=tuple(params["out_specs"]), axis_names=params["newly_manual_axes"],
            check_vma=params["check_vma"])
        # Under jit, as pmap's own call is: the operands are placed as in_specs say.
        try:
            return list(jax.jit(mapped)(self.root, tuple(invals), tuple(loops)))
        except ValueError as error:
            if "out_specs" not in str(error) or not params["check_vma"]:
                raise
            where = "/".join(f"{s}:{i}" for s, i in self.table.path(row))
            raise ValueError(
                f"jaxpmac.randomized: a keyless draw in the shard_map at equation path {where} "
                "varies over mesh axes (its value meets values that vary over them, or an "
                "out_specs entry that names them: each shard draws its own window), but a value "
                "computed from it is also returned under out_specs that say it is replicated "
                "over those axes. Return only the varying values, or draw the replicated "
                "values separately (a draw that meets only replicated values is the same on "
                f"every shard). JAX's error: {error}") from error

    def scan(self, row, eqn, invals, loops):
        n_consts, n_carry = _jaxpr_readers.scan_layout(eqn.params)
        options = _jaxpr_readers.scan_options(eqn.params)
        consts = invals[:n_consts]
        init = invals[n_consts:n_consts + n_carry]
        xs = invals[n_consts + n_carry:]

        def body(carry, x_and_t):
            x, t = x_and_t
            outs = self.run_sub(row, "jaxpr", -1, [*consts, *carry, *x], loops + (t,))
            return outs[:n_carry], outs[n_carry:]

        steps = jnp.arange(options["length"], dtype=jnp.int32)
        carry, ys = lax.scan(body, list(init), (list(xs), steps), **options)
        return [*carry, *ys]

    def while_loop(self, row, eqn, invals, loops):
        n_cond, n_body = _jaxpr_readers.while_layout(eqn.params)
        cond_consts = invals[:n_cond]
        body_consts = invals[n_cond:n_cond + n_body]
        init = invals[n_cond + n_body:]

        def cond_fn(state):
            t, carry = state
            (pred,) = self.run_sub(row, "cond_jaxpr", -1, [*cond_consts, *carry], loops + (t,))
            return pred

        def body_fn(state):
            t, carry = state
            carry = self.run_sub(row, "body_jaxpr", -1, [*body_consts, *carry], loops + (t,))
            return t + 1, carry

        _, out = lax.while_loop(cond_fn, body_fn, (jnp.int32(0), list(init)))
        return out

    def cond(self, row, eqn, invals, loops):
        index, *operands = invals
        branches = [
            (lambda *ops, b=b: self.run_sub(row, "branches", b, list(ops), loops))
            for b in range(len(eqn.params["branches"]))]
        return lax.switch(index, branches, *operands)


def bind(eqn, invals):
    params = eqn.primitive.get_bind_params(eqn.params)
    if eqn.primitive.name in tbl.VARYING_CASTS and "axes" in params:
        # After the pass a draw under shard_map may vary over axes JAX typed it invariant over
        # (the pass gives each shard its window): cast only over the axes it does not vary over.
        varying = tbl.varying_value(invals[0])
        missing = tuple(a for a in params["axes"] if a not in varying)
        if not missing:
            return list(invals)
        params = dict(params, axes=missing)
    with eqn.ctx.manager:
        out = eqn.primitive.bind(*invals, **params)
    return out if eqn.primitive.multiple_results else [out]


def evaluate(closed_jaxpr, args, table: tbl.Table, root) -> list:
    return Evaluator(table, root).run(closed_jaxpr.jaxpr, closed_jaxpr.consts, args, -1, 0, ())
