// Package workflows holds taskd's built-in workflow definitions, embedded in
// the binary, and loads workflow files in flow's JSON format from user
// directories.
//
// A Set maps workflow ids to definitions. Load builds one from the
// built-ins and then each directory in turn, a later definition of an id
// replacing an earlier one; a directory holds <id>.json files (or
// <id>/workflow.json). Every definition is parsed and validated with
// navigator.Validate as it is loaded, and each one records its file, the
// directory its "./" paths resolve against, and its problems. A definition
// with errors is kept, so that it still shadows the definitions it
// replaces, but it is not navigable: Lookup does not return it and Get
// reports its problems. Loading never fails as a whole; unreadable files
// and directories are problems too.
//
// The package reads files but holds no state between calls; a daemon
// reloads by calling Load again.
package workflows
