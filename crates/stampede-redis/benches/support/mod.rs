//! A throwaway redis-server for the benches: a free loopback port, a
//! temporary directory, no persistence; killed on drop. Shared by
//! `stampede-redis`'s benches and `stampede-fleet`'s (by path).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A throwaway redis-server on a free loopback port, killed on drop.
pub struct BenchRedis {
    child: Child,
    dir: std::path::PathBuf,
    pub url: String,
}

impl BenchRedis {
    pub fn start() -> BenchRedis {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let dir =
            std::env::temp_dir().join(format!("stampede-bench-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server on PATH");
        let url = format!("redis://127.0.0.1:{port}/");
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        BenchRedis { child, dir, url }
    }
}

impl Drop for BenchRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
