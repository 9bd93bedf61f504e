package taskfile_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/taskd/taskd/taskfile"
)

// FuzzParse checks the task-file parser and encoder on arbitrary input:
// nothing panics, anything the parser accepts is valid JSON by the standard
// library's rules, and encoding is stable (encode, parse, encode gives the
// same bytes, and that parse sees the same task). The seed corpus is in
// testdata/fuzz/FuzzParse; run it longer with
//
//	go test -fuzz=FuzzParse ./taskfile
func FuzzParse(f *testing.F) {
	for _, s := range stringifyCases {
		f.Add([]byte(s))
	}
	f.Add([]byte(roundTripIn))
	f.Add([]byte(`{"id": "7", "status": "pending", "blockedBy": ["1"], "metadata": {"taskd": {"prompt": "true"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := taskfile.ParseValue(data)
		if err != nil {
			if json.Valid(data) && !bytes.Contains(data, []byte(`"`)) {
				// Without strings there are no duplicate keys or UTF-8
				// issues: the only reason left to reject is nesting depth.
				if bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) <= 256 {
					t.Fatalf("rejected valid JSON %q: %v", data, err)
				}
			}
		} else {
			if !json.Valid(data) {
				t.Fatalf("accepted invalid JSON %q", data)
			}
			enc := taskfile.MarshalIndent(v)
			v2, err := taskfile.ParseValue(enc)
			if err != nil {
				t.Fatalf("cannot parse own output %q: %v", enc, err)
			}
			if enc2 := taskfile.MarshalIndent(v2); !bytes.Equal(enc, enc2) {
				t.Fatalf("encoding not stable:\n%s\n%s", enc, enc2)
			}
		}

		task, err := taskfile.Parse(data, "t.json", "")
		if err != nil {
			return
		}
		out := task.Marshal()
		again, err := taskfile.Parse(out, "t.json", "")
		if err != nil {
			t.Fatalf("cannot parse a marshalled task %q: %v", out, err)
		}
		if again.Changed() {
			t.Fatalf("marshalled task not stable:\n%s\n%s", out, again.Marshal())
		}
		if again.ID != task.ID || again.Status != task.Status && task.Status != "" || len(again.BlockedBy) != len(task.BlockedBy) {
			t.Fatalf("fields changed in a round trip: %+v vs %+v", task, again)
		}
	})
}
