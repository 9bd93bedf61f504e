package navigator

import "testing"

// TestResolveRefs pins flow's "./" resolution: Node's
// path.join, which collapses ".." and keeps a trailing slash, applied to
// every match of flow's pattern, sentence punctuation included.
func TestResolveRefs(t *testing.T) {
	tests := []struct{ text, root, want string }{
		{"Read ./docs/brief.md first.", "/src", "Read /src/docs/brief.md first."},
		{"See ./a.md and ./b/c-d.e.txt.", "/src", "See /src/a.md and /src/b/c-d.e.txt."},
		{"Dir ./docs/ here", "/src", "Dir /src/docs/ here"},
		{"Up ./a/../../b", "/src/x", "Up /src/b"},
		{"Parent ../x", "/src", "Parent ./src/x"}, // flow's pattern also matches inside ../
		{"none here", "/src", "none here"},
		{"Read ./docs/brief.md", "", "Read ./docs/brief.md"},
		{"", "/src", ""},
	}
	for _, tt := range tests {
		if got := resolveRefs(tt.text, tt.root); got != tt.want {
			t.Errorf("resolveRefs(%q, %q) = %q, want %q", tt.text, tt.root, got, tt.want)
		}
	}
}

func TestContextBlock(t *testing.T) {
	tests := []struct {
		files           []string
		source, project string
		want            string
	}{
		{[]string{"README.md", "./guide.md"}, "/wf", "/p",
			"## Context\n\nBefore beginning, load the following:\n- Read file: /p/README.md\n- Read file: /wf/guide.md"},
		{[]string{"./guide.md", "docs/"}, "", "/p",
			"## Context\n\nBefore beginning, load the following:\n- Read file: /p/guide.md\n- Read file: /p/docs/"},
		{[]string{"README.md"}, "/wf", "", ""},
		{nil, "/wf", "/p", ""},
	}
	for _, tt := range tests {
		if got := contextBlock(tt.files, tt.source, tt.project); got != tt.want {
			t.Errorf("contextBlock(%q, %q, %q) = %q, want %q", tt.files, tt.source, tt.project, got, tt.want)
		}
	}
}
