package taskfile_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

// syncedMark, followed by a task's id, is what the helper prints once
// Sync of that task's write returned.
const syncedMark = "SYNCED "

// TestDeferDirSync_SharedFsync checks, on the system calls strace
// records, that writes made with DeferDirSync share one fsync of the
// directory: the writes' renames are not followed by fsyncs of their
// own; the first Sync makes one fsync, after every rename, which the
// other writes' Syncs find done; and when a durable write of another
// task follows, its fsync is the only one, covering the deferred writes
// before them too. No Sync returns before an fsync of the directory
// that began after its write's rename.
func TestDeferDirSync_SharedFsync(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ids  []string // a trailing ! writes without DeferDirSync
	}{
		{"three deferred", []string{"1", "2", "3"}},
		{"two deferred, then a durable write", []string{"1", "2", "3!"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := taskfile.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range tt.ids {
				if _, err := d.Create(t.Context(), &taskfile.Task{ID: strings.TrimSuffix(id, "!"), Subject: "s"}); err != nil {
					t.Fatal(err)
				}
			}
			dir := d.Path()
			ops := newFileOps(traceSyscalls(t, "defer "+dir+" "+strings.Join(tt.ids, " ")))
			dirSyncs := ops.find("fsync", func(c syscallRec, p string) bool { return p == dir && c.ret == "0" })
			if got, want := len(dirSyncs), 1; got != want {
				t.Fatalf("%d fsyncs of the directory for %d writes, want %d (at %v)", got, len(tt.ids), want, dirSyncs)
			}
			for _, id := range tt.ids {
				id = strings.TrimSuffix(id, "!")
				target := d.File(id)
				var renames []int
				for _, name := range []string{"renameat", "renameat2"} { // renameat2: the exchange of an update
					renames = append(renames, ops.find(name, func(c syscallRec, _ string) bool {
						q := quoted(c.args)
						return c.ret == "0" && len(q) == 2 && filepath.Base(q[0]) != "" && strings.HasPrefix(filepath.Base(q[0]), "."+id+".json") && q[1] == target
					})...)
				}
				if len(renames) != 1 {
					t.Fatalf("task %s: %d renames onto its file, want 1", id, len(renames))
				}
				synced := ops.find("write", func(c syscallRec, _ string) bool {
					return firstArg(c.args) == "1" && strings.Contains(c.args, syncedMark+id+`\n`)
				})
				if len(synced) != 1 {
					t.Fatalf("task %s: the helper's Sync mark is not in the trace", id)
				}
				if !(renames[0] < dirSyncs[0] && dirSyncs[0] < synced[0]) {
					t.Errorf("task %s: rename at %d, directory fsync at %d, Sync returned at %d: want rename, fsync, return", id, renames[0], dirSyncs[0], synced[0])
				}
			}
		})
	}
}
