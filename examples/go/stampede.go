// Package stampede is the cache read path from the interview card, in Go:
// a GET first, then singleflight inside the process, a Redis claim inside
// the flight across processes.
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
	"fmt"
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
	Poll    time.Duration // between two polls
	Claims  atomic.Int64  // claim attempts (SET NX), for the tests

	mu      sync.Mutex
	flights map[string]*call
}

// New is an instance on the Redis at addr. Every Redis command is bounded
// by 100 ms (connect, write and read timeouts), so a Redis that hangs costs
// a caller a bounded wait, then the code fails open.
func New(addr string, origin func(string) (string, error)) *Cache {
	dial := func() (redis.Conn, error) {
		t := 100 * time.Millisecond
		return redis.Dial("tcp", addr, redis.DialConnectTimeout(t), redis.DialReadTimeout(t), redis.DialWriteTimeout(t))
	}
	return &Cache{Pool: &redis.Pool{Dial: dial, MaxIdle: 8}, Origin: origin, Claim: true,
		TTL: time.Minute, LockTTL: 3 * time.Second, Wait: 2 * time.Second, Poll: 10 * time.Millisecond,
		flights: map[string]*call{}}
}

// Get returns key's value. ctx's deadline ends this caller's wait, not the
// work: the flight goes on and fills the cache for the others.
func (c *Cache) Get(ctx context.Context, key string) (string, error) { // card 1: handle(key)
	if v, err := c.get(key); err == nil { // card 2: GET key (a Redis error is a miss: fail open)
		return v, nil // card 3: a hit never enters a flight
	}
	// card 4: singleflight(key): one flight per key in this process
	c.mu.Lock()
	f, running := c.flights[key]
	if !running { // the leader: start the flight, in its own goroutine
		f = &call{done: make(chan struct{})}
		c.flights[key] = f
		go c.fly(key, f)
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

// fly runs one flight and settles it in every path (a value, an error, a
// panic): the entry leaves the map, so a failure is shared, never remembered.
func (c *Cache) fly(key string, f *call) {
	defer func() {
		if p := recover(); p != nil {
			f.err = fmt.Errorf("the flight panicked: %v", p)
		}
		c.mu.Lock()
		delete(c.flights, key)
		c.mu.Unlock()
		close(f.done) // card 13: answer every waiter with the same result
	}()
	f.val, f.err = c.load(key)
}

// load is the flight's work: claim, GET again, compute, write, release;
// or, having lost the claim, poll.
func (c *Cache) load(key string) (string, error) {
	if !c.Claim {
		return c.compute(key)
	}
	end := time.Now().Add(c.Wait)
	for {
		// card 6: SET lock:key token NX PX ttl, with a random token
		token := newToken()
		c.Claims.Add(1)
		ok, err := c.do("SET", "lock:"+key, token, "NX", "PX", c.LockTTL.Milliseconds())
		if err != nil {
			return c.compute(key) // Redis failed: fail open, compute without the lock
		}
		// card 7: won (a nil reply: another instance holds the claim)
		if ok != nil {
			defer c.release(key, token) // card 11: release the claim only if it is still mine
			// card 8: GET again: the last holder may have written it since my first GET
			if v, err := c.get(key); err == nil {
				return v, nil
			}
			return c.compute(key)
		}
		// card 12: lost: poll for the holder's value, and claim again on
		// the next turn (a dead holder's claim expires); never past the wait
		if time.Now().After(end) {
			return "", ErrNoValue
		}
		time.Sleep(c.Poll)
		if v, err := c.get(key); err == nil {
			return v, nil
		}
	}
}

// compute calls the origin and writes its value.
func (c *Cache) compute(key string) (string, error) {
	v, err := c.Origin(key) // card 9: the origin; the flight runs on past every caller's deadline
	if err != nil {
		return "", err
	}
	c.do("SET", "value:"+key, v, "PX", c.TTL.Milliseconds()) // card 10: SET key v (a failed write still answers v)
	return v, nil
}

// get is a GET of key's value; a miss is redis.ErrNil.
func (c *Cache) get(key string) (string, error) {
	return redis.String(c.do("GET", "value:"+key))
}

// do sends one command on a pooled connection, within the 100 ms bounds.
func (c *Cache) do(cmd string, args ...interface{}) (interface{}, error) {
	conn := c.Pool.Get()
	defer conn.Close()
	return conn.Do(cmd, args...)
}

// Delete only if still mine: past its TTL the claim may be another
// instance's, and a plain DEL would free that one.
var releaseScript = redis.NewScript(1, `
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0`)

// release reports whether the claim was still mine and is now free (on a
// Redis error it expires with its TTL).
func (c *Cache) release(key, token string) bool {
	conn := c.Pool.Get()
	defer conn.Close()
	n, err := redis.Int(releaseScript.Do(conn, "lock:"+key, token))
	return err == nil && n == 1
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
