//! The web page (chat, retrieval testing, index status), embedded in the binary: `index.html`,
//! its stylesheet, and its scripts. `app.js` is the entry module; it and the ES modules it imports
//! (`js/`, one per view in `js/views/`) name each other by relative URL, so every file is served
//! at `/assets/` + its path under `assets/`. No build step: the files are served as written.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

const INDEX_HTML: &str = include_str!("../assets/index.html");

/// Defence in depth under the escaping renderer: should a knowledge file's HTML ever reach the
/// page, no inline script or handler runs and nothing loads from elsewhere. Inline styles stay
/// allowed for the column alignment markdown-it writes on table cells. `script-src 'self'` is
/// what lets the page's own module scripts load.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                   img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'";

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// A file of the page: where it is served, its type, its text.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static str,
}

/// `asset!("js/api.js", JS)`: the file `crates/server/assets/js/api.js`, served at
/// `/assets/js/api.js`.
macro_rules! asset {
    ($path:literal, $content_type:expr) => {
        Asset {
            path: concat!("/assets/", $path),
            content_type: $content_type,
            body: include_str!(concat!("../assets/", $path)),
        }
    };
}

/// Every file under `assets/` but `index.html` (a test checks that none is missing).
const ASSETS: &[Asset] = &[
    asset!("app.css", CSS),
    asset!("app.js", JS),
    // markdown-it 14.3.3 (MIT; bundles mdurl, uc.micro, linkify-it, punycode.js: MIT, and
    // entities: BSD-2-Clause), `dist/markdown-it.min.js` from npm, byte for byte (sha256
    // 494ba53d…25cfb0), so the page renders Markdown offline. js/markdown.js says how it is
    // made safe.
    asset!("markdown-it.min.js", JS),
    asset!("js/api.js", JS),
    asset!("js/dom.js", JS),
    asset!("js/format.js", JS),
    asset!("js/jobs.js", JS),
    asset!("js/markdown.js", JS),
    asset!("js/skills.js", JS),
    asset!("js/state.js", JS),
    asset!("js/ui.js", JS),
    asset!("js/chat/actions.js", JS),
    asset!("js/chat/citations.js", JS),
    asset!("js/chat/conversations.js", JS),
    asset!("js/chat/log.js", JS),
    asset!("js/chat/stream.js", JS),
    asset!("js/views/chat.js", JS),
    asset!("js/views/documents.js", JS),
    asset!("js/views/gaps.js", JS),
    asset!("js/views/index.js", JS),
    asset!("js/views/search.js", JS),
    asset!("js/views/skills.js", JS),
];

/// The page at `/` and each of its files at its own route, so an unknown `/assets/…` path gets
/// the API's 404 like any other unknown path.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    ASSETS.iter().fold(Router::new().route("/", get(index)), |router, asset| {
        router.route(asset.path, get(move || async move { serve(asset) }))
    })
}

async fn index() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CONTENT_SECURITY_POLICY, CSP)], INDEX_HTML)
        .into_response()
}

fn serve(asset: &'static Asset) -> Response {
    ([(header::CONTENT_TYPE, asset.content_type)], asset.body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};
    use tower_service::Service;

    fn assets_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets")
    }

    /// The files under `dir`, as `/assets/…` paths.
    fn files_under(dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files_under(&path, out);
            } else {
                let rel = path.strip_prefix(assets_dir()).unwrap().to_str().unwrap().replace('\\', "/");
                out.insert(format!("/assets/{rel}"));
            }
        }
    }

    /// `base` (a module's URL path) joined with a relative import such as `../dom.js`.
    fn resolve(base: &str, relative: &str) -> String {
        let mut parts: Vec<&str> = base.split('/').collect();
        parts.pop();
        for part in relative.split('/') {
            match part {
                "." => {}
                ".." => {
                    parts.pop();
                }
                _ => parts.push(part),
            }
        }
        parts.join("/")
    }

    /// The specifiers of a module's `import … from '…'` statements.
    fn imports(source: &str) -> Vec<&str> {
        source
            .lines()
            .filter(|line| line.starts_with("import ") || line.starts_with("} from "))
            .filter_map(|line| line.split_once(" from '")?.1.split_once('\''))
            .map(|(specifier, _)| specifier)
            .collect()
    }

    #[test]
    fn every_file_of_the_page_is_served_and_every_import_resolves() {
        let mut on_disk = BTreeSet::new();
        files_under(&assets_dir(), &mut on_disk);
        on_disk.remove("/assets/index.html");
        let served: BTreeSet<String> = ASSETS.iter().map(|a| a.path.to_string()).collect();
        assert_eq!(served.len(), ASSETS.len(), "an asset is listed twice");
        assert_eq!(on_disk, served, "ASSETS and crates/server/assets differ");

        assert!(INDEX_HTML.contains(r#"<script type="module" src="/assets/app.js"></script>"#));
        let mut imported = BTreeSet::from(["/assets/app.js".to_string()]);
        for asset in ASSETS.iter().filter(|a| a.path.ends_with(".js") && !a.path.ends_with(".min.js")) {
            for specifier in imports(asset.body) {
                assert!(specifier.starts_with("./") || specifier.starts_with("../"), "{}: {specifier}", asset.path);
                let target = resolve(asset.path, specifier);
                assert!(served.contains(&target), "{} imports {specifier}, which is not served", asset.path);
                imported.insert(target);
            }
        }
        // Every module is imported by another: none is left behind, served but unused.
        let modules: BTreeSet<&String> = served.iter().filter(|p| p.starts_with("/assets/js/")).collect();
        let used: BTreeSet<&String> = imported.iter().filter(|p| p.starts_with("/assets/js/")).collect();
        assert_eq!(modules, used, "a module nobody imports");
    }

    async fn get_path(path: &str) -> Response {
        let mut router = routes::<()>();
        std::future::poll_fn(|cx| Service::<Request<Body>>::poll_ready(&mut router, cx)).await.unwrap();
        router.call(Request::get(path).body(Body::empty()).unwrap()).await.unwrap()
    }

    #[tokio::test]
    async fn modules_are_served_as_javascript_and_the_page_with_its_csp() {
        for path in ["/assets/app.js", "/assets/js/views/chat.js", "/assets/markdown-it.min.js"] {
            let response = get_path(path).await;
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            assert_eq!(response.headers()[header::CONTENT_TYPE], JS, "{path}");
            assert!(response.headers().get(header::CONTENT_SECURITY_POLICY).is_none(), "{path}");
            let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
            let want = ASSETS.iter().find(|a| a.path == path).unwrap().body;
            assert_eq!(body, want.as_bytes(), "{path}");
        }
        assert_eq!(get_path("/assets/app.css").await.headers()[header::CONTENT_TYPE], CSS);
        let page = get_path("/").await;
        assert_eq!(page.headers()[header::CONTENT_TYPE], "text/html; charset=utf-8");
        assert_eq!(page.headers()[header::CONTENT_SECURITY_POLICY], CSP);
        assert_eq!(get_path("/assets/js/nope.js").await.status(), StatusCode::NOT_FOUND);
    }
}
