package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/taskd/taskd/daemon/area"
)

// TestKeptResult: a result the run folder cannot take (here: a file
// stands where its parent folder belongs) is kept in the runtime directory, privately, under a path
// that names the list, the task and the attempt; ReadResult finds it
// there; once the end is recorded SettleResult moves it, and a judge's
// beside it, into the run folder and removes it. What was kept for a run
// folder that is gone is removed.
func TestKeptResult(t *testing.T) {
	t.Parallel()
	list := filepath.Join(t.TempDir(), "mylist")
	if err := os.Mkdir(list, 0o700); err != nil {
		t.Fatal(err)
	}
	runDir := area.RunDir(list, "7", 3)
	block := func(id string) {
		t.Helper()
		if err := os.MkdirAll(area.RunsDir(list, ""), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(area.RunsDir(list, id), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	block("7")
	kept, err := WriteResult(list, runDir, Result{Success: true, Summary: "done"})
	if err == nil || kept == "" {
		t.Fatalf("WriteResult into a missing run folder: kept %q, err %v; want it kept and the error", kept, err)
	}
	if want, _ := KeptResult(runDir); kept != want {
		t.Errorf("kept at %s, KeptResult says %s", kept, want)
	}
	if rel := filepath.ToSlash(kept); !strings.Contains(rel, "/results/mylist-") || !strings.HasSuffix(rel, "/7/3/result.json") {
		t.Errorf("kept at %s: want results/mylist-<hash>/7/3/result.json", kept)
	}
	if fi, err := os.Stat(kept); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("kept file: %v, %v; want mode 0600", fi, err)
	}
	if fi, err := os.Stat(filepath.Dir(kept)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("kept folder: %v, %v; want mode 0700", fi, err)
	}
	if got, ok := ReadResult(runDir); !ok || got.Summary != "done" {
		t.Errorf("ReadResult = %+v, %v; want the kept result", got, ok)
	}
	// A judge's result, kept beside it.
	if _, err := WriteResult(list, filepath.Join(runDir, "judge"), Result{Summary: "judged"}); err == nil {
		t.Fatal("the judge's folder took its result")
	}

	// The run folder can take it now: settled.
	if err := os.Remove(area.RunsDir(list, "7")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(runDir, "judge"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := SettleResult(runDir); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{runDir: "done", filepath.Join(runDir, "judge"): "judged"} {
		data, err := os.ReadFile(filepath.Join(dir, "result.json"))
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s/result.json: %q, %v; want %q", dir, data, err, want)
		}
	}
	if _, err := os.Stat(filepath.Dir(filepath.Dir(filepath.Dir(kept)))); !os.IsNotExist(err) {
		t.Errorf("the list's folder of kept results is still there: %v", err)
	}

	// Kept for a run folder that is gone: removed when settled.
	gone := area.RunDir(list, "8", 1)
	block("8")
	kept, _ = WriteResult(list, gone, Result{})
	os.Remove(area.RunsDir(list, "8"))
	if err := SettleResult(gone); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Errorf("the result kept for a gone run folder is still there: %v", err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("settling made the gone run folder again: %v", err)
	}

	// A new run of the same attempt forgets what an earlier one kept.
	block("8")
	WriteResult(list, gone, Result{})
	ForgetKept(gone)
	if _, ok := ReadResult(gone); ok {
		t.Errorf("ReadResult found a result after ForgetKept")
	}
	SettleResult(gone)
}

// TestForgetKept_EarlierProcess: a process that has kept nothing looks
// once per list for the results kept for it: a result an earlier process
// kept for a run folder is forgotten when the attempt runs again; with
// nothing kept for the list, forgetting and settling look at nothing; a
// result this process keeps after it looked is forgotten too.
func TestForgetKept_EarlierProcess(t *testing.T) {
	// Not parallel: it stands for a new process, whose globals it sets.
	root := filepath.Join(t.TempDir(), "results")
	oldRoot, oldHere, oldLists := keptRoot, keptHere.Load(), keptLists
	newProcess := func() {
		keptRoot = func() (string, error) { return root, nil }
		keptHere.Store(false)
		keptLists = new(sync.Map)
	}
	t.Cleanup(func() {
		keptRoot = oldRoot
		keptHere.Store(oldHere)
		keptLists = oldLists
	})
	list := filepath.Join(t.TempDir(), "mylist")
	runDir := area.RunDir(list, "7", 1)

	newProcess()
	if mayBeKept(list) {
		t.Errorf("no folder of kept results: a result may be kept, want none")
	}
	if err := os.MkdirAll(filepath.Join(root, "otherlist-0123456789abcdef", "1", "1"), 0o700); err != nil {
		t.Fatal(err)
	}
	newProcess()
	if mayBeKept(list) {
		t.Errorf("results kept for another list only: one may be kept for this one, want none")
	}

	// An earlier process kept a result for the run folder.
	kept, err := KeptResult(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(kept), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, []byte(`{"summary": "old"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	newProcess()
	ForgetKept(runDir)
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Errorf("the result an earlier process kept is still there after ForgetKept: %v", err)
	}

	// This process keeps one after it looked: it is forgotten too.
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	newProcess()
	ForgetKept(runDir) // looks: nothing kept
	if mayBeKept(list) {
		t.Fatal("nothing kept: a result may be kept, want none")
	}
	if err := writeKept(filepath.Dir(kept), []byte(`{"summary": "new"}`)); err != nil {
		t.Fatal(err)
	}
	ForgetKept(runDir)
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Errorf("the result this process kept is still there after ForgetKept: %v", err)
	}
}

// TestForgetTask: the results kept for a task whose file is gone — each
// attempt's, a judge's — go with the task's folder, and the list's folder
// once nothing else is kept for it; another task's stay. KeptTasks names
// the tasks something is kept for.
func TestForgetTask(t *testing.T) {
	t.Parallel()
	list := filepath.Join(t.TempDir(), "mylist")
	if err := os.MkdirAll(area.RunsDir(list, ""), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"7", "8"} { // a file where the task's run folders belong: nothing taken
		if err := os.WriteFile(area.RunsDir(list, id), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{area.RunDir(list, "7", 1), area.RunDir(list, "7", 2), filepath.Join(area.RunDir(list, "7", 2), "judge"), area.RunDir(list, "8", 1)} {
		if kept, _ := WriteResult(list, dir, Result{Summary: "done"}); kept == "" {
			t.Fatalf("the result for %s is not kept", dir)
		}
	}
	if got := KeptTasks(list); len(got) != 2 || !slices.Contains(got, "7") || !slices.Contains(got, "8") {
		t.Errorf("KeptTasks = %v, want 7 and 8", got)
	}
	if err := ForgetTask(list, "7"); err != nil {
		t.Fatal(err)
	}
	kept7, _ := KeptResult(area.RunDir(list, "7", 1))
	if _, err := os.Lstat(filepath.Dir(filepath.Dir(kept7))); !os.IsNotExist(err) {
		t.Errorf("task 7's folder of kept results is still there: %v", err)
	}
	if _, ok := ReadResult(area.RunDir(list, "8", 1)); !ok {
		t.Error("task 8's kept result went with task 7's")
	}
	if got := KeptTasks(list); len(got) != 1 || got[0] != "8" {
		t.Errorf("KeptTasks = %v, want 8", got)
	}
	if err := ForgetTask(list, "8"); err != nil {
		t.Fatal(err)
	}
	listKept, _ := keptListDir(list)
	if _, err := os.Lstat(listKept); !os.IsNotExist(err) {
		t.Errorf("the list's folder of kept results is still there with nothing in it: %v", err)
	}
	if err := ForgetTask(list, "../8"); err != nil {
		t.Errorf("ForgetTask of a name that is not a task's: %v, want nothing done", err)
	}
}

// TestForgetRemovedLists: the results kept for a list of the root that
// is gone are removed; those of a list that is there, of another root's
// list of the same name, and a folder that is not a list's, stay.
func TestForgetRemovedLists(t *testing.T) {
	// Not parallel: it sets the folder of kept results.
	results := filepath.Join(t.TempDir(), "results")
	old := keptRoot
	keptRoot = func() (string, error) { return results, nil }
	t.Cleanup(func() { keptRoot = old })
	root, otherRoot := t.TempDir(), t.TempDir()

	keep := func(listDir string) string {
		t.Helper()
		kept, err := KeptResult(area.RunDir(listDir, "7", 1))
		if err != nil {
			t.Fatal(err)
		}
		if err := writeKept(filepath.Dir(kept), []byte(`{"summary": "done"}`)); err != nil {
			t.Fatal(err)
		}
		dir, _ := keptListDir(listDir)
		return dir
	}
	gone := keep(filepath.Join(root, "gone"))
	there := keep(filepath.Join(root, "there"))
	if err := os.Mkdir(filepath.Join(root, "there"), 0o700); err != nil {
		t.Fatal(err)
	}
	others := keep(filepath.Join(otherRoot, "gone"))
	stray := filepath.Join(results, "notalist")
	if err := os.MkdirAll(stray, 0o700); err != nil {
		t.Fatal(err)
	}

	if err := ForgetRemovedLists(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(gone); !os.IsNotExist(err) {
		t.Errorf("the results kept for the removed list are still there: %v", err)
	}
	for _, dir := range []string{there, others, stray} {
		if _, err := os.Lstat(dir); err != nil {
			t.Errorf("%s: %v, want it left alone", dir, err)
		}
	}
}
