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
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

const P, C = 3, 50 // processes (instances) x concurrent calls each

var (
	addr string
	srv  *exec.Cmd
)

// TestMain runs one throwaway redis-server on a free loopback port.
func TestMain(m *testing.M) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	srv = exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := srv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "redis-server:", err)
		os.Exit(1)
	}
	for i := 0; i < 250; i++ {
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

// origin counts its calls; each sleeps d, or waits for gate when one is given.
type origin struct {
	calls atomic.Int64
	d     time.Duration
	err   error
	gate  chan struct{}
}

func (o *origin) call(key string) (string, error) {
	o.calls.Add(1)
	if o.gate != nil {
		<-o.gate
	}
	time.Sleep(o.d)
	return "value of " + key, o.err
}

// instance is New with every Redis command bounded by 2 s instead of 100 ms:
// on a loaded machine a slow answer must not be taken for a Redis failure
// (which fails open, and would add origin calls to the counts below). The
// paused-Redis test keeps New's 100 ms.
func instance(o *origin) *Cache {
	c := New(addr, o.call)
	c.Pool = &redis.Pool{MaxIdle: 8, Dial: func() (redis.Conn, error) {
		return redis.Dial("tcp", addr, redis.DialConnectTimeout(2*time.Second),
			redis.DialReadTimeout(2*time.Second), redis.DialWriteTimeout(2*time.Second))
	}}
	return c
}

func do(t *testing.T, cmd string, args ...interface{}) interface{} {
	conn, err := redis.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	v, err := conn.Do(cmd, args...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func inFlight(c *Cache) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.flights)
}

// burst: P instances sharing the Redis, C concurrent Gets on each, on key.
func burst(t *testing.T, o *origin, key string, claim bool) (claims int64) {
	var wg sync.WaitGroup
	fleet := make([]*Cache, P)
	for i := range fleet {
		fleet[i] = instance(o)
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
		if n := inFlight(c); n != 0 {
			t.Errorf("%d flights left in the map", n)
		}
	}
	return claims
}

func TestBurstMakesOneOriginCall(t *testing.T) {
	o := &origin{d: 100 * time.Millisecond}
	claims := burst(t, o, "burst", true)
	fmt.Printf("go: %d processes x %d calls -> %d origin calls (%d claim attempts)\n", P, C, o.calls.Load(), claims)
	if o.calls.Load() != 1 || claims < P {
		t.Fatalf("claim on: %d origin calls, %d claims; want 1, and at least %d", o.calls.Load(), claims, P)
	}
	o = &origin{d: 100 * time.Millisecond}
	if claims = burst(t, o, "burst-sf", false); o.calls.Load() != P || claims != 0 {
		t.Fatalf("singleflight only: %d origin calls, %d claims; want %d and 0", o.calls.Load(), claims, P)
	}
}

// While this instance's flight for the key waits on its origin, another
// instance writes the value: a caller now finds it with its GET and answers
// at once, without joining the flight.
func TestAHitNeverEntersAFlight(t *testing.T) {
	o := &origin{gate: make(chan struct{})}
	defer close(o.gate)
	c := instance(o)
	go c.Get(context.Background(), "hot")
	for o.calls.Load() == 0 { // the flight is at its origin
		time.Sleep(5 * time.Millisecond)
	}
	do(t, "SET", "value:hot", "cached", "PX", 10000)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if v, err := c.Get(ctx, "hot"); err != nil || v != "cached" {
		t.Fatalf("got %q, %v; want the cached value, not the flight's", v, err)
	}
}

// A failure reaches the callers of its flight, and is not remembered. A
// caller whose first GET ends only after a flight settled starts the next
// one: on a loaded machine the C callers can make a few flights, never C.
func TestFailureIsSharedNotRemembered(t *testing.T) {
	boom := errors.New("origin down")
	o := &origin{d: 200 * time.Millisecond, err: boom}
	c := instance(o)
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
	calls := o.calls.Load()
	if calls < 1 || calls > 5 || failed.Load() != C || inFlight(c) != 0 {
		t.Fatalf("%d origin calls, %d callers saw the error, %d flights left; want 1 to 5, %d, 0", calls, failed.Load(), inFlight(c), C)
	}
	c.Get(context.Background(), "failing")
	if o.calls.Load() != calls+1 {
		t.Fatalf("the next call did not try again: %d origin calls", o.calls.Load())
	}
}

func TestDeadlineEndsTheWaitNotTheWork(t *testing.T) {
	o := &origin{gate: make(chan struct{})} // the origin answers only when the test says so
	c := instance(o)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Get(ctx, "slow"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v; want the deadline", err)
	}
	close(o.gate) // the flight goes on and lands its value
	for i := 0; i < 500; i++ {
		if v, _ := redis.String(do(t, "GET", "value:slow"), nil); v == "value of slow" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the value did not land")
}

func TestReleaseNeverDeletesAnotherHoldersClaim(t *testing.T) {
	c := instance(nil)
	do(t, "SET", "lock:held", "theirs", "PX", 10000)
	if c.release("held", "mine") {
		t.Fatal("released a claim held by another token")
	}
	if v, _ := redis.String(do(t, "GET", "lock:held"), nil); v != "theirs" {
		t.Fatalf("their claim is gone: %q", v)
	}
	if !c.release("held", "theirs") {
		t.Fatal("the holder could not release its own claim")
	}
}

// A holder died holding the claim (a token nobody releases): the pollers
// claim again while they poll, and one takes over when its TTL runs out.
func TestAKilledHoldersClaimIsTakenOver(t *testing.T) {
	do(t, "SET", "lock:dead", "a holder that died", "PX", 300)
	o := &origin{d: 20 * time.Millisecond}
	if burst(t, o, "dead", true); o.calls.Load() != 1 {
		t.Fatalf("%d origin calls; want 1, by the poller that took the claim over", o.calls.Load())
	}
	if v, _ := redis.String(do(t, "GET", "lock:dead"), nil); v != "" {
		t.Fatalf("the new holder did not release its claim: %q", v)
	}
}

// The claim stays held past the wait: the loser gives up with ErrNoValue,
// and its flight leaves the map, so the next call starts afresh.
func TestAPollEndsAndLeavesNoFlight(t *testing.T) {
	do(t, "SET", "lock:stuck", "a holder that never writes", "PX", 60000)
	o := &origin{}
	c := instance(o)
	c.Wait = 200 * time.Millisecond
	if _, err := c.Get(context.Background(), "stuck"); !errors.Is(err, ErrNoValue) || inFlight(c) != 0 {
		t.Fatalf("got %v with %d flights left; want ErrNoValue and none", err, inFlight(c))
	}
	do(t, "DEL", "lock:stuck")
	if v, err := c.Get(context.Background(), "stuck"); err != nil || v != "value of stuck" || o.calls.Load() != 1 {
		t.Fatalf("got %q, %v, %d origin calls; want the origin's value", v, err, o.calls.Load())
	}
}

// Another instance holds the claim and writes the value while this one polls.
func TestAValueWrittenDuringThePollIsRead(t *testing.T) {
	do(t, "SET", "lock:polled", "another instance", "PX", 60000)
	o := &origin{}
	c := instance(o)
	c.Wait = 10 * time.Second // ends long before the claim's TTL: only a poll's GET can read the value
	got := make(chan string)
	go func() {
		v, err := c.Get(context.Background(), "polled")
		got <- fmt.Sprint(v, err)
	}()
	for c.Claims.Load() < 3 { // it has polled and claimed again
		time.Sleep(5 * time.Millisecond)
	}
	do(t, "SET", "value:polled", "written by the holder")
	if v := <-got; v != "written by the holder<nil>" || o.calls.Load() != 0 {
		t.Fatalf("got %q with %d origin calls; want the holder's value and none", v, o.calls.Load())
	}
}

// claimConn runs before() ahead of this instance's claim on lock:<key>.
type claimConn struct {
	redis.Conn
	before func()
}

func (c claimConn) Do(cmd string, args ...interface{}) (interface{}, error) {
	if cmd == "SET" && len(args) > 2 && args[0] == "lock:recheck" && args[2] == "NX" {
		c.before()
	}
	return c.Conn.Do(cmd, args...)
}

// The last holder writes the value and releases between this instance's
// first GET and its claim: the claim is won, and the GET after it finds
// the value, so the origin is not called.
func TestTheGetAfterWinningFindsAValueWrittenSinceTheFirst(t *testing.T) {
	o := &origin{}
	c := instance(o)
	dial := c.Pool.Dial
	c.Pool = &redis.Pool{Dial: func() (redis.Conn, error) {
		conn, err := dial()
		return claimConn{conn, func() { do(t, "SET", "value:recheck", "written meanwhile") }}, err
	}}
	if v, err := c.Get(context.Background(), "recheck"); err != nil || v != "written meanwhile" || o.calls.Load() != 0 {
		t.Fatalf("got %q, %v with %d origin calls; want the value written meanwhile and none", v, err, o.calls.Load())
	}
	if v, _ := redis.String(do(t, "GET", "lock:recheck"), nil); v != "" {
		t.Fatalf("the claim was not released: %q", v)
	}
}

func TestRedisDownFailsOpen(t *testing.T) {
	o := &origin{}
	c := New("127.0.0.1:1", o.call) // nothing listens there
	if v, err := c.Get(context.Background(), "k"); err != nil || v != "value of k" {
		t.Fatalf("got %q, %v; want the origin's value", v, err)
	}
}

// Redis hangs (SIGSTOP): every command ends at New's 100 ms bounds, and
// every caller gets the origin's value while Redis is still stopped.
func TestRedisPausedFailsOpenWithinTheTimeouts(t *testing.T) {
	o := &origin{}
	c := New(addr, o.call)
	c.Get(context.Background(), "warm") // a pooled connection, open before the pause
	srv.Process.Signal(syscall.SIGSTOP)
	defer srv.Process.Signal(syscall.SIGCONT)
	done := make(chan string, C)
	for j := 0; j < C; j++ {
		go func() {
			v, err := c.Get(context.Background(), "paused")
			done <- fmt.Sprint(v, err)
		}()
	}
	guard := time.After(20 * time.Second) // far past the bounds: only a hang reaches it
	for j := 0; j < C; j++ {
		select {
		case v := <-done:
			if v != "value of paused<nil>" {
				t.Fatalf("got %q; want the origin's value", v)
			}
		case <-guard:
			t.Fatalf("%d of %d callers still waiting on a stopped Redis", C-j, C)
		}
	}
}
