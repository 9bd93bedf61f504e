//go:build !stress

package taskfile_test

// tornReadUpdates is how many updates TestDir_NoTornReads makes in the
// default test run; go test -tags stress makes ten times as many.
const tornReadUpdates = 1000
