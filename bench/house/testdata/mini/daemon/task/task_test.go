package task

import "testing"

func TestRunning(t *testing.T) {
	if Running != "running" {
		t.Fatal(Running)
	}
}
