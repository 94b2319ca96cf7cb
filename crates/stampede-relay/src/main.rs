//! `stampede-relay`: the room's relay and the page's files on one port.
//!
//! ```text
//! cargo run -p stampede-relay -- [--port 8090] [--host 0.0.0.0] [--dist dist] [--idle-secs 1800]
//! ```
//!
//! Prints the links to open: the kit, presenter mode, and the relay's
//! address for a page served elsewhere (`?relay=ws://HOST:PORT`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::Duration;

use stampede_relay::{serve, Config, Relay};

const USAGE: &str = "usage: stampede-relay [--port N] [--host ADDR] [--dist DIR] [--idle-secs N]
  --port N       port to listen on (default 8090; 0 picks a free one)
  --host ADDR    address to listen on (default 0.0.0.0: the room's phones reach it)
  --dist DIR     the page's built files to serve beside the relay (default dist, if it exists)
  --idle-secs N  a room with no message for N seconds ends (default 1800)";

struct Args {
    port: u16,
    host: IpAddr,
    dist: Option<PathBuf>,
    idle: Duration,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        port: 8090,
        host: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        dist: None,
        idle: Duration::from_secs(1800),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match flag.as_str() {
            "--port" => {
                let v = value("--port")?;
                a.port = v.parse().map_err(|_| format!("--port: not a port: {v}"))?;
            }
            "--host" => {
                let v = value("--host")?;
                a.host = v
                    .parse()
                    .map_err(|_| format!("--host: not an address: {v}"))?;
            }
            "--dist" => a.dist = Some(PathBuf::from(value("--dist")?)),
            "--idle-secs" => {
                let v = value("--idle-secs")?;
                let n: u64 = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=7 * 24 * 3600).contains(n))
                    .ok_or(format!(
                        "--idle-secs: a whole number of seconds from 1 to a week, not {v}"
                    ))?;
                a.idle = Duration::from_secs(n);
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    if a.dist.is_none() && PathBuf::from("dist/index.html").is_file() {
        a.dist = Some(PathBuf::from("dist"));
    }
    Ok(a)
}

/// The address other machines on the network reach this one at: the
/// source address of a route out (no packet is sent).
fn lan_address() -> Option<IpAddr> {
    let s = UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.1:9").ok()?;
    Some(s.local_addr().ok()?.ip()).filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
}

#[tokio::main]
async fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("stampede-relay: {e}");
            }
            eprintln!("{USAGE}");
            std::process::exit(if e.is_empty() { 0 } else { 2 });
        }
    };
    let listener = match tokio::net::TcpListener::bind(SocketAddr::new(a.host, a.port)).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "stampede-relay: cannot listen on {}:{}: {e}",
                a.host, a.port
            );
            std::process::exit(1);
        }
    };
    let port = listener.local_addr().map(|l| l.port()).unwrap_or(a.port);
    let host = if a.host.is_unspecified() {
        lan_address().unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
    } else {
        a.host
    };
    let at = match host {
        IpAddr::V6(h) => format!("[{h}]:{port}"),
        IpAddr::V4(h) => format!("{h}:{port}"),
    };
    println!(
        "stampede-relay: listening on {at} (rooms end after {} s idle)",
        a.idle.as_secs()
    );
    match &a.dist {
        Some(d) => {
            println!(
                "  the page ({}):   http://{at}/?relay=ws://{at}",
                d.display()
            );
            println!("  interviewer's kit: http://{at}/?kit=1&relay=ws://{at}");
            println!("  presenter mode:    http://{at}/?present=1&relay=ws://{at}#tour/basics/1");
        }
        None => println!("  no dist/ to serve (run `make dist`); relay only"),
    }
    println!("  a page served elsewhere: add ?relay=ws://{at} (wss:// behind TLS)");
    let relay = Relay::new(Config {
        dist: a.dist,
        idle: a.idle,
        ..Config::default()
    });
    tokio::select! {
        r = serve(listener, relay) => {
            if let Err(e) = r {
                eprintln!("stampede-relay: {e}");
                std::process::exit(1);
            }
        }
        _ = tokio::signal::ctrl_c() => println!("stampede-relay: stopped; every room ended"),
    }
}
