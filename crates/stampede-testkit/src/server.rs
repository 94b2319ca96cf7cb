//! A throwaway `redis-server`'s process: a free loopback port, a temporary
//! directory, the server spawned with no persistence. No async runtime of
//! its own: the tests ([`crate::TestRedis`]) and the benches
//! ([`crate::BenchRedis`]) both start it.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

/// A free loopback port (free when asked; the server binds it next).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A temporary directory of this test process's own.
pub fn temp_dir(what: &str, port: u16) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "stampede-redis-{what}-{}-{port}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// `redis-server` on `port` in `dir`, no persistence, plus `extra` flags.
pub fn spawn_server(port: u16, dir: &std::path::Path, extra: &[&str]) -> Child {
    Command::new("redis-server")
        .args([
            "--bind",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .arg("--dir")
        .arg(dir)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server on PATH (make setup installs Debian's redis-server)")
}
