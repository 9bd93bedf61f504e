package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/fsnotify/fsnotify"
	"github.com/taskd/taskd/daemon"
	"github.com/taskd/taskd/daemon/eventlog"
	"github.com/taskd/taskd/daemon/status"
	"github.com/taskd/taskd/internal/fsroot"
	"github.com/taskd/taskd/internal/termtext"
)

func init() {
	register(
		&command{
			name:  "logs",
			usage: "[--root DIR] [--attempt N] [--stderr] [--raw] [-f] LIST/ID",
			short: "print the output of a task's agent",
			group: "Tasks",
			long: `
Logs prints what the agent of a task wrote in its latest attempt
(--attempt N for another one). For an agent that streams its work as
JSON events (the claude, codex and opencode profiles) that is the readable
transcript taskd writes as the agent goes — its text, each tool it calls
with its target, the results in short, denied tools, the cost — and --raw
prints the stream itself; for any other agent, its standard output.
--stderr prints its standard error. When the log asked for is empty and
the agent wrote to standard error (one that failed before it began: its
program missing, a login needed), logs prints standard error instead and
says so on its own standard error. The files are transcript.log,
stdout.log and stderr.log in .taskd/runs/<id>/<n>/ of the task's list,
next to prompt.md, cmd.json and result.json. Each keeps at most
outputMaxMiB of the configuration (32 MiB): past it, its first and last
halves, with lines saying what was cut between.

With -f it keeps printing as the agent writes, moves on to the next attempt
when one starts, and returns when the task has ended.

A log is made when the agent writes its first byte to it: one the agent
never wrote to is missing, and logs prints nothing for it (or its
standard error, as above); -f waits for it to appear while the attempt
runs. Logs fails (status 1) when the task does not exist, when it has not
run yet (without -f, which waits for its first attempt), and when the
attempt asked for has no run folder.
`,
			run: runLogs,
		},
		&command{
			name:  "tail",
			usage: "[--root DIR] [--list ID]... [-n N] [-f] [--json]",
			short: "print the event log, one line per event",
			group: "Tasks",
			long: `
Tail prints the last events (-n, default 20) of every list's
.taskd/events.jsonl, merged in time order, one line each:

	15:04:05.123 demo/7 TaskStarted attempt=1
	15:04:09.456 demo/7 TaskSucceeded attempt=1 summary="all tests pass"

With -f it keeps printing events as they are appended, including from
lists created later, until interrupted. --json prints the raw lines.

A list without an event log has no events; lines that are not JSON are
skipped. Tail fails only when the root cannot be found or watched.
`,
			run: runTail,
		},
	)
}

func runLogs(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	attemptFlag := fs.Int("attempt", 0, "attempt number (default: the latest)")
	stderrFlag := fs.Bool("stderr", false, "print standard error instead")
	follow := fs.Bool("f", false, "follow")
	raw := fs.Bool("raw", false, "print a streaming agent's JSON events, not the transcript")
	if err := inv.parse(fs); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return inv.usageErrorf("name one task")
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	ref, err := parseTaskRef(r, fs.Arg(0))
	if err != nil {
		return err
	}
	dir, err := ref.dir()
	if err != nil {
		return err
	}
	runs := filepath.Join(dir.Path(), ".taskd", "runs", ref.id)
	name := func(n int) string { return logName(filepath.Join(runs, fmt.Sprint(n)), *stderrFlag, *raw) }
	latest := func() (int, bool) { return status.LatestAttempt(dir, ref.id) }
	n, ended := latest()
	if *attemptFlag > 0 {
		n, ended = *attemptFlag, true
	}
	if n == 0 {
		// A task that is not there (a typo, a task removed) has no
		// output to wait for.
		if _, err := dir.Read(ref.id); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no task %s", ref)
		}
	}
	if n == 0 && !*follow {
		return fmt.Errorf("task %s has not run yet", ref)
	}
	// An agent that failed before it wrote a line (its program missing, a
	// login needed, a bad flag) said why on standard error only: when the
	// log asked for is empty, logs prints that instead, and says so.
	orStderr := func(n int) {
		if *stderrFlag {
			return
		}
		dir := filepath.Join(runs, fmt.Sprint(n))
		if data, err := fsroot.ReadRegular(filepath.Join(dir, "stderr.log")); err == nil && len(bytes.TrimSpace(data)) > 0 {
			fmt.Fprintf(inv.stderr, "taskd logs: the %s of attempt %d is empty; its standard error (stderr.log) follows\n", logWords[name(n)], n)
			inv.stdout.Write(data)
		}
	}
	if !*follow || ended && *attemptFlag > 0 {
		data, err := fsroot.ReadRegular(filepath.Join(runs, fmt.Sprint(n), name(n)))
		if errors.Is(err, os.ErrNotExist) {
			// A log is made at its first byte: a missing one is empty,
			// if the attempt has a run folder at all.
			if fi, serr := os.Lstat(filepath.Join(runs, fmt.Sprint(n))); serr != nil || !fi.IsDir() {
				return fmt.Errorf("task %s has no attempt %d", ref, n)
			}
			data, err = nil, nil
		}
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(data)) == 0 {
			orStderr(n)
			return nil
		}
		_, err = inv.stdout.Write(data)
		return err
	}
	f := status.NewFollower(dir.Path(), ref.id, func(d string) string { return logName(d, *stderrFlag, *raw) }, n)
	f.OnEmpty(orStderr)
	return followLogs(ctx, inv.stdout, f, latest)
}

// logWords name the logs of a run folder in messages.
var logWords = map[string]string{"transcript.log": "transcript", "stdout.log": "standard output", "stderr.log": "standard error"}

// logName is the log of the attempt in run folder dir that logs prints
// (status.LogName).
func logName(dir string, stderr, raw bool) string { return status.LogName(dir, stderr, raw) }

// followLogs prints what f reads as the task's attempts write it, until
// the task has ended and its last log is printed, or ctx ends.
func followLogs(ctx context.Context, w io.Writer, f *status.Follower, latest func() (int, bool)) error {
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer watcher.Close()
	watched := ""
	tick := time.NewTicker(time.Second) // the task file lives elsewhere; its end is polled
	defer tick.Stop()
	for {
		if f.Read(w, latest) {
			return nil
		}
		if d := f.Dir(); d != "" && d != watched && watcher.Add(d) == nil {
			watched = d
			continue // what was written before the watch began
		}
		select {
		case <-ctx.Done():
			return nil
		case <-watcher.Events:
		case <-tick.C:
		}
	}
}

func runTail(ctx context.Context, inv *invocation) error {
	fs := inv.flags()
	root := fs.String("root", "", "root of task lists")
	var lists listFlags
	fs.Var(&lists, "list", "only this list (repeatable)")
	n := fs.Int("n", 20, "number of past events to print")
	follow := fs.Bool("f", false, "follow")
	asJSON := fs.Bool("json", false, "print the raw JSON lines")
	if err := inv.parse(fs); err != nil {
		return err
	}
	r, err := daemon.ResolveRoot(*root, os.Getenv)
	if err != nil {
		return err
	}
	t := &tailer{root: r, lists: lists, w: inv.stdout, json: *asJSON, offsets: map[string]int64{}}
	var past []eventlog.Event
	for _, path := range t.logs() {
		evs, _ := t.read(path)
		past = append(past, evs...)
	}
	slices.SortStableFunc(past, func(a, b eventlog.Event) int { return a.TS.Compare(b.TS) })
	if len(past) > *n {
		past = past[len(past)-*n:]
	}
	for _, ev := range past {
		t.print(ev)
	}
	if !*follow {
		return nil
	}
	return watchRoot(ctx, r, func() error {
		for _, path := range t.logs() {
			evs, _ := t.read(path)
			for _, ev := range evs {
				t.print(ev)
			}
		}
		return nil
	})
}

// tailer reads event logs incrementally.
type tailer struct {
	root    string
	lists   []string
	w       io.Writer
	json    bool
	offsets map[string]int64
}

func (t *tailer) logs() []string {
	var out []string
	entries, _ := fsroot.ReadDirectory(t.root)
	for _, e := range entries {
		if !e.IsDir() || len(t.lists) > 0 && !slices.Contains(t.lists, e.Name()) {
			continue
		}
		out = append(out, filepath.Join(t.root, e.Name(), ".taskd", "events.jsonl"))
	}
	return out
}

// read returns the whole lines appended to path since the last read.
func (t *tailer) read(path string) ([]eventlog.Event, error) {
	f, err := fsroot.OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	f.Seek(t.offsets[path], io.SeekStart)
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	end := bytes.LastIndexByte(data, '\n') + 1 // a line still being written waits
	t.offsets[path] += int64(end)
	var evs []eventlog.Event
	sc := bufio.NewScanner(bytes.NewReader(data[:end]))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev eventlog.Event
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			evs = append(evs, ev)
		}
	}
	return evs, nil
}

func (t *tailer) print(ev eventlog.Event) {
	if t.json {
		line, _ := json.Marshal(ev)
		fmt.Fprintf(t.w, "%s\n", line)
		return
	}
	fmt.Fprintln(t.w, formatEvent(ev))
}

// unprintable reports whether c is no character to print as it is: a
// control character (an escape sequence, a line break) or another that
// is not graphic.
func unprintable(c rune) bool { return !unicode.IsPrint(c) && c != ' ' }

// formatEvent renders an event on one line: time, list/task, step, type,
// attempt and the other fields as key=value.
func formatEvent(ev eventlog.Event) string {
	var b strings.Builder
	b.WriteString(ev.TS.Local().Format("15:04:05.000"))
	b.WriteString(" " + ev.List)
	if ev.Task != "" {
		b.WriteString("/" + ev.Task)
	}
	if ev.Step != "" {
		b.WriteString(" [" + termtext.Clean(ev.Step) + "]")
	}
	b.WriteString(" " + ev.Type)
	if ev.Attempt > 0 {
		fmt.Fprintf(&b, " attempt=%d", ev.Attempt)
	}
	if ev.Parent != "" {
		b.WriteString(" parent=" + ev.Parent)
	}
	for _, k := range slices.Sorted(maps.Keys(ev.Data)) {
		v := ev.Data[k]
		var s string
		switch v := v.(type) {
		case string:
			s = v
			if s == "" || strings.ContainsAny(s, " \"=") || strings.IndexFunc(s, unprintable) >= 0 {
				s = fmt.Sprintf("%q", fit(s, 120))
			}
		default:
			raw, _ := json.Marshal(v)
			s = fit(string(raw), 120)
		}
		b.WriteString(" " + k + "=" + s)
	}
	return b.String()
}
