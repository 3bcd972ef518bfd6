//! The dense half of the embedded store: vectors in one flat little-endian f32 file, scanned
//! exactly. A micro knowledge base is small (50k × 384 scans in a few milliseconds), and an
//! exact scan has perfect recall and no index to keep consistent.

use crate::dense::dot_fn;
use crate::StoreError;
use skillrag_core::{ChunkId, Scored};

/// Row-major matrix of L2-normalized vectors, row `i` belonging to chunk `ids[i]`. A row of
/// zeros is a passage stored without a vector (the model could not see it): it is never a
/// real embedding, which has unit length, and the scan leaves it out.
#[derive(Debug, Default)]
pub struct Vectors {
    pub dim: usize,
    pub data: Vec<f32>,
    pub visibility: Vec<f32>,
}

impl Vectors {
    pub fn rows(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Whether row `i` holds a vector (not the zeros of a passage stored without one).
    pub fn has_vector(&self, i: usize) -> bool {
        self.row(i).iter().any(|&x| x != 0.0)
    }

    /// Parses `vectors.f32` and `visibility.f32`. Non-finite values are refused: no model
    /// writes them, and one would poison every score it takes part in.
    pub fn from_bytes(data: &[u8], visibility: &[u8], dim: usize) -> Result<Vectors, StoreError> {
        let (data, visibility) = (parse_f32s("vectors.f32", data)?, parse_f32s("visibility.f32", visibility)?);
        if dim == 0 || data.len() % dim != 0 || data.len() / dim != visibility.len() {
            return Err(StoreError::Invalid(format!(
                "vectors.f32: {} floats do not form {}-dimensional rows matching {} visibility values",
                data.len(),
                dim,
                visibility.len()
            )));
        }
        if let Some(i) = data.iter().chain(&visibility).position(|x| !x.is_finite()) {
            return Err(StoreError::Invalid(format!("vectors.f32 holds a non-finite value (float {i})")));
        }
        Ok(Vectors { dim, data, visibility })
    }

    /// Top `limit` rows by dot product with `query`, restricted to rows where `allowed` holds.
    pub fn scan(
        &self,
        ids: &[ChunkId],
        query: &[f32],
        limit: usize,
        allowed: impl Fn(usize) -> bool,
    ) -> Result<Vec<Scored>, StoreError> {
        if query.len() != self.dim {
            return Err(StoreError::Dimension { expected: self.dim, got: query.len() });
        }
        let dot = dot_fn();
        let mut scored: Vec<(f32, usize)> = (0..self.rows())
            .filter(|&i| allowed(i) && self.has_vector(i))
            .map(|i| (dot(self.row(i), query), i))
            .collect();
        let limit = limit.min(scored.len());
        if limit == 0 {
            return Ok(Vec::new());
        }
        let by_score = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if limit < scored.len() {
            scored.select_nth_unstable_by(limit - 1, by_score);
            scored.truncate(limit);
        }
        scored.sort_by(by_score);
        Ok(scored.into_iter().map(|(score, i)| Scored { id: ids[i], score }).collect())
    }
}

fn parse_f32s(name: &str, bytes: &[u8]) -> Result<Vec<f32>, StoreError> {
    if !bytes.len().is_multiple_of(4) {
        return Err(StoreError::Invalid(format!("{name}: length is not a multiple of 4")));
    }
    Ok(bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_returns_best_rows_in_order() {
        let v = Vectors { dim: 2, data: vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8], visibility: vec![1.0; 3] };
        let ids = [10, 11, 12];
        let top = v.scan(&ids, &[0.0, 1.0], 2, |_| true).unwrap();
        assert_eq!(top.iter().map(|s| s.id).collect::<Vec<_>>(), vec![11, 12]);
        let filtered = v.scan(&ids, &[0.0, 1.0], 5, |i| i != 1).unwrap();
        assert_eq!(filtered.iter().map(|s| s.id).collect::<Vec<_>>(), vec![12, 10]);
        assert!(v.scan(&ids, &[1.0], 1, |_| true).is_err());
    }
}
