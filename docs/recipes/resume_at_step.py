# Resuming a run's randomness at step N: step t draws from root.split(t), so a restart from a
# checkpoint at step N draws exactly what the uninterrupted run drew from step N on.
import pathlib
import tempfile

import jax
import jax.numpy as jnp
import orbax.checkpoint as ocp

import jaxpmac as jp


@jax.jit
def train_step(params, rng, step):
    state = rng.split(step)                                   # this step's randomness
    batch = jp.normal(state.split_static("batch"), (32, 3))
    keep = jp.bernoulli(state.split_static("dropout"), 0.9, (32, 3))
    grad = jax.grad(lambda p: jnp.mean((jnp.where(keep, batch, 0.0) @ p - 1.0) ** 2))(params)
    return params - 0.1 * grad


def run(params, rng, start, stop):
    for step in range(start, stop):
        params = train_step(params, rng, step)
    return params


root = jp.key(2026).split_static("my-run")
init = {"params": jnp.zeros(3), "rng": root, "step": 0}
uninterrupted = run(init["params"], root, 0, 10)

# The first run stops after step 5 and saves its checkpoint: params, root state and step.
with tempfile.TemporaryDirectory() as folder:
    path = pathlib.Path(folder) / "step_5"
    checkpointer = ocp.StandardCheckpointer()
    checkpointer.save(path, {"params": run(init["params"], root, 0, 5), "rng": root, "step": 5})
    checkpointer.wait_until_finished()
    restored = checkpointer.restore(path, init)                 # the state comes back a state

resumed = run(restored["params"], restored["rng"], int(restored["step"]), 10)
assert (resumed == uninterrupted).all()
print("resumed at step 5:", resumed, "== uninterrupted:", uninterrupted)
