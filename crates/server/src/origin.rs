//! Which sites may reach the server through a browser: the `Host` allow-list (a DNS-rebinding
//! page reaches loopback under its own name), the `Origin` check on state-changing requests (a
//! cross-site page may send a "simple" POST without asking). The JSON `Content-Type` that keeps
//! such simple requests from being bodies the API accepts is checked with the body, in
//! [`crate::error::require_json`].

use crate::error::ApiError;
use crate::Shared;
use axum::extract::{Request, State};
use axum::http::header::{HOST, ORIGIN};
use axum::http::uri::{Authority, Scheme};
use axum::http::{HeaderMap, Method, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::{IpAddr, SocketAddr};

/// The local address a connection arrived on (set by the accept loop): with a wildcard bind,
/// the machine's own address a client used.
#[derive(Debug, Clone, Copy)]
pub struct ConnectedTo(pub SocketAddr);

/// The host names requests may address.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    names: Vec<String>,
    /// Bound to a wildcard address with a token and no names configured: the operator exposed
    /// the server on purpose and the token protects every route that matters, so any name the
    /// clients use is accepted.
    any: bool,
}

impl HostPolicy {
    /// Loopback names, the bound address and `configured` (`[serve] allowed_hosts`).
    pub fn new(bound: SocketAddr, configured: &[String], token_required: bool) -> HostPolicy {
        let mut names: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
        if !bound.ip().is_unspecified() {
            names.push(bound.ip().to_string());
        }
        // A configured `name:port` means the name: ports are not part of the check.
        names.extend(configured.iter().map(|n| match n.parse::<Authority>() {
            Ok(a) => normalize_host(a.host()),
            Err(_) => normalize_host(n),
        }));
        HostPolicy { names, any: bound.ip().is_unspecified() && token_required && configured.is_empty() }
    }

    /// Whether `host` (a `Host` header's host, port already removed) is one this server answers
    /// to; `local` is the address the connection arrived on, always acceptable as an IP literal.
    pub fn allows(&self, host: &str, local: Option<IpAddr>) -> bool {
        if self.any {
            return true;
        }
        let host = normalize_host(host);
        if self.names.contains(&host) {
            return true;
        }
        match (host.parse::<IpAddr>(), local) {
            (Ok(ip), Some(local)) => ip.to_canonical() == local.to_canonical(),
            _ => false,
        }
    }
}

/// Lower case, no IPv6 brackets, no trailing dot (`LOCALHOST.` names localhost too).
fn normalize_host(host: &str) -> String {
    let host = host.trim_start_matches('[').trim_end_matches(']').trim_end_matches('.');
    host.to_ascii_lowercase()
}

/// The authorities a request names: the `Host` header and, in absolute-form, the URI's. Every
/// one must be allowed, so the two cannot disagree in an attacker's favour.
fn request_authorities(uri: &Uri, headers: &HeaderMap) -> Result<Vec<Authority>, String> {
    let mut found = Vec::new();
    if let Some(a) = uri.authority() {
        found.push(a.clone());
    }
    for value in headers.get_all(HOST) {
        let text = value.to_str().map_err(|_| "the Host header is not ASCII".to_string())?;
        found.push(text.parse::<Authority>().map_err(|_| format!("malformed Host header `{text}`"))?);
    }
    if found.is_empty() {
        return Err("the request has no Host header".into());
    }
    Ok(found)
}

/// 403 unless every host the request names is allowed (every route: the API, `/mcp`, the page).
pub async fn check_host(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    let local = req.extensions().get::<ConnectedTo>().map(|c| c.0.ip());
    match request_authorities(req.uri(), req.headers()) {
        Ok(authorities) => match authorities.iter().find(|a| !shared.hosts.allows(a.host(), local)) {
            None => next.run(req).await,
            Some(bad) => ApiError::forbidden(format!(
                "Host `{}` is not one this server answers to (localhost, 127.0.0.1, [::1], its own \
                 address, or a name in [serve] allowed_hosts); refused against DNS rebinding",
                bad.host()
            ))
            .into_response(),
        },
        Err(why) => ApiError::forbidden(why).into_response(),
    }
}

/// Methods that change something or spend work, which a cross-site page must not trigger.
fn is_state_changing(method: &Method) -> bool {
    matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE)
}

/// An `Origin` is acceptable when it is listed in `[serve] cors_origins`, or when it names the
/// very host and port the request was sent to (the web page served at `/`). The scheme may be
/// http or https, so a TLS-terminating proxy that keeps `Host` still counts as same-origin.
pub fn origin_allowed(origin: &str, host: &Authority, cors_origins: &[String]) -> bool {
    let wanted = origin.trim_end_matches('/');
    if cors_origins.iter().any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(wanted)) {
        return true;
    }
    let Ok(uri) = wanted.parse::<Uri>() else { return false };
    let (Some(scheme), Some(authority)) = (uri.scheme(), uri.authority()) else { return false };
    let default_port = if *scheme == Scheme::HTTP {
        80
    } else if *scheme == Scheme::HTTPS {
        443
    } else {
        return false;
    };
    if uri.path() != "/" && !uri.path().is_empty() || normalize_host(authority.host()) != normalize_host(host.host()) {
        return false;
    }
    let origin_port = authority.port_u16().unwrap_or(default_port);
    match host.port_u16() {
        Some(port) => port == origin_port,
        // A proxy's `Host` without a port means the scheme's default one.
        None => origin_port == default_port,
    }
}

/// 403 for a state-changing request whose `Origin` is another site. Requests without `Origin`
/// (curl, SDKs, same-origin GETs) pass: browsers always send it on cross-origin POSTs.
pub async fn check_origin(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    if !is_state_changing(req.method()) {
        return next.run(req).await;
    }
    let Some(origin) = req.headers().get(ORIGIN) else { return next.run(req).await };
    let origin = origin.to_str().unwrap_or("(not ASCII)").to_string();
    // check_host ran first, so the first authority is present and allowed.
    let host = request_authorities(req.uri(), req.headers()).ok().and_then(|a| a.into_iter().next());
    if host.is_some_and(|h| origin_allowed(&origin, &h, &shared.options.cors_origins)) {
        return next.run(req).await;
    }
    ApiError::forbidden(format!(
        "cross-site request refused: Origin `{origin}` is neither this server's own origin nor listed \
         in [serve] cors_origins"
    ))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn authority(s: &str) -> Authority {
        s.parse().unwrap()
    }

    #[test]
    fn loopback_bind_answers_to_loopback_names_and_configured_ones() {
        let policy = HostPolicy::new(addr("127.0.0.1:8080"), &["RAG.Intranet.example:443".into()], false);
        for host in ["localhost", "LOCALHOST.", "127.0.0.1", "[::1]", "rag.intranet.example"] {
            assert!(policy.allows(authority(&format!("{host}:8080")).host(), None), "{host}");
        }
        for host in ["evil.example", "localhost.evil.example", "127.0.0.2", "intranet.example"] {
            assert!(!policy.allows(host, None), "{host}");
        }
    }

    #[test]
    fn specific_bind_answers_to_its_address_and_the_connection_address() {
        let policy = HostPolicy::new(addr("10.0.0.5:8080"), &[], true);
        assert!(policy.allows("10.0.0.5", None));
        assert!(!policy.allows("evil.example", None));
        let wildcard = HostPolicy::new(addr("0.0.0.0:8080"), &["rag.example".into()], true);
        assert!(wildcard.allows("192.168.1.7", Some("192.168.1.7".parse().unwrap())));
        assert!(!wildcard.allows("192.168.1.8", Some("192.168.1.7".parse().unwrap())));
        assert!(!wildcard.allows("evil.example", Some("192.168.1.7".parse().unwrap())));
    }

    #[test]
    fn wildcard_bind_with_a_token_and_no_names_accepts_any_host() {
        assert!(HostPolicy::new(addr("0.0.0.0:8080"), &[], true).allows("anything.example", None));
        assert!(HostPolicy::new(addr("[::]:8080"), &[], true).allows("anything.example", None));
        assert!(!HostPolicy::new(addr("0.0.0.0:8080"), &[], false).allows("anything.example", None));
    }

    #[test]
    fn host_header_must_be_present_and_well_formed() {
        let mut headers = HeaderMap::new();
        assert!(request_authorities(&Uri::from_static("/v1/ask"), &headers).is_err());
        headers.insert(HOST, HeaderValue::from_static("bad host"));
        assert!(request_authorities(&Uri::from_static("/v1/ask"), &headers).is_err());
        headers.insert(HOST, HeaderValue::from_static("localhost:1"));
        let found = request_authorities(&Uri::from_static("http://evil.example/v1/ask"), &headers).unwrap();
        assert_eq!(found.iter().map(Authority::host).collect::<Vec<_>>(), ["evil.example", "localhost"]);
    }

    #[test]
    fn same_origin_and_listed_origins_are_allowed() {
        let host = authority("127.0.0.1:8080");
        assert!(origin_allowed("http://127.0.0.1:8080", &host, &[]));
        assert!(origin_allowed("http://127.0.0.1:8080/", &host, &[]));
        assert!(!origin_allowed("http://127.0.0.1:8081", &host, &[]));
        assert!(!origin_allowed("http://localhost:8080", &host, &[]));
        assert!(!origin_allowed("http://evil.example", &host, &[]));
        assert!(!origin_allowed("null", &host, &[]));
        assert!(!origin_allowed("file://", &host, &[]));
        assert!(origin_allowed("https://intranet.example", &host, &["https://intranet.example/".into()]));
        // Behind a TLS proxy that keeps the Host header.
        assert!(origin_allowed("https://rag.example", &authority("rag.example"), &[]));
        assert!(!origin_allowed("https://rag.example:8443", &authority("rag.example"), &[]));
    }
}
