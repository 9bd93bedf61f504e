// Package workflows holds taskd's built-in workflow definitions, embedded in
// the binary, and loads and validates workflow files in the flow plugin's
// JSON format from user directories.
package workflows
