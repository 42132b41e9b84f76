//! Opening TCP connections for every network transport: TCP_NODELAY (small MCP
//! messages must not wait for Nagle), local source addresses taken in turn (each source
//! address has its own ~28k ephemeral ports toward one server port), and errors that
//! name the limit that was hit and how to raise it.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::net::{lookup_host, TcpSocket, TcpStream};

/// The local addresses a run connects from, used in turn; empty = the system's choice.
#[derive(Debug, Default)]
pub struct SourceAddrs {
    addrs: Vec<IpAddr>,
    next: AtomicUsize,
}

impl SourceAddrs {
    pub fn new(addrs: Vec<IpAddr>) -> SourceAddrs {
        SourceAddrs {
            addrs,
            next: AtomicUsize::new(0),
        }
    }

    fn pick(&self, family_v6: bool) -> Option<IpAddr> {
        if self.addrs.is_empty() {
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        let candidates = self.addrs.iter().filter(|a| a.is_ipv6() == family_v6);
        let n = candidates.clone().count();
        if n == 0 {
            return None;
        }
        candidates.cloned().nth(i % n)
    }
}

/// Connect to `host:port` (a name or an address), from the next source address.
pub async fn connect(addr: &str, sources: &SourceAddrs) -> io::Result<TcpStream> {
    let mut last = None;
    for target in lookup_host(addr).await? {
        match connect_one(target, sources).await {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other(format!("{addr} resolves to no address"))))
}

async fn connect_one(target: SocketAddr, sources: &SourceAddrs) -> io::Result<TcpStream> {
    let socket = if target.is_ipv6() {
        TcpSocket::new_v6()
    } else {
        TcpSocket::new_v4()
    }
    .map_err(explain)?;
    if let Some(src) = sources.pick(target.is_ipv6()) {
        socket.bind(SocketAddr::new(src, 0)).map_err(explain)?;
    }
    socket.set_nodelay(true)?;
    socket.connect(target).await.map_err(explain)
}

/// Name the limit behind the errors a load generator runs into.
pub fn explain(e: io::Error) -> io::Error {
    let hint = match e.raw_os_error() {
        Some(code) if code == nix::errno::Errno::EMFILE as i32 || code == nix::errno::Errno::ENFILE as i32 => {
            let limit = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
                .map(|(soft, _)| soft.to_string())
                .unwrap_or_else(|_| "?".into());
            format!(
                "too many open files (this process may have {limit}): raise the limit with `ulimit -n 1048576` (root) or lower --clients/--rate"
            )
        }
        Some(code) if code == nix::errno::Errno::EADDRNOTAVAIL as i32 => {
            "out of local ports toward this server: connect from more loopback addresses with --source-addresses 127.0.0.1-127.0.0.8, or widen net.ipv4.ip_local_port_range".to_string()
        }
        Some(code) if code == nix::errno::Errno::EADDRINUSE as i32 => {
            "every local port of this source address is in use: add --source-addresses".to_string()
        }
        _ => return e,
    };
    io::Error::new(e.kind(), format!("{e} — {hint}"))
}

/// Raise this process's open-file limit as far as allowed (soft to hard; as root, the
/// hard limit too), so tens of thousands of sessions fit. Returns the limit in force.
pub fn raise_open_file_limit() -> u64 {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return 0;
    };
    let ceiling = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(hard)
        .min(1 << 20);
    if ceiling > hard && setrlimit(Resource::RLIMIT_NOFILE, ceiling, ceiling).is_ok() {
        return ceiling;
    }
    if hard > soft && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return hard;
    }
    soft
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn connects_from_each_source_address_in_turn() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        let sources = SourceAddrs::new(vec![
            "127.0.0.2".parse().expect("ip"),
            "127.0.0.3".parse().expect("ip"),
        ]);
        let mut seen = Vec::new();
        for _ in 0..4 {
            let s = connect(&addr, &sources).await.expect("connect");
            assert!(s.nodelay().expect("nodelay"));
            seen.push(s.local_addr().expect("local").ip().to_string());
            let _ = listener.accept().await.expect("accept");
        }
        assert_eq!(seen, ["127.0.0.2", "127.0.0.3", "127.0.0.2", "127.0.0.3"]);
    }

    #[test]
    fn limits_are_named() {
        let e = explain(io::Error::from_raw_os_error(
            nix::errno::Errno::EADDRNOTAVAIL as i32,
        ));
        assert!(e.to_string().contains("--source-addresses"), "{e}");
        let e = explain(io::Error::from_raw_os_error(
            nix::errno::Errno::EMFILE as i32,
        ));
        assert!(e.to_string().contains("ulimit -n"), "{e}");
        assert!(raise_open_file_limit() > 0);
    }
}
