package eventlog_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/taskd/taskd/daemon/eventlog"
)

// TestEventMarshalJSON: an event's line is, byte for byte, what
// encoding/json writes for its fixed fields followed by Data's keys
// (sorted), whatever its strings hold: quotes, controls, HTML, the line
// separators, bytes that are not UTF-8.
func TestEventMarshalJSON(t *testing.T) {
	at := time.Date(2026, 11, 27, 13, 21, 46, 871210546, time.UTC)
	odd := "a\"b\\c\n\t\x01<script>&amp;\u2028\u2029é\xff\x7f end"
	tests := []eventlog.Event{
		{TS: at, Type: eventlog.TaskAccepted, List: "bench", Task: "1", Data: map[string]any{"subject": "c"}},
		{TS: at, Type: eventlog.DaemonStarted, List: "bench", Data: map[string]any{"pid": 7436}},
		{TS: at, Type: eventlog.TaskSucceeded, List: "bench", Task: "12", Attempt: 3, Data: map[string]any{
			"durationMs": int64(3), "exitCode": 0, "success": true, "summary": "", "z": nil, "list": []string{"x", odd},
			"nested": map[string]any{"b": 1.5, "a": odd},
		}},
		{TS: at.In(time.FixedZone("x", 3600)), Type: eventlog.StepStarted, List: "l", Task: "t", Parent: "p", Step: "s", Attempt: -1},
		{TS: at, Type: odd, List: odd, Task: odd, Parent: odd, Step: odd, Attempt: math.MaxInt, Data: map[string]any{odd: odd}},
		{Type: "", List: "", Data: map[string]any{}},
	}
	// Each byte or character that encoding/json writes otherwise than
	// as itself, alone in a plain string, in each field.
	for _, c := range []string{`"`, `\\`, "<", ">", "&", "\n", "\x01", "\x1f", "\x7f", "é", "\xff", "\u2028", "\u2029", "\ufffd"} {
		s := "a" + c + "b"
		tests = append(tests,
			eventlog.Event{TS: at, Type: s, List: "l"},
			eventlog.Event{TS: at, Type: "t", List: s},
			eventlog.Event{TS: at, Type: "t", List: "l", Task: s, Parent: s, Step: s})
	}
	for _, ev := range tests {
		got, err := ev.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON(%+v): %v", ev, err)
		}
		want := referenceJSON(t, ev)
		if string(got) != string(want) {
			t.Errorf("MarshalJSON:\n got %s\nwant %s", got, want)
		}
		line, err := json.Marshal(ev)
		if err != nil || string(line) != string(want) {
			t.Errorf("json.Marshal: %s, %v\nwant %s", line, err, want)
		}
	}
}

// TestEventMarshalJSON_Errors: an event encoding/json cannot write is
// refused as it refuses it: a time out of its range, a value with no
// JSON form.
func TestEventMarshalJSON_Errors(t *testing.T) {
	tests := []eventlog.Event{
		{TS: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Type: eventlog.TaskStarted, List: "l"},
		{TS: time.Now(), Type: eventlog.TaskStarted, List: "l", Data: map[string]any{"f": func() {}}},
	}
	for _, ev := range tests {
		_, want := json.Marshal(ev)
		if want == nil {
			t.Fatalf("json.Marshal(%+v): no error, want one", ev)
		}
		if _, err := ev.MarshalJSON(); err == nil {
			t.Errorf("MarshalJSON(%+v): no error, want one", ev)
		}
	}
}

// referenceJSON is an event's line as encoding/json writes it, field by
// field: the fixed fields as a struct, Data as a map, joined.
func referenceJSON(t *testing.T, e eventlog.Event) []byte {
	t.Helper()
	type fixed eventlog.Event
	head, err := json.Marshal(fixed(e))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Data) == 0 {
		return head
	}
	tail, err := json.Marshal(e.Data)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(head[:len(head)-1], ','), tail[1:]...)
}

// BenchmarkEventMarshalJSON: the line of a eventlog.TaskSucceeded event, as
// Append writes it, and as encoding/json's reflection writes it (the
// fixed fields, Data, and the check of the joined line json.Marshal made
// of an event's MarshalJSON).
func BenchmarkEventMarshalJSON(b *testing.B) {
	ev := eventlog.Event{TS: time.Now(), Type: eventlog.TaskSucceeded, List: "bench", Task: "12", Attempt: 1,
		Data: map[string]any{"durationMs": int64(3), "exitCode": 0, "success": true, "summary": ""}}
	b.Run("event", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ev.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reflection", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			type fixed eventlog.Event
			head, _ := json.Marshal(fixed(ev))
			tail, _ := json.Marshal(ev.Data)
			line := append(append(head[:len(head)-1], ','), tail[1:]...)
			if _, err := json.Marshal(json.RawMessage(line)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
