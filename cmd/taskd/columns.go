package main

import "github.com/taskd/taskd/internal/termtext"

// The measures of package termtext, by the names the views of this
// package use.
var (
	clean    = termtext.Clean
	width    = termtext.Width
	fitWidth = termtext.FitWidth
	pad      = termtext.Pad
	padLeft  = termtext.PadLeft
	wrap     = termtext.Wrap
	fit      = termtext.Fit
	fitLeft  = termtext.FitLeft
)
