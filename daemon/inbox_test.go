package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/children"
)

func TestInbox_DeliverPeekCheck(t *testing.T) {
	t.Parallel()
	ib := children.InboxOf(t.TempDir(), "7")
	if m, err := ib.Check(children.Filter{}); m != nil || err != nil {
		t.Fatalf("Check on an empty inbox = %v, %v", m, err)
	}
	for i, from := range []string{"3", "4", "3"} {
		if err := ib.Deliver(children.Message{From: from, Text: fmt.Sprint(i), SentAt: time.Unix(int64(100+i), 0)}, ""); err != nil {
			t.Fatal(err)
		}
	}
	msgs, _ := ib.Peek(children.Filter{})
	if len(msgs) != 3 || msgs[0].Text != "0" || msgs[2].Text != "2" {
		t.Fatalf("Peek = %+v", msgs)
	}
	got := func(f children.Filter) string {
		m, err := ib.Check(f)
		if err != nil || m == nil {
			return fmt.Sprintf("<%v>", err)
		}
		return m.Text
	}
	if g := got(children.Filter{From: "4"}); g != "1" {
		t.Errorf("Check from 4 = %s, want 1", g)
	}
	if g := got(children.Filter{LIFO: true}); g != "2" {
		t.Errorf("Check LIFO = %s, want 2", g)
	}
	if g := got(children.Filter{}); g != "0" {
		t.Errorf("Check = %s, want 0", g)
	}
	if left, _ := ib.Peek(children.Filter{}); len(left) != 0 {
		t.Errorf("messages left after consuming all: %v", left)
	}
	if cur, _ := ib.Consumed(); len(cur) != 3 {
		t.Errorf("%d consumed messages, want 3", len(cur))
	}
	// A keyed delivery happens once, even after it was consumed.
	ib.Deliver(children.Message{From: "9", Text: "once"}, "result-9-1")
	ib.Check(children.Filter{})
	ib.Deliver(children.Message{From: "9", Text: "once"}, "result-9-1")
	if left, _ := ib.Peek(children.Filter{}); len(left) != 0 {
		t.Errorf("a keyed message was delivered twice")
	}
}

func TestInbox_ReceiveWaitsAndTimesOut(t *testing.T) {
	t.Parallel()
	ib := children.InboxOf(t.TempDir(), "7")
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	m, err := ib.Receive(ctx, children.Filter{})
	if !errors.Is(err, children.ErrNoMessage) || m != nil {
		t.Fatalf("Receive on an empty inbox = %v, %v", m, err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond || waited > 5*time.Second {
		t.Errorf("Receive returned after %s, want about 150ms", waited)
	}
	got := make(chan string, 1)
	go func() {
		m, err := ib.Receive(context.Background(), children.Filter{From: "5"})
		if err != nil {
			got <- err.Error()
			return
		}
		got <- m.Text
	}()
	ib.Deliver(children.Message{From: "4", Text: "not for you"}, "")
	ib.Deliver(children.Message{From: "5", Text: "hello"}, "")
	select {
	case g := <-got:
		if g != "hello" {
			t.Errorf("Receive = %q", g)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Receive did not wake on a delivery")
	}
}

// Many receivers race for many messages: each message goes to exactly one.
func TestInbox_NoMessageConsumedTwice(t *testing.T) {
	t.Parallel()
	ib := children.InboxOf(t.TempDir(), "7")
	const n, receivers = 200, 8
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range receivers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				m, err := ib.Receive(ctx, children.Filter{})
				if err != nil {
					return
				}
				mu.Lock()
				seen[m.Text]++
				done := len(seen) == n
				mu.Unlock()
				if done {
					cancel()
				}
			}
		}()
	}
	for i := range n {
		if err := ib.Deliver(children.Message{From: "x", Text: fmt.Sprint(i)}, ""); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for text, c := range seen {
		if c != 1 {
			t.Errorf("message %s consumed %d times", text, c)
		}
	}
	if len(seen) != n {
		t.Errorf("%d messages consumed, want %d", len(seen), n)
	}
}
