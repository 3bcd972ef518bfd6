//! Tests of the GGUF backend. Those that need the real model read its path from
//! `SKILLRAG_TEST_LLM_GGUF` (Qwen2.5-Coder-0.5B-Instruct, `scripts/setup-llm model`) and are
//! skipped, with a notice, when it is unset.

use super::template::ChatTemplate;
use super::tokenizer::GgufTokenizer;
use super::*;
use crate::Message;
use candle_core::quantized::gguf_file::{self, Value};
use candle_core::quantized::{GgmlDType, QTensor};
use std::io::Cursor;
use std::sync::OnceLock;

fn model_path(test: &str) -> Option<PathBuf> {
    match std::env::var_os("SKILLRAG_TEST_LLM_GGUF") {
        Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ => {
            eprintln!("skipping {test}: SKILLRAG_TEST_LLM_GGUF is not set");
            None
        }
    }
}

/// One loaded model shared by the generation tests (loading costs a second or two each).
fn generator(test: &str) -> Option<&'static GgufGenerator> {
    static GENERATOR: OnceLock<GgufGenerator> = OnceLock::new();
    let path = model_path(test)?;
    Some(GENERATOR.get_or_init(|| GgufGenerator::open(&path, GgufOptions::default()).unwrap()))
}

fn read_content(path: &Path) -> Content {
    let mut file = File::open(path).unwrap();
    Content::read(&mut file).unwrap()
}

fn greedy(messages: Vec<Message>, max_tokens: usize) -> ChatRequest {
    ChatRequest { messages, max_tokens, temperature: 0.0, stop: Vec::new() }
}

/// Runs `request`, checking that the streamed pieces add up to the returned text.
fn run(generator: &GgufGenerator, request: &ChatRequest) -> (Generation, Vec<String>) {
    let mut pieces = Vec::new();
    let generation = generator.generate(request, &mut |piece| pieces.push(piece.to_string())).unwrap();
    assert_eq!(pieces.concat(), generation.text);
    (generation, pieces)
}

/// A GGUF file with the given metadata and one small f32 tensor.
fn fake_gguf(metadata: &[(&str, Value)]) -> Vec<u8> {
    let tensor = QTensor::quantize(&Tensor::zeros((4, 32), DType::F32, &Device::Cpu).unwrap(), GgmlDType::F32).unwrap();
    let metadata: Vec<(&str, &Value)> = metadata.iter().map(|(k, v)| (*k, v)).collect();
    let mut out = Cursor::new(Vec::new());
    gguf_file::write(&mut out, &metadata, &[("token_embd.weight", &tensor)]).unwrap();
    out.into_inner()
}

fn strings(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|s| Value::String(s.to_string())).collect())
}

#[test]
fn qwen_tokenizer_round_trips_and_knows_special_tokens() {
    let Some(path) = model_path("qwen_tokenizer_round_trips_and_knows_special_tokens") else { return };
    let tokenizer = GgufTokenizer::from_gguf(&read_content(&path)).unwrap();
    let text = "Hello, 世界! 检索增强生成 (RAG) uses `cargo test` — naïve café 😀\n\tdone.";
    let ids = tokenizer.tokenizer.encode(text, false).unwrap().get_ids().to_vec();
    assert_eq!(tokenizer.tokenizer.decode(&ids, false).unwrap(), text);
    // Known ids from Qwen2.5's tokenizer.json.
    assert_eq!(tokenizer.tokenizer.encode("Hello world", false).unwrap().get_ids(), &[9707, 1879]);
    let im_start = tokenizer.tokenizer.token_to_id("<|im_start|>").unwrap();
    assert_eq!(im_start, 151644);
    assert_eq!(tokenizer.tokenizer.encode("<|im_start|>", false).unwrap().get_ids(), &[im_start]);
    assert_eq!(tokenizer.tokenizer.encode("<|im_start|>user\nhi", false).unwrap().get_ids()[0], im_start);
    let im_end = tokenizer.tokenizer.token_to_id("<|im_end|>").unwrap();
    let endoftext = tokenizer.tokenizer.token_to_id("<|endoftext|>").unwrap();
    assert!(tokenizer.stop_ids.contains(&im_end), "{tokenizer:?}");
    assert!(tokenizer.stop_ids.contains(&endoftext), "{tokenizer:?}");
    assert!(!tokenizer.add_bos);
    assert_eq!(tokenizer.count("Hello world"), Some(2));
}

#[test]
fn sentencepiece_tokenizer_from_scores() {
    let mut tokens = vec!["<unk>", "<s>", "</s>"];
    let bytes: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
    tokens.extend(bytes.iter().map(String::as_str));
    tokens.extend(["▁", "h", "i", "▁h", "▁hi", "o", "▁o"]);
    let mut types = vec![2, 3, 3];
    types.extend(std::iter::repeat_n(6, 256));
    types.extend(std::iter::repeat_n(1, 7));
    let scores: Vec<Value> = (0..tokens.len()).map(|i| Value::F32(-(i as f32))).collect();
    let bytes = fake_gguf(&[
        ("general.architecture", Value::String("llama".into())),
        ("tokenizer.ggml.model", Value::String("llama".into())),
        ("tokenizer.ggml.tokens", strings(&tokens)),
        ("tokenizer.ggml.token_type", Value::Array(types.into_iter().map(Value::I32).collect())),
        ("tokenizer.ggml.scores", Value::Array(scores)),
        ("tokenizer.ggml.bos_token_id", Value::U32(1)),
        ("tokenizer.ggml.eos_token_id", Value::U32(2)),
    ]);
    let content = Content::read(&mut Cursor::new(bytes)).unwrap();
    let tokenizer = GgufTokenizer::from_gguf(&content).unwrap();
    let hi = tokenizer.tokenizer.token_to_id("▁hi").unwrap();
    let o = tokenizer.tokenizer.token_to_id("▁o").unwrap();
    assert_eq!(tokenizer.encode_prompt("hi o").unwrap(), vec![1, hi, o]);
    // "é" is not in the vocabulary: it falls back to its UTF-8 bytes and decodes back.
    let ids = tokenizer.tokenizer.encode("hié", false).unwrap().get_ids().to_vec();
    assert_eq!(&ids[..2], &[hi, 3 + 0xC3]);
    assert_eq!(tokenizer.tokenizer.decode(&ids, false).unwrap(), "hié");
    assert!(tokenizer.stop_ids.contains(&2));
}

#[test]
fn chatml_fallback_renders() {
    let template = ChatTemplate::new(None, "", "").unwrap();
    let prompt = template.render(&[Message::system("Be brief."), Message::user("Hi")]).unwrap();
    assert_eq!(
        prompt,
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
}

#[test]
fn template_features_used_by_hugging_face_templates() {
    let source = "{{ bos_token }}{% for m in messages %}{% if m.role == 'system' %}{{ m.content.strip() | upper }}{% elif m.content.startswith('!') %}{{ raise_exception('no bangs') }}{% else %}[{{ m.content }}]{% endif %}{% endfor %}{% if tools is none %}.{% endif %}";
    let template = ChatTemplate::new(Some(source), "<s>", "</s>").unwrap();
    assert_eq!(template.render(&[Message::system("  sys "), Message::user("u")]).unwrap(), "<s>SYS[u].");
    let error = template.render(&[Message::user("!x")]).unwrap_err();
    assert!(error.contains("no bangs"), "{error}");
    assert!(ChatTemplate::new(Some("{% if %}"), "", "").is_err());
}

#[test]
fn qwen_chat_template_renders() {
    let Some(path) = model_path("qwen_chat_template_renders") else { return };
    let content = read_content(&path);
    let source = content.metadata.get("tokenizer.chat_template").unwrap().to_string().unwrap();
    let template = ChatTemplate::new(Some(source), "", "<|endoftext|>").unwrap();
    let prompt = template.render(&[Message::system("You answer briefly."), Message::user("What is RAG?")]).unwrap();
    assert_eq!(
        prompt,
        "<|im_start|>system\nYou answer briefly.<|im_end|>\n<|im_start|>user\nWhat is RAG?<|im_end|>\n<|im_start|>assistant\n"
    );
    // Without a system message Qwen's template adds its default one.
    let prompt = template.render(&[Message::user("Hi")]).unwrap();
    assert!(prompt.starts_with("<|im_start|>system\n"), "{prompt}");
    assert!(prompt.ends_with("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"), "{prompt}");
}

#[test]
fn answers_a_question_greedily() {
    let Some(generator) = generator("answers_a_question_greedily") else { return };
    assert_eq!(generator.describe(), format!("gguf:{}", generator.name));
    assert!(generator.context_window().unwrap() >= 2048);
    assert!(generator.context_window().unwrap() <= MAX_CONTEXT);
    let request = greedy(vec![Message::user("What is the capital of France? Answer in one word.")], 32);
    let (generation, pieces) = run(generator, &request);
    assert!(generation.text.contains("Paris"), "{generation:?}");
    assert_eq!(generation.finish, FinishReason::Stop);
    assert!(!pieces.is_empty());
    assert!(generation.prompt_tokens > 10);
    assert!(generation.completion_tokens >= 1);
    assert!(generation.first_token <= generation.elapsed);
    // Greedy decoding is deterministic, and the KV cache does not leak between requests.
    let (again, _) = run(generator, &request);
    assert_eq!(again.text, generation.text);
    eprintln!("answer {:?}; {:.1} tokens/s", generation.text, generation.tokens_per_second());
}

/// The choice reads the right tokens' probabilities. The 0.5B test model cannot judge facts (it
/// says "yes" to "2 + 2 = 5?" as readily as to "2 + 2 = 4?"), so it is told which word to say.
#[test]
fn a_choice_is_read_from_the_next_token_distribution() {
    let Some(generator) = generator("a_choice_is_read_from_the_next_token_distribution") else { return };
    let ask = |word: &str| {
        let messages = [Message::user(format!("Reply with the word {word}."))];
        generator.choose(&messages, &["yes", "no"]).unwrap()
    };
    let yes = ask("yes");
    let no = ask("no");
    assert!((yes.probabilities.iter().sum::<f32>() - 1.0).abs() < 1e-4, "{yes:?}");
    assert!(yes.mass > 0.5, "the model wants to say yes or no: {yes:?}");
    assert!(yes.probabilities[0] > 0.8 && no.probabilities[0] < 0.5, "{yes:?} {no:?}");
    // The same prompt gives the same verdict: the KV cache does not leak between calls.
    assert_eq!(ask("yes").probabilities, yes.probabilities);
}

#[test]
fn max_tokens_ends_with_length() {
    let Some(generator) = generator("max_tokens_ends_with_length") else { return };
    let request = greedy(vec![Message::user("Write a long essay about the history of Rome.")], 5);
    let (generation, _) = run(generator, &request);
    assert_eq!(generation.finish, FinishReason::Length);
    assert_eq!(generation.completion_tokens, 5);
    assert!(!generation.text.is_empty());
    let (zero, _) = run(generator, &greedy(request.messages.clone(), 0));
    assert_eq!((zero.finish, zero.text.as_str(), zero.completion_tokens), (FinishReason::Length, "", 0));
}

#[test]
fn stop_string_is_trimmed() {
    let Some(generator) = generator("stop_string_is_trimmed") else { return };
    let messages = vec![Message::user("Count from 1 to 10, separated by commas and spaces, nothing else.")];
    let (full, _) = run(generator, &greedy(messages.clone(), 48));
    assert!(full.text.contains("4") && full.text.contains("5"), "{full:?}");
    let mut request = greedy(messages, 48);
    request.stop = vec!["5".to_string()];
    let (cut, _) = run(generator, &request);
    assert_eq!(cut.finish, FinishReason::Stop);
    assert!(!cut.text.contains('5'), "{cut:?}");
    assert!(full.text.starts_with(&cut.text), "{full:?} {cut:?}");
    assert!(cut.text.contains('4'), "{cut:?}");
}

#[test]
fn chinese_streams_valid_utf8() {
    let Some(generator) = generator("chinese_streams_valid_utf8") else { return };
    let request = greedy(vec![Message::system("请用中文回答。"), Message::user("用一句话介绍北京。")], 40);
    let (generation, pieces) = run(generator, &request);
    // Each piece is a &str, so valid UTF-8 by construction; none may carry a replacement
    // character from a character split across tokens.
    assert!(pieces.iter().all(|p| !p.contains('\u{FFFD}')), "{pieces:?}");
    assert!(generation.text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "{generation:?}");
    assert!(generator.count_tokens("北京是中国的首都。").unwrap() >= 3);
}

#[test]
fn overlong_prompt_is_refused() {
    let Some(generator) = generator("overlong_prompt_is_refused") else { return };
    let long = "word ".repeat(generator.context_window().unwrap() + 10);
    let error = generator.generate(&greedy(vec![Message::user(long)], 8), &mut |_| {}).unwrap_err();
    assert!(matches!(&error, GenerateError::Inference(m) if m.contains("context window")), "{error}");
}

#[test]
fn stop_scan_holds_back_partial_stops() {
    let stops = vec!["END".to_string(), "\n\n".to_string()];
    let mut scan = StopScan::new(&stops);
    assert_eq!(scan.push("abc E"), ("abc ", false));
    assert_eq!(scan.push("N"), ("", false));
    assert_eq!(scan.push("x 中"), ("ENx 中", false));
    assert_eq!(scan.push("\n"), ("", false));
    assert_eq!(scan.push("\nrest"), ("", true));
    assert_eq!(scan.text, "abc ENx 中");
    let none: Vec<String> = Vec::new();
    let mut scan = StopScan::new(&none);
    assert_eq!(scan.push("E"), ("E", false));
    assert_eq!(scan.flush(), "");
}

#[test]
fn missing_and_non_gguf_files_are_model_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.gguf");
    let error = GgufGenerator::open(&missing, GgufOptions::default()).err().unwrap();
    assert!(
        matches!(&error, GenerateError::Model { path, message } if path.contains("nope.gguf") && message.contains("cannot open")),
        "{error}"
    );

    let text = dir.path().join("notes.gguf");
    std::fs::write(&text, "this is not a model, just some text that is long enough").unwrap();
    let error = GgufGenerator::open(&text, GgufOptions::default()).err().unwrap();
    assert!(
        matches!(&error, GenerateError::Model { path, message } if path.contains("notes.gguf") && message.contains("not a readable GGUF")),
        "{error}"
    );

    let empty = dir.path().join("empty.gguf");
    std::fs::write(&empty, "").unwrap();
    assert!(matches!(GgufGenerator::open(&empty, GgufOptions::default()), Err(GenerateError::Model { .. })));
}

#[test]
fn unsupported_architecture_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mamba.gguf");
    std::fs::write(&path, fake_gguf(&[("general.architecture", Value::String("mamba".into()))])).unwrap();
    let error = GgufGenerator::open(&path, GgufOptions::default()).err().unwrap();
    let message = error.to_string();
    assert!(message.contains("mamba") && message.contains("qwen2") && message.contains("llama"), "{message}");
    assert!(message.contains("mamba.gguf"), "{message}");
}

#[test]
fn requantized_copy_is_made_once_and_reused() {
    let Some(path) = model_path("requantized_copy_is_made_once_and_reused") else { return };
    let cache = tempfile::tempdir().unwrap();
    let options = GgufOptions { cache_dir: Some(cache.path().to_path_buf()), ..GgufOptions::default() };
    let first = GgufGenerator::open(&path, options.clone()).unwrap();
    let copy = first.loaded_from().to_path_buf();
    assert!(copy.starts_with(cache.path()), "{copy:?}");
    assert!(copy.to_string_lossy().ends_with("-q8_0.gguf"));
    let content = read_content(&copy);
    assert!(!requant::needs_requantize(&content));
    assert!(content.tensor_infos.values().any(|t| t.ggml_dtype == GgmlDType::Q8_0));
    let written = std::fs::metadata(&copy).unwrap().modified().unwrap();
    let files = std::fs::read_dir(cache.path()).unwrap().count();
    assert_eq!(files, 1, "no temporary file is left behind");

    let request = greedy(vec![Message::user("What is the capital of France? Answer in one word.")], 16);
    let (quick, _) = run(&first, &request);
    assert!(quick.text.contains("Paris"), "{quick:?}");
    let first_load = first.load_time();
    drop(first);

    let second = GgufGenerator::open(&path, options).unwrap();
    assert_eq!(second.loaded_from(), copy);
    assert_eq!(std::fs::metadata(&copy).unwrap().modified().unwrap(), written);
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 1);
    eprintln!(
        "requantized: first open {:?}, second open {:?}, {:.1} tokens/s",
        first_load,
        second.load_time(),
        quick.tokens_per_second()
    );
}

/// Decode speed of the original file against its Q8_0 copy:
/// `cargo test -p skillrag-generate --release bench_decode_speed -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_decode_speed() {
    let Some(path) = model_path("bench_decode_speed") else { return };
    let cache = tempfile::tempdir().unwrap();
    let request = ChatRequest {
        messages: vec![Message::user("Write a Rust function that parses a CSV line, with comments.")],
        max_tokens: 128,
        temperature: 0.0,
        stop: Vec::new(),
    };
    for (label, cache_dir) in [
        ("original", None),
        ("requantized (first open)", Some(cache.path().to_path_buf())),
        ("requantized (cached)", Some(cache.path().to_path_buf())),
    ] {
        let generator = GgufGenerator::open(&path, GgufOptions { cache_dir, ..GgufOptions::default() }).unwrap();
        let load = generator.load_time();
        let (generation, _) = run(&generator, &request);
        eprintln!(
            "{label}: load {load:.2?}, prompt {} tokens, first token {:.2?}, {} tokens, {:.1} tokens/s",
            generation.prompt_tokens,
            generation.first_token,
            generation.completion_tokens,
            generation.tokens_per_second()
        );
    }
}

#[test]
fn generator_is_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<GgufGenerator>();
    assert_send_sync::<Box<dyn Generator>>();
}
