# Equinox: dropout with pmac keys, one key per step and per example.
import equinox as eqx
import jax
import jax.numpy as jnp

import jaxpmac as jp

root = jp.key(0)
model = eqx.nn.Sequential([
    eqx.nn.Linear(4, 8, key=jp.as_jax_key(root.split_static("init"))),
    eqx.nn.Lambda(jax.nn.relu),
    eqx.nn.Dropout(0.5),
])
dropout = root.split_static("dropout")


@eqx.filter_jit
def forward(model, xs, example_ids, step):
    # Example i of step t draws from dropout.split(t, i): the same mask however the batch is cut.
    keys = jax.vmap(lambda i: jp.as_jax_key(dropout.split(step, i)))(example_ids)
    return jax.vmap(lambda x, k: model(x, key=k))(xs, keys)


xs = jp.normal(root.split_static("inputs"), (6, 4))
ids = jnp.arange(6)
y = forward(model, xs, ids, 3)
part = forward(model, xs[2:4], ids[2:4], 3)
assert ((part == 0) == (y[2:4] == 0)).all()         # a sub-batch: its rows' masks
assert jnp.allclose(part, y[2:4])                    # (the matmul may round otherwise)
assert not ((forward(model, xs, ids, 4) == 0) == (y == 0)).all()   # another step: new masks
print(y[0])
