# blackjax: NUTS and random-walk Metropolis steps driven by a pmac key.
import blackjax
import jax
import jax.numpy as jnp
import jax.scipy.stats as stats

import jaxpmac as jp


def logdensity(x):                                     # a 2-D standard normal
    return stats.norm.logpdf(x).sum()


nuts = blackjax.nuts(logdensity, step_size=0.5, inverse_mass_matrix=jnp.ones(2))
rmh = blackjax.additive_step_random_walk.normal_random_walk(logdensity, sigma=jnp.ones(2))


def run(kernel, key, n_steps):
    def one_step(state, key):
        state, info = kernel.step(key, state)
        return state, state.position

    _, positions = jax.lax.scan(one_step, kernel.init(jnp.zeros(2)),
                                jax.random.split(key, n_steps))
    return positions


root = jp.key(0)
key = jp.as_jax_key(root.split_static("nuts"))          # key<pmac>
nuts_draws = jax.jit(run, static_argnums=(0, 2))(nuts, key, 500)
rmh_draws = jax.jit(run, static_argnums=(0, 2))(rmh, jp.as_jax_key(root.split_static("rmh")), 500)

# The same key gives the same chain, and step i's key names the state root.split(i).
assert (nuts_draws == jax.jit(run, static_argnums=(0, 2))(nuts, key, 500)).all()
step_7 = jp.as_jax_key(root.split_static("nuts").split(7))
assert (jax.random.key_data(jax.random.split(key, 500)[7]) == jax.random.key_data(step_7)).all()
print("NUTS mean", nuts_draws.mean(0), "std", nuts_draws.std(0))
print("RWM mean", rmh_draws.mean(0), "std", rmh_draws.std(0))
