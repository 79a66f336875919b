"""``jp.randomized`` under ``shard_map`` and ``pmap`` (issue 32, point 3): a shard's draws are
those of its global indices, so the values do not depend on the number of devices.

The rule (docs/implicit.md, "shard_map and pmap"): a keyless draw of local shape ``S`` in a
``shard_map`` body varies over the manual axes JAX types its value varying over (a ``pvary``
it meets, an ``out_specs`` entry it reaches; all manual axes without ``check_vma``, as under
``pmap``) and is replicated over the others; the shard at linear position ``i`` over those axes
draws elements ``[i * size(S), (i + 1) * size(S))`` of the site's stream (``offset=``). For
arrays sharded along their leading axis the shards are the blocks of the unsharded draw.

The device count is fixed when JAX starts, so each count runs in a child process
(``run_child_with_host_devices``) that prints one JSON line of booleans and error messages.
"""

from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import run_child_with_host_devices, slow_except
from jax.sharding import PartitionSpec as P

import jaxpmac as jp

CHILD = textwrap.dedent("""
    import json
    import jax, jax.numpy as jnp, numpy as np
    from jax import lax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import jaxpmac as jp

    n = jax.device_count()
    report = {"devices": n}
    key = jp.key(32).split_static("shard_map")
    X = jnp.arange(48.0, dtype=jnp.float32).reshape(16, 3)
    IDS = jnp.arange(100, 116)
    mesh = Mesh(np.array(jax.devices()), ("x",))

    def same(a, b):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))

    def sharded(*arrays, spec=P("x"), on=mesh):
        return [jax.device_put(a, NamedSharding(on, spec)) for a in arrays]

    def smap(body, in_specs=P("x"), out_specs=P("x"), on=mesh, **kw):
        return jax.shard_map(body, mesh=on, in_specs=in_specs, out_specs=out_specs, **kw)

    def noisy(x):                       # data-parallel: noise of the local batch's shape
        return x + jp.rand.normal(x.shape) + jp.rand.uniform(x.shape, minval=x, maxval=x + 1)

    def scanned(x):                     # a scan in the body: a new draw every step
        def step(c, _):
            return c + jp.rand.normal(c.shape), None
        return lax.scan(step, x, None, length=3)[0]

    def keyed(x, ids):                  # per-example noise keyed by the global ids
        def one(row, uid):
            with jp.rand.keyed_by(uid):
                return row + jp.rand.normal(row.shape)
        return jax.vmap(one)(x, ids)

    def checked(name, compute):
        try:
            report[name] = compute()
        except Exception as error:
            report[name] = type(error).__name__ + ": " + str(error)[:2000]

    ref = jax.jit(jp.randomized(noisy))(key, X)
    (xs,) = sharded(X)
    model = jp.randomized(smap(noisy))
    ids, = sharded(IDS)
    # At every device count: the data-parallel layout, pmap and keyed per-example noise
    # (keyed by the global ids: no window over the axes the ids vary over).
    checked("data_parallel_jit", lambda: same(jax.jit(model)(key, xs), ref))
    checked("pmap", lambda: same(jax.jit(jp.randomized(jax.pmap(noisy)))(
        key, X.reshape(n, 16 // n, 3)).reshape(16, 3), ref))
    XC = X.T                            # (3, 16): sharded on its columns
    (xc,) = sharded(XC, spec=P(None, "x"))
    checked("columns", lambda: same(jax.jit(jp.randomized(smap(noisy, P(None, "x"),
                                                                P(None, "x"))))(key, xc),
                                    jax.jit(jp.randomized(noisy))(key, XC)))
    keyed_ref = jax.jit(jp.randomized(keyed))(key, X, IDS)
    checked("keyed_vmap_in_body", lambda: same(
        jax.jit(jp.randomized(smap(keyed, (P("x"), P("x")))))(key, xs, ids), keyed_ref))
    checked("keyed_vmap_in_pmap", lambda: same(jax.jit(jp.randomized(jax.pmap(keyed)))(
        key, X.reshape(n, 16 // n, 3), IDS.reshape(n, 16 // n)).reshape(16, 3), keyed_ref))

    if n == 8:                          # the rest, once
        checked("data_parallel_eager", lambda: same(model(key, xs), ref))
        checked("replicated", lambda: same(
            jax.jit(jp.randomized(smap(noisy, P(), P())))(key, X), ref))
        checked("scan_in_body", lambda: same(jax.jit(jp.randomized(smap(scanned)))(key, xs),
                                             jax.jit(jp.randomized(scanned))(key, X)))
        checked("check_streams", lambda: [f.kind for f in jp.check_streams(model, key, xs)] + [
            f.kind for f in jp.check_streams(jp.randomized(smap(scanned)), key, xs)] + [
            f.kind for f in jp.check_streams(jp.randomized(smap(scanned, P(), P())), key, X)] + [
            f.kind for f in jp.check_streams(jp.randomized(jax.pmap(noisy)), key,
                                             X.reshape(8, 2, 3))])
        mesh2 = jax.make_mesh((4, 2), ("x", "y"))
        X3 = jnp.arange(16 * 4 * 2, dtype=jnp.float32).reshape(16, 4, 2)
        ref3 = jax.jit(jp.randomized(noisy))(key, X3)
        for spec in [P("x"), P(("x", "y")), P(("y", "x")), P("x", "y"), P("y", "x")]:
            (x2,) = sharded(X3, spec=spec, on=mesh2)
            checked(f"mesh_4x2_{spec}", lambda: same(jax.jit(jp.randomized(
                smap(noisy, spec, spec, on=mesh2)))(key, x2), ref3))
        def signs(x):                   # rademacher has no offset=
            return x * jp.rand.rademacher(x.shape)
        checked("no_offset_replicated", lambda: same(
            jax.jit(jp.randomized(smap(signs, P(), P())))(key, X),
            jax.jit(jp.randomized(signs))(key, X)))
        checked("no_offset_varying", lambda: jp.randomized(smap(signs))(key, xs))
        def both(x):
            noise = jp.rand.normal(x.shape)
            return x + noise, noise
        checked("varying_and_replicated", lambda: jp.randomized(
            smap(both, P("x"), (P("x"), P())))(key, xs))
    print("REPORT " + json.dumps(report))
""")

DEVICES = (1, 2, 4, 8)


_REPORTS: dict = {}


def _report_with(devices: int) -> dict:
    """The child's report with ``devices`` host devices, run once per count."""
    if devices not in _REPORTS:
        _REPORTS[devices] = run_child_with_host_devices(CHILD, devices=devices, timeout=600)
    return _REPORTS[devices]


# Eight devices by default: each check compares with the same computation without shard_map in
# the same child, which the checks that need eight devices start anyway. One, two and four in
# the slow run (a child process each, the one-device child 13 s: the same shards' offsets at
# other counts).
@pytest.fixture(params=slow_except(DEVICES, keep=(8,)), ids=[f"{n}dev" for n in DEVICES])
def report(request):
    return _report_with(request.param)


@pytest.fixture
def report_8():
    """The report with 8 devices: the checks that need a 2-D mesh or many shards."""
    return _report_with(8)


CHECKS = ("data_parallel_jit", "columns", "pmap", "keyed_vmap_in_body", "keyed_vmap_in_pmap")


@pytest.mark.parametrize("check", CHECKS)
def test_values_do_not_depend_on_the_device_count(report, check):
    """Each equals ``jp.randomized`` of the same computation without shard_map (pmap's
    examples: the rows of the unsharded batch), whatever the number of devices: sharded on
    the leading axis, on the columns (``P(None, "x")``), keyed by global ids."""
    assert report[check] is True, report[check]


@pytest.mark.parametrize("check", ["data_parallel_eager", "replicated", "scan_in_body"])
def test_eager_replicated_and_scan_in_the_body(report_8, check):
    """Eager as under jit; P() in and out: every shard draws the whole unsharded draw; a
    scan in the body: each step's draws are the unsharded step's."""
    report = report_8
    assert report[check] is True, report[check]


def test_check_streams_finds_nothing(report_8):
    """Data-parallel, a scan in the body (sharded and replicated), pmap: no false alarm."""
    assert report_8["check_streams"] == [], report_8["check_streams"]


def test_a_2d_mesh_draws_over_the_axes_the_data_varies_over(report_8):
    """P("x") on a 4x2 mesh: the draws vary over x and are replicated over y; P(("x", "y"))
    and P(("y", "x")): over both, the shards in the order the out_specs name them; P("x", "y")
    and P("y", "x"): blocks of two dimensions."""
    report = report_8
    results = {k: v for k, v in report.items() if k.startswith("mesh_4x2_")}
    assert len(results) == 5, results
    assert all(v is True for v in results.values()), results


def test_replicated_draws_take_any_sampler_varying_ones_need_offset(report_8):
    report = report_8
    assert report["no_offset_replicated"] is True, report["no_offset_replicated"]
    error = report["no_offset_varying"]
    assert error.startswith("NotImplementedError") and "jaxpmac.rand.rademacher" in error, error
    assert "offset=" in error, error


def test_a_draw_both_varying_and_returned_replicated_is_an_error(report_8):
    error = report_8["varying_and_replicated"]
    assert error.startswith("ValueError: jaxpmac.randomized"), error
    assert "replicated" in error, error


# -- in this process, on a one-device mesh ------------------------------------------------------

def _one_device_mesh(*names):
    return jax.sharding.Mesh(np.array(jax.devices()[:1]).reshape((1,) * len(names)), names)


def test_shard_map_is_looked_through_for_the_sites():
    """A draw's site (its bits, its static words) is the same with or without shard_map."""
    def body(x):
        return x + jp.rand.normal(x.shape) * jp.rand.uniform(x.shape)

    mesh = _one_device_mesh("x")
    mapped = jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    x = jnp.zeros((4, 2))
    assert ([(s.bits, s.static_words) for s in jp.draw_sites(mapped, x)]
            == [(s.bits, s.static_words) for s in jp.draw_sites(body, x)])


def test_a_drawing_shard_map_inside_another_is_an_error():
    mesh = _one_device_mesh("x", "y")
    inner = jax.shard_map(lambda x: x + jp.rand.normal(x.shape), in_specs=P("y"),
                          out_specs=P("y"), axis_names={"y"})     # the outer's mesh
    outer = jax.shard_map(inner, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                          axis_names={"x"})
    with pytest.raises(NotImplementedError, match="inside another shard_map"):
        jp.randomized(outer)(jp.key(0), jnp.zeros((4, 2)))
