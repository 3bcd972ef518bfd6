//! What every in-process sentence embedder shares, whatever runs its forward pass: the model
//! folder's tokenizer, prefixes and pooling, length-sorted batches, and the visibility count.
//! A backend ([`Encoder`]) only turns a padded batch of token ids into token vectors.

use crate::model_dir::{ModelDir, Pooling};
use crate::{l2_normalize, EmbedError, EmbedKind, Embedder, Embedding};
use tokenizers::{Encoding, Tokenizer, TruncationParams};

/// Texts per forward pass. Texts are sorted by length first, so padding stays small.
const BATCH: usize = 16;

/// A padded batch of tokenized texts, row-major `rows × len`.
pub struct Batch {
    pub ids: Vec<u32>,
    /// 1 for a real token, 0 for padding.
    pub mask: Vec<u32>,
    pub rows: usize,
    pub len: usize,
}

/// A forward pass: token ids in, the last hidden states out (`rows × len × dim`, row-major).
pub trait Encoder: Send + Sync {
    fn hidden_states(&self, batch: &Batch) -> Result<Vec<f32>, EmbedError>;
}

/// A local sentence embedder: a model folder's tokenizer and pooling around an [`Encoder`].
pub struct LocalEmbedder<E> {
    encoder: E,
    tokenizer: Tokenizer,
    model: ModelDir,
    model_id: String,
    dim: usize,
    unk_id: Option<u32>,
    pad_id: u32,
}

impl<E: Encoder> LocalEmbedder<E> {
    /// `model_id` must name everything that changes the vectors (see [`Embedder::model_id`]).
    pub(crate) fn new(encoder: E, model: ModelDir, model_id: String, dim: usize) -> Result<Self, EmbedError> {
        let mut tokenizer =
            Tokenizer::from_file(&model.tokenizer_json).map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: model.max_seq_length, ..Default::default() }))
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        tokenizer.with_padding(None);
        let unk_id = ["[UNK]", "<unk>"].iter().find_map(|t| tokenizer.token_to_id(t));
        let pad_id = ["[PAD]", "<pad>"].iter().find_map(|t| tokenizer.token_to_id(t)).unwrap_or(0);
        Ok(LocalEmbedder { encoder, tokenizer, model, model_id, dim, unk_id, pad_id })
    }

    pub fn model_dir(&self) -> &ModelDir {
        &self.model
    }

    fn embed_batch(&self, encodings: &[&Encoding]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let len = encodings.iter().map(|e| e.get_ids().len()).max().unwrap_or(0).max(1);
        let rows = encodings.len();
        let mut ids = Vec::with_capacity(rows * len);
        let mut mask = Vec::with_capacity(rows * len);
        for e in encodings {
            let real = e.get_ids();
            ids.extend_from_slice(real);
            ids.extend(std::iter::repeat_n(self.pad_id, len - real.len()));
            mask.extend(std::iter::repeat_n(1u32, real.len()));
            mask.extend(std::iter::repeat_n(0u32, len - real.len()));
        }
        let batch = Batch { ids, mask, rows, len };
        let hidden = self.encoder.hidden_states(&batch)?;
        if hidden.len() != rows * len * self.dim {
            return Err(EmbedError::Backend(format!(
                "the model returned {} values for {rows} texts × {len} tokens × {} dimensions",
                hidden.len(),
                self.dim
            )));
        }
        let mut out = pool(&hidden, &batch, self.dim, self.model.pooling);
        out.iter_mut().for_each(|v| l2_normalize(v));
        Ok(out)
    }

    /// Tokenizes `texts` with the prefix of `kind`, truncated to the model's limit.
    fn encode(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Encoding>, EmbedError> {
        let prefix = match kind {
            EmbedKind::Query => &self.model.query_prefix,
            EmbedKind::Passage => &self.model.passage_prefix,
        };
        let inputs: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
        self.tokenizer.encode_batch(inputs, true).map_err(|e| EmbedError::Tokenizer(e.to_string()))
    }

    fn seen_share(&self, encoding: &Encoding) -> f32 {
        let special = encoding.get_special_tokens_mask();
        let ids = encoding.get_ids();
        let content = special.iter().filter(|&&s| s == 0).count();
        if content == 0 {
            return 0.0;
        }
        let unknown = match self.unk_id {
            Some(unk) => ids.iter().zip(special).filter(|(&id, &s)| s == 0 && id == unk).count(),
            None => 0,
        };
        1.0 - unknown as f32 / content as f32
    }
}

/// One vector per row from its token vectors, padding excluded.
fn pool(hidden: &[f32], batch: &Batch, dim: usize, pooling: Pooling) -> Vec<Vec<f32>> {
    (0..batch.rows)
        .map(|row| {
            let tokens = |r: usize| {
                let start = r * batch.len;
                (0..batch.len)
                    .filter(move |t| batch.mask[start + t] != 0)
                    .map(move |t| &hidden[(start + t) * dim..(start + t + 1) * dim])
            };
            match pooling {
                Pooling::Cls => hidden[row * batch.len * dim..][..dim].to_vec(),
                Pooling::Max => tokens(row).fold(vec![f32::MIN; dim], |mut acc, t| {
                    acc.iter_mut().zip(t).for_each(|(a, &x)| *a = a.max(x));
                    acc
                }),
                Pooling::Mean | Pooling::MeanSqrtLen => {
                    let mut sum = vec![0f32; dim];
                    let mut count = 0usize;
                    for t in tokens(row) {
                        sum.iter_mut().zip(t).for_each(|(s, &x)| *s += x);
                        count += 1;
                    }
                    let count = count.max(1) as f32;
                    let divisor = if pooling == Pooling::Mean { count } else { count.sqrt() };
                    sum.iter_mut().for_each(|s| *s /= divisor);
                    sum
                }
            }
        })
        .collect()
}

impl<E: Encoder> Embedder for LocalEmbedder<E> {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn visibility(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<f32>, EmbedError> {
        Ok(self.encode(texts, kind)?.iter().map(|e| self.seen_share(e)).collect())
    }

    fn embed(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Embedding>, EmbedError> {
        let encodings = self.encode(texts, kind)?;
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); encodings.len()];
        for batch in order.chunks(BATCH) {
            let refs: Vec<&Encoding> = batch.iter().map(|&i| &encodings[i]).collect();
            for (&i, v) in batch.iter().zip(self.embed_batch(&refs)?) {
                vectors[i] = v;
            }
        }
        Ok(vectors
            .into_iter()
            .zip(&encodings)
            .map(|(vector, e)| Embedding { vector, visibility: self.seen_share(e) })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_ignores_padding() {
        // Two rows of two tokens, dim 2; the second row's second token is padding.
        let hidden = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 100.0, 100.0];
        let batch = Batch { ids: vec![1, 2, 3, 0], mask: vec![1, 1, 1, 0], rows: 2, len: 2 };
        assert_eq!(pool(&hidden, &batch, 2, Pooling::Mean), vec![vec![2.0, 3.0], vec![5.0, 6.0]]);
        assert_eq!(pool(&hidden, &batch, 2, Pooling::Max), vec![vec![3.0, 4.0], vec![5.0, 6.0]]);
        assert_eq!(pool(&hidden, &batch, 2, Pooling::Cls), vec![vec![1.0, 2.0], vec![5.0, 6.0]]);
        let sqrt = pool(&hidden, &batch, 2, Pooling::MeanSqrtLen);
        assert!((sqrt[0][0] - 4.0 / 2f32.sqrt()).abs() < 1e-6);
    }
}
