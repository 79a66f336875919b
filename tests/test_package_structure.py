"""The package's structure: folders by concept in layers, no import cycles, JAX internals in one
module only, one registry of the samplers."""

import ast
import pathlib
import re

import jaxpmac

PACKAGE = pathlib.Path(jaxpmac.__file__).resolve().parent
# The one module allowed to reach into JAX's internals; it says why, and its use is tested on
# every supported jax (test_jax_interop: lookup of the implementation by name, jax.export).
INTERNALS_MODULE = PACKAGE / "_interop" / "_jax_internals.py"


def _imported_modules(path: pathlib.Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def _jax_internals_used(path: pathlib.Path) -> list[str]:
    """What ``path`` reaches of ``jax._src``: imports of it, ``._src`` attributes and strings that
    name it (``importlib.import_module("jax._src...")``)."""
    used = {name for name in _imported_modules(path) if name.startswith("jax._src")}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr == "_src":
            used.add(f"{ast.unparse(node)} (attribute)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value.startswith(("jax._src", "jax/_src"))):
            used.add(f"{node.value!r} (string)")
    return sorted(used)


def test_only_the_internals_module_uses_jax_internals():
    used = {str(path.relative_to(PACKAGE)): _jax_internals_used(path)
            for path in PACKAGE.rglob("*.py")}
    assert used.pop(str(INTERNALS_MODULE.relative_to(PACKAGE))), (
        f"{INTERNALS_MODULE} is named the internals module but uses no jax._src")
    assert {module: names for module, names in used.items() if names} == {}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, at any depth of its code (a function-level
    import closes a cycle as surely as a top-level one, only later). ``from jaxpmac._samplers
    import _bits`` imports ``jaxpmac._samplers._bits``; only a name that is not a module imports
    the package that holds it."""
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}

    def owner(name):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                deps.update(owner(f"{node.module}.{alias.name}") for alias in node.names)
            elif isinstance(node, ast.Import):
                deps.update(owner(alias.name) for alias in node.names)
        graph[name] = deps - {"", name}
    return graph


def test_no_import_cycles():
    graph = _import_graph()
    state, cycle = {}, []

    def visit(name, path):
        state[name] = "open"
        for dep in sorted(graph[name]):
            if state.get(dep) == "open":
                cycle.extend(path[path.index(dep):] + [dep])
                return True
            if dep not in state and visit(dep, path + [dep]):
                return True
        state[name] = "done"
        return False

    for name in sorted(graph):
        if name not in state and visit(name, [name]):
            break
    assert cycle == [], " -> ".join(cycle)


# The folders, each layer using only the layers before it (docs/design.md, "Layout"): the
# definitions of the bits, the lowerings, the message, the draws, what builds on the draws, the
# public surface, and the self-check that uses all of it.
LAYERS = (
    ("jaxpmac._cipher",),
    ("jaxpmac._lowering",),
    ("jaxpmac._message",),
    ("jaxpmac._samplers",),
    ("jaxpmac._hail", "jaxpmac._interop"),
    ("jaxpmac._implicit",),
    ("jaxpmac._checks",),
    ("jaxpmac", "jaxpmac.hail", "jaxpmac.rand"),
    ("jaxpmac._selfcheck", "jaxpmac.__main__"),
)


def _layer(module: str) -> int:
    """The layer of a module: that of the longest folder or module name it is in."""
    best = (-1, None)
    for rank, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best[0]:
                best = (len(name), rank)
    assert best[1] is not None, f"{module} is in no layer of LAYERS"
    return best[1]


def test_every_private_module_is_in_a_folder():
    top = sorted(path.name for path in PACKAGE.glob("_*.py")
                 if path.name not in ("__init__.py", "__main__.py"))
    assert top == []


def test_each_layer_imports_only_the_layers_under_it():
    upward = sorted(f"{module} -> {dep}" for module, deps in _import_graph().items()
                    for dep in deps if _layer(dep) > _layer(module))
    assert upward == []


CIPHER = PACKAGE / "_cipher"
# Words that name a platform, or the choice of one: the cipher is the same everywhere, and the
# forms each platform compiles best are jaxpmac._lowering's.
PLATFORM_WORDS = {"cpu", "gpu", "tpu", "cuda", "rocm", "platform"}


def _words(source: str) -> set[str]:
    """The words of a source text, in identifiers, strings and comments alike: its runs of
    letters, in lower case and singular (``force_cpu_layout`` holds ``cpu``, ``GPUs`` ``gpu``)."""
    return {word.lower().removesuffix("s") for word in re.findall("[A-Za-z]+", source)}


def test_the_cipher_imports_only_the_cipher():
    outside = {}
    for path in CIPHER.rglob("*.py"):
        tree = ast.parse(path.read_text())
        names = {n for n in _imported_modules(path)
                 if n.split(".")[0] == "jaxpmac" and not n.startswith("jaxpmac._cipher")}
        names |= {f"{'.' * node.level}{node.module or ''}" for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and node.level > 1}
        if names:
            outside[str(path.relative_to(PACKAGE))] = sorted(names)
    assert outside == {}


def test_the_cipher_names_no_platform():
    named = {str(path.relative_to(PACKAGE)): sorted(_words(path.read_text()) & PLATFORM_WORDS)
             for path in CIPHER.rglob("*.py")}
    assert {k: v for k, v in named.items() if v} == {}
    # The check sees a platform where it is named.
    assert _words("force_cpu_layout, 'TPUs' # GPUs, ROCm, by_platform") == {
        "force", "cpu", "layout", "tpu", "gpu", "rocm", "by", "platform"}


def test_the_registry_holds_every_public_sampler():
    from jaxpmac import hail, rand
    from jaxpmac._samplers._registry import SAMPLERS

    not_samplers = {"DrawSite", "RNGState", "StreamFinding", "as_jax_key", "check_streams",
                    "draw_sites", "fold_in_uids",
                    "force_lowering", "hail", "key", "prng_impl", "rand", "randomized",
                    "state_of"}
    public = {name for name in jaxpmac.__all__ if name not in not_samplers}
    public |= {"hail_" + name for name in hail.__all__}
    assert set(SAMPLERS) == public
    assert set(rand.__all__) == public | {"keyed_by"}
    for name in jaxpmac.__all__:
        if name in public:
            assert SAMPLERS[name] is getattr(jaxpmac, name)


# The one test of tracedness, in the lowest layer so that every layer can use it.
IS_TRACED_MODULE = PACKAGE / "_cipher" / "_words.py"


def test_tracedness_is_tested_by_the_one_is_traced():
    offenders = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                       if path != IS_TRACED_MODULE
                       and any(isinstance(node, ast.Attribute) and node.attr == "Tracer"
                               for node in ast.walk(ast.parse(path.read_text()))))
    assert offenders == []


def _package(module: str) -> str:
    """``jaxpmac._samplers`` of ``jaxpmac._samplers._bits``; ``jaxpmac.hail`` of itself."""
    return ".".join(module.split(".")[:2])


# NamedTuple's own methods: public, though underscored.
_PUBLIC_UNDERSCORED = {"_replace", "_asdict", "_fields", "_make"}


def _private_members(tree) -> set[str]:
    """The underscored attributes a module's classes define: methods, ``__slots__`` and
    assignments to ``self.<name>``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names.update(item.name for item in node.body
                         if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
            names.update(c.value for c in ast.walk(node.value)
                         if isinstance(c, ast.Constant) and isinstance(c.value, str))
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id == "self"):
            names.add(node.attr)
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def test_no_module_reads_private_names_of_another_package():
    """A package reads another's private names neither from its modules (``_m._helper``,
    ``from ... import _helper``) nor from its objects (``state._pending``): the owner offers
    what others need."""
    modules = {_module_name(path): ast.parse(path.read_text())
               for path in PACKAGE.rglob("*.py")}
    members = {}
    for name, tree in modules.items():
        members.setdefault(_package(name), set()).update(_private_members(tree))
    reaches = []
    for name, tree in modules.items():
        imported = {}      # local name -> the module it names
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if full in modules:
                        imported[alias.asname or alias.name] = full
                    elif (alias.name.startswith("_") and node.module.startswith("jaxpmac")
                          and _package(node.module) != _package(name)):
                        reaches.append(f"{name} imports {full}")
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__") and isinstance(node.value, ast.Name)):
                continue
            receiver = node.value.id
            if receiver in imported:
                target = imported[receiver]
                if (f"{target}.{node.attr}" not in modules
                        and _package(target) != _package(name)):
                    reaches.append(f"{name} reads {target}.{node.attr}")
            elif (node.attr not in members[_package(name)]
                  and node.attr not in _PUBLIC_UNDERSCORED):
                reaches.append(f"{name}:{node.lineno} reads {receiver}.{node.attr}")
    assert reaches == []


def test_every_sampler_declares_its_parameter_domains_in_the_one_table():
    import inspect

    from jaxpmac._samplers._registry import SAMPLERS
    from jaxpmac._samplers._sampler_args import DOMAINS

    # jaxpmac.hail's samplers take Hail's arguments, checked in jaxpmac/hail.py.
    own = {name for name in SAMPLERS if not name.startswith("hail_")}
    assert set(DOMAINS) == own
    for name, rules in DOMAINS.items():
        parameters = inspect.signature(SAMPLERS[name]).parameters
        assert {arg for rule in rules for arg in rule.names} <= set(parameters), name


def test_sampler_arguments_are_checked_in_the_front_door_only():
    """Every check of a sampler's arguments is in ``_samplers/_sampler_args.py``: no other
    module raises the errors of its state, dtype or shape checks."""
    front_door = PACKAGE / "_samplers" / "_sampler_args.py"
    templates = ("accepts a jaxpmac RNGState", "dtype accepts", "shape accepts",
                 "offset accepts", "accepts real numbers")
    offenders = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                       if path != front_door and any(t in path.read_text() for t in templates))
    assert offenders == []


def test_samplers_word_their_argument_errors_with_the_one_sentence():
    """``<function> <argument> accepts <what>, but was given <what>`` is written by
    ``_sampler_args.rejected`` only: no other module of ``_samplers`` raises it as text."""
    offenders = []
    for path in (PACKAGE / "_samplers").glob("*.py"):
        if path.name == "_sampler_args.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and node.exc is not None:
                text = "".join(part.value for part in ast.walk(node.exc)
                               if isinstance(part, ast.Constant) and isinstance(part.value, str))
                if "accepts" in text and "but was given" in text:
                    offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []
