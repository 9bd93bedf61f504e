//go:build stress

package taskfile_test

// tornReadUpdates is how many updates TestDir_NoTornReads makes under the
// stress tag: go test -tags stress ./taskfile.
const tornReadUpdates = 10000
