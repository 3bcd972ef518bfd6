//! The HTTP JSON bodies: `skillrag_server::parse_json` (what the API's `Json` extractor and
//! `POST /v1/index` call) into each request body — `/v1/ask`, `/v1/search`, `/v1/route`,
//! `/v1/index` and `/v1/chat/completions` — from the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skillrag_server::{parse_json, AskRequest, ChatRequest, IndexRequest, RouteRequest, SearchRequest};

fuzz_target!(|data: &[u8]| {
    let _ = parse_json::<AskRequest>(data);
    let _ = parse_json::<SearchRequest>(data);
    let _ = parse_json::<RouteRequest>(data);
    let _ = parse_json::<IndexRequest>(data);
    let _ = parse_json::<ChatRequest>(data);
});
