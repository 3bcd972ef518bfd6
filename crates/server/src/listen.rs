//! The accept loop: HTTP/1.1 connections with a deadline on reading each request head, a cap
//! on the connections one client holds open, and a graceful shutdown. Written on hyper-util
//! rather than `axum::serve`, which sets no timer (so no header timeout) and cannot refuse a
//! connection. HTTP/1.1 only: the HTTP/2 preface is read with no deadline at all.

use crate::origin::ConnectedTo;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::net::TcpListener;
use tower_service::Service as _;

/// How long shutdown waits for requests in flight before it closes what is left, so a stalled
/// client cannot keep the process alive (service managers kill after 30 s or more).
const DRAIN: Duration = Duration::from_secs(20);

/// What the accept loop enforces on every connection.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Until the whole request head has arrived, for the first request and each next one on a
    /// kept-alive connection.
    pub header_timeout: Duration,
    /// Connections one client may hold open at once; 0 = no cap.
    pub per_client: usize,
}

/// Open connections per client, each held by a [`Slot`].
#[derive(Debug, Default)]
struct ClientSlots {
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection of a client; gives its place back when dropped.
struct Slot {
    slots: Arc<ClientSlots>,
    client: IpAddr,
}

impl ClientSlots {
    /// A slot for `client`, or `None` when it already holds `cap` connections.
    fn take(self: &Arc<Self>, client: IpAddr, cap: usize) -> Option<Slot> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(client).or_insert(0);
        if cap > 0 && *count >= cap {
            return None;
        }
        *count += 1;
        Some(Slot { slots: self.clone(), client })
    }

    #[cfg(test)]
    fn open(&self, client: IpAddr) -> usize {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).get(&client).copied().unwrap_or(0)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.client);
            }
        }
    }
}

/// The client a connection is counted against: its IPv4 address, or the /64 network of an
/// IPv6 one (one host usually owns a whole /64, so per-address caps would not bind).
fn client_of(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let s = v6.segments();
            IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
        v4 => v4,
    }
}

/// Accepts until `shutdown` resolves, then stops accepting, lets requests in flight finish (up
/// to [`DRAIN`]) and returns.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let slots = Arc::new(ClientSlots::default());
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
    tokio::pin!(shutdown);
    loop {
        let (tcp, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    wait_after_accept_error(e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(slot) = slots.take(client_of(remote.ip()), limits.per_client) else {
            // Closed at once: answering would mean reading the request, which is the work a
            // client over its cap must not get.
            drop(tcp);
            continue;
        };
        // Small JSON answers and stream chunks go out at once instead of waiting on delayed ACKs.
        let _ = tcp.set_nodelay(true);
        let local = tcp.local_addr().unwrap_or(remote);
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(remote));
            req.extensions_mut().insert(ConnectedTo(local));
            app.clone().call(req)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(tcp), service));
        tokio::spawn(async move {
            // A client that hangs up or times out is its own business.
            let _ = connection.await;
            drop(slot);
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
    Ok(())
}

/// Running out of file descriptors and the like: pause instead of spinning; a connection reset
/// before it was accepted is nothing.
async fn wait_after_accept_error(e: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(e.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    eprintln!("warning: accepting a connection failed: {e}; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_holds_at_most_its_cap_and_gets_slots_back() {
        let slots = Arc::new(ClientSlots::default());
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let first = slots.take(a, 2).unwrap();
        let _second = slots.take(a, 2).unwrap();
        assert!(slots.take(a, 2).is_none());
        assert!(slots.take(b, 2).is_some(), "another client has its own cap");
        drop(first);
        assert_eq!(slots.open(a), 1);
        assert!(slots.take(a, 2).is_some());
        assert!(slots.take(a, 0).is_some(), "0 = no cap");
    }

    #[test]
    fn slots_are_forgotten_when_the_last_closes() {
        let slots = Arc::new(ClientSlots::default());
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        drop(slots.take(a, 1));
        assert!(slots.open.lock().unwrap().is_empty());
    }

    #[test]
    fn ipv6_clients_are_counted_per_64() {
        let one: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let other: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(client_of(one), client_of(other));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(client_of(mapped), "10.0.0.1".parse::<IpAddr>().unwrap());
    }
}
