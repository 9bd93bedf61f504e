//go:build !stress

package remote_test

// faultTasks is how many exec tasks the fault scenario runs by default;
// go test -tags stress runs the full 200.
const faultTasks = 40
