//go:build stress

package remote_test

// faultTasks is how many exec tasks the fault scenario runs under the
// stress tag.
const faultTasks = 200
