package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/taskd/taskd/daemon/pausefile"
	"github.com/taskd/taskd/daemon/status"
)

// A key names a row of the view: a list (id empty) or a task.
type key struct{ list, id string }

func (k key) String() string {
	if k.id == "" {
		return k.list
	}
	return k.list + "/" + k.id
}

// A snapshot is what the feed read of the root, for the view. The model
// never changes one: the feed sends a new one.
type snapshot struct {
	lists   []status.List
	daemon  Daemon
	failed  map[string]string          // lists (and the root, "") that cannot be read, and why
	problem string                     // what the view should know of the feed
	costs   map[string]float64         // what each agent profile cost today
	pauses  map[string]pausefile.Pause // the agent profiles paused, by name
}

// The messages the model takes besides the terminal's.
type (
	// tickMsg moves the clock of the view.
	tickMsg time.Time
	// transcriptMsg is the followed task's transcript: the last lines of
	// its latest attempt.
	transcriptMsg struct {
		k       key
		attempt int
		dir     string // the attempt's run folder
		file    string // which log in it: transcript.log, stdout.log, stderr.log
		lines   []string
	}
	// detailMsg is what happened to the followed task (taskd show's).
	detailMsg struct {
		k key
		d *status.Detail
	}
	// doneMsg is how an action ended: what to say, and whether it failed.
	doneMsg struct {
		text string
		err  error
		// then, when set, is asked next (a running task's removal).
		then *confirmation
		// page, when set, is shown in the pager (a diff).
		page *pageMsg
	}
	// pageMsg asks for text to be shown in the pager.
	pageMsg struct {
		text []byte
		path string // or the file at path, in the list at base
		base string
	}
)

// A mode is what the keys do.
type mode int

const (
	browsing   mode = iota
	confirming      // y does what confirm says, anything else not
	answering       // the answer form takes the keys
	helping         // any key closes the help
)

// A follower reads for the model (the feed): a task's transcript, and
// every file again when asked.
type follower interface {
	Follow(k key)
	Reread()
}

// Model is the view's state. Update and View are pure functions of it and
// the messages it is sent, with the clock of the last tick.
type Model struct {
	opt    Options
	feed   follower // nil in tests that send transcripts themselves
	width  int
	height int
	now    time.Time

	snap   *snapshot
	tally  tally // the snapshot's tasks counted
	rows   []row
	index  map[key]int // the row of each list and task
	cursor int         // the selected row
	top    int         // the first row shown
	sel    key         // the selected row's key, kept across snapshots
	folded map[key]bool

	mode    mode
	confirm *confirmation
	form    *answerForm

	msg    string // what the last action did
	msgErr bool

	script  transcriptMsg // the selected task's transcript
	detail  detailMsg     // what happened to the selected task
	pending bool          // an action runs
}

func newModel(opt Options, feed follower) *Model {
	return &Model{opt: opt, feed: feed, now: opt.Now(), folded: map[key]bool{}, index: map[key]int{}}
}

// Init starts nothing: the feed sends the first snapshot.
func (m *Model) Init() tea.Cmd { return nil }

// Update takes a message and returns what to do next.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.scroll()
	case *snapshot:
		m.snap = msg
		m.rebuild()
		return m, m.followSelected(false)
	case tickMsg:
		m.now = time.Time(msg)
	case transcriptMsg:
		if msg.k == m.sel {
			m.script = msg
		}
	case detailMsg:
		if msg.k == m.sel {
			m.detail = msg
		}
	case doneMsg:
		m.pending = false
		m.msg, m.msgErr = msg.text, msg.err != nil
		if msg.err != nil {
			m.msg = msg.err.Error()
		}
		if msg.then != nil {
			m.mode, m.confirm = confirming, msg.then
		}
		if msg.page != nil {
			return m, m.page(*msg.page)
		}
	case pageMsg:
		return m, m.page(msg)
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

// followSelected asks the feed to follow the selected task's transcript,
// when the selection changed (or always, with force).
func (m *Model) followSelected(force bool) tea.Cmd {
	if m.script.k == m.sel && !force {
		return nil
	}
	m.script, m.detail = transcriptMsg{k: m.sel}, detailMsg{k: m.sel}
	if m.feed == nil {
		return nil
	}
	k, f := m.sel, m.feed
	return func() tea.Msg {
		f.Follow(k)
		return nil
	}
}

// selected returns the selected row (nil when there is none).
func (m *Model) selected() *row {
	if m.cursor < 0 || m.cursor >= len(m.rows) {
		return nil
	}
	return &m.rows[m.cursor]
}

// selectedTask returns the selected task (nil for a list or none).
func (m *Model) selectedTask() *status.Task {
	if r := m.selected(); r != nil {
		return r.task
	}
	return nil
}
