package taskfile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

// The benchmarks below are reported side by side in docs/proof.md
// (bench/figures.sh): Update (one durable, locked read-modify-write, as
// the claim and every other state change) against
// BenchmarkBaselineDurableWrite, the bare cost of the same bytes written
// to a temp file, fsynced, renamed and the directory fsynced, and
// BenchmarkBaselineFsync, a single fsync, measured in the same run.

const benchTask = `{
  "id": "1",
  "subject": "Benchmark task",
  "description": "Run the thing",
  "activeForm": "Running the thing",
  "status": "pending",
  "owner": "taskd",
  "blocks": [],
  "blockedBy": [],
  "metadata": {
    "priority": 2,
    "taskd": {
      "prompt": "true",
      "state": "queued",
      "attempt": 0
    }
  }
}`

// BenchmarkUpdate: a durable Update, with the lock directory made and
// removed each time, and kept for reuse (KeepLockDirs, as the daemon does).
func BenchmarkUpdate(b *testing.B) {
	for _, keep := range []bool{false, true} {
		name := "made"
		if keep {
			name = "kept"
		}
		b.Run(name, func(b *testing.B) {
			d := mustOpen(b)
			if keep {
				d.KeepLockDirs()
			}
			writeRaw(b, d, "1.json", benchTask)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := d.Update(ctx, "1", increment("n")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRead(b *testing.B) {
	d := mustOpen(b)
	writeRaw(b, d, "1.json", benchTask)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d.Read("1"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBaselineDurableWrite(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "1.json")
	tmp := filepath.Join(dir, ".1.json.tmp")
	data := []byte(benchTask)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.Create(tmp)
		if err != nil {
			b.Fatal(err)
		}
		f.Write(data)
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
		df, _ := os.Open(dir)
		df.Sync()
		df.Close()
	}
}

// BenchmarkBaselineFsync is one fsync: the task's bytes written to a new
// file, fsynced and renamed into place, the directory not fsynced. It is
// the unit the claim's cost is stated in (docs/proof.md); a claim is an
// Update (BenchmarkUpdate/kept), which also fsyncs the directory.
func BenchmarkBaselineFsync(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "1.json")
	tmp := filepath.Join(dir, ".1.json.tmp")
	data := []byte(benchTask)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.Create(tmp)
		if err != nil {
			b.Fatal(err)
		}
		f.Write(data)
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseMarshal(b *testing.B) {
	data := []byte(benchTask)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		task, err := taskfile.Parse(data, "1.json", "1")
		if err != nil {
			b.Fatal(err)
		}
		task.Marshal()
	}
}

// BenchmarkParseMarshalText is BenchmarkParseMarshal for a task whose
// description is a long prompt: lines, quotes, tabs and non-ASCII text,
// the strings that take the escaping paths of the parser and the encoder.
func BenchmarkParseMarshalText(b *testing.B) {
	line := `Fix the \"flaky\" login test in auth/login_test.go:\tit fails on CI — about 1 run in 20 — with «timeout» 🙃\n`
	data := []byte(`{"id": "1", "subject": "Fix the flaky login test", "description": "` + strings.Repeat(line, 40) +
		`", "activeForm": "Fixing the flaky login test", "status": "pending", "owner": "taskd", "blocks": [], "blockedBy": [],` +
		` "metadata": {"taskd": {"state": "queued", "attempt": 1}}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		task, err := taskfile.Parse(data, "1.json", "1")
		if err != nil {
			b.Fatal(err)
		}
		task.Marshal()
	}
}

// BenchmarkOwn: the task as the process's own last write left it, asked
// for again and again (the loop's event and the job's next look), and an
// update starting from the bytes that write returned (UpdateFrom, as a
// job's next write), without its durable write.
func BenchmarkOwn(b *testing.B) {
	d := mustOpen(b)
	d.RememberWrites()
	writeRaw(b, d, "1.json", benchTask)
	ctx := context.Background()
	wrote, err := d.Update(ctx, "1", increment("n"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("own", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := d.Own("1", false); !ok {
				b.Fatal("not own")
			}
		}
	})
	b.Run("update-from", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			// The update finds nothing to write and reads the file again.
			if _, err := d.UpdateFrom(ctx, wrote, func(*taskfile.Task) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
