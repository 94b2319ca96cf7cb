// Package stampede is the cache read path from the interview card, in Go:
// singleflight inside the process, a Redis claim across processes.
//
// golang.org/x/sync/singleflight's DoChan is the same flight table as
// Get below (a map of calls under a mutex, removed when the call settles);
// it is written out here so that every step is visible.
package stampede

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

// ErrNoValue: another instance held the claim and wrote nothing in time.
var ErrNoValue = errors.New("claim held elsewhere and no value within the wait")

// call is one flight: the leader's result, shared by every caller that joined it.
type call struct {
	done chan struct{} // closed when the flight settles
	val  string
	err  error
}

// Cache is one instance (one process) of a fleet sharing a Redis.
type Cache struct {
	Pool    *redis.Pool
	Origin  func(key string) (string, error)
	Claim   bool          // claim across instances (false: singleflight only)
	TTL     time.Duration // the value's
	LockTTL time.Duration // the claim's: longer than an origin call
	Wait    time.Duration // a loser polls for the value this long at most
	Claims  atomic.Int64  // claim attempts (SET NX), for the tests

	mu      sync.Mutex
	flights map[string]*call
}

// New is an instance on the Redis at addr, every command bounded by 100 ms.
func New(addr string, origin func(string) (string, error)) *Cache {
	dial := func() (redis.Conn, error) {
		t := 100 * time.Millisecond
		return redis.Dial("tcp", addr, redis.DialConnectTimeout(t), redis.DialReadTimeout(t), redis.DialWriteTimeout(t))
	}
	return &Cache{Pool: &redis.Pool{Dial: dial, MaxIdle: 8}, Origin: origin, Claim: true,
		TTL: time.Minute, LockTTL: 3 * time.Second, Wait: 2 * time.Second, flights: map[string]*call{}}
}

// Get returns key's value. ctx's deadline ends this caller's wait, not the
// work: the flight goes on and fills the cache for the others.
func (c *Cache) Get(ctx context.Context, key string) (string, error) { // card 1: handle(key)
	// card 4: singleflight(key): one flight per key in this process
	c.mu.Lock()
	f, running := c.flights[key]
	if !running { // the leader: start the flight, in its own goroutine
		f = &call{done: make(chan struct{})}
		c.flights[key] = f
		go func() {
			f.val, f.err = c.load(key)
			c.mu.Lock()
			delete(c.flights, key) // settled: a failure is shared, never remembered
			c.mu.Unlock()
			close(f.done) // card 13: answer every waiter with the same result
		}()
	}
	c.mu.Unlock()
	// card 5: wait for the flight, until my own deadline
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// load is the flight's work: GET, else claim, compute, write, release.
func (c *Cache) load(key string) (string, error) {
	conn := c.Pool.Get()
	defer conn.Close()
	if v, err := redis.String(conn.Do("GET", "value:"+key)); err == nil { // card 2: GET key
		return v, nil // card 3: a hit (a Redis error counts as a miss: fail open)
	}
	if c.Claim {
		// card 6: SET lock:key token NX PX ttl, with a random token
		token := newToken()
		c.Claims.Add(1)
		_, err := redis.String(conn.Do("SET", "lock:"+key, token, "NX", "PX", c.LockTTL.Milliseconds()))
		// card 12: lost: another instance computes; poll for its value
		if err == redis.ErrNil {
			return c.poll(conn, key)
		}
		// card 7: won (on a Redis error: compute without the lock)
		if err == nil {
			defer release(conn, key, token) // card 11: release the claim if it is still mine
		}
	}
	// card 9: call the origin; the flight runs on past every caller's deadline
	v, err := c.Origin(key)
	if err != nil {
		return "", err
	}
	// card 10: SET key v (a failed write still answers v)
	conn.Do("SET", "value:"+key, v, "PX", c.TTL.Milliseconds())
	return v, nil
}

// poll reads the value until the claim's holder has written it, or gives up.
func (c *Cache) poll(conn redis.Conn, key string) (string, error) {
	for end := time.Now().Add(c.Wait); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if v, err := redis.String(conn.Do("GET", "value:"+key)); err == nil {
			return v, nil
		}
	}
	return "", ErrNoValue
}

// Delete only if still mine: past its TTL the claim may be another
// instance's, and a plain DEL would free that one.
var releaseScript = redis.NewScript(1, `
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0`)

func release(conn redis.Conn, key, token string) bool {
	n, err := redis.Int(releaseScript.Do(conn, "lock:"+key, token))
	return err == nil && n == 1
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
