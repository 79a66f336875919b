"""Shared helpers for the jaxpmac test suite: the reference oracle, conformance data, hypothesis
settings and strategies, and conversions between oracle words (Python ints) and JAX arrays.

Compile time dominates these tests on a small CPU, so the helpers favour batching many random
cases into one jitted call with fixed shapes (hypothesis then varies values, never shapes).
"""

from __future__ import annotations

import collections
import functools
import json
import math
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import hypothesis
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import strategies as st

from jaxpmac._lowering import LOWERINGS, force_lowering

TESTS_DIR = pathlib.Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

import reference_oracle as ro  # noqa: E402

# One on-disk compilation cache per test run, shared by its worker processes: a program that
# several tests compile (the same sampler, shape and parameters from another test or file) is
# compiled once per run (about a tenth of the default run's time, docs/testing.md). It is jax's
# own persistent cache, keyed by the program, the compile options, the backend and XLA_FLAGS;
# it starts empty in every run (so no run reads what an earlier one left) and is removed at the
# end. Set only in this process' jax config, so child processes (the instruction-set checks,
# the notebooks) compile everything themselves. JAXPMAC_TEST_COMPILATION_CACHE=off turns it off.
_CACHE_VARIABLE = "JAXPMAC_TEST_COMPILATION_CACHE"
_CACHE_KEY = pytest.StashKey[str]()


def pytest_configure(config):
    global _example_share
    if config.getoption("all_examples"):
        _example_share = 1
    if os.environ.get(_CACHE_VARIABLE) == "off":
        return
    if not hasattr(config, "workerinput"):          # the controller, or a run without workers
        directory = tempfile.mkdtemp(prefix="jaxpmac-tests-xla-cache-")
        config.stash[_CACHE_KEY] = directory
        os.environ[_CACHE_VARIABLE] = directory     # inherited by the workers it starts
    jax.config.update("jax_compilation_cache_dir", os.environ[_CACHE_VARIABLE])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)


def pytest_unconfigure(config):
    directory = config.stash.get(_CACHE_KEY, None)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
        os.environ.pop(_CACHE_VARIABLE, None)


@pytest.fixture(autouse=True, scope="module")
def _fresh_compilation_caches():
    """Frees each test module's compiled programs when it ends. One process runs the whole
    suite, and every compiled CPU program keeps memory mappings of its code: thousands of them
    reach the kernel's per-process limit (vm.max_map_count), where XLA's compiler crashed."""
    yield
    jax.clear_caches()


# Known answers (test data): the cipher's vectors and values produced by Hail 0.2.139.
CONFORMANCE = TESTS_DIR / "data" / "conformance"

MASK32 = (1 << 32) - 1
MASK64 = (1 << 64) - 1

# Property tests: few examples (each may run a compiled program), no example database (tests
# must not depend on files left by earlier runs), no deadline (first calls compile). A decorator,
# not a loaded profile, so that other test files keep hypothesis' defaults.
PROPERTY_SETTINGS = hypothesis.settings(
    max_examples=25, deadline=None, database=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow,
                           hypothesis.HealthCheck.data_too_large])


def param(*values, slow: bool, id: str | None = None):
    """One case of ``pytest.mark.parametrize`` (``pytest.param``), in the slow run (``-m slow``)
    if ``slow``; its id is pytest's own unless ``id`` is given."""
    return pytest.param(*values, id=id, marks=pytest.mark.slow if slow else ())


def slow_except(values, keep) -> list:
    """Parametrize ``values``: those in ``keep`` run by default, the others in the slow run
    (``-m slow``), for repeats of one program shape that add little to every run."""
    return [param(value, slow=value not in keep) for value in values]


def slow_where(where):
    """A class decorator: the class' tests whose names ``where`` accepts (the names chex's
    variants and absl's parameters gave them) run in the slow run only, as ``slow_except`` does
    for a parametrized function's cases."""
    def mark(cls):
        names = [name for name in dir(cls) if name.startswith("test") and where(name)]
        # Fails if chex or absl name their tests otherwise, rather than marking nothing.
        assert names, f"{cls.__name__}: no test name matches"
        for name in names:
            test = getattr(cls, name)

            @functools.wraps(test)
            def run(self, *args, _test=test, **kwargs):
                return _test(self, *args, **kwargs)
            setattr(cls, name, pytest.mark.slow(run))
        return cls
    return mark


#: The share of each property test's examples that a run draws: a fifth (at least two) by
#: default, every one with ``--all-examples``. Most examples compile the sampler again (another
#: message length or size is another program), so the examples are most of these tests' time;
#: the default run is CI's, and examples are drawn anew in every run.
DEFAULT_RUN_EXAMPLE_SHARE = 0.2
_example_share = DEFAULT_RUN_EXAMPLE_SHARE


def pytest_addoption(parser):
    parser.addoption("--all-examples", action="store_true",
                     help="run every property test with its full number of examples "
                          f"(the default run draws {DEFAULT_RUN_EXAMPLE_SHARE:.0%}, at least 2)")


def property_settings(max_examples: int = 25) -> hypothesis.settings:
    """The property tests' settings, with ``max_examples`` in a run with ``--all-examples``
    and a fifth of it (at least two) in the default run."""
    drawn = max_examples if _example_share == 1 else max(2, math.ceil(max_examples
                                                                      * _example_share))
    return hypothesis.settings(PROPERTY_SETTINGS, max_examples=drawn)


def load_conformance(name: str):
    return json.loads((CONFORMANCE / name).read_text())


def hex_words(words) -> tuple[int, ...]:
    return tuple(int(x, 16) for x in words)


# -- lowerings ----------------------------------------------------------------------------------
@pytest.fixture(params=LOWERINGS)
def each_lowering(request):
    """Runs a test once per lowering (forced with ``jaxpmac.force_lowering``), so that the
    GPU and TPU lowerings are checked against the oracle on this CPU. Modules opt in with
    ``pytestmark = pytest.mark.usefixtures("each_lowering")``."""
    with force_lowering(request.param):
        yield request.param


#: The lowering the machine running the tests gets on its own (what ``rolled`` is to a CPU).
OWN_LOWERING = "rolled"


#: Files whose tests are each a long run of its own (a subprocess compiling every golden case at
#: one instruction-set level, about two minutes; a golden case's own program, up to 40 s): each
#: test is a work unit of its own for ``--dist loadfile``, and they run first, so that they
#: spread over the workers instead of ending the run on one of them while the others idle.
OWN_WORK_UNIT_FILES = ("tests/samplers/test_golden_values_isa.py",
                       "tests/samplers/test_golden_values.py")


def _own_work_unit(nodeid: str) -> bool:
    return nodeid.split("::", 1)[0] in OWN_WORK_UNIT_FILES


class _OwnWorkUnitsFirst(collections.OrderedDict):
    """A work queue (scope -> tests) that keeps the work units of :data:`OWN_WORK_UNIT_FILES`
    in front, however xdist orders the others (by their number of tests, largest first)."""

    def __setitem__(self, scope, tests):
        super().__setitem__(scope, tests)
        if _own_work_unit(scope):
            self.move_to_end(scope, last=False)


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile``, except that each test of :data:`OWN_WORK_UNIT_FILES` is a work unit
    of its own, handed out first."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LoadFileLongTestsFirst(LoadFileScheduling):
        def __init__(self, config, log=None):
            super().__init__(config, log)
            self.workqueue = _OwnWorkUnitsFirst()

        def _split_scope(self, nodeid: str) -> str:
            return nodeid if _own_work_unit(nodeid) else super()._split_scope(nodeid)

    return LoadFileLongTestsFirst(config, log)


#: Docstring examples in the slow run: Hail's jdistlib-based functions, each compiling for 10-20
#: s on a 2-core CPU. Their values are pinned by the golden values and Hail's records
#: (tests/samplers/test_golden_values.py, tests/hail/test_hail_distributions.py).
SLOW_DOCTESTS = frozenset(f"jaxpmac.hail.{name}" for name in (
    "rand_pois", "rand_gamma", "rand_dirichlet", "rand_hyper", "rand_multi_hyper"))


def pytest_collection_modifyitems(items):
    """Tests marked ``other_lowerings_slow`` run under :data:`OWN_LOWERING` (and the lowerings
    the marker's ``keep=`` names) by default and under the others in the slow run: samplers
    composed of other samplers (a gamma's ratio, a normal times a factor), whose
    lowering-dependent parts, the words and the maps, are checked under every lowering by their
    own tests; the CPU lowering's own step and chunk boundaries; property tests of paths that
    a cheaper test covers under every lowering (each marker's comment says which). The examples
    of :data:`SLOW_DOCTESTS` run in the slow run."""
    for item in items:
        if isinstance(item, pytest.DoctestItem) and item.name in SLOW_DOCTESTS:
            item.add_marker(pytest.mark.slow)
        callspec = getattr(item, "callspec", None)
        marker = item.get_closest_marker("other_lowerings_slow")
        if marker is None or callspec is None:
            continue
        kept = (OWN_LOWERING, *marker.kwargs.get("keep", ()))
        if callspec.params.get("each_lowering", OWN_LOWERING) not in kept:
            item.add_marker(pytest.mark.slow)


def for_each_lowering(cls=None, *, keep=()):
    """A ``unittest.TestCase`` class whose tests run once per lowering (forced with
    ``force_lowering``), each as a test of its own: ``test_x__under_<lowering>`` (pytest's
    parametrized fixtures do not reach ``TestCase`` methods). Those under
    :data:`OWN_LOWERING` and ``keep`` run by default, the others in the slow run, as
    ``other_lowerings_slow`` does for functions. Apply it after the class' own test generation
    (chex variants, absl parameters): it replaces the final methods."""
    if cls is None:
        return functools.partial(for_each_lowering, keep=keep)
    kept = (OWN_LOWERING, *keep)
    for name in [name for name in dir(cls) if name.startswith("test")]:
        test = getattr(cls, name)
        delattr(cls, name)
        for lowering in LOWERINGS:
            def run_under(self, *args, _test=test, _lowering=lowering, **kwargs):
                with force_lowering(_lowering):
                    _test(self, *args, **kwargs)
            run_under = functools.wraps(test)(run_under)
            run_under.__name__ = f"{name}__under_{lowering}"
            if lowering not in kept:
                run_under = pytest.mark.slow(run_under)
            setattr(cls, run_under.__name__, run_under)
    return cls


# -- strategies -------------------------------------------------------------------------------
#: Every accepted integer value of a word: [-2**63, 2**64).
word_values = st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1)
#: Unsigned 64-bit words.
u64_words = st.integers(min_value=0, max_value=MASK64)
#: Static labels: ints and unicode strings (multi-byte characters included).
labels = st.one_of(word_values, st.text(max_size=20))
label_lists = st.lists(labels, max_size=3)


# -- conversions ------------------------------------------------------------------------------
ORACLE_STREAMS = {
    jnp.dtype(jnp.uint8): ro.stream8,
    jnp.dtype(jnp.uint16): ro.stream16,
    jnp.dtype(jnp.uint32): ro.stream32,
    jnp.dtype(jnp.uint64): ro.stream64,
}


def oracle_label_words(label_list) -> list[int]:
    return [word for label in label_list for word in ro.label_words(label)]


def oracle_bits(nonce, label_list, message, n: int, dtype, start: int = 0) -> np.ndarray:
    """Stream elements ``start .. start + n - 1`` of the oracle as a numpy array of ``dtype``."""
    dtype = jnp.dtype(dtype)
    values = ORACLE_STREAMS[dtype](nonce, oracle_label_words(label_list), list(message), n, start)
    return np.array(values, dtype=np.uint64).astype(dtype)


def pair_arrays(words) -> tuple[np.ndarray, np.ndarray]:
    """Words (ints) as ``(hi, lo)`` uint32 numpy arrays."""
    values = [ro.to_word(x) for x in words]
    return (np.array([x >> 32 for x in values], np.uint32),
            np.array([x & MASK32 for x in values], np.uint32))


def u64_array(words) -> np.ndarray:
    return np.array([ro.to_word(x) for x in words], np.uint64)


def words_from_pair(hi, lo) -> list[int]:
    hi = np.asarray(hi).astype(np.uint64).ravel()
    lo = np.asarray(lo).astype(np.uint64).ravel()
    return [int(x) for x in (hi << np.uint64(32)) | lo]


def as_u64_list(array) -> list[int]:
    return [int(x) for x in np.asarray(array).astype(np.uint64).ravel()]


def assert_equal_arrays(actual, expected) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected)


# -- child processes with several host devices -------------------------------------------------
def run_child_with_host_devices(script: str, *, devices: int = 8, timeout: int = 600) -> dict:
    """Runs ``script`` in a Python child with ``devices`` CPU devices and x64 off (device count
    and x64 are fixed at start-up, so sharding tests need their own process) and returns the
    JSON of its one ``REPORT {...}`` line."""
    repo = TESTS_DIR.parent
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
               JAX_PLATFORMS="cpu", JAX_ENABLE_X64="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(repo), env.get("PYTHONPATH")]))
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=env, cwd=repo, timeout=timeout)
    assert child.returncode == 0, child.stderr[-4000:]
    lines = [line for line in child.stdout.splitlines() if line.startswith("REPORT ")]
    assert len(lines) == 1, child.stdout[-2000:] + child.stderr[-2000:]
    return json.loads(lines[0][len("REPORT "):])


def peak_over_output(draw, seed=None) -> float:
    """Peak memory of the compiled ``draw(seed)`` (``memory_analysis``: temp + output +
    arguments) over its output's size: a property of the program, not a timing. ``seed``:
    a ``uint32`` by default; a ``jax.random`` key to measure ``jax.random``'s draws.

    Always the CPU's program (the seed is placed on a CPU device), also where the suite runs on
    a GPU: the layouts these tests bound are the CPU lowering's (an accelerator's memory is
    measured by ``benchmarks.deviceless``)."""
    seed = jnp.uint32(1) if seed is None else seed
    seed = jax.device_put(seed, jax.devices("cpu")[0])
    memory = jax.jit(draw).lower(seed).compile().memory_analysis()
    peak = memory.temp_size_in_bytes + memory.output_size_in_bytes + memory.argument_size_in_bytes
    return peak / memory.output_size_in_bytes
