//! The dense scoring both stores share: one dot product, so a chunk scores bit for bit alike
//! in the embedded store and in PostgreSQL, and thresholds fitted on one hold on the other.

/// The fastest dot product this CPU supports: an AVX2+FMA build of the same loop when the CPU
/// has it (the portable build only gets SSE2), chosen once per scan.
pub fn dot_fn() -> fn(&[f32], &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            return |a, b| {
                // SAFETY: the CPU supports AVX2 and FMA, checked just above.
                unsafe { dot_avx2_fma(a, b) }
            };
        }
    }
    dot_portable
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2_fma(a: &[f32], b: &[f32]) -> f32 {
    dot_portable(a, b)
}

/// Sixteen independent accumulators so the compiler can keep two vector registers busy.
#[inline(always)]
fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..16 {
            acc[k] = x[k].mul_add(y[k], acc[k]);
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_naive() {
        let a: Vec<f32> = (0..385).map(|i| (i as f32).sin()).collect();
        let b: Vec<f32> = (0..385).map(|i| (i as f32).cos()).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot_fn()(&a, &b) - naive).abs() < 1e-3);
        assert!((dot_portable(&a, &b) - naive).abs() < 1e-3);
    }
}
