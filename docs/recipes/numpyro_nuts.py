# NumPyro: NUTS with a pmac key, then Predictive with a threefry key drawn from a jaxpmac state.
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS, Predictive

import jaxpmac as jp

J = 8
y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def eight_schools(sigma, y=None):
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
    with numpyro.plate("J", J):
        theta = numpyro.sample("theta", dist.Normal(mu, tau))
        numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)


root = jp.key(0)
mcmc = MCMC(NUTS(eight_schools), num_warmup=200, num_samples=200, progress_bar=False)
mcmc.run(jp.as_jax_key(root.split_static("mcmc")), sigma, y=y)   # a key<pmac> works here
samples = mcmc.get_samples()

# Predictive hands each sample's raw key data to numpyro.handlers.seed, which takes a typed key
# or threefry's uint32[2] data only: a pmac key's data is uint32[19], so it fails with
# "Incorrect type for rng_seed". Give it a threefry key made from 64 bits of a jaxpmac stream.
predictive_key = jax.random.wrap_key_data(
    jp.bits(root.split_static("predictive"), (2,), jnp.uint32), impl="threefry2x32")
predictions = Predictive(eight_schools, samples)(predictive_key, sigma)["obs"]

again = Predictive(eight_schools, samples)(predictive_key, sigma)["obs"]
assert predictions.shape == (200, J) and (predictions == again).all()


# Or keep the predictive draws on pmac streams: what Predictive does, one typed key a sample.
def predict_one(key, sample):
    model = numpyro.handlers.seed(numpyro.handlers.condition(eight_schools, sample), key)
    return numpyro.handlers.trace(model).get_trace(sigma)["obs"]["value"]


keys = jax.random.split(jp.as_jax_key(root.split_static("predictive")), 200)
on_pmac = jax.vmap(predict_one)(keys, samples)
assert on_pmac.shape == (200, J)
print("mu mean", float(samples["mu"].mean()), "obs[0] means", float(predictions[:, 0].mean()),
      float(on_pmac[:, 0].mean()))
