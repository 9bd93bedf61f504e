package termtext

import (
	"strings"
	"testing"
)

var fitTests = []struct {
	s    string
	n    int
	want string
}{
	{"hello", 10, "hello"},
	{"hello", 5, "hello"},
	{"hello world", 5, "hell…"},
	{"日本語のテキスト", 8, "日本語…"}, // 2 columns each: 3 of them and the mark
	{"日本語", 6, "日本語"},
	{"a\x1b[31mb", 10, "a [31mb"}, // no escape reaches the terminal
	{"line one\nline two", 20, "line one line two"},
	{"abc", 0, ""},
}

func TestFit(t *testing.T) {
	for _, tt := range fitTests {
		if got := Fit(tt.s, tt.n); got != tt.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
		if got := Fit(tt.s, tt.n); Width(got) > tt.n {
			t.Errorf("Fit(%q, %d) is %d columns wide", tt.s, tt.n, Width(got))
		}
	}
}

var widthTests = []struct {
	s    string
	want int
}{
	{"abc", 3},
	{"…├└│", 4},
	{"修复", 4},
	{"e\u0301", 1}, // e and a combining accent
	{"🚀", 2},
	{"ｈｉ", 4}, // full-width Latin
}

func TestWidth(t *testing.T) {
	for _, tt := range widthTests {
		if got := Width(tt.s); got != tt.want {
			t.Errorf("Width(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestFitLeft(t *testing.T) {
	if got, want := FitLeft("/home/alice/.claude/tasks", 14), "….claude/tasks"; got != want {
		t.Errorf("fitLeft = %q, want %q", got, want)
	}
	if got, want := FitLeft("/short", 14), "/short"; got != want {
		t.Errorf("fitLeft = %q, want %q", got, want)
	}
}

var wrapTests = []struct {
	s        string
	n, lines int
	want     string // lines joined by |
}{
	{"one two three", 20, 3, "one two three"},
	{"one two three", 7, 3, "one two|three"},
	{"one two three four five six", 7, 2, "one two|three…"},
	{"a /very/long/path/that/does/not/fit", 10, 5, "a|/very/lon|g/path/th|at/does/n|ot/fit"},
	{"", 10, 3, ""},
	{"日本語 日本語", 7, 3, "日本語|日本語"},
}

func TestWrap(t *testing.T) {
	for _, tt := range wrapTests {
		lines := Wrap(tt.s, tt.n, tt.lines)
		if got := strings.Join(lines, "|"); got != tt.want {
			t.Errorf("Wrap(%q, %d, %d) = %q, want %q", tt.s, tt.n, tt.lines, got, tt.want)
		}
		for _, l := range lines {
			if Width(l) > tt.n {
				t.Errorf("Wrap(%q, %d, %d): line %q is too wide", tt.s, tt.n, tt.lines, l)
			}
		}
	}
}

// TestHome: the home directory becomes ~ only where it starts a
// path.
func TestHome(t *testing.T) {
	tests := []struct{ s, home, want string }{
		{"/root/x", "/root", "~/x"},
		{"/root", "/root", "~"},
		{"logs: /root/.claude/tasks/l/.taskd/runs/1/1", "/root", "logs: ~/.claude/tasks/l/.taskd/runs/1/1"},
		{"/srv/x/root/y", "/root", "/srv/x/root/y"},
		{"open /srv/x/root/.claude: denied", "/root", "open /srv/x/root/.claude: denied"},
		{"/rootless/y", "/root", "/rootless/y"},
		{"/root2", "/root", "/root2"},
		{"(/root/a) and /srv/root/b, '/root/c'", "/root", "(~/a) and /srv/root/b, '~/c'"},
		{"/home/ann/x:/home/ann/y", "/home/ann", "~/x:~/y"},
		{"/home/ann/x", "/home/ann/", "~/x"},
		{"/x", "/", "/x"},
		{"/x", "", "/x"},
	}
	for _, tt := range tests {
		if got := Home(tt.s, tt.home); got != tt.want {
			t.Errorf("Home(%q, %q) = %q, want %q", tt.s, tt.home, got, tt.want)
		}
	}
}
