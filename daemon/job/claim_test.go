package job_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/taskd/taskd/daemon/config"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/job"
	"github.com/taskd/taskd/daemon/task"
	"github.com/taskd/taskd/taskfile"
)

// freeSlot is a slot always free.
type freeSlot struct{}

func (freeSlot) Acquire(context.Context) error { return nil }
func (freeSlot) Release()                      {}
func (freeSlot) Ready() bool                   { return true }
func (freeSlot) StepAside()                    {}

// newJob returns a job on task 1 of a new list holding content.
func newJob(t *testing.T, content string) (*job.Job, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "1.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := taskfile.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.NewConfig(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := &job.Env{Config: cfg, Log: slog.New(slog.DiscardHandler)}
	l := &job.List{ID: "l", Dir: d, Events: eventlog.New(dir)}
	return &job.Job{Scope: job.Scope{Env: env, List: l, ID: "1"}, Kind: job.Run, Slot: freeSlot{}}, path
}

const pending = `{"id": "1", "subject": "s", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`

func attempt(t *taskfile.Task, sp *task.Spec) error { sp.Attempt++; return nil }

// TestClaim_WithdrawExact: a claim marks the task running; taken back
// before anything else wrote the file, the file is its old bytes again.
func TestClaim_WithdrawExact(t *testing.T) {
	j, path := newJob(t, pending)
	c, err := j.Claim(t.Context(), attempt)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := task.Of(c.Task), task.Running; got != want {
		t.Fatalf("claimed state %q, want %q", got, want)
	}
	if err := j.Check(c); err != nil {
		t.Fatalf("Check right after the claim = %v", err)
	}
	if err := j.Withdraw(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != pending {
		t.Errorf("after Withdraw the file is\n%s\nwant\n%s", got, pending)
	}
}

// TestClaim_WithdrawAfterOwnWrite: a claim the job wrote to since (a
// child pushed) is taken back field by field: no state, the attempt as
// before, the job's write kept.
func TestClaim_WithdrawAfterOwnWrite(t *testing.T) {
	j, _ := newJob(t, pending)
	c, err := j.Claim(t.Context(), attempt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.List.Dir.Update(t.Context(), "1", func(t *taskfile.Task) error {
		task.Meta(t).Set("note", "kept")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := j.Check(c); err != nil {
		t.Errorf("Check after the job's own write = %v, want the claim to hold", err)
	}
	if err := j.Withdraw(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	tf, _ := j.List.Dir.Read("1")
	m := tf.Metadata.Object("taskd")
	_, hasAttempt := m.Get("attempt")
	note, _ := m.String("note")
	if task.Of(tf) != task.None || tf.Status != taskfile.StatusPending || hasAttempt || note != "kept" {
		t.Errorf("after Withdraw: state %q status %q attempt %v note %q", task.Of(tf), tf.Status, hasAttempt, note)
	}
}

// TestClaim_CheckSeesAReplacedFile: a file replaced after the claim (a
// person dropped a new one) no longer holds it, and Withdraw leaves the
// new file alone.
func TestClaim_CheckSeesAReplacedFile(t *testing.T) {
	j, path := newJob(t, pending)
	c, err := j.Claim(t.Context(), attempt)
	if err != nil {
		t.Fatal(err)
	}
	replaced := `{"id": "1", "subject": "new", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "echo new"}}}`
	if err := os.WriteFile(path, []byte(replaced), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := j.Check(c); !errors.Is(err, job.ErrClaimChanged) {
		t.Errorf("Check after a replacement = %v, want ErrClaimChanged", err)
	}
	if err := j.Withdraw(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != replaced {
		t.Errorf("Withdraw changed a file someone else wrote:\n%s", got)
	}
}

// TestClaim_Refused: a cancelled task, or one decide refuses, is not
// claimed and its file not written.
func TestClaim_Refused(t *testing.T) {
	cancelled := `{"id": "1", "subject": "s", "owner": "taskd", "metadata": {"taskd": {"prompt": "true", "cancel": true}}}`
	for _, tt := range []struct {
		name, content string
		decide        job.Decide
	}{
		{"cancelled", cancelled, attempt},
		{"refused", pending, func(*taskfile.Task, *task.Spec) error { return job.ErrNotRunnable }},
	} {
		j, path := newJob(t, tt.content)
		if _, err := j.Claim(t.Context(), tt.decide); !errors.Is(err, job.ErrNotRunnable) {
			t.Errorf("%s: Claim = %v, want ErrNotRunnable", tt.name, err)
		}
		if got, _ := os.ReadFile(path); string(got) != tt.content {
			t.Errorf("%s: the file was written:\n%s", tt.name, got)
		}
	}
}

// TestClaim_FromStaleSeen: a job given the file as the loop read it
// (Seen) claims from those bytes, but a file changed since decides: a
// cancel written after the loop's read is not claimed over, one taken
// back is claimed, and another writer's field is kept under the claim.
func TestClaim_FromStaleSeen(t *testing.T) {
	tests := []struct {
		name    string
		seen    string // the file as read before the job claims
		now     string // the file when the job claims
		wantErr error
		want    func(*taskfile.Task) bool
	}{
		{
			name: "cancel taken back since",
			seen: `{"id": "1", "subject": "s", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true", "cancel": true}}}`,
			now:  pending,
			want: func(tf *taskfile.Task) bool { return task.Of(tf) == task.Running },
		},
		{
			name:    "cancelled since",
			now:     `{"id": "1", "subject": "s", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true", "cancel": true}}}`,
			wantErr: job.ErrNotRunnable,
		},
		{
			name: "edited since",
			now:  `{"id": "1", "subject": "edited", "owner": "taskd", "metadata": {"taskd": {"agent": "exec", "prompt": "true"}}}`,
			want: func(tf *taskfile.Task) bool { return tf.Subject == "edited" && task.Of(tf) == task.Running },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := pending
			if tt.seen != "" {
				first = tt.seen
			}
			j, path := newJob(t, first)
			seen, err := j.List.Dir.Read("1")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tt.now), 0o600); err != nil {
				t.Fatal(err)
			}
			j.Seen = seen
			_, err = j.Claim(t.Context(), attempt)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Claim = %v, want %v", err, tt.wantErr)
			}
			got, rerr := j.List.Dir.Read("1")
			if rerr != nil {
				t.Fatal(rerr)
			}
			if tt.wantErr != nil {
				if string(got.Raw()) != tt.now {
					t.Errorf("refused claim left\n%s\nwant it untouched\n%s", got.Raw(), tt.now)
				}
				return
			}
			if !tt.want(got) {
				t.Errorf("after the claim the file is\n%s", got.Raw())
			}
		})
	}
}
