# Flax NNX: Rngs holding pmac keys; parameters and dropout masks come from jaxpmac streams.
import jax
import jax.numpy as jnp
from flax import nnx

import jaxpmac as jp


class Model(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(4, 8, rngs=rngs)
        self.dropout = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.dropout(nnx.relu(self.linear(x)))


root = jp.key(0)


def make_model():
    return Model(nnx.Rngs(params=jp.as_jax_key(root.split_static("params")),
                          dropout=jp.as_jax_key(root.split_static("dropout"))))


model = make_model()
x = jnp.ones((2, 4))
y1, y2 = model(x), model(x)                  # each call folds in the stream's count: new masks
assert not (y1 == y2).all()

again = make_model()                         # the same keys: the same weights and the same masks
assert (again(x) == y1).all() and (again(x) == y2).all()

model.eval()                                 # no dropout: no key drawn
keys = jax.tree.leaves(nnx.state(model, nnx.RngKey))
print(model(x)[0], {jax.random.key_impl(k) for k in keys})    # {'pmac'}
