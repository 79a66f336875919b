"""Division and square root correctly rounded on every platform, for the samplers' arithmetic.

IEEE 754 fixes ``x / y`` and ``sqrt(x)`` to the nearest representable value, and XLA's CPU
backend computes them so. Its GPU backend does not for float32: NVPTX compiles a float32
division to ``div.full.f32`` (within 2 ulps) and a square root to ``sqrt.approx.f32``, unless
the process sets ``--xla_backend_extra_options=-nvptx-prec-divf32=2,...`` (measured on an H200:
16 golden cases differ from the CPU's in float32; benchmarks/README.md, "GPU"). float64
division and square root are correctly rounded on both.

So on GPUs, the float32 (and narrower) operations here are computed in float64 and rounded
back: ``float32(float64(x) / float64(y))`` is the correctly rounded float32 quotient, as is
``float32(sqrt(float64(x)))`` the root, because float64 carries more than twice float32's
precision plus two bits (double rounding is then innocuous: Figueroa, "When is double rounding
innocuous?", SIGNUM 1995); its last operand and result pass the bit-level identity of
``_fixed_math.rounded``, so that neither LLVM nor XLA narrows it back to the float32
operation (see ``_opaque``). On CPUs, where the plain operations are already exact, the plain
ones. The choice is made per platform when the program is lowered (both are staged in a
multi-platform export); ``jp.force_lowering("elementwise")``, which gives any machine the GPU's
program, takes the float64 form everywhere, which is how its bits are tested on a CPU.

Each is a primitive of its own, so that the float64 form does not need ``jax_enable_x64``,
with the derivatives ``lax.div`` and ``lax.sqrt`` have (written with these operations, so that
a gradient's values are fixed too).

Example:
    >>> import jax.numpy as jnp
    >>> float(divide(jnp.float32(1), jnp.float32(3))) == float(jnp.float32(1) / jnp.float32(3))
    True
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import Primitive
from jax.extend.mlir import ir
from jax.extend.mlir.dialects import stablehlo as hlo
from jax.interpreters import ad, batching, mlir

from jaxpmac._lowering import _platform
from jaxpmac._samplers import _integer_float

#: Platforms whose float32 division and square root are not correctly rounded; there the
#: float64 form is lowered. (TPUs: not measured; XLA's TPU float64 is emulated in float32
#: pairs, so the float64 form would not help there.)
APPROXIMATE_PLATFORMS = ("cuda", "rocm")


def _via_float64() -> bool:
    """Whether a draw traced now takes the float64 form on every platform (forced), rather than
    where :data:`APPROXIMATE_PLATFORMS` need it."""
    return _platform.forced_lowering() == "elementwise"


def divide(x, y) -> jax.Array:
    """``x / y``, correctly rounded on every platform (floats; dtypes promoted as by ``/``).

    Where ``y`` is broadcast to the result's shape or is a Python or numpy number,
    ``x * (1 / y)``, rounded twice: what XLA's CPU compiler makes of such a division (its
    algebraic simplifier rewrites ``A / broadcast(B)`` and ``A / constant`` so), written out so
    that every platform computes it (XLA's GPU compiler keeps the division). A division by a
    value that XLA finds to be a broadcast only after simplifying (``f(broadcast(p))``) must be
    written so too, by the caller: ``x * divide(1, y)``.

    Example:
        >>> import jax.numpy as jnp
        >>> divide(jnp.arange(3.0), 2.0).tolist()
        [0.0, 0.5, 1.0]
    """
    # A Python or numpy number is a constant in a compiled program (a jax array is an
    # argument op by op, under ``jax.disable_jit``, so it is divided by there).
    constant = isinstance(y, (int, float, np.ndarray, np.generic))
    x, y = jnp.asarray(x), jnp.asarray(y)
    dtype = jnp.result_type(x, y, 1.0)          # as ``/``: Python scalars weak, ints to float
    x, y = x.astype(dtype), y.astype(dtype)
    shape = jnp.broadcast_shapes(x.shape, y.shape)
    if y.shape != shape or constant:
        return _times_reciprocal(x, y, via_float64=_via_float64())
    return _applied(divide_p, jnp.broadcast_to(x, shape), y, via_float64=_via_float64())


def _times_reciprocal(x, y, *, via_float64: bool) -> jax.Array:
    """``x * (1 / y)``, the division correctly rounded: what XLA's CPU compiler computes for a
    division by a broadcast or a constant."""
    return x * _applied(divide_p, jnp.ones_like(y), y, via_float64=via_float64)


def sqrt(x) -> jax.Array:
    """``sqrt(x)``, correctly rounded on every platform.

    Example:
        >>> import jax.numpy as jnp
        >>> sqrt(jnp.array([4.0, 2.0])).tolist()[0]
        2.0
    """
    x = jnp.asarray(x)
    return _applied(sqrt_p, x.astype(jnp.result_type(x, 1.0)), via_float64=_via_float64())


def _narrower_than_float64(aval) -> bool:
    return jnp.issubdtype(aval.dtype, jnp.floating) and aval.dtype.itemsize < 8


def identity_caps(dtype) -> tuple[int, int]:
    """The caps of the bit-level identity (``_fixed_math.rounded``) for floats of ``dtype``: a
    quiet NaN's bits as a signed integer (+NaN's) and as an unsigned one (-NaN's). Only NaNs
    lie above either."""
    width = jnp.dtype(dtype).itemsize * 8
    quiet_nan = int(np.array(np.nan, dtype).view(f"uint{width}"))
    sign = 1 << (width - 1)
    return quiet_nan & ~sign, quiet_nan | sign


def _opaque(value: ir.Value, dtype) -> ir.Value:
    """``value`` (a tensor of float ``dtype``) through the identity of ``_fixed_math.rounded``,
    emitted here.

    Why: compilers undo the float64 form otherwise. LLVM narrows
    ``fptrunc(fdiv(fpext a, fpext b))`` back to a float32 division (exact on paper: the double
    rounding is innocuous), which NVPTX then approximates; and XLA, allowed excess precision,
    removes a float64 -> float32 -> float64 round trip between two such operations.
    """
    shape = ir.RankedTensorType(value.type).shape
    width = jnp.dtype(dtype).itemsize * 8
    signed_cap, unsigned_cap = identity_caps(dtype)

    def capped(bits, integer_type, cap):
        cap_type = ir.RankedTensorType.get(shape, integer_type)
        cap = ir.DenseElementsAttr.get_splat(cap_type, ir.IntegerAttr.get(integer_type, cap))
        return hlo.minimum(bits, hlo.constant(cap))

    signed = ir.IntegerType.get_signless(width)
    unsigned = ir.IntegerType.get_unsigned(width)
    bits = hlo.bitcast_convert(ir.RankedTensorType.get(shape, signed), value)
    bits = capped(bits, signed, signed_cap)
    bits = hlo.bitcast_convert(ir.RankedTensorType.get(shape, unsigned), bits)
    # The unsigned cap as the signed integer with the same bits (MLIR's attribute is signed).
    bits = capped(bits, unsigned, unsigned_cap - (1 << width))
    return hlo.bitcast_convert(value.type, bits)


def _lowering(operation, *, platform_needs_float64: bool):
    """A lowering rule applying the StableHLO ``operation`` to the operands, in float64 where
    the platform needs it or the trace asked for it, if the operands are narrower."""
    def rule(ctx, *operands, via_float64: bool):
        aval_out, = ctx.avals_out
        if not (platform_needs_float64 or via_float64) or not _narrower_than_float64(aval_out):
            return [operation(*operands)]
        wide = ir.RankedTensorType.get(aval_out.shape, ir.F64Type.get())
        # The last operand (the divisor, the root's argument) through the identity: LLVM
        # narrows the operation only when every operand is an extension.
        *first, last = (hlo.convert(wide, x) for x in operands)
        result = operation(*first, _opaque(last, np.float64))
        return [_opaque(hlo.convert(operands[0].type, result), aval_out.dtype)]
    return rule


def _elementwise_primitive(name: str, operation) -> Primitive:
    primitive = Primitive(name)
    primitive.def_abstract_eval(lambda x, *rest, via_float64: jax.core.ShapedArray(x.shape,
                                                                                   x.dtype))
    _platform.def_compiled_impl(primitive)
    mlir.register_lowering(primitive, _lowering(operation, platform_needs_float64=False))
    for platform in APPROXIMATE_PLATFORMS:
        mlir.register_lowering(primitive, _lowering(operation, platform_needs_float64=True),
                               platform=platform)
    return primitive


divide_p = _elementwise_primitive("jaxpmac_divide", hlo.divide)
sqrt_p = _elementwise_primitive("jaxpmac_sqrt", hlo.sqrt)


def _divide_batcher(operands, batch_dims, *, via_float64):
    (x, y), (x_dim, y_dim) = operands, batch_dims
    if y_dim is None:
        # A divisor the same in every lane is a broadcast: times its reciprocal (``divide``).
        return _times_reciprocal(x, y, via_float64=via_float64), x_dim
    size = y.shape[y_dim]
    x, y = batching.bdim_at_front(x, x_dim, size), batching.bdim_at_front(y, y_dim, size)
    return divide_p.bind(x, y, via_float64=via_float64), 0


batching.primitive_batchers[divide_p] = _divide_batcher
# Inside a Pallas kernel body, which cannot hold these primitives: float32 in integer
# arithmetic (the backends' own float32 operations are approximate on some: Triton's), float64
# as the backend's own (correctly rounded where a kernel has float64 at all). Narrower floats
# go through float32, whose 24 bits make the second rounding innocuous (Figueroa, above).
_KERNEL_FORMS = {divide_p: (_integer_float.divide, lax.div),
                 sqrt_p: (_integer_float.sqrt, lax.sqrt)}


def _applied(primitive: Primitive, *operands, via_float64: bool) -> jax.Array:
    if _platform.in_kernel():
        narrow, wide = _KERNEL_FORMS[primitive]
        dtype = operands[0].dtype
        if not _narrower_than_float64(operands[0].aval):
            return wide(*operands)
        result = narrow(*(x.astype(jnp.float32) for x in operands))
        return result.astype(dtype)
    return primitive.bind(*operands, via_float64=via_float64)
batching.defvectorized(sqrt_p)


# The derivatives of ``lax.div`` and ``lax.sqrt``, in these operations.
def _divide_by(g, x, y, *, via_float64):
    return divide_p.bind(g, y, via_float64=via_float64)


def _divide_jvp_y(g, x, y, *, via_float64):
    # lax.div's: -g x y**-2, with y**-2 as jax.lax.integer_pow lowers it, 1 / (y * y).
    inverse_square = divide_p.bind(jnp.ones_like(y), y * y, via_float64=via_float64)
    return (-g * x) * inverse_square


def _divide_transpose(cotangent, x, y, *, via_float64):
    assert ad.is_undefined_primal(x) and not ad.is_undefined_primal(y)
    if type(cotangent) is ad.Zero:
        return [ad.Zero(x.aval), None]
    return [divide_p.bind(cotangent, y, via_float64=via_float64), None]


ad.defjvp(divide_p, _divide_by, _divide_jvp_y)
ad.primitive_transposes[divide_p] = _divide_transpose


def _sqrt_jvp(g, root, x, *, via_float64):
    return g * divide_p.bind(jnp.full_like(root, 0.5), root, via_float64=via_float64)


ad.defjvp2(sqrt_p, _sqrt_jvp)
