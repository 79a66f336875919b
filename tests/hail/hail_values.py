"""Values drawn by Hail itself at many messages, and jaxpmac's against them.

``generate`` runs Hail 0.2.139 (``pip install hail==0.2.139``, in a venv of its own; it needs
Java 11 or 17) and writes its values as records in the format of
``tests/data/conformance/hail_functions_public.json`` (its README gives the fields): for each
case below and each global seed, ``hl.range(start, start + n).map(lambda i: draw)`` gives the
messages ``[i]`` (an ``hl.range``'s elements append their own value) and a nested ``map`` over
``hl.range(4)`` and ``hl.range(5)`` the messages ``[i, j]``; the static word is ``-seed - 1``.
``hl.shuffle(hl.range(start, stop))`` is drawn at the top level, after
``hl.reset_global_randomness()``, so its automatic static uid counts the shuffles before it.

``compare`` draws every record of a file with ``jaxpmac.hail`` (x64 on, ``vmap`` over the
messages of a case) and prints, per case, how many values are equal and how far the others are,
in units in the last place.

Usage::

    /tmp/hail/bin/python tests/hail/hail_values.py generate --n 100 \\
        --out tests/data/hail_values_generated.json
    python tests/hail/hail_values.py compare tests/data/hail_values_generated.json

The committed file was made with ``--n 100`` and the default seeds; tests/hail/test_hail_values.py
checks it. docs/hail_distributions.md gives the results of a larger run (``--n 20000``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
from collections import defaultdict

#: (function, Hail's keyword arguments, seed=): the cases drawn at every message.
CASES = (
    ("rand_gamma", {"shape": 0.3, "scale": 1.0}, 5),
    ("rand_gamma", {"shape": 0.05, "scale": 1.0}, 6),
    ("rand_gamma", {"shape": 2.5, "scale": 3.0}, 7),
    ("rand_beta", {"a": 0.5, "b": 0.5}, 8),
    ("rand_beta", {"a": 2.0, "b": 5.0}, 9),
    ("rand_beta", {"a": 0.3, "b": 4.0, "lower": 0.01, "upper": 0.2}, 10),
    ("rand_pois", {"lamb": 3.0}, 11),
    ("rand_pois", {"lamb": 50.0}, 12),
    ("rand_pois", {"lamb": 1e4}, 13),
    ("rand_hyper", {"popsize": 5000, "ngood": 1200, "nsample": 800}, 14),
    ("rand_hyper", {"popsize": 30, "ngood": 12, "nsample": 9}, 15),
    ("rand_norm", {"mean": 1.0, "sd": 3.0}, 16),
    ("rand_dirichlet", {"a": [0.5, 2.0, 0.0, 3.0]}, 17),
    ("rand_multi_hyper", {"colors": [1000, 10, 250, 3], "nsample": 500}, 18),
)
GLOBAL_SEEDS = (7, -123456789)
#: (start, stop) of each ``hl.shuffle(hl.range(start, stop))``, drawn in this order.
SHUFFLE_RANGES = ((3, 9), (-4, 6), (100, 140), (0, 12), (2**31 - 20, 2**31 - 1))
NESTED = (4, 5)


def generate(n: int, global_seeds, out: str) -> None:
    import hail as hl                                   # only this command needs Hail

    records = []
    log = os.path.join(tempfile.mkdtemp(prefix="hail-values-"), "hail.log")
    for global_seed in global_seeds:
        hl.stop()
        hl.init(global_seed=global_seed, quiet=True, master="local[2]", log=log)
        start = -(n // 2) if global_seed < 0 else 0     # negative words too
        for fn, params, seed in CASES:
            def draw():
                return getattr(hl, fn)(**params, seed=seed)

            flat = hl.eval(hl.range(start, start + n).map(lambda i: draw()))
            nested = hl.eval(hl.range(NESTED[0]).map(
                lambda i: hl.range(NESTED[1]).map(lambda j: draw())))
            cells = [([start + k], v) for k, v in enumerate(flat)]
            cells += [([i, j], v) for i, row in enumerate(nested) for j, v in enumerate(row)]
            records += [dict(fn=fn, params=params, global_seed=global_seed, seed=seed,
                             static_uid=-seed - 1, message=message, value=value)
                        for message, value in cells]
        hl.reset_global_randomness()
        for k, (lo, hi) in enumerate(SHUFFLE_RANGES):
            records.append(dict(fn="shuffle_range", params={"start": lo, "stop": hi},
                                global_seed=global_seed, seed=None, static_uid=k, message=[],
                                value=hl.eval(hl.shuffle(hl.range(lo, hi)))))
    with open(out, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
    print(f"{len(records)} records written to {out}")


def case_key(record) -> tuple:
    """Records of one key are drawn by one program (global seeds and messages traced)."""
    return (record["fn"], json.dumps(record["params"], sort_keys=True), record["static_uid"],
            len(record["message"]))


def draw_records(records) -> list:
    """jaxpmac's value for every record (x64 on), one vmapped draw per case."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxpmac as jp
    from jaxpmac import hail

    groups = defaultdict(list)
    for index, record in enumerate(records):
        groups[case_key(record)].append(index)
    values = [None] * len(records)
    with jax.enable_x64(True):
        for indices in groups.values():
            first = records[indices[0]]
            params = first["params"]
            if first["fn"] == "shuffle_range":
                r = jnp.arange(params["start"], params["stop"])
                for i in indices:
                    state = jp.key(records[i]["global_seed"]).split_static(
                        records[i]["static_uid"])
                    values[i] = hail.shuffle(state, r, uids=r).tolist()
                continue
            function = getattr(hail, first["fn"])
            seeds = jnp.asarray([records[i]["global_seed"] for i in indices], jnp.int64)
            messages = jnp.asarray([records[i]["message"] for i in indices], jnp.int64)

            def draw(seed, message, function=function, params=params,
                     static_uid=first["static_uid"]):
                return function(jp.key(seed).split(message).split_static(static_uid), **params)

            drawn = jax.jit(jax.vmap(draw))(seeds, messages)
            for i, v in zip(indices, np.asarray(drawn).tolist()):
                values[i] = v
    return values


def ulps(got, want) -> float:
    """The largest distance in units in the last place between two values (or lists); 0 for
    equal ones, ``inf`` where an integer or the sign differs."""
    if isinstance(want, list):
        return max((ulps(g, v) for g, v in zip(got, want)), default=0.0)
    if got == want:
        return 0.0
    if isinstance(want, float) and math.isfinite(want) and want != 0:
        return abs(got - want) / math.ulp(want)
    return math.inf


def compare(path: str) -> None:
    with open(path) as f:
        records = json.load(f)
    values = draw_records(records)
    summary = defaultdict(lambda: [0, 0, 0.0])
    for record, value in zip(records, values):
        row = summary[(record["fn"], json.dumps(record["params"]))]
        distance = ulps(value, record["value"])
        row[0] += 1
        row[1] += distance == 0
        row[2] = max(row[2], distance)
    print("| function | params | equal | largest difference (ulp) |")
    print("|---|---|---:|---:|")
    for (fn, params), (count, equal, worst) in summary.items():
        print(f"| {fn} | {params} | {equal}/{count} | {worst:.1f} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("generate", help="draw with Hail (needs hail==0.2.139)")
    make.add_argument("--n", type=int, default=100, help="one-word messages per case and seed")
    make.add_argument("--global-seeds", type=int, nargs="+", default=list(GLOBAL_SEEDS))
    make.add_argument("--out", required=True)
    check = commands.add_parser("compare", help="jaxpmac against a file of Hail's values")
    check.add_argument("path")
    args = parser.parse_args(argv)
    if args.command == "generate":
        generate(args.n, args.global_seeds, args.out)
    else:
        compare(args.path)


if __name__ == "__main__":
    main()
