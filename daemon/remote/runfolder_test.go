package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/daemon/agent"
	"github.com/taskd/taskd/daemon/config"
)

// TestFolder_OutputBounded: a worker that sends more output than the
// coordinator's cap allows (another version, another setting) is cut at
// the coordinator, with a line saying so: no worker fills its disk.
func TestFolder_OutputBounded(t *testing.T) {
	base := t.TempDir()
	cfg, err := config.NewConfig(base, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	prof, _ := cfg.ResolveAgent("exec", true)
	a := &agent.Attempt{ListDir: base, ListID: "l", TaskID: "1", N: 1, Profile: prof}
	const limit = 64 << 10
	f, err := prepare(a, limit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()
	chunk := []byte(strings.Repeat("x", 16<<10))
	for off := int64(0); off < 1<<20; off += int64(len(chunk)) {
		if err := f.writeOutput(KindOut, off, chunk); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(filepath.Join(a.Dir(), "stdout.log"))
	if len(data) > limit+outputSlack+200 || !strings.HasSuffix(string(data), "the worker sent more than outputMaxMiB]\n") {
		t.Errorf("stdout.log has %d bytes, ending %q", len(data), data[max(len(data)-100, 0):])
	}
}
