package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/taskd/taskd/internal/fsroot"
)

// TestCappedLog: a log keeps what it is written up to its cap; past it,
// its first half, a line saying what is held back, a line saying how much
// was cut, and its last half, in order, however the writes fall; the ring
// beside it is gone once it is closed. A log written nothing is never
// created.
func TestCappedLog(t *testing.T) {
	t.Parallel()
	const limit = 1000
	tests := []struct {
		name   string
		writes []int // sizes of successive writes
	}{
		{"empty", nil},
		{"under the head", []int{10, 20}},
		{"exactly the head", []int{500}},
		{"the head, then more", []int{500, 10, 600}},
		{"into the tail", []int{499, 2, 300}},
		{"exactly the cap", []int{1000}},
		{"round the ring", []int{600, 700, 333, 1}},
		{"one huge write", []int{100_000}},
		{"many small writes", repeat(7, 1000)},
		{"past the head by one", []int{501}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			path := filepath.Join(base, "stdout.log")
			l := createCappedLog(base, path, limit)
			var all bytes.Buffer
			for i, n := range tt.writes {
				p := make([]byte, n)
				for j := range p {
					p[j] = byte('a' + (all.Len()+j)%26)
				}
				if i == len(tt.writes)-1 && n > 0 {
					p[n-1] = '!' // the very last byte
				}
				all.Write(p)
				if got, err := l.Write(p); got != n || err != nil {
					t.Fatalf("Write = %d, %v", got, err)
				}
			}
			cut, err := l.Close()
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			total := all.Len()
			if total == 0 {
				if !os.IsNotExist(err) {
					t.Errorf("a log written nothing is a file (%v): want none", err)
				}
				return
			}
			if total <= limit/2 {
				if !bytes.Equal(got, all.Bytes()) || cut != 0 {
					t.Errorf("log = %q (cut %d), want all of %q", got, cut, all.Bytes())
				}
				return
			}
			wantCut := int64(max(total-limit, 0))
			if cut != wantCut {
				t.Errorf("cut %d, want %d", cut, wantCut)
			}
			head := all.Bytes()[:limit/2]
			tail := all.Bytes()[total-min(total-limit/2, limit/2):]
			if !bytes.HasPrefix(got, head) || !bytes.HasSuffix(got, tail) {
				t.Errorf("log does not start with the first %d bytes and end with the last %d:\n%q", len(head), len(tail), got)
			}
			middle := string(got[len(head) : len(got)-len(tail)])
			if !strings.Contains(middle, "held back") {
				t.Errorf("no line says the output is held back: %q", middle)
			}
			wantEnd := "nothing was cut"
			if wantCut > 0 {
				wantEnd = fmt.Sprintf("(%d bytes)", wantCut)
			}
			if !strings.Contains(middle, wantEnd) {
				t.Errorf("the line before the end lacks %q: %q", wantEnd, middle)
			}
			if n := len(got) - len(head) - len(tail); n > 512 {
				t.Errorf("%d bytes of lines of its own", n)
			}
			if _, err := os.Stat(path + ".tail"); !os.IsNotExist(err) {
				t.Errorf("the ring is left: %v", err)
			}
		})
	}
}

// TestCappedLogPlanted: a link or a FIFO planted at a log's path before
// its first byte is refused, neither followed nor waited on; what the
// agent writes is lost (the error says why), the target is untouched, and
// the writer is never held.
func TestCappedLogPlanted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		plant func(t *testing.T, path, target string)
	}{
		{"symlink", func(t *testing.T, path, target string) {
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"fifo", func(t *testing.T, path, _ string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	makers := map[string]func(t *testing.T, base, path string) *cappedLog{
		"emptied": func(t *testing.T, base, path string) *cappedLog { return createCappedLog(base, path, 1000) },
		"new in its folder": func(t *testing.T, base, path string) *cappedLog {
			folder, err := fsroot.OpenDir(base, filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { folder.Close() })
			return createCappedLogIn(folder, base, path, 1000)
		},
	}
	for _, tt := range tests {
		for kind, makeLog := range makers {
			t.Run(tt.name+"/"+kind, func(t *testing.T) {
				t.Parallel()
				base := t.TempDir()
				target := filepath.Join(t.TempDir(), "elsewhere")
				if err := os.WriteFile(target, []byte("keep me"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(filepath.Join(base, "run"), 0o700); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(base, "run", "stdout.log")
				l := makeLog(t, base, path)
				tt.plant(t, path, target)
				done := make(chan error, 1)
				go func() {
					l.Write([]byte("hello\n"))
					_, err := l.Close()
					done <- err
				}()
				select {
				case err := <-done:
					if err == nil {
						t.Errorf("writing through a planted %s: no error", tt.name)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("writing the log waits on the planted %s", tt.name)
				}
				if got, _ := os.ReadFile(target); string(got) != "keep me" {
					t.Errorf("the link's target = %q, want it untouched", got)
				}
			})
		}
	}
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1536: "1.5 KiB", 16 << 20: "16 MiB", 1503238553: "1.4 GiB", 200 << 30: "200 GiB"} {
		if got := SizeText(n); got != want {
			t.Errorf("SizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
