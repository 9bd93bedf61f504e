package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/internal/fsroot"
)

// A folder is the run folder of an attempt a worker runs, filled here as
// agent.Local fills it for an agent of this machine: prompt.md and the
// prompt commands' files before it is sent, cmd.json (how it is, then was, started, with the
// remote attempt's id and the worker that claimed it, so that recovery
// follows it), stdout.log and stderr.log growing as the worker sends the
// bytes (each made at its first: a stream the agent never wrote to leaves
// no file, as on this machine), result.json the moment the End arrives. Every path goes through
// package fsroot. Safe for concurrent use.
type folder struct {
	base, dir string      // the list directory, the run folder
	d         *fsroot.Dir // the run folder, open: its files are written without walking to it each time
	// limit bounds each log, as the worker bounds it (with room for the
	// lines it adds): a worker that sends more is cut here.
	limit int64

	mu    sync.Mutex     // protects the fields below
	cmd   map[string]any // cmd.json
	outFD int            // stdout.log, -1 when not open
	ended bool           // close was called: no log is opened again
	// feed, when set, is handed stdout's bytes as they land, in order
	// and once each (fed: how far), under feedMu (watch).
	feed    func([]byte)
	fed     int64
	feedMu  sync.Mutex
	errFD   int      // stderr.log
	written [2]int64 // bytes of stdout.log and stderr.log written from the stream
}

// prepare makes attempt a's run folder and writes what the agent will
// read, as agent.Local does; a.MadeDir says whether it made the folder.
func prepare(a *agent.Attempt, limit int64) (*folder, error) {
	f := &folder{base: a.ListDir, dir: a.Dir(), limit: limit, outFD: -1, errFD: -1}
	err := fsroot.Mkdir(f.base, f.dir)
	a.MadeDir = err == nil
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	agent.ForgetKept(f.dir) // nor is a result kept for an earlier run
	if !a.MadeDir {
		// An earlier run of the same attempt number left it: its result
		// is not this attempt's.
		if err := fsroot.Remove(f.base, f.path("result.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remove the earlier run's result.json: %w", err)
		}
	}
	if f.d, err = fsroot.OpenDir(f.base, f.dir); err != nil {
		return nil, fmt.Errorf("open the run folder: %w", err)
	}
	if !a.MadeDir {
		if err := agent.ClearEarlierLogs(f.d, f.base, f.dir); err != nil {
			f.close()
			return nil, fmt.Errorf("remove the earlier run's logs: %w", err)
		}
	}
	a.Prompt = strings.ToValidUTF8(a.Prompt, "\uFFFD")
	a.Script = strings.ToValidUTF8(a.Script, "\uFFFD")
	if err := f.writeFile("prompt.md", []byte(a.Prompt)); err != nil {
		f.close()
		return nil, fmt.Errorf("write prompt.md: %w", err)
	}
	for name, data := range a.Files {
		if err := fsroot.WriteFile(f.base, f.path(name), data); err != nil {
			f.close()
			return nil, fmt.Errorf("write %s: %w", name, err)
		}
	}
	return f, nil
}

// openFolder opens the run folder runDir of list directory base that an
// attempt sent earlier filled, to go on filling it: the logs are kept.
func openFolder(base, runDir string, limit int64) (*folder, error) {
	f := &folder{base: base, dir: runDir, limit: limit, outFD: -1, errFD: -1}
	cmd, err := readCmd(base, runDir)
	if err != nil {
		return nil, err
	}
	f.cmd = cmd
	if f.d, err = fsroot.OpenDir(base, runDir); err != nil {
		return nil, fmt.Errorf("open the run folder: %w", err)
	}
	return f, nil
}

func (f *folder) path(name string) string { return filepath.Join(f.dir, name) }

// logFD returns the descriptor of the log of kind, opening it (made if
// missing, kept if an attempt sent before a restart wrote it) at its
// first chunk. The caller holds f.mu.
func (f *folder) logFD(kind string) (int, error) {
	fd, name := &f.outFD, "stdout.log"
	if kind == KindErr {
		fd, name = &f.errFD, "stderr.log"
	}
	if *fd >= 0 {
		return *fd, nil
	}
	if f.ended {
		return -1, errors.New("the run folder's logs are closed")
	}
	n, err := f.d.OpenFD(name, syscall.O_RDWR|syscall.O_CREAT)
	if err != nil {
		return -1, fmt.Errorf("create %s: %w", name, err)
	}
	*fd = n
	return n, nil
}

// close closes the logs and the run folder: what is written after goes by
// its path.
func (f *folder) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = true
	for _, fd := range []*int{&f.outFD, &f.errFD} {
		if *fd >= 0 {
			syscall.Close(*fd)
			*fd = -1
		}
	}
	if f.d != nil {
		f.d.Close()
	}
}

// writeFile replaces the run folder's file name with data, atomically.
func (f *folder) writeFile(name string, data []byte) error {
	if f.d != nil {
		if err := f.d.WriteFile(name, data); !errors.Is(err, fs.ErrClosed) {
			return err
		}
	}
	return fsroot.WriteFile(f.base, f.path(name), data)
}

// writeJSON replaces the run folder's file name with v, indented as
// agent.WriteJSONFile writes it.
func (f *folder) writeJSON(name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return f.writeFile(name, append(data, '\n'))
}

// setCmd replaces cmd.json with info.
func (f *folder) setCmd(info map[string]any) error {
	f.mu.Lock()
	f.cmd = info
	f.mu.Unlock()
	return f.writeJSON("cmd.json", info)
}

// remoteInfo returns cmd.json's "remote" object (nil if it has none).
func (f *folder) remoteInfo() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, _ := f.cmd["remote"].(map[string]any)
	return r
}

// updateRemote sets the keys of kv in cmd.json's "remote" object and
// rewrites it.
func (f *folder) updateRemote(kv map[string]any) error {
	f.mu.Lock()
	info := make(map[string]any, len(f.cmd))
	for k, v := range f.cmd {
		info[k] = v
	}
	r := map[string]any{}
	if old, ok := info["remote"].(map[string]any); ok {
		for k, v := range old {
			r[k] = v
		}
	}
	for k, v := range kv {
		r[k] = v
	}
	info["remote"] = r
	f.mu.Unlock()
	return f.setCmd(info)
}

// setKey sets key of cmd.json and rewrites it.
func (f *folder) setKey(key string, v any) error {
	f.mu.Lock()
	info := make(map[string]any, len(f.cmd))
	for k, v := range f.cmd {
		info[k] = v
	}
	info[key] = v
	f.mu.Unlock()
	return f.setCmd(info)
}

// cmdKey returns key of cmd.json, and whether it has it.
func (f *folder) cmdKey(key string) (any, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.cmd[key]
	return v, ok
}

// holding is the worker cmd.json says claimed the attempt, if any.
func (f *folder) holding() (holding, bool) {
	r := f.remoteInfo()
	key, _ := r["key"].(string)
	if key == "" {
		return holding{}, false
	}
	h := holding{Key: key, At: time.Now()}
	h.Boot, _ = r["boot"].(string)
	h.Worker, _ = r["worker"].(string)
	if seq, ok := r["seq"].(float64); ok {
		h.Seq = uint64(seq)
	}
	return h, true
}

// savedWork is the signed message of the attempt, kept to publish it
// again if the server loses it: in cmd.json (remote.work), or, when it
// is larger than inlineWork, in work.json.
type savedWork struct {
	Subject string      `json:"subject"`
	Header  nats.Header `json:"header"`
	Data    []byte      `json:"data"`
}

// inlineWork is the largest attempt kept in cmd.json rather than in a
// file of its own: cmd.json stays small for those who read it (taskd
// status), and an attempt of a usual size costs one file, not two.
const inlineWork = 64 << 10

// keepWork keeps the signed message m: into remote, cmd.json's "remote"
// object, or, if it is larger than inlineWork, into work.json.
func (f *folder) keepWork(m *nats.Msg, remote map[string]any) error {
	w := savedWork{Subject: m.Subject, Header: m.Header, Data: m.Data}
	if len(m.Data) <= inlineWork {
		remote["work"] = w
		return nil
	}
	if err := f.writeJSON("work.json", w); err != nil {
		return fmt.Errorf("write work.json: %w", err)
	}
	return nil
}

// loadWork reads the signed message of the attempt that keepWork kept:
// cmd.json's remote.work, else work.json.
func (f *folder) loadWork() (*nats.Msg, error) {
	var w savedWork
	if kept, ok := f.remoteInfo()["work"]; ok {
		data, err := json.Marshal(kept)
		if err == nil {
			err = json.Unmarshal(data, &w)
		}
		if err != nil {
			return nil, fmt.Errorf("cmd.json's remote.work: %w", err)
		}
		return &nats.Msg{Subject: w.Subject, Header: w.Header, Data: w.Data}, nil
	}
	data, err := fsroot.ReadFile(f.base, f.path("work.json"), 64<<20)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("work.json: %w", err)
	}
	return &nats.Msg{Subject: w.Subject, Header: w.Header, Data: w.Data}, nil
}

// outputSlack is what a worker may add to a log beyond its cap: the lines
// that say what was cut.
const outputSlack = 4 << 10

// writeOutput writes data, which starts at off in the agent's stdout
// (kind "out") or stderr, into its log: at its offset, so that a chunk
// delivered again after a reconnection or a restart is written in place.
func (f *folder) writeOutput(kind string, off int64, data []byte) error {
	f.feedMu.Lock() // the watcher is fed in the order of the stream
	defer f.feedMu.Unlock()
	fresh, err := f.writeAt(kind, off, data)
	if len(fresh) > 0 {
		f.feed(fresh) // unlocked: the watcher writes cmd.json
	}
	return err
}

// writeAt writes data at off into the log of kind, and returns what of it
// the watcher has not been handed yet (a chunk delivered again is not).
func (f *folder) writeAt(kind string, off int64, data []byte) (fresh []byte, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := 0
	if kind == KindErr {
		i = 1
	}
	if len(data) == 0 {
		return nil, nil
	}
	fd, err := f.logFD(kind)
	if err != nil {
		return nil, err
	}
	// The worker keeps each log within limit and a few lines of its own; a
	// worker that sends more (another version, another setting) is cut
	// here, so that no worker fills this disk.
	limit := f.limit + outputSlack
	if off >= limit {
		return nil, nil
	}
	if off+int64(len(data)) > limit {
		data = append(data[:limit-off:limit-off], fmt.Sprintf("\n[taskd: cut at %d bytes: the worker sent more than outputMaxMiB]\n", limit)...)
	}
	if i == 0 && f.feed != nil && off <= f.fed && off+int64(len(data)) > f.fed {
		fresh = data[f.fed-off:]
		f.fed = off + int64(len(data))
	}
	for len(data) > 0 {
		n, err := syscall.Pwrite(fd, data, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fresh, &fs.PathError{Op: "write", Path: f.dir, Err: err}
		}
		data, off = data[n:], off+int64(n)
	}
	f.written[i] = max(f.written[i], off)
	return fresh, nil
}

// follow hands feed what stdout.log holds already (after a restart, what
// arrived before it), then every byte that lands in it, in order; nil
// stops.
func (f *folder) follow(feed func([]byte) (int, error)) {
	f.feedMu.Lock()
	defer f.feedMu.Unlock()
	if feed == nil {
		f.feed = nil
		return
	}
	f.feed = func(b []byte) { feed(b) }
	data, _ := agent.ReadTail(f.base, f.path("stdout.log"), f.limit+outputSlack)
	f.mu.Lock()
	f.fed = int64(len(data))
	f.mu.Unlock()
	if len(data) > 0 {
		feed(data)
	}
}

// writeResult writes result.json.
func (f *folder) writeResult(res agent.Result) error {
	return f.writeJSON("result.json", res)
}

// readCmd reads cmd.json of runDir.
func readCmd(base, runDir string) (map[string]any, error) {
	data, err := fsroot.ReadFile(base, filepath.Join(runDir, "cmd.json"), 1<<20)
	if err != nil {
		return nil, err
	}
	var info map[string]any
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, fmt.Errorf("cmd.json of %s: %w", runDir, err)
	}
	return info, nil
}

// remoteID returns the id of the remote attempt recorded in runDir's
// cmd.json, and the subject its work was published on; "" if the attempt
// ran here.
func remoteID(base, runDir string) (id, subject string) {
	id, subject, _ = remoteCmd(base, runDir)
	return id, subject
}

// remoteCmd is remoteID, and whether cmd.json says the attempt passed its
// gate (entered: written just before it was published).
func remoteCmd(base, runDir string) (id, subject string, entered bool) {
	info, err := readCmd(base, runDir)
	if err != nil {
		return "", "", false
	}
	r, _ := info["remote"].(map[string]any)
	id, _ = r["attempt"].(string)
	subject, _ = r["subject"].(string)
	entered, _ = info["entered"].(bool)
	return id, subject, entered
}
