package stampede

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

const P, C = 3, 50 // processes (instances) x concurrent calls each

var addr string

// TestMain runs one throwaway redis-server on a free loopback port.
func TestMain(m *testing.M) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	srv := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := srv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "redis-server:", err)
		os.Exit(1)
	}
	for i := 0; i < 100; i++ {
		if c, err := redis.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	code := m.Run()
	srv.Process.Kill()
	srv.Wait()
	os.Exit(code)
}

func slowOrigin(calls *atomic.Int64, d time.Duration, err error) func(string) (string, error) {
	return func(key string) (string, error) {
		calls.Add(1)
		time.Sleep(d)
		return "value of " + key, err
	}
}

// burst: P instances sharing the Redis, C concurrent Gets on each, on a cold key.
func burst(t *testing.T, key string, claim bool) (origin, claims int64) {
	var calls atomic.Int64
	var wg sync.WaitGroup
	fleet := make([]*Cache, P)
	for i := range fleet {
		fleet[i] = New(addr, slowOrigin(&calls, 100*time.Millisecond, nil))
		fleet[i].Claim = claim
		for j := 0; j < C; j++ {
			wg.Add(1)
			go func(c *Cache) {
				defer wg.Done()
				if v, err := c.Get(context.Background(), key); err != nil || v != "value of "+key {
					t.Errorf("got %q, %v", v, err)
				}
			}(fleet[i])
		}
	}
	wg.Wait()
	for _, c := range fleet {
		claims += c.Claims.Load()
	}
	return calls.Load(), claims
}

func TestBurstMakesOneOriginCall(t *testing.T) {
	origin, claims := burst(t, "burst", true)
	fmt.Printf("go: %d processes x %d calls -> %d origin calls (%d claim attempts)\n", P, C, origin, claims)
	if origin != 1 || claims != P {
		t.Fatalf("claim on: %d origin calls, %d claims; want 1 and %d", origin, claims, P)
	}
	if origin, claims = burst(t, "burst-sf", false); origin != P || claims != 0 {
		t.Fatalf("singleflight only: %d origin calls, %d claims; want %d and 0", origin, claims, P)
	}
}

func TestFailureIsSharedNotRemembered(t *testing.T) {
	var calls atomic.Int64
	boom := errors.New("origin down")
	c := New(addr, slowOrigin(&calls, 50*time.Millisecond, boom))
	var wg sync.WaitGroup
	var failed atomic.Int64
	for j := 0; j < C; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Get(context.Background(), "failing"); errors.Is(err, boom) {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	if calls.Load() != 1 || failed.Load() != C {
		t.Fatalf("%d origin calls, %d callers saw the error; want 1 and %d", calls.Load(), failed.Load(), C)
	}
	c.Get(context.Background(), "failing")
	if calls.Load() != 2 {
		t.Fatalf("the next call did not try again: %d origin calls", calls.Load())
	}
}

func TestDeadlineEndsTheWaitNotTheWork(t *testing.T) {
	var calls atomic.Int64
	c := New(addr, slowOrigin(&calls, 300*time.Millisecond, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.Get(ctx, "slow"); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 150*time.Millisecond {
		t.Fatalf("got %v after %v; want the deadline after 50 ms", err, time.Since(start))
	}
	time.Sleep(400 * time.Millisecond)
	conn := c.Pool.Get()
	defer conn.Close()
	if v, _ := redis.String(conn.Do("GET", "value:slow")); v != "value of slow" {
		t.Fatalf("the value did not land: %q", v)
	}
}

func TestReleaseNeverDeletesAnotherHoldersClaim(t *testing.T) {
	conn := New(addr, nil).Pool.Get()
	defer conn.Close()
	conn.Do("SET", "lock:held", "theirs", "PX", 10000)
	if release(conn, "held", "mine") {
		t.Fatal("released a claim held by another token")
	}
	if v, _ := redis.String(conn.Do("GET", "lock:held")); v != "theirs" {
		t.Fatalf("their claim is gone: %q", v)
	}
	if !release(conn, "held", "theirs") {
		t.Fatal("the holder could not release its own claim")
	}
}

func TestRedisDownFailsOpen(t *testing.T) {
	var calls atomic.Int64
	c := New("127.0.0.1:1", slowOrigin(&calls, 0, nil)) // nothing listens there
	if v, err := c.Get(context.Background(), "k"); err != nil || v != "value of k" {
		t.Fatalf("got %q, %v; want the origin's value", v, err)
	}
}
