//! What one JSON-RPC message from a client is, read the same way over stdio and HTTP.
//!
//! rmcp reads a message through an untagged union of every request it knows, with a catch-all
//! `CustomRequest` last: a `tools/call` whose `name` is a number is read as a custom request and
//! answered "method not found" with only the method's name. Here such a request is answered
//! `-32602` (invalid params) with the parameter at fault and why; a message that is not JSON is
//! answered `-32700` and JSON that is not a request `-32600`, each with the request's id when
//! it can still be read.

use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, CompleteRequestParams, ErrorData,
    GetPromptRequestParams, InitializeRequestParams, NumberOrString, PaginatedRequestParams, ReadResourceRequestParams,
    RequestId, ServerJsonRpcMessage, SubscribeRequestParams, UnsubscribeRequestParams,
};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

/// What one message is.
#[derive(Debug)]
pub(super) enum Incoming {
    Message(Box<ClientJsonRpcMessage>),
    /// A notification this server does not know: JSON-RPC answers no notification.
    Ignore,
    Reject(Box<ServerJsonRpcMessage>),
}

/// Reads one message and says what it is. Well-formed requests are parsed once; only one that
/// fails, or that rmcp would take for a custom request, is looked at again.
pub(super) fn classify(line: &[u8]) -> Incoming {
    let line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Incoming::Ignore;
    }
    let error = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => return misread_params(message),
        Err(e) => e,
    };
    if let Err(bad) = std::str::from_utf8(line) {
        let message = format!("not valid UTF-8 (first bad byte at byte {})", bad.valid_up_to() + 1);
        return reject(ErrorData::parse_error(message, None), line);
    }
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(value) => value,
        Err(syntax) => return reject(ErrorData::parse_error(format!("not JSON: {syntax}"), None), line),
    };
    let is_notification = value.get("id").is_none() && value.get("method").is_some_and(Value::is_string);
    if is_notification && value.get("jsonrpc").and_then(Value::as_str) == Some("2.0") {
        return Incoming::Ignore;
    }
    reject(ErrorData::invalid_request(format!("not a JSON-RPC 2.0 request: {error}"), None), line)
}

/// A request of a method MCP defines that was read as a custom request: its params do not fit
/// the method, and the answer says where and why.
fn misread_params(message: ClientJsonRpcMessage) -> Incoming {
    if let ClientJsonRpcMessage::Request(request) = &message {
        if let ClientRequest::CustomRequest(custom) = &request.request {
            if let Some(reason) = params_fault(&custom.method, custom.params.as_ref()) {
                let error = ErrorData::invalid_params(format!("{}: {reason}", custom.method), None);
                return Incoming::Reject(Box::new(ServerJsonRpcMessage::error(error, Some(request.id.clone()))));
            }
        }
    }
    Incoming::Message(Box::new(message))
}

/// Why `params` do not fit `method`, for the methods this server answers; `None` for a method
/// MCP does not define here (rmcp answers it "method not found").
fn params_fault(method: &str, params: Option<&Value>) -> Option<String> {
    fn fault<T: DeserializeOwned>(params: Option<&Value>) -> Option<String> {
        let value = params.cloned().unwrap_or(Value::Null);
        let e = serde_path_to_error::deserialize::<_, T>(value).err()?;
        Some(match e.path().to_string().as_str() {
            "." => format!("invalid `params`: {}", e.into_inner()),
            at => format!("`params.{at}`: {}", e.into_inner()),
        })
    }
    match method {
        "initialize" => fault::<InitializeRequestParams>(params),
        "tools/call" => fault::<CallToolRequestParams>(params),
        "resources/read" => fault::<ReadResourceRequestParams>(params),
        "prompts/get" => fault::<GetPromptRequestParams>(params),
        "completion/complete" => fault::<CompleteRequestParams>(params),
        "resources/subscribe" => fault::<SubscribeRequestParams>(params),
        "resources/unsubscribe" => fault::<UnsubscribeRequestParams>(params),
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
            fault::<Option<PaginatedRequestParams>>(params)
        }
        _ => None,
    }
}

fn reject(error: ErrorData, line: &[u8]) -> Incoming {
    Incoming::Reject(Box::new(ServerJsonRpcMessage::error(error, readable_id(line))))
}

/// The `id` of a message that failed to parse, when the first JSON value in it still shows one:
/// skipped fields are not decoded, so a bad string elsewhere (a lone surrogate, a bad byte)
/// or bytes after the object do not hide it.
pub(super) fn readable_id(line: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct IdOnly {
        #[serde(default)]
        id: Option<Value>,
    }
    let first = serde_json::Deserializer::from_slice(line).into_iter::<IdOnly>().next()?.ok()?;
    match first.id? {
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        Value::String(s) => Some(NumberOrString::String(s.into())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rejected(message: &Value) -> Value {
        match classify(message.to_string().as_bytes()) {
            Incoming::Reject(answer) => serde_json::to_value(*answer).unwrap(),
            other => panic!("{message} was not rejected: {other:?}"),
        }
    }

    #[test]
    fn wrong_typed_params_are_invalid_params_with_the_reason() {
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": 5}});
        let answer = rejected(&call);
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("params.name") && message.contains("integer"), "{message}");

        let read = json!({"jsonrpc": "2.0", "id": "r", "method": "resources/read", "params": {"uri": []}});
        assert_eq!(rejected(&read)["error"]["code"], -32602);
        let missing = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"});
        assert_eq!(rejected(&missing)["error"]["code"], -32602);
    }

    #[test]
    fn well_formed_and_unknown_methods_pass_on() {
        for message in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask", "arguments": {}}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "vendor/thing", "params": {"x": 1}}),
        ] {
            assert!(matches!(classify(message.to_string().as_bytes()), Incoming::Message(_)), "{message}");
        }
    }
}
