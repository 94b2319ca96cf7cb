//! The claim store, the driver and the fleet against a real three-node
//! Redis Cluster that the test starts (three primaries on free loopback
//! ports, `redis-cli --cluster create`) and kills when it ends.

use std::collections::HashSet;
use std::time::Duration;

use stampede::scenario::{preset, Scenario};
use stampede::sim::Fleet;
use stampede_fleet::fleet::{run, EXACT};
use stampede_redis::{fence_key, lock_key, value_key, ClaimStore, Release, Target, Token};
use stampede_testkit::TestCluster;

async fn keyslot(url: &str, key: &str) -> u16 {
    let client = redis::Client::open(url).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query_async(&mut con)
        .await
        .unwrap()
}

/// The node (its port) that serves `slot`, from `CLUSTER SLOTS`.
async fn node_of(url: &str, slot: u16) -> u16 {
    let client = redis::Client::open(url).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let ranges: Vec<(u16, u16, (String, u16))> = {
        let raw: Vec<redis::Value> = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query_async(&mut con)
            .await
            .unwrap();
        raw.into_iter()
            .map(|r| {
                let v: Vec<redis::Value> = redis::from_redis_value(&r).unwrap();
                let lo: u16 = redis::from_redis_value(&v[0]).unwrap();
                let hi: u16 = redis::from_redis_value(&v[1]).unwrap();
                let node: Vec<redis::Value> = redis::from_redis_value(&v[2]).unwrap();
                let host: String = redis::from_redis_value(&node[0]).unwrap();
                let port: u16 = redis::from_redis_value(&node[1]).unwrap();
                (lo, hi, (host, port))
            })
            .collect()
    };
    ranges
        .iter()
        .find(|(lo, hi, _)| (*lo..=*hi).contains(&slot))
        .map(|(_, _, (_, p))| *p)
        .expect("every slot is served")
}

/// One test for the whole cluster (starting one takes a few seconds).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claim_and_the_fleet_work_on_a_three_node_cluster() {
    let cluster = TestCluster::start().await;
    let seed = format!("redis://127.0.0.1:{}/", cluster.ports[0]);

    // A value, its claim and its fence hash to one slot, whatever the key;
    // the keys used below land on more than one node.
    let mut nodes = HashSet::new();
    for k in ["0", "1", "2", "3", "product:42", "user:{7}", "k"] {
        let slot = keyslot(&seed, &value_key(k)).await;
        assert_eq!(keyslot(&seed, &lock_key(k)).await, slot, "{k}");
        assert_eq!(keyslot(&seed, &fence_key(k)).await, slot, "{k}");
        nodes.insert(node_of(&seed, slot).await);
    }
    assert!(
        nodes.len() >= 2,
        "the keys all landed on one node: {nodes:?}"
    );

    // The claim store, from every node as the seed and from all three.
    for target in [
        Target::parse(&cluster.urls),
        Target::cluster(&format!("redis://127.0.0.1:{}/", cluster.ports[2])),
    ] {
        let store = ClaimStore::connect(target).await.unwrap();
        for k in ["0", "1", "2", "3", "product:42"] {
            let ttl = Duration::from_secs(10);
            let won = store.claim(k, ttl).await.unwrap().expect("free");
            assert_eq!(store.claim(k, ttl).await.unwrap(), None, "held");
            assert_ne!(
                store.release(k, &Token::new()).await.unwrap(),
                Release::Released
            );
            assert_eq!(store.release(k, &won).await.unwrap(), Release::Released);
            let (t, f1) = store.claim_fenced(k, ttl).await.unwrap().unwrap();
            assert_eq!(store.release(k, &t).await.unwrap(), Release::Released);
            let (_, f2) = store.claim_fenced(k, ttl).await.unwrap().unwrap();
            assert!(f2 > f1);
            assert!(store.write_fenced(k, b"new", f2, ttl).await.unwrap());
            assert!(!store.write_fenced(k, b"old", f1, ttl).await.unwrap());
            assert_eq!(store.read(k).await.unwrap(), Some((b"new".to_vec(), f2)));
            let _: i64 = redis::cmd("DEL")
                .arg(lock_key(k))
                .arg(fence_key(k))
                .arg(value_key(k))
                .query_async(&mut store.connection())
                .await
                .unwrap();
        }
        // The scripts survive a flushed script cache on every node.
        let _: String = redis::cmd("SCRIPT")
            .arg("FLUSH")
            .query_async(&mut store.connection())
            .await
            .unwrap();
        let t = store
            .claim_fenced("1", Duration::from_secs(5))
            .await
            .unwrap()
            .unwrap()
            .0;
        assert_eq!(store.release("1", &t).await.unwrap(), Release::Released);
    }

    // Conformance on the cluster: the card and its variants, recomputes,
    // claim attempts and wins exactly as the simulation counts them. At
    // 8 x 25: in a debug build 8,000 tasks take longer than the recompute
    // to arrive, and late arrivals find the value (or claim after the
    // release); the full-size card runs in release on a cluster with
    // `scripts/conformance.sh --cluster`.
    for name in ["burst", "singleflight", "claim-outer", "hang"] {
        let s = Scenario {
            instances: 8,
            threads: 25,
            ..preset(name).unwrap()
        };
        let sim = Fleet::new(&s, 1).run();
        // The simulation's Redis always answers within the 100 ms client
        // timeout; a machine busy with other builds can hold a command
        // back longer (it failed this test once, a count off), and the
        // real run then takes its documented fallback, which the
        // simulation did not. Such a run proves nothing either way: it is
        // run again (each run starts from a clean slate), at most 3 times,
        // and the one compared must have had no Redis error.
        let mut real = run(Target::parse(&cluster.urls), &s).await.unwrap();
        for _ in 1..3 {
            if real.redis_errors == 0 {
                break;
            }
            eprintln!(
                "cluster, {name}: {} Redis errors on a loaded machine; again",
                real.redis_errors
            );
            real = run(Target::parse(&cluster.urls), &s).await.unwrap();
        }
        for m in EXACT {
            let (x, y, m) = (sim.text(m), real.text(m), m.name());
            assert_eq!(
                x, y,
                "cluster, {name}: {m} simulated {x}, real {y}\n{real:?}"
            );
        }
        assert_eq!(real.ended(), real.requests, "{name}");
        assert_eq!(real.redis_errors, 0, "{name}: {real:?}");
    }

    // A cold start over many keys (many slots, all three nodes). What is
    // checked is that every slot's node answers, not latency: the client's
    // timeout and the callers' deadline are generous, so that a machine
    // busy with other builds (a 100 ms stall once failed one command and
    // timed out two callers here) does not fail it.
    let s = Scenario {
        instances: 4,
        threads: 25,
        keys: 50,
        admission: 0,
        redis_timeout_ms: 2_000,
        deadline_ms: 10_000,
        ..preset("cold").unwrap()
    };
    let real = run(Target::parse(&cluster.urls), &s).await.unwrap();
    assert_eq!(real.redis_errors, 0, "{real:?}");
    assert_eq!(real.ended(), 100);
    assert_eq!(real.timeouts + real.errors, 0, "{real:?}");
}
