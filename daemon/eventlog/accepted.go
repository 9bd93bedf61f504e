package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/taskd/taskd/daemon/area"
	"github.com/taskd/taskd/internal/fsroot"
)

// acceptedMark is how a TaskAccepted line names its type (Event's
// MarshalJSON writes the fixed fields in order, without spaces).
var acceptedMark = []byte(`"type":"` + TaskAccepted + `"`)

// Accepted returns the ids of the tasks a TaskAccepted event of the list's
// kept logs names: tasks an earlier daemon accepted, whose acceptance a
// restart must not log again. Only lines of that type are parsed.
func Accepted(listDir string) map[string]bool {
	ids := map[string]bool{}
	for _, name := range Files(listDir) {
		f, err := fsroot.OpenFile(listDir, filepath.Join(area.Name, name), os.O_RDONLY)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 16<<20)
		for sc.Scan() {
			if !bytes.Contains(sc.Bytes(), acceptedMark) {
				continue
			}
			var ev struct {
				Type string `json:"type"`
				Task string `json:"task"`
			}
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == TaskAccepted && ev.Task != "" {
				ids[ev.Task] = true
			}
		}
		f.Close()
	}
	return ids
}
