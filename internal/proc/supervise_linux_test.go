package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && i+2 < len(data) && data[i+2] != 'Z'
}

// cgroups returns this process's Supervisor if it keeps attempts in
// cgroups, else skips the test, saying why.
func cgroups(t *testing.T) *Supervisor {
	t.Helper()
	s := Supervise()
	if s.Mode() != ByCgroup {
		t.Skipf("skipping: no cgroup to use here (%s); the environment's fallback is tested without one", s)
	}
	return s
}

// escaping starts, in g, a shell whose children leave its session and
// process group (setsid), one of them twice forked so that its parent is
// gone, and returns a func that waits for the shell, and the pids of all
// three.
func escaping(t *testing.T, g *Group, marker string) (func(), []int) {
	t.Helper()
	dir := t.TempDir()
	script := fmt.Sprintf(`setsid sleep 60 & echo $! > %[1]s/a
(setsid sh -c 'echo $$ > %[1]s/b.tmp; mv %[1]s/b.tmp %[1]s/b; exec sleep 60' &)
while [ ! -e %[1]s/b ]; do sleep 0.01; done
echo $$ > %[1]s/c.tmp; mv %[1]s/c.tmp %[1]s/c
exec sleep 60`, dir)
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	waited, err := g.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	wait := sync.OnceFunc(func() { <-waited })
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		wait()
	})
	var pids []int
	for _, name := range []string{"a", "b", "c"} {
		waitCond(t, "process "+name+" to start", func() bool {
			data, err := os.ReadFile(filepath.Join(dir, name))
			return err == nil && strings.HasSuffix(string(data), "\n")
		})
		data, _ := os.ReadFile(filepath.Join(dir, name))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		pids = append(pids, pid)
	}
	return wait, pids
}

// killsAll starts the escaping processes in a group of s, kills the
// group, and checks that all are gone and its cgroup removed.
func killsAll(t *testing.T, s *Supervisor) {
	t.Helper()
	marker := "TASKD_TEST_GROUP=" + t.Name()
	g := s.Group(marker)
	if err := g.Degraded(); err != nil {
		t.Fatal(err)
	}
	wait, pids := escaping(t, g, marker)
	if s.Mode() == ByCgroup {
		data, _ := os.ReadFile(filepath.Join(g.Cgroup(), "cgroup.procs"))
		for _, pid := range pids {
			if !strings.Contains("\n"+string(data), "\n"+strconv.Itoa(pid)+"\n") {
				t.Errorf("process %d is not in the group's cgroup %s: %q", pid, g.Cgroup(), data)
			}
		}
	}
	if !g.Kill() {
		t.Error("Kill found no process")
	}
	wait()
	for _, pid := range pids {
		waitCond(t, fmt.Sprint("process ", pid, " to die"), func() bool { return !alive(pid) })
	}
	if err := g.Close(); err != nil {
		t.Error(err)
	}
	if g.Cgroup() != "" && exists(g.Cgroup()) {
		t.Errorf("the group's cgroup %s is still there", g.Cgroup())
	}
	if g.Kill() {
		t.Error("Kill found a process in an empty group")
	}
}

// TestGroup_Cgroup: processes that left the agent's session and process
// group, one twice forked, are in the attempt's cgroup, and all die when
// the group is killed (cgroup.kill); the cgroup is removed.
func TestGroup_Cgroup(t *testing.T) {
	killsAll(t, cgroups(t))
}

// TestGroup_CgroupFreeze: where the kernel has no cgroup.kill, the cgroup
// is frozen and each process killed: none is left.
func TestGroup_CgroupFreeze(t *testing.T) {
	s := *cgroups(t)
	s.noKill = true
	killsAll(t, &s)
}

// TestGroup_Environment: without cgroups, every process carrying the
// attempt's marker is killed, wherever it went; a process of another
// attempt is not.
func TestGroup_Environment(t *testing.T) {
	other := exec.Command("sleep", "60")
	other.Env = append(os.Environ(), "TASKD_TEST_GROUP="+t.Name()+"-other")
	if err := Start(other); err != nil {
		t.Fatal(err)
	}
	defer func() {
		other.Process.Kill()
		Wait(other)
	}()
	killsAll(t, &Supervisor{mode: ByEnvironment, why: "a test"})
	if !alive(other.Process.Pid) {
		t.Error("a process of another attempt was killed")
	}
}

// TestKillLeftover_Cgroup: a daemon that died left an attempt's processes
// in its cgroup: the next kills them by the cgroup cmd.json records, and
// removes it. A recorded cgroup that is not the attempt's (cmd.json is in
// a folder the agent may write) is never touched.
func TestKillLeftover_Cgroup(t *testing.T) {
	s := cgroups(t)
	victim := s.Group("TASKD_TEST_GROUP=" + t.Name() + "-victim")
	vcmd := exec.Command("sleep", "60")
	vwait, err := victim.Start(vcmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		victim.Kill()
		<-vwait
		victim.Close()
	}()
	marker := "TASKD_TEST_GROUP=" + t.Name()
	// The processes carry no marker: only the cgroup finds them.
	g := s.Group(marker)
	wait, pids := escaping(t, g, "TASKD_TEST_UNMARKED=1")
	if s.KillLeftover(marker, victim.Cgroup()) != true {
		t.Error("KillLeftover killed nothing")
	}
	wait()
	for _, pid := range pids {
		waitCond(t, fmt.Sprint("process ", pid, " to die"), func() bool { return !alive(pid) })
	}
	if exists(g.Cgroup()) {
		t.Errorf("the attempt's cgroup %s is still there", g.Cgroup())
	}
	if !alive(vcmd.Process.Pid) {
		t.Error("the process of a cgroup cmd.json named, not the attempt's, was killed")
	}
}

// TestSupervisionOf: what doctor says of a process is what it does.
func TestSupervisionOf(t *testing.T) {
	s := Supervise()
	mode, detail := SupervisionOf(os.Getpid())
	if mode != s.Mode() {
		t.Errorf("SupervisionOf(this process) = %v (%s); it supervises %s", mode, detail, s)
	}
	if mode, _ := SupervisionOf(0); mode != s.Mode() {
		t.Errorf("SupervisionOf(0) = %v; this process supervises %s", mode, s)
	}
}

// TestSweep: cgroups of attempts that a daemon which died left empty are
// removed by the next, once old enough; one just made, which may be about
// to take its agent, and one with a process stay.
func TestSweep(t *testing.T) {
	s := cgroups(t)
	old, fresh := s.Group("TASKD_TEST_GROUP="+t.Name()+"-old"), s.Group("TASKD_TEST_GROUP="+t.Name()+"-fresh")
	defer fresh.Close()
	busy := s.Group("TASKD_TEST_GROUP=" + t.Name() + "-busy")
	cmd := exec.Command("sleep", "60")
	waited, err := busy.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		busy.Kill()
		<-waited
		busy.Close()
	}()
	long := time.Now().Add(-time.Hour)
	for _, dir := range []string{old.Cgroup(), busy.Cgroup()} {
		if err := os.Chtimes(dir, long, long); err != nil {
			t.Skipf("skipping: cannot date cgroup %s: %v", dir, err)
		}
	}
	s.sweep(time.Minute)
	for dir, want := range map[string]bool{old.Cgroup(): false, fresh.Cgroup(): true, busy.Cgroup(): true} {
		if got := exists(dir); got != want {
			t.Errorf("cgroup %s there: %v, want %v", dir, got, want)
		}
	}
}
