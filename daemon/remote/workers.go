package remote

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// WorkerInfo is what the pool bucket says of a worker: its latest
// heartbeat, under its key, when the server stored it, and whether the
// key is one the coordinator trusts (Err says why a heartbeat cannot be
// read).
type WorkerInfo struct {
	Key       string    `json:"key"`
	Trusted   bool      `json:"trusted"`
	Heartbeat Heartbeat `json:"heartbeat"`
	Stored    time.Time `json:"stored"` // the server's clock
	Err       string    `json:"error,omitempty"`
}

// PoolView is the pool bucket as taskd workers shows it.
type PoolView struct {
	Workers     []WorkerInfo `json:"workers"`
	Coordinator *Lock        `json:"coordinator,omitempty"`
	LockStored  time.Time    `json:"coordinatorRenewed,omitzero"`
	// ServerTime is the server's clock when the view was read, which
	// Stored and LockStored are of: ages are told against it, not
	// against a clock of another machine that may be off.
	ServerTime time.Time `json:"serverTime,omitzero"`
}

// ReadPool reads the pool bucket of prefix p: every worker's latest
// heartbeat (trust says which keys are trusted) and the coordinator's
// lock. It needs the coordinator's permissions.
func ReadPool(ctx context.Context, nc *Conn, p string, trust Trust) (*PoolView, error) {
	js, err := jetstream.New(nc.Conn)
	if err != nil {
		return nil, err
	}
	view := &PoolView{}
	c := &Client{Prefix: p, Conn: nc, JS: js}
	if m, err := c.lastOf(ctx, "KV_"+poolBucket(p), "$KV."+poolBucket(p)+"."+lockKey); err != nil {
		return nil, err
	} else if m != nil {
		var l Lock
		if json.Unmarshal(m.Data, &l) == nil {
			view.Coordinator = &l
			view.LockStored, _ = time.Parse(time.RFC3339Nano, m.Header.Get("Nats-Time-Stamp"))
		}
	}
	cctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	cons, err := js.OrderedConsumer(cctx, "KV_"+poolBucket(p), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{"$KV." + poolBucket(p) + ".workers.>"},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		return nil, nc.Explain(err)
	}
	made := time.Now()
	defer func() {
		if info := cons.CachedInfo(); info != nil && !info.TimeStamp.IsZero() {
			view.ServerTime = info.TimeStamp.Add(time.Since(made))
		}
	}()
	// Heartbeats go on arriving while they are read: the latest of each
	// key is kept.
	byKey := map[string]int{}
	for {
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return nil, nc.Explain(err)
		}
		n, pending := 0, uint64(1)
		for m := range batch.Messages() {
			n++
			wi := workerInfo(p, m, trust)
			if i, ok := byKey[wi.Key]; ok {
				view.Workers[i] = wi
			} else {
				byKey[wi.Key] = len(view.Workers)
				view.Workers = append(view.Workers, wi)
			}
			if md, err := m.Metadata(); err == nil {
				pending = md.NumPending
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return nil, nc.Explain(err)
		}
		if n == 0 || pending == 0 {
			return view, nil
		}
	}
}

func workerInfo(p string, m jetstream.Msg, trust Trust) WorkerInfo {
	key := strings.TrimPrefix(m.Subject(), "$KV."+poolBucket(p)+".workers.")
	wi := WorkerInfo{Key: key}
	if md, err := m.Metadata(); err == nil {
		wi.Stored = md.Timestamp
	}
	hb, _, err := ReadHeartbeat(p, m.Subject(), m.Headers(), m.Data(), nil)
	wi.Heartbeat = hb
	if err != nil {
		wi.Err = err.Error()
	}
	wi.Trusted = err == nil && trust[key]
	return wi
}
