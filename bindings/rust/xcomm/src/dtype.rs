use xcomm_sys as sys;

mod sealed {
    pub trait Sealed {}
}

/// An element type xcomm can send and reduce: `i8`, `u8`, `i32`, `u32`,
/// `i64`, `u64`, `f32`, `f64`, [`F16`] and [`BF16`].
///
/// Sealed: the buffers are handed to C as raw bytes of `DTYPE`, so only types
/// whose layout is exactly that C type implement it.
pub trait Dtype: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The `xc_dtype_t` of this type.
    const DTYPE: sys::xc_dtype_t;
}

macro_rules! dtypes {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Dtype for $t {
            const DTYPE: sys::xc_dtype_t = sys::$d;
        }
    )*};
}
dtypes!(i8 => XC_INT8, u8 => XC_UINT8, i32 => XC_INT32, u32 => XC_UINT32, i64 => XC_INT64, u64 => XC_UINT64,
        F16 => XC_FLOAT16, BF16 => XC_BFLOAT16, f32 => XC_FLOAT32, f64 => XC_FLOAT64);

/// Bytes of one element of `T` as the library sees it (`xc_dtype_size`).
pub fn dtype_size<T: Dtype>() -> usize {
    // SAFETY: a plain query, any value is accepted.
    unsafe { sys::xc_dtype_size(T::DTYPE) }
}

/// An IEEE binary16 value, stored as its bits (`XC_FLOAT16`). Reductions run
/// in `f32` and round back to nearest even, as [`F16::from_f32`] does.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct F16(pub u16);

/// A bfloat16 value, stored as its bits (`XC_BFLOAT16`): the upper half of an
/// `f32`. Reductions run in `f32` and round back to nearest even.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct BF16(pub u16);

impl F16 {
    /// Round to nearest even (overflow gives infinity; NaN stays NaN).
    pub fn from_f32(f: f32) -> F16 {
        let bits = f.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let abs = bits & 0x7fff_ffff;
        if abs > 0x7f80_0000 {
            return F16(sign | 0x7e00); // NaN
        }
        if abs >= 0x477f_f000 {
            return F16(sign | 0x7c00); // rounds past the largest finite half
        }
        if abs < 0x3880_0000 {
            // subnormal or zero in half: value = mant * 2^-24
            if abs < 0x3300_0000 {
                return F16(sign); // below half the smallest subnormal
            }
            let exp = abs >> 23;
            let mant = (abs & 0x7f_ffff) | 0x80_0000;
            let shift = 126 - exp; // 14..=24
            let half = mant >> shift;
            let rem = mant & ((1u32 << shift) - 1);
            let midpoint = 1u32 << (shift - 1);
            let rounded = if rem > midpoint || (rem == midpoint && half & 1 == 1) {
                half + 1
            } else {
                half
            };
            return F16(sign | rounded as u16);
        }
        // normal: rebias the exponent (127 -> 15) and round the mantissa to 10 bits
        let rebased = abs - (112 << 23);
        let rounded = rebased + 0xfff + ((rebased >> 13) & 1);
        F16(sign | (rounded >> 13) as u16)
    }

    /// Exact.
    pub fn to_f32(self) -> f32 {
        let h = self.0 as u32;
        let sign = (h & 0x8000) << 16;
        let exp = (h >> 10) & 0x1f;
        let mant = h & 0x3ff;
        let bits = if exp == 0x1f {
            sign | 0x7f80_0000 | (mant << 13)
        } else if exp != 0 {
            sign | ((exp + 112) << 23) | (mant << 13)
        } else if mant == 0 {
            sign
        } else {
            // subnormal: mant * 2^-24, exactly representable in f32
            let v = mant as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        };
        f32::from_bits(bits)
    }
}

impl BF16 {
    /// Round to nearest even (NaN stays a quiet NaN).
    pub fn from_f32(f: f32) -> BF16 {
        let bits = f.to_bits();
        if bits & 0x7fff_ffff > 0x7f80_0000 {
            return BF16(((bits >> 16) | 0x40) as u16);
        }
        BF16((bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16) as u16)
    }

    /// Exact.
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

impl From<f32> for F16 {
    fn from(f: f32) -> F16 {
        F16::from_f32(f)
    }
}
impl From<F16> for f32 {
    fn from(h: F16) -> f32 {
        h.to_f32()
    }
}
impl From<f32> for BF16 {
    fn from(f: f32) -> BF16 {
        BF16::from_f32(f)
    }
}
impl From<BF16> for f32 {
    fn from(h: BF16) -> f32 {
        h.to_f32()
    }
}

/// A reduction (`xc_op_t`). Bitwise ops take integer types only (the library
/// answers `XC_ERR_INVALID_ARGUMENT` for a float). Integer sums and products
/// wrap; `Avg` is the (wrapped) sum divided by the number of ranks, truncated
/// toward zero for integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Sum,
    Prod,
    Min,
    Max,
    Avg,
    Band,
    Bor,
    Bxor,
}

impl Op {
    /// Every op, in `xc_op_t` order.
    pub const ALL: [Op; 8] = [
        Op::Sum,
        Op::Prod,
        Op::Min,
        Op::Max,
        Op::Avg,
        Op::Band,
        Op::Bor,
        Op::Bxor,
    ];

    /// The `xc_op_t` value.
    pub fn raw(self) -> sys::xc_op_t {
        match self {
            Op::Sum => sys::XC_SUM,
            Op::Prod => sys::XC_PROD,
            Op::Min => sys::XC_MIN,
            Op::Max => sys::XC_MAX,
            Op::Avg => sys::XC_AVG,
            Op::Band => sys::XC_BAND,
            Op::Bor => sys::XC_BOR,
            Op::Bxor => sys::XC_BXOR,
        }
    }

    /// True for the ops that only integer types accept.
    pub fn is_bitwise(self) -> bool {
        matches!(self, Op::Band | Op::Bor | Op::Bxor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_conversions_round_to_nearest_even() {
        for (f, bits) in [
            (0.0f32, 0x0000u16),
            (-0.0, 0x8000),
            (1.0, 0x3c00),
            (-2.0, 0xc000),
            (65504.0, 0x7bff),
            (65520.0, 0x7c00),
            (f32::INFINITY, 0x7c00),
            (5.960_464_5e-8, 0x0001),
            (2.980_232_2e-8, 0x0000),
            (1.0 + 1.0 / 2048.0, 0x3c00),
            (1.0 + 3.0 / 2048.0, 0x3c02),
            (6.103_515_6e-5, 0x0400),
        ] {
            assert_eq!(F16::from_f32(f).0, bits, "F16::from_f32({f:e})");
        }
        assert!(F16::from_f32(f32::NAN).to_f32().is_nan());
        // Every finite half survives the round trip.
        for bits in 0..=u16::MAX {
            let h = F16(bits);
            let f = h.to_f32();
            if f.is_finite() {
                assert_eq!(F16::from_f32(f), h, "bits {bits:#06x} -> {f:e}");
            }
            let b = BF16(bits);
            if b.to_f32().is_finite() {
                assert_eq!(BF16::from_f32(b.to_f32()), b);
            }
        }
        assert_eq!(BF16::from_f32(1.0).0, 0x3f80);
        assert_eq!(BF16::from_f32(1.0 + 1.0 / 256.0).0, 0x3f80); // tie to even
        assert_eq!(BF16::from_f32(1.0 + 3.0 / 256.0).0, 0x3f82);
    }

    #[test]
    fn dtype_sizes_match_the_library() {
        fn check<T: Dtype>() {
            assert_eq!(
                dtype_size::<T>(),
                std::mem::size_of::<T>(),
                "{}",
                std::any::type_name::<T>()
            );
        }
        check::<i8>();
        check::<u8>();
        check::<i32>();
        check::<u32>();
        check::<i64>();
        check::<u64>();
        check::<F16>();
        check::<BF16>();
        check::<f32>();
        check::<f64>();
    }
}
