package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestBuffer: writes from many goroutines, read while they write (go test
// -race checks it), all end up in the buffer, each whole.
func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("line\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got, want := b.String(), strings.Repeat("line\n", 800); got != want {
		t.Errorf("the buffer holds %d bytes, want %d", len(got), len(want))
	}
}
