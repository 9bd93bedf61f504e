package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/config"
)

// TestCount: the daemon's calls of a trace, a split call counted once, a
// forked process's calls counted until its execve succeeded and not
// after, the runtime's timed calls kept out of own, and the opens of a
// task file found by name.
func TestCount(t *testing.T) {
	trace := `100   openat(AT_FDCWD, "/r/bench/12.json", O_RDONLY|O_CLOEXEC) = 7
101   futex(0xc000, FUTEX_WAIT_PRIVATE, 0, NULL <unfinished ...>
100   openat(9</r/bench>, "12.json", O_RDONLY|O_CLOEXEC) = 8
101   <... futex resumed>)              = 0
100   openat(AT_FDCWD, "/r/bench/.taskd/runs/12/1/result.json", O_RDONLY) = 8
200   rt_sigaction(SIGINT, {sa_handler=SIG_DFL}, NULL, 8) = 0
200   execve("/usr/bin/sh", ["sh", "-c", "true"], 0xc0000 /* 3 vars */ <unfinished ...>
100   nanosleep({tv_sec=0, tv_nsec=20000}, NULL) = 0
200   <... execve resumed>)             = 0
200   brk(NULL)                         = 0x5600
200   exit_group(0)                     = ?
200   +++ exited with 0 +++
100   --- SIGCHLD {si_signo=SIGCHLD} ---
300   execve("/nonexistent", ["x"], 0xc0000 /* 3 vars */) = -1 ENOENT (No such file or directory)
300   write(2, "x", 1)                  = 1
`
	c, err := count(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	got := []int{c.total, c.own, c.forked, c.taskFileOpens, c.byName["openat"], c.byName["execve"]}
	want := []int{9, 7, 2, 2, 3, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("total, own, forked, task file opens, openat, execve = %v, want %v", got, want)
		}
	}
}

// TestDaemonConfig: the configuration the daemon is started with gives
// it the slots asked for, as the daemon reads it.
func TestDaemonConfig(t *testing.T) {
	for _, slots := range []int{1, 2} {
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, daemonConfig(slots), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := config.LoadFileConfig(path, false)
		if err != nil {
			t.Fatal(err)
		}
		if c.Concurrency != slots {
			t.Errorf("concurrency %d, want %d", c.Concurrency, slots)
		}
	}
}

// TestMain makes the test binary a floor process when it is run as one
// (startFloor runs the binary it is part of), so that the tests run the
// floor as cost does.
func TestMain(m *testing.M) {
	flag.Parse()
	if *floorFlag != "" {
		if err := floorMain(filepath.SplitList(*floorFlag), *nFlag, *concFlag); err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFloor_Files: the floor process leaves, for each task, exactly what
// it says it makes: the task file ended (written twice, replaced), the
// run folder and its parent with prompt.md, cmd.json and result.json,
// and three event lines; no temporary file, nothing else.
func TestFloor_Files(t *testing.T) {
	const n = 3
	f, err := startFloor(t.TempDir(), n, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.run(n); err != nil {
		f.Stop()
		t.Fatal(err)
	}
	f.Stop()
	got := map[string]bool{} // path → is a directory
	err = filepath.WalkDir(f.lists[0], func(path string, d fs.DirEntry, err error) error {
		if err == nil && path != f.lists[0] {
			rel, _ := filepath.Rel(f.lists[0], path)
			got[rel] = d.IsDir()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{".taskd": true, ".taskd/runs": true, ".taskd/events.jsonl": false}
	for i := 1; i <= n; i++ {
		run := fmt.Sprintf(".taskd/runs/%d", i)
		want[fmt.Sprintf("%d.json", i)] = false
		want[run], want[run+"/1"] = true, true
		for _, name := range []string{"prompt.md", "cmd.json", "result.json"} {
			want[run+"/1/"+name] = false
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("the floor left (path: is a directory)\n%v\nwant\n%v", got, want)
	}
	for i := 1; i <= n; i++ {
		data, err := os.ReadFile(filepath.Join(f.lists[0], fmt.Sprintf("%d.json", i)))
		if err != nil {
			t.Fatal(err)
		}
		var task struct {
			Status   string
			Metadata struct {
				Taskd struct{ State, StartedAt, FinishedAt string }
			}
		}
		if err := json.Unmarshal(data, &task); err != nil {
			t.Fatal(err)
		}
		if m := task.Metadata.Taskd; task.Status != "completed" || m.State != "succeeded" || m.StartedAt == "" || m.FinishedAt == "" {
			t.Errorf("task %d ended as %+v", i, task)
		}
	}
	data, err := os.ReadFile(filepath.Join(f.lists[0], ".taskd", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var ev struct{ Type, Task string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event line %q: %v", line, err)
		}
		types = append(types, ev.Task+" "+ev.Type)
	}
	var wantTypes []string
	for i := 1; i <= n; i++ {
		for _, typ := range floorEvents {
			wantTypes = append(wantTypes, fmt.Sprintf("%d %s", i, typ))
		}
	}
	if !slices.Equal(types, wantTypes) {
		t.Errorf("events %q, want %q", types, wantTypes)
	}
}

// TestFloor_Workers: the floor with two workers, in one list directory
// and in two, does every task once: each ends succeeded, with its three
// event lines in order, in the list it was dropped into.
func TestFloor_Workers(t *testing.T) {
	for _, lists := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d lists", lists), func(t *testing.T) {
			const n = 8
			f, err := startFloor(t.TempDir(), n, 2, lists)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.run(n); err != nil {
				f.Stop()
				t.Fatal(err)
			}
			f.Stop()
			if len(f.lists) != lists {
				t.Fatalf("%d list directories, want %d", len(f.lists), lists)
			}
			for _, list := range f.lists {
				data, err := os.ReadFile(filepath.Join(list, ".taskd", "events.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				got := map[string][]string{} // task → its events' types
				for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
					var ev struct{ Type, Task string }
					if err := json.Unmarshal([]byte(line), &ev); err != nil {
						t.Fatalf("event line %q: %v", line, err)
					}
					got[ev.Task] = append(got[ev.Task], ev.Type)
				}
				want := map[string][]string{}
				for i := 1; i <= n/lists; i++ {
					want[fmt.Sprint(i)] = floorEvents[:]
				}
				if !maps.EqualFunc(got, want, slices.Equal) {
					t.Errorf("events of %s by task %v, want %v", filepath.Base(list), got, want)
				}
			}
		})
	}
}

// TestFloor_Fails: a task the floor cannot do (its run folder is there
// already) stops the run with the reason, which is not taken for done.
func TestFloor_Fails(t *testing.T) {
	f, err := startFloor(t.TempDir(), 3, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	if err := os.MkdirAll(filepath.Join(f.lists[0], ".taskd", "runs", "2"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := f.run(3); err == nil || !strings.Contains(err.Error(), "mkdir .taskd/runs/2") {
		t.Errorf("run = %v, want the failed mkdir of task 2's run folder", err)
	}
}

// TestFloor_Syscalls: the floor's calls under strace, counted as the
// daemon's are: per task, each call the floor makes by its design the
// number of times it makes it; the agent's process group set by the
// forked child before its execve counted as the floor's; nothing of the
// shell after its execve (its exit) counted.
func TestFloor_Syscalls(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed (scripts/install-tools strace)")
	}
	const n = 4
	b := &Build{Name: "floor", floor: true, workers: 1, lists: 1}
	if err := straceRun(t.TempDir(), b, n); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		want float64
	}{
		// the claim and the end: the file and the list directory
		{"fsync", 4},
		// the claim, cmd.json, result.json, the end
		{"renameat", 4},
		// the run folder and its parent
		{"mkdirat", 2},
		// in the child, between fork and exec
		{"setpgid", 1},
		{"execve", 1},
	} {
		if got := b.ByName[tt.name]; got != tt.want {
			t.Errorf("%s per task = %v, want %v", tt.name, got, tt.want)
		}
	}
	// The shell's exit, after its execve, is not the floor's; the one
	// exit counted is that of the child os/exec forks once in a process's
	// life to learn whether the kernel gives pidfds, which never execs.
	if got := b.ByName["exit_group"] * n; got > 1 {
		t.Errorf("exit_group = %v in all, want at most one (os/exec's pidfd probe): a shell's exit was counted", got)
	}
	if b.TaskFileOpens != 1 {
		t.Errorf("task file opens per task = %v, want 1 (the read)", b.TaskFileOpens)
	}
	if b.ForkedSyscalls < 2 || b.ForkedSyscalls >= b.OwnSyscalls {
		t.Errorf("calls between fork and exec per task = %v, own calls %v: want at least the setpgid and the execve, and fewer than all", b.ForkedSyscalls, b.OwnSyscalls)
	}
}
