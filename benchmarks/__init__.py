"""Benchmarks of jaxpmac against jax.random and numpy; run ``python -m benchmarks.run``."""
