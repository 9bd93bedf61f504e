package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// One coordinator per prefix: it holds the lock, an entry of the pool
// bucket it renews every lockRefresh with a compare-and-set on its last
// revision. A coordinator that finds the lock held by another one that
// renews it stops with an error naming it; one that finds it unrenewed
// for lockStale takes it over (its holder died); a coordinator restarted
// on the same root and host takes over its own at once.
const (
	lockRefresh = 2 * time.Second
	lockStale   = 10 * time.Second
)

// ErrPrefixTaken is the error (wrapped) of a coordinator that finds
// another one on its prefix.
var ErrPrefixTaken = errors.New("another coordinator uses this nats.prefix")

// A lock is the coordinator's hold on its prefix. Only the coordinator's
// maintenance goroutine uses it.
type lock struct {
	c   *Client
	me  Lock
	seq uint64 // the sequence of the lock's entry this coordinator wrote last; 0: not held
}

func (l *lock) subject() string { return "$KV." + poolBucket(l.c.Prefix) + "." + lockKey }

// read returns the lock's holder and its entry's sequence; ok is false if
// nobody holds it.
func (l *lock) read(ctx context.Context) (holder Lock, seq uint64, ok bool, err error) {
	m, err := l.c.lastOf(ctx, "KV_"+poolBucket(l.c.Prefix), l.subject())
	if err != nil || m == nil {
		return holder, 0, false, err
	}
	seq, _ = strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
	// An entry that does not parse is held by nobody this coordinator
	// knows: taken over once stale.
	_ = json.Unmarshal(m.Data, &holder)
	return holder, seq, true, nil
}

// write writes the lock over the entry of sequence after (0: none).
func (l *lock) write(ctx context.Context, after uint64) error {
	me := l.me
	me.At = time.Now().UTC()
	data, _ := json.Marshal(me)
	ack, err := l.c.PublishMsg(ctx, &nats.Msg{Subject: l.subject(), Data: data}, jetstream.WithExpectLastSequencePerSubject(after))
	if err != nil {
		return err
	}
	l.seq = ack.Sequence
	return nil
}

// acquire takes the lock, or returns ErrPrefixTaken naming the
// coordinator that holds it and renews it. It waits for the server while
// ctx allows.
func (l *lock) acquire(ctx context.Context) error {
	var watched uint64 // the other holder's entry being watched for renewal
	var since time.Time
	for {
		holder, seq, ok, err := l.read(ctx)
		switch {
		case err != nil:
		case !ok:
			if err = l.write(ctx, 0); err == nil {
				return nil
			}
		case holder.same(l.me):
			if err = l.write(ctx, seq); err == nil {
				return nil
			}
		case watched != 0 && seq != watched:
			return fmt.Errorf("%w: %s holds prefix %q and is alive; stop it, or give this one another nats.prefix", ErrPrefixTaken, holder, l.c.Prefix)
		case watched == 0:
			watched, since = seq, time.Now()
		case time.Since(since) > lockStale:
			if err = l.write(ctx, seq); err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(lockRefresh / 4):
		}
	}
}

// renew writes the lock again over its last entry. It returns
// ErrPrefixTaken when another coordinator has taken the lock, and
// rewrites it when the store lost it.
func (l *lock) renew(ctx context.Context) error {
	err := l.write(ctx, l.seq)
	if err == nil {
		return nil
	}
	if !WrongLastSeq(err) {
		return err // the server is away: renewed when it is back
	}
	holder, seq, ok, rerr := l.read(ctx)
	switch {
	case rerr != nil:
		return rerr
	case !ok:
		return l.write(ctx, 0) // the store lost it
	case holder.same(l.me) && holder.Boot == l.me.Boot:
		return l.write(ctx, seq)
	}
	return fmt.Errorf("%w: %s took prefix %q while this coordinator could not renew its hold", ErrPrefixTaken, holder, l.c.Prefix)
}
