//! The same sentence embedder with its forward pass run by ONNX Runtime (the `onnxruntime`
//! shared library, loaded at run time: the binary does not link it, and works without it).
//!
//! The graph is any encoder ONNX file with `input_ids` and `attention_mask` inputs (and
//! optionally `token_type_ids`) and the token vectors as its first output: what
//! sentence-transformers and optimum export to `onnx/model.onnx`, or what
//! `scripts/setup-onnx` builds from the folder's safetensors weights. Tokenizer, prefixes and
//! pooling still come from the model folder, so the vectors match the candle backend's.

use crate::bert::Head;
use crate::local::{Batch, Encoder, LocalEmbedder};
use crate::model_dir::{weights_sample, ModelDir};
use crate::EmbedError;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use ort::value::Tensor;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// A sentence embedder whose forward pass is an ONNX graph run by ONNX Runtime.
pub type OnnxEmbedder = LocalEmbedder<OnnxEncoder>;

/// Where the model's ONNX graph and the ONNX Runtime library are.
#[derive(Debug, Clone)]
pub struct OnnxFiles {
    /// The `.onnx` graph.
    pub graph: PathBuf,
    /// `libonnxruntime.so` (`.dylib`, `.dll`).
    pub runtime: PathBuf,
}

/// The forward pass: one ONNX Runtime session. ONNX Runtime's `Run` is thread-safe, but the
/// `ort` binding asks for exclusive access, hence the lock; one session already uses every core.
pub struct OnnxEncoder {
    session: Mutex<Session>,
    feeds_token_types: bool,
}

fn onnx_err(e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Backend(format!("ONNX Runtime: {e}"))
}

/// Loads the ONNX Runtime library, once per process: later calls reuse the first library that
/// loaded (a failed attempt is not remembered, so a corrected path works without a restart).
fn load_runtime(path: &Path) -> Result<&'static ort::environment::Environment, EmbedError> {
    static RUNTIME: OnceLock<ort::environment::Environment> = OnceLock::new();
    if let Some(loaded) = RUNTIME.get() {
        return Ok(loaded);
    }
    if !path.is_file() {
        return Err(onnx_err(format!(
            "no ONNX Runtime library at {} (run scripts/setup-onnx, set [embed] onnx_runtime, or use [embed] backend = \"candle\")",
            path.display()
        )));
    }
    let environment = ort::init_from(path)
        .map_err(onnx_err)?
        .with_name("skillrag")
        .build()
        .map_err(|e| onnx_err(format!("{} did not start: {e}", path.display())))?;
    Ok(RUNTIME.get_or_init(|| environment))
}

impl OnnxEmbedder {
    /// Loads the model folder `path` (tokenizer, pooling, prefixes) with the graph and runtime of `files`.
    pub fn open(
        path: &Path,
        files: &OnnxFiles,
        query_prefix: Option<&str>,
        passage_prefix: Option<&str>,
    ) -> Result<Self, EmbedError> {
        let model = ModelDir::open(path, query_prefix, passage_prefix)?;
        let head = Head::read(&model)?;
        let model_id = onnx_model_id(&model, &files.graph)?;
        let runtime = load_runtime(&files.runtime)?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let session = Session::builder(runtime)
            .map_err(onnx_err)?
            .with_optimization_level(GraphOptimizationLevel::Level3)
            .map_err(onnx_err)?
            .with_intra_threads(threads)
            .map_err(onnx_err)?
            .with_inter_threads(1)
            .map_err(onnx_err)?
            .commit_from_file(&files.graph)
            .map_err(|e| onnx_err(format!("{}: {e}", files.graph.display())))?;
        let mut feeds_token_types = false;
        for input in session.inputs() {
            match input.name() {
                "input_ids" | "attention_mask" => {}
                "token_type_ids" => feeds_token_types = true,
                other => {
                    return Err(onnx_err(format!(
                    "{}: unexpected input `{other}` (an encoder takes input_ids, attention_mask and token_type_ids)",
                    files.graph.display()
                )))
                }
            }
        }
        let encoder = OnnxEncoder { session: Mutex::new(session), feeds_token_types };
        LocalEmbedder::new(encoder, model, model_id, head.hidden_size)
    }
}

/// The model id of `model` run through `graph`: the folder's id (tokenizer, pooling, prefixes)
/// plus the graph's fingerprint, since another graph (int8 weights) computes other vectors.
pub fn onnx_model_id(model: &ModelDir, graph: &Path) -> Result<String, EmbedError> {
    if !graph.is_file() {
        return Err(EmbedError::ModelDir {
            path: model.path.display().to_string(),
            message: format!(
                "no ONNX graph at {} (scripts/setup-onnx builds it from the weights; or set [embed] backend = \"candle\")",
                graph.display()
            ),
        });
    }
    let sample = weights_sample(graph).map_err(|e| onnx_err(format!("{}: {e}", graph.display())))?;
    Ok(format!("{}+onnx-{}", model.model_id()?, &blake3::hash(&sample).to_hex()[..8]))
}

impl Encoder for OnnxEncoder {
    fn hidden_states(&self, batch: &Batch) -> Result<Vec<f32>, EmbedError> {
        let shape = [batch.rows, batch.len];
        let as_i64 = |v: &[u32]| v.iter().map(|&x| i64::from(x)).collect::<Vec<i64>>();
        let ids = Tensor::from_array((shape, as_i64(&batch.ids))).map_err(onnx_err)?;
        let mask = Tensor::from_array((shape, as_i64(&batch.mask))).map_err(onnx_err)?;
        let mut session = self.session.lock().map_err(|_| onnx_err("an earlier call panicked"))?;
        let outputs = if self.feeds_token_types {
            let types = Tensor::from_array((shape, vec![0i64; batch.rows * batch.len])).map_err(onnx_err)?;
            session.run(ort::inputs!["input_ids" => ids, "attention_mask" => mask, "token_type_ids" => types])
        } else {
            session.run(ort::inputs!["input_ids" => ids, "attention_mask" => mask])
        }
        .map_err(onnx_err)?;
        let (out_shape, data) = outputs[0].try_extract_tensor::<f32>().map_err(onnx_err)?;
        if out_shape.len() != 3 {
            return Err(onnx_err(format!(
                "the graph's first output has shape {:?}; token vectors (batch × tokens × dim) are expected",
                &out_shape[..]
            )));
        }
        Ok(data.to_vec())
    }
}
