//! The web page (chat, retrieval testing, index status), embedded in the binary.

use axum::http::header;
use axum::response::{IntoResponse, Response};

const INDEX_HTML: &str = include_str!("../assets/index.html");
const APP_JS: &str = include_str!("../assets/app.js");
const APP_CSS: &str = include_str!("../assets/app.css");
/// markdown-it 14.3.3 (MIT; bundles mdurl, uc.micro, linkify-it, punycode.js: MIT, and
/// entities: BSD-2-Clause), `dist/markdown-it.min.js` from npm, byte for byte (sha256
/// 494ba53d…25cfb0), so the page renders Markdown offline. app.js says how it is made safe.
const MARKDOWN_IT_JS: &str = include_str!("../assets/markdown-it.min.js");

/// Defence in depth under the escaping renderer: should a knowledge file's HTML ever reach the
/// page, no inline script or handler runs and nothing loads from elsewhere. Inline styles stay
/// allowed for the column alignment markdown-it writes on table cells.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'";

pub async fn index() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CONTENT_SECURITY_POLICY, CSP)], INDEX_HTML)
        .into_response()
}

pub async fn app_js() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], APP_JS).into_response()
}

pub async fn markdown_it_js() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], MARKDOWN_IT_JS).into_response()
}

pub async fn app_css() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], APP_CSS).into_response()
}
