package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/taskd/taskd/daemon/remote"
	"github.com/taskd/taskd/internal/fsroot"
)

// shipInterval is how often a running agent's new output is sent.
const shipInterval = 200 * time.Millisecond

// A shipper sends what an agent writes to stdout.log and stderr.log of its
// run folder here, as it grows, to the runs stream: raw bytes in chunks of
// at most remote.MaxChunk, each with its offset, so that the coordinator
// appends them to its own run folder's logs unparsed, and whoever follows
// those files there (taskd logs -f) sees them grow. A chunk that cannot
// be sent is sent again from the same offset. At most MaxOutput bytes of
// each are sent; then a line saying so.
type shipper struct {
	w       *Worker
	id      string
	paths   [2]string
	sent    [2]int64
	cut     [2]bool
	lastErr error
}

func newShipper(w *Worker, id, runDir string) *shipper {
	return &shipper{w: w, id: id,
		paths: [2]string{filepath.Join(runDir, "stdout.log"), filepath.Join(runDir, "stderr.log")}}
}

// run sends new output every shipInterval until ctx ends.
func (s *shipper) run(ctx context.Context) {
	t := time.NewTicker(shipInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.ship(ctx)
		}
	}
}

// flush sends what is left, trying again while the server cannot take it,
// until the worker stops now: the End goes after all of the output.
func (s *shipper) flush(ctx context.Context) {
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		if s.ship(context.WithoutCancel(ctx)) {
			return
		}
		select {
		case <-s.w.stopNow:
			return
		case <-time.After(delay):
		}
	}
}

// ship sends what the logs hold beyond what was sent, and reports whether
// all of it is sent.
func (s *shipper) ship(ctx context.Context) bool {
	kinds := [2]string{remote.KindOut, remote.KindErr}
	for i := range s.paths {
		for !s.cut[i] {
			// A log not made yet (the agent has said nothing on it) has
			// nothing to send.
			data, err := readAt(s.paths[i], s.sent[i], remote.MaxChunk)
			if err != nil || len(data) == 0 {
				break
			}
			if s.sent[i]+int64(len(data)) > s.w.cfg.MaxOutput {
				data = data[:max(s.w.cfg.MaxOutput-s.sent[i], 0)]
			}
			if len(data) > 0 && !s.send(ctx, kinds[i], s.sent[i], data) {
				return false
			}
			s.sent[i] += int64(len(data))
			if s.sent[i] >= s.w.cfg.MaxOutput {
				note := fmt.Appendf(nil, "\n[taskd: output cut at %d bytes; the rest stayed on worker %s]\n", s.w.cfg.MaxOutput, s.w.cfg.Name)
				if !s.send(ctx, kinds[i], s.sent[i], note) {
					return false
				}
				s.cut[i] = true
			}
		}
	}
	return true
}

func (s *shipper) send(ctx context.Context, kind string, off int64, data []byte) bool {
	hdr := nats.Header{}
	hdr.Set(remote.OffsetHeader, strconv.FormatInt(off, 10))
	_, err := s.w.c.Publish(ctx, s.id, kind, remote.Message{Data: data, Header: hdr})
	if err != nil && s.lastErr == nil {
		s.w.log.Warn("cannot send an agent's output yet", "remote", s.id, "err", err)
	}
	s.lastErr = err
	return err == nil
}

// readAt reads at most n bytes of the file at path from off: a buffer
// of what the file holds beyond off, not of n, since most reads find
// little or nothing new.
func readAt(path string, off int64, n int) ([]byte, error) {
	f, err := fsroot.OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() <= off {
		return nil, nil
	}
	buf := make([]byte, min(int64(n), fi.Size()-off))
	k, err := f.ReadAt(buf, off)
	if k > 0 {
		return buf[:k], nil
	}
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	return nil, err
}
