"""``jaxpmac/rand.py`` names each keyless sampler in its source, one per registered sampler.

The names are written out so that editors and type checkers see them. The block between the
markers in ``rand.py`` is written from the registry (:data:`jaxpmac._samplers._registry.SAMPLERS`)
by this file run as a script, after adding, renaming or removing a sampler::

    python tests/test_rand_names.py
"""

import inspect
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RAND = ROOT / "jaxpmac" / "rand.py"
BEGIN, END = "# BEGIN keyless samplers\n", "# END keyless samplers\n"
REWRITE = "python tests/test_rand_names.py"


def _split(text: str) -> tuple[str, str, str]:
    """``text`` as (before the block, the block, after it), the markers outside the block."""
    head, begin, rest = text.partition(BEGIN)
    block, end, tail = rest.partition(END)
    assert begin and end, f"{RAND} lacks the lines {BEGIN!r} and {END!r}"
    return head + begin, block, end + tail


def keyless_block(samplers) -> str:
    """The block of ``rand.py`` for the registered ``samplers``: its ``__all__`` and one
    ``name = _keyless("name")`` line per sampler."""
    names = sorted(samplers)
    exported = "".join(f'    "{name}",\n' for name in sorted([*names, "keyed_by"]))
    made = "".join(f'{name} = _keyless("{name}")\n' for name in names)
    return f"__all__ = [\n{exported}]\n\n{made}"


def test_rand_names_every_registered_sampler_once():
    from jaxpmac._samplers._registry import SAMPLERS

    _, block, _ = _split(RAND.read_text())
    assert block == keyless_block(SAMPLERS), (
        f"jaxpmac/rand.py's keyless samplers differ from the registry; rewrite them: {REWRITE}")


def test_each_keyless_sampler_takes_its_samplers_arguments_and_a_name():
    from jaxpmac import rand
    from jaxpmac._samplers._registry import SAMPLERS

    for name, explicit in SAMPLERS.items():
        keyless = getattr(rand, name)
        after_state = list(inspect.signature(explicit).parameters.values())[1:]
        assert list(inspect.signature(keyless).parameters.values()) == [*after_state, (
            inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None))], name
        assert keyless.__name__ == name and keyless.__module__ == "jaxpmac.rand", name


def write() -> None:
    """Rewrites the block of ``rand.py`` from the registry. The block is emptied first, so that
    ``jaxpmac`` imports even while the block names a sampler that is not registered (one just
    renamed or removed)."""
    head, _, tail = _split(RAND.read_text())
    RAND.write_text(head + tail)
    sys.path.insert(0, str(ROOT))           # this checkout's jaxpmac, not an installed one
    from jaxpmac._samplers._registry import SAMPLERS

    RAND.write_text(head + keyless_block(SAMPLERS) + tail)


if __name__ == "__main__":
    write()
    print("wrote", RAND)
