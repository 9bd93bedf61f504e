package taskfile_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/taskd/taskd/taskfile"
)

// TestMain lets the test binary act as a helper process: the cross-process
// tests re-execute it with TASKD_TASKFILE_HELPER set.
func TestMain(m *testing.M) {
	if h := os.Getenv("TASKD_TASKFILE_HELPER"); h != "" {
		if err := helper(strings.Fields(h)); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helper(args []string) error {
	ctx := context.Background()
	d, err := taskfile.Open(args[1])
	if err != nil {
		return err
	}
	if os.Getenv("TASKD_TASKFILE_KEEP") != "" {
		d.KeepLockDirs()
		d.KeepLockOpen()
	}
	switch args[0] {
	case "increment": // increment DIR ID KEY N
		n, _ := strconv.Atoi(args[4])
		for i := 0; i < n; i++ {
			if _, err := d.Update(ctx, args[2], increment(args[3])); err != nil {
				return err
			}
		}
	case "create": // create DIR N
		n, _ := strconv.Atoi(args[2])
		for i := 0; i < n; i++ {
			task, err := d.Create(ctx, &taskfile.Task{Subject: "made by " + strconv.Itoa(os.Getpid())})
			if err != nil {
				return err
			}
			fmt.Println(task.ID)
		}
	case "update", "update-nodirsync": // update DIR ID: one Update, then a line on stdout
		var opts []taskfile.WriteOption
		if args[0] == "update-nodirsync" {
			opts = append(opts, taskfile.NoDirSync)
		}
		if _, err := d.Update(ctx, args[2], increment("n"), opts...); err != nil {
			return err
		}
		fmt.Println(returnedMark)
	case "defer": // defer DIR ID…: Updates with DeferDirSync (an ID with a trailing ! without), then Sync of each, a line on stdout after each
		var written []*taskfile.Task
		for _, id := range args[2:] {
			opt := taskfile.DeferDirSync
			if durable := strings.HasSuffix(id, "!"); durable {
				id, opt = strings.TrimSuffix(id, "!"), 0
			}
			t, err := d.Update(ctx, id, increment("n"), opt)
			if err != nil {
				return err
			}
			written = append(written, t)
		}
		for _, t := range written {
			if err := d.Sync(t); err != nil {
				return err
			}
			fmt.Println(syncedMark + t.ID)
		}
	case "create-id": // create-id DIR ID: one Create, then a line on stdout
		if _, err := d.Create(ctx, &taskfile.Task{ID: args[2], Subject: "new"}); err != nil {
			return err
		}
		fmt.Println(returnedMark)
	default:
		return fmt.Errorf("unknown helper %q", args[0])
	}
	return nil
}

func increment(key string) func(*taskfile.Task) error {
	return func(task *taskfile.Task) error {
		md := task.EnsureMetadata()
		n, _ := md.Int(key)
		md.Set(key, n+1)
		return nil
	}
}

// helperCmd returns a command that runs this test binary as a helper.
func helperCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TASKD_TASKFILE_HELPER="+strings.Join(args, " "))
	cmd.Stderr = os.Stderr
	return cmd
}

// lockModes runs a locking test twice: with lock directories made and
// removed for every lock, and kept for reuse (KeepLockDirs), in this
// process and in the helpers it starts.
func lockModes(t *testing.T, test func(t *testing.T, open func(t testing.TB) *taskfile.Dir, helper func(args ...string) *exec.Cmd)) {
	t.Run("made", func(t *testing.T) { test(t, mustOpen, helperCmd) })
	t.Run("kept", func(t *testing.T) {
		open := func(t testing.TB) *taskfile.Dir {
			d := mustOpen(t)
			d.KeepLockDirs()
			d.KeepLockOpen()
			return d
		}
		helper := func(args ...string) *exec.Cmd {
			cmd := helperCmd(args...)
			cmd.Env = append(cmd.Env, "TASKD_TASKFILE_KEEP=1")
			return cmd
		}
		test(t, open, helper)
	})
}

func readCounter(t testing.TB, d *taskfile.Dir, id, key string) int64 {
	t.Helper()
	task, err := d.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := task.Metadata.Int(key)
	return n
}

// TestDir_CrossProcessExclusion: N processes and, in this process, two
// goroutines each make M increments of one field; none is lost.
func TestDir_CrossProcessExclusion(t *testing.T) {
	t.Parallel()
	lockModes(t, func(t *testing.T, open func(t testing.TB) *taskfile.Dir, helper func(args ...string) *exec.Cmd) {
		const procs, perProc = 4, 100
		d := open(t)
		writeRaw(t, d, "1.json", `{"id": "1", "subject": "counter", "metadata": {}}`)
		var cmds []*exec.Cmd
		for i := 0; i < procs; i++ {
			cmd := helper("increment", d.Path(), "1", "count", strconv.Itoa(perProc))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < perProc; i++ {
					if _, err := d.Update(context.Background(), "1", increment("count")); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		for _, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("helper: %v", err)
			}
		}
		wg.Wait()
		if got, want := readCounter(t, d, "1", "count"), int64((procs+2)*perProc); got != want {
			t.Errorf("count = %d, want %d", got, want)
		}
	})
}

// TestDir_CreateAcrossProcesses: two processes allocate 200 ids each.
func TestDir_CreateAcrossProcesses(t *testing.T) {
	t.Parallel()
	d := mustOpen(t)
	var outs [2]strings.Builder
	var cmds []*exec.Cmd
	for i := range outs {
		cmd := helperCmd("create", d.Path(), "200")
		cmd.Stdout = &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	seen := map[string]bool{}
	for _, out := range outs {
		for _, id := range strings.Fields(out.String()) {
			if seen[id] {
				t.Errorf("id %s handed out twice", id)
			}
			seen[id] = true
		}
	}
	ids, _ := d.List()
	if len(seen) != 400 || len(ids) != 400 {
		t.Errorf("got %d distinct ids and %d files, want 400 and 400", len(seen), len(ids))
	}
	hw, _ := os.ReadFile(filepath.Join(d.Path(), ".highwatermark"))
	if got, want := string(hw), ids[len(ids)-1]; got != want || want != "400" {
		t.Errorf(".highwatermark = %s, want the largest id %s (400)", got, want)
	}
}

// TestDir_NoTornReads: a reader parsing the file in a tight loop while
// tornReadUpdates updates (10,000 under the stress tag) replace it never
// sees anything but a whole task.
func TestDir_NoTornReads(t *testing.T) {
	t.Parallel()
	updates := tornReadUpdates
	if testing.Short() {
		updates = 200
	}
	d := mustOpen(t)
	writeRaw(t, d, "5.json", `{"id": "5", "subject": "s", "metadata": {"pad": "`+strings.Repeat("x", 4000)+`"}}`)
	stop := make(chan struct{})
	done := make(chan struct{})
	var reads int
	var readErr error
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := os.ReadFile(d.File("5"))
			if err == nil {
				_, err = taskfile.Parse(data, "5.json", "5")
			}
			if err != nil {
				readErr = err
				return
			}
			reads++
		}
	}()
	for i := 0; i < updates; i++ {
		if _, err := d.Update(context.Background(), "5", increment("n")); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	<-done
	if readErr != nil {
		t.Fatalf("reader saw a bad file after %d reads: %v", reads, readErr)
	}
	if got := readCounter(t, d, "5", "n"); got != int64(updates) {
		t.Errorf("n = %d, want %d", got, updates)
	}
	t.Logf("%d whole reads during %d updates", reads, updates)
}

// TestDir_HonoursClaudeCodeLock: while Claude Code's lock (the real
// proper-lockfile, with Claude Code's options) is held on 7.json, Update
// waits; it completes once the lock is released.
func TestDir_HonoursClaudeCodeLock(t *testing.T) {
	t.Parallel()
	lockModes(t, func(t *testing.T, open func(t testing.TB) *taskfile.Dir, helper func(args ...string) *exec.Cmd) {
		node := nodeTools(t)
		d := open(t)
		writeRaw(t, d, "7.json", `{"id": "7", "subject": "s", "metadata": {}}`)
		release := holdClaudeLock(t, node, d.File("7"))
		if fi, err := os.Stat(d.File("7") + ".lock"); err != nil || !fi.IsDir() {
			t.Fatalf("proper-lockfile's lock is not the directory 7.json.lock: %v", err)
		}

		updated := make(chan error, 1)
		waiting := make(chan string, 4)
		go func() {
			ctx := taskfile.WithLockWait(context.Background(), func(lock string) { waiting <- lock })
			_, err := d.Update(ctx, "7", increment("n"))
			updated <- err
		}()
		// The wait is reported, with the lock's path, once, before it
		// ends.
		select {
		case lock := <-waiting:
			if want := d.File("7") + ".lock"; lock != want {
				t.Errorf("the wait is reported for %s, want %s", lock, want)
			}
		case err := <-updated:
			t.Fatalf("Update finished while Claude Code held the lock (err=%v)", err)
		case <-time.After(10 * time.Second):
			t.Fatal("the wait for Claude Code's lock was not reported")
		}
		select {
		case err := <-updated:
			t.Fatalf("Update finished while Claude Code held the lock (err=%v)", err)
		case <-time.After(300 * time.Millisecond):
			// Still blocked, as it must be. (A bounded wait proves blocking; the
			// positive outcome below is waited on without a fixed delay.)
		}
		if got := readCounter(t, d, "7", "n"); got != 0 {
			t.Fatalf("file written while locked: n = %d", got)
		}
		release()
		select {
		case err := <-updated:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Update still blocked 10s after the lock was released")
		}
		if got := readCounter(t, d, "7", "n"); got != 1 {
			t.Errorf("n = %d, want 1", got)
		}
		if len(waiting) != 0 {
			t.Errorf("one wait was reported %d more times", len(waiting))
		}
	})
}

// TestDir_ConcurrentWithClaudeCode: Node processes doing exactly what Claude
// Code's TaskUpdate does (proper-lockfile, read, in-place write) and Go
// processes using Update increment one field together; nothing is lost.
func TestDir_ConcurrentWithClaudeCode(t *testing.T) {
	t.Parallel()
	lockModes(t, func(t *testing.T, open func(t testing.TB) *taskfile.Dir, helper func(args ...string) *exec.Cmd) {
		node := nodeTools(t)
		const nodeProcs, goProcs, each = 2, 2, 150 // 600 increments in all
		d := open(t)
		writeRaw(t, d, "7.json", `{"id": "7", "subject": "s", "metadata": {}}`)
		var cmds []*exec.Cmd
		for i := 0; i < nodeProcs; i++ {
			cmd := exec.Command("node", filepath.Join(node, "lock-increment.js"), d.File("7"), "count", strconv.Itoa(each))
			cmd.Stderr = os.Stderr
			cmds = append(cmds, cmd)
		}
		for i := 0; i < goProcs; i++ {
			cmds = append(cmds, helper("increment", d.Path(), "7", "count", strconv.Itoa(each)))
		}
		for _, cmd := range cmds {
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
		}
		for _, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("%s: %v", cmd.Args[0], err)
			}
		}
		if got, want := readCounter(t, d, "7", "count"), int64((nodeProcs+goProcs)*each); got != want {
			t.Errorf("count = %d, want %d: updates were lost", got, want)
		}
	})
}

// TestDir_StaleLockRemoved: a lock directory whose holder died (mtime older
// than 10 s) does not block Update for good.
func TestDir_StaleLockRemoved(t *testing.T) {
	t.Parallel()
	lockModes(t, func(t *testing.T, open func(t testing.TB) *taskfile.Dir, helper func(args ...string) *exec.Cmd) {
		d := open(t)
		writeRaw(t, d, "2.json", `{"id": "2", "subject": "s"}`)
		lock := d.File("2") + ".lock"
		if err := os.Mkdir(lock, 0o755); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-11 * time.Second)
		os.Chtimes(lock, old, old)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := d.Update(ctx, "2", increment("n")); err != nil {
			t.Fatalf("Update with a stale lock: %v", err)
		}
		// A fresh lock is respected until the context ends.
		os.Mkdir(lock, 0o755)
		ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel2()
		if _, err := d.Update(ctx2, "2", increment("n")); err == nil || !strings.Contains(err.Error(), "lock") {
			t.Fatalf("Update with a live lock: err = %v, want a lock error", err)
		}
		os.Remove(lock)
	})
}

// TestDir_BadLockFailsAtOnce: a symbolic link (dangling, or to a
// directory) or a file where a task file's lock belongs is no lock anyone
// holds and none can be taken while it is there: Update fails at once with
// ErrBadLock, without spinning until its context ends, and leaves the task
// file and the link as they were.
func TestDir_BadLockFailsAtOnce(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		make func(lock, target string) error
	}{
		{"dangling link", func(lock, target string) error { return os.Symlink(filepath.Join(target, "nowhere"), lock) }},
		{"link to a directory", func(lock, target string) error { return os.Symlink(target, lock) }},
		{"file", func(lock, _ string) error { return os.WriteFile(lock, nil, 0o600) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lockModes(t, func(t *testing.T, open func(t testing.TB) *taskfile.Dir, _ func(args ...string) *exec.Cmd) {
				d := open(t)
				writeRaw(t, d, "3.json", `{"id": "3", "subject": "s", "metadata": {}}`)
				lock := d.File("3") + ".lock"
				if err := tt.make(lock, t.TempDir()); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				start := time.Now()
				_, err := d.Update(ctx, "3", increment("n"))
				if !errors.Is(err, taskfile.ErrBadLock) {
					t.Fatalf("Update = %v, want ErrBadLock", err)
				}
				if took := time.Since(start); took > 2*time.Second {
					t.Errorf("Update took %s to fail", took)
				}
				if !strings.Contains(err.Error(), lock) || !strings.Contains(err.Error(), "remove it") {
					t.Errorf("the error %q does not name the lock and what to do", err)
				}
				if got := readCounter(t, d, "3", "n"); got != 0 {
					t.Errorf("the file was written: n = %d", got)
				}
				if _, err := os.Lstat(lock); err != nil {
					t.Errorf("the lock's path was removed: %v", err)
				}
			})
		})
	}
}
