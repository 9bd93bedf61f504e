package remote

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/taskd/taskd/internal/natstest"
)

// Ensure the prefix's lock lets one coordinator hold it: a second one
// that finds it renewed is refused with an error naming the first; the
// same coordinator restarted (same host, root and key) takes it over at
// once, after which the old holder's renewal fails naming the new one.
func TestLock(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	log := slog.New(slog.DiscardHandler)
	client := func() *Client {
		nc, err := Connect(Dial{URL: srv.URL(), Name: "test", Inbox: CoordinatorInbox("taskd"), Log: log})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		c, err := NewClient(nc, "taskd", nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first := client()
	first.Signer = testSigner(t)
	if _, err := newStreams(first, time.Second).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	a := &lock{c: first, me: Lock{Host: "h", Root: "/tasks/a", PID: 10, Key: "K", Boot: "1"}}
	if err := a.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	renewing, stopRenewing := context.WithCancel(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		for renewing.Err() == nil {
			a.renew(renewing)
			sleep(renewing, lockRefresh/4)
		}
	}()
	stop := func() { stopRenewing(); <-renewed }
	defer stop()
	second := client()
	second.Signer = first.Signer
	b := &lock{c: second, me: Lock{Host: "h", Root: "/tasks/b", PID: 20, Key: "K", Boot: "2"}}
	err := b.acquire(ctx)
	if !errors.Is(err, ErrPrefixTaken) || !strings.Contains(err.Error(), "/tasks/a") || !strings.Contains(err.Error(), "pid 10") {
		t.Errorf("a second coordinator's acquire = %v, want one naming the first", err)
	}
	stopRenewing()
	<-renewed
	restarted := &lock{c: second, me: Lock{Host: "h", Root: "/tasks/a", PID: 11, Key: "K", Boot: "3"}}
	start := time.Now()
	if err := restarted.acquire(ctx); err != nil || time.Since(start) > lockStale/2 {
		t.Errorf("the restarted coordinator's acquire = %v after %s, want at once", err, time.Since(start))
	}
	if err := a.renew(ctx); !errors.Is(err, ErrPrefixTaken) {
		t.Errorf("the old holder's renew = %v, want ErrPrefixTaken", err)
	}
}

func testSigner(t *testing.T) *Signer {
	t.Helper()
	path := t.TempDir() + "/k.nk"
	if _, _, err := Keygen(path); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSigner(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
