//! A throwaway `redis-server` for the tests: a free loopback port, a
//! temporary directory, no persistence; killed when dropped, pass or fail.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::time::sleep;

/// A throwaway Redis, killed on drop.
pub struct TestRedis {
    child: Child,
    dir: std::path::PathBuf,
    pub url: String,
}

impl TestRedis {
    pub async fn start() -> TestRedis {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        let dir =
            std::env::temp_dir().join(format!("stampede-redis-test-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let child = Command::new("redis-server")
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
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server on PATH (make setup installs Debian's redis-server)");
        let url = format!("redis://127.0.0.1:{port}/");
        let r = TestRedis { child, dir, url };
        for _ in 0..200 {
            if let Ok(c) = redis::Client::open(r.url.as_str()) {
                if let Ok(mut con) = c.get_multiplexed_async_connection().await {
                    if redis::cmd("PING")
                        .query_async::<String>(&mut con)
                        .await
                        .is_ok()
                    {
                        return r;
                    }
                }
            }
            sleep(Duration::from_millis(20)).await;
        }
        panic!("redis-server did not answer on {}", r.url);
    }
}

impl TestRedis {
    /// Stops the server now (a Redis outage in the middle of a run).
    #[allow(dead_code)] // not every test file kills its Redis
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for TestRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
