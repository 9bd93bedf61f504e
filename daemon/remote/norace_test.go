//go:build !race

package remote_test

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
