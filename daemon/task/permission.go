package task

// PermissionModes are the modes, narrowest first.
var PermissionModes = []string{"plan", "default", "acceptEdits", "bypassPermissions"}

// ModeRank orders the permission modes.
var ModeRank = map[string]int{"plan": 0, "default": 1, "acceptEdits": 2, "bypassPermissions": 3}

// DefaultMode is the effective mode of a task without permissionMode.
const DefaultMode = "default"
