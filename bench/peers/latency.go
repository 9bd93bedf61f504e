package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/taskd/taskd/bench/taskdrun"
)

// A probe is a job that tells when it started: cmd(path) is the shell
// command the job runs, and at(path) reports the moment it started, once
// it is known.
type probe struct {
	name string // in the table
	note string
	cmd  func(path string) string
	at   func(path string) (time.Time, bool)
}

// dateProbe: the job's shell starts `date`, which writes the time. Its
// figures include starting a second process.
func dateProbe() probe {
	return probe{
		name: "latency, enqueue to the job's `date` writing the time",
		note: "the job's shell starts `date`; floor: Go starting the job's command directly",
		cmd:  func(path string) string { return "date +%s%N > " + path },
		at:   readStamp,
	}
}

func readStamp(path string) (time.Time, bool) {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 || data[len(data)-1] != '\n' {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// createWatch records when files are created in a directory, as inotify
// reports them.
type createWatch struct {
	w    *fsnotify.Watcher
	mu   sync.Mutex
	seen map[string]time.Time
}

func watchCreates(dir string) (*createWatch, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, err
	}
	c := &createWatch{w: w, seen: map[string]time.Time{}}
	go func() {
		for ev := range w.Events {
			now := time.Now()
			if ev.Has(fsnotify.Create) {
				c.mu.Lock()
				if _, ok := c.seen[ev.Name]; !ok {
					c.seen[ev.Name] = now
				}
				c.mu.Unlock()
			}
		}
	}()
	return c, nil
}

func (c *createWatch) at(path string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.seen[path]
	return t, ok
}

// createProbe: the job's shell creates a file itself (a redirection, no
// other process), and the time is taken when inotify reports it.
func createProbe(c *createWatch) probe {
	return probe{
		name: "latency, enqueue to the job's shell creating a file",
		note: "seen through inotify; no second process; floor: Go starting the job's command directly",
		cmd:  func(path string) string { return ": > " + path },
		at:   c.at,
	}
}

// latency measures every tool with both probes, each sample enqueued into
// an idle queue, the probes taking turns sample by sample.
func (b *bench) latency() ([]row, error) {
	created := b.dir("created")
	cw, err := watchCreates(created)
	if err != nil {
		return nil, err
	}
	defer cw.w.Close()
	stamps := b.dir("stamps")
	probes := []struct {
		probe
		dir string
	}{{createProbe(cw), created}, {dateProbe(), stamps}}
	samples := make([]map[string][]float64, len(probes))
	for k := range samples {
		samples[k] = map[string][]float64{}
	}
	// sample enqueues sample i of tool with each probe and waits for its
	// start, and for the queue to be idle again.
	sample := func(tool string, i int, enqueue func(cmd string) error, idle func() error) error {
		for k, p := range probes {
			f := filepath.Join(p.dir, fmt.Sprintf("%s-%d", tool, i))
			t0 := time.Now()
			if err := enqueue(p.cmd(f)); err != nil {
				return err
			}
			var at time.Time
			if err := waitFor(30*time.Second, func() bool { var ok bool; at, ok = p.at(f); return ok }); err != nil {
				return fmt.Errorf("%s: no start seen: %w", tool, err)
			}
			samples[k][tool] = append(samples[k][tool], ms(at.Sub(t0)))
			if err := idle(); err != nil {
				return err
			}
		}
		return nil
	}
	// The floor: Go starting the same command directly.
	for i := range *latFlag {
		err := sample("floor", i, func(cmd string) error { return exec.Command("sh", "-c", cmd).Run() }, func() error { return nil })
		if err != nil {
			return nil, err
		}
	}
	// taskd
	d, err := b.startTaskd(b.dir("root"), 2)
	if err != nil {
		return nil, err
	}
	c := &eventCounter{path: filepath.Join(d.List, ".taskd", "events.jsonl")}
	var own []float64 // taskd's own record: when its agent process had started
	n := 0
	for i := 1; i <= *latFlag; i++ {
		err := sample("taskd", i, func(cmd string) error {
			n++
			id := strconv.Itoa(n)
			t0 := time.Now()
			if err := taskdrun.Drop(d.List, id, taskJSON(id, cmd, "")); err != nil {
				return err
			}
			return waitFor(30*time.Second, func() bool {
				var r struct {
					StartedAt time.Time `json:"startedAt"`
				}
				data, _ := os.ReadFile(filepath.Join(d.List, ".taskd", "runs", id, "1", "result.json"))
				if json.Unmarshal(data, &r) != nil || r.StartedAt.IsZero() {
					return false
				}
				own = append(own, ms(r.StartedAt.Sub(t0)))
				return true
			})
		}, func() error { return waitFor(30*time.Second, func() bool { return c.count() >= n }) })
		if err != nil {
			d.Stop()
			return nil, err
		}
	}
	d.Stop()
	// nq
	nqDir := b.dir("nq")
	nqEnv := append(os.Environ(), "NQDIR="+nqDir)
	for i := 1; i <= *latFlag; i++ {
		err := sample("nq", i, func(cmd string) error {
			c := exec.Command("nq", "-q", "sh", "-c", cmd)
			c.Env = nqEnv
			return c.Run()
		}, func() error {
			c := exec.Command("nq", "-w")
			c.Env = nqEnv
			return c.Run()
		})
		if err != nil {
			return nil, err
		}
	}
	// tsp
	env := b.tspEnv()
	if _, err := tsp(env, "-S", "2"); err != nil {
		return nil, err
	}
	for i := 1; i <= *latFlag; i++ {
		var id string
		err := sample("tsp", i, func(cmd string) error {
			var err error
			id, err = tsp(env, "sh", "-c", cmd)
			return err
		}, func() error { _, err := tsp(env, "-w", id); return err })
		if err != nil {
			tsp(env, "-K")
			return nil, err
		}
	}
	tsp(env, "-K")
	var rows []row
	for k, p := range probes {
		p50 := row{name: p.name + ", median", unit: "ms", values: map[string]float64{}, note: p.note}
		p90 := row{name: p.name + ", p90", unit: "ms", values: map[string]float64{}}
		for tool, s := range samples[k] {
			slices.Sort(s)
			if tool == "floor" {
				p50.floor, p90.floor = s[len(s)/2], s[len(s)*9/10]
				continue
			}
			p50.values[tool], p90.values[tool] = s[len(s)/2], s[len(s)*9/10]
		}
		rows = append(rows, p50, p90)
	}
	slices.Sort(own)
	if len(own) > 0 {
		rows = append(rows,
			row{name: "taskd: file renamed in to agent started (its startedAt), median", unit: "ms", values: map[string]float64{"taskd": own[len(own)/2]}, note: "taskd's own record, without the job's shell"},
			row{name: "taskd: file renamed in to agent started (its startedAt), p90", unit: "ms", values: map[string]float64{"taskd": own[len(own)*9/10]}})
	}
	return rows, nil
}
