// Package docs holds taskd's documentation pages. It has no code of its
// own: its tests keep architecture.md true to the module. They generate
// the package map (from each package's comment and imports, in the layers
// that layers_test.go defines) and the state diagram (from task.Next), and fail
// when a package is missing from the layers, when an import runs upward
// against them, or when the page is out of date:
//
//	go generate ./docs    # or: go test ./docs -run TestArchitecture -update
package docs

//go:generate go test -run TestArchitecture -update
