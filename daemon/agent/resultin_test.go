package agent

import (
	"bytes"
	"context"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/taskd/taskd/daemon/config"
)

// dirWatch counts, with inotify, the opens of a directory itself and the
// files put in place in it, from when it is made until its fence file is
// seen.
type dirWatch struct {
	fd     int
	mu     sync.Mutex
	opens  int            // of the directory itself
	placed map[string]int // created or renamed onto, by name
	fenced chan struct{}
}

func watchDir(t *testing.T, dir string) *dirWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_OPEN|unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	w := &dirWatch{fd: fd, placed: map[string]int{}, fenced: make(chan struct{})}
	go w.read()
	return w
}

func (w *dirWatch) read() {
	defer unix.Close(w.fd)
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			size := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+size], "\x00"))
			off += unix.SizeofInotifyEvent + size
			w.mu.Lock()
			switch {
			case mask&unix.IN_OPEN != 0 && name == "":
				w.opens++
			case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 && name == fence:
				w.mu.Unlock()
				close(w.fenced)
				return
			case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
				w.placed[name]++
			}
			w.mu.Unlock()
		}
	}
}

// done returns what was seen once the fence file, made now, is seen:
// inotify delivers a directory's events in order.
func (w *dirWatch) done(t *testing.T, dir string) (opens int, placed map[string]int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, fence), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.fenced:
	case <-time.After(10 * time.Second):
		t.Fatal("inotify never reported the fence file")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.opens, w.placed
}

// enterGate is a Gate that calls its function when the attempt enters it.
type enterGate func()

func (f enterGate) Enter(context.Context) error { f(); return nil }
func (enterGate) Started(time.Time)             {}
func (enterGate) Exited()                       {}

// execProfile is the configuration of the list directory base, with no
// file of its own, and its exec profile.
func execProfile(t *testing.T, base string) (*config.Config, *config.Profile) {
	t.Helper()
	cfg, err := config.NewConfig(base, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := cfg.ResolveAgent("exec", true)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, prof
}

// execAttemptOf returns an attempt of the exec profile running script in
// list directory base.
func execAttemptOf(t *testing.T, base, id, script string) (*Local, *Attempt) {
	t.Helper()
	cfg, prof := execProfile(t, base)
	a := &Attempt{ListDir: base, ListID: "l", TaskID: id, N: 1, Profile: prof, Cwd: t.TempDir(), Timeout: time.Minute, Prompt: script}
	a.Script = script
	return NewLocal(cfg, slog.New(slog.DiscardHandler)), a
}

// TestRun_RunFolderOpenedOnce: once an attempt has its slot, its run
// folder is not opened again, by path, for anything it writes: its
// logs, cmd.json and result.json go through the folder it opened once
// when it prepared it. result.json is put in place once.
func TestRun_RunFolderOpenedOnce(t *testing.T) {
	for _, tc := range []struct{ name, script string }{
		{"silent", "true"},
		{"output", "echo out; echo err >&2; exit 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, a := execAttemptOf(t, t.TempDir(), "1", tc.script)
			var w *dirWatch
			a.Gate = enterGate(func() { w = watchDir(t, a.Dir()) })
			res, out := r.Run(t.Context(), a)
			if out != Finished || res.ExitCode != map[string]int{"silent": 0, "output": 3}[tc.name] {
				t.Fatalf("Run = %+v, %v", res, out)
			}
			opens, placed := w.done(t, a.Dir())
			if opens != 0 {
				t.Errorf("the run folder was opened %d times after the attempt had its slot, want 0", opens)
			}
			if got := placed["result.json"]; got != 1 {
				t.Errorf("result.json put in place %d times, want 1", got)
			}
			if got, ok := ReadResult(a.Dir()); !ok || got.ExitCode != res.ExitCode {
				t.Errorf("ReadResult = %+v, %v; want the attempt's", got, ok)
			}
		})
	}
}

// TestRun_ResultWhenTheFolderGoes: an agent that removes its own run
// folder, or moves it away and puts a link to another directory in its
// place, leaves the result where a restart finds it or nowhere outside
// the list: the folder gone, it is kept in the runtime directory
// (ReadResult finds it there) and the folder is not made again; moved, it
// goes into the folder where it now is, and nothing is written through
// the link.
func TestRun_ResultWhenTheFolderGoes(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		name, script string
		kept         bool // else in the moved folder
	}{
		{"removed", `rm -r "$TASKD_RUN_DIR"; echo done`, true},
		{"moved, a link in its place", `mv "$TASKD_RUN_DIR" "$TASKD_RUN_DIR.moved" && ln -s ` + outside + ` "$TASKD_RUN_DIR"; echo done`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, a := execAttemptOf(t, t.TempDir(), tc.name[:1], tc.script)
			res, out := r.Run(t.Context(), a)
			if out != Finished || !res.Success {
				t.Fatalf("Run = %+v, %v", res, out)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("written through the link: %v", entries)
			}
			kept, _ := KeptResult(a.Dir())
			_, err := os.Stat(kept)
			if tc.kept {
				if err != nil {
					t.Errorf("no result kept for the removed run folder: %v", err)
				}
				if got, ok := ReadResult(a.Dir()); !ok || !got.Success || got.StartedAt == nil {
					t.Errorf("ReadResult = %+v, %v; want the kept result", got, ok)
				}
				if _, err := os.Lstat(a.Dir()); !os.IsNotExist(err) {
					t.Errorf("the removed run folder is there again: %v", err)
				}
				if err := SettleResult(a.Dir()); err != nil {
					t.Error(err)
				}
				return
			}
			if !os.IsNotExist(err) {
				t.Errorf("a result kept for a run folder that took it: %v", err)
			}
			data, err := os.ReadFile(filepath.Join(a.Dir()+".moved", "result.json"))
			if err != nil || !bytes.Contains(data, []byte(`"done"`)) {
				t.Errorf("the moved run folder's result.json: %q, %v", data, err)
			}
		})
	}
}
