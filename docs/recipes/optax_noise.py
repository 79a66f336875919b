# optax: gradient noise from a pmac key (optax.add_noise), and a noise transform on jp.normal.
import jax
import jax.numpy as jnp
import optax

import jaxpmac as jp


def loss(params):
    return jnp.sum(params ** 2)


def train(solver, params, n_steps):
    @jax.jit
    def step(params, opt_state):
        updates, opt_state = solver.update(jax.grad(loss)(params), opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    opt_state = solver.init(params)
    for _ in range(n_steps):
        params, opt_state = step(params, opt_state)
    return params


root = jp.key(0)
params = jnp.array([1.0, 2.0, 3.0])

# 1. optax.add_noise takes any typed key: its noise is drawn from jaxpmac streams.
noise_key = jp.as_jax_key(root.split_static("noise"))     # key<pmac>
noisy_sgd = optax.chain(optax.add_noise(eta=0.01, gamma=0.55, key=noise_key), optax.sgd(0.1))
a = train(noisy_sgd, params, 20)
assert (a == train(noisy_sgd, params, 20)).all()          # the same key, the same run


# 2. A transform that draws with jaxpmac's samplers: step t's noise is state.split(t), per leaf.
def add_pmac_noise(state, scale):
    def init(params):
        return jnp.zeros((), jnp.uint32)                   # the step count

    def update(updates, count, params=None):
        leaves, tree = jax.tree.flatten(updates)
        noise = [jp.normal(state.split(count, i), x.shape, x.dtype) for i, x in enumerate(leaves)]
        noisy = [x + scale * n for x, n in zip(leaves, noise)]
        return jax.tree.unflatten(tree, noisy), count + 1

    return optax.GradientTransformation(init, update)


b = train(optax.chain(add_pmac_noise(root.split_static("pmac-noise"), 0.01), optax.sgd(0.1)),
          params, 20)
print("add_noise:", a, "jp.normal noise:", b)
