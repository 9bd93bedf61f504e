package eventlog

// Event types: the "type" of each line of a list's events.jsonl.
const (
	DaemonStarted   = "DaemonStarted"
	DaemonStopped   = "DaemonStopped"
	TaskAccepted    = "TaskAccepted"
	TaskRejected    = "TaskRejected"
	TaskStarted     = "TaskStarted"
	StepStarted     = "StepStarted"
	StepFinished    = "StepFinished"
	TaskSucceeded   = "TaskSucceeded"
	TaskFailed      = "TaskFailed"
	TaskTimedOut    = "TaskTimedOut"
	TaskCancelled   = "TaskCancelled"
	TaskInterrupted = "TaskInterrupted"
	TaskRetrying    = "TaskRetrying"
	// TaskPaused: an agent met a usage limit; the task (and its agent
	// profile) resumes at "until". Data: message, profile, until,
	// resetsAt (when the agent named it), sessionId.
	TaskPaused = "TaskPaused"
	// WorktreeRemoved: a task's git worktree was removed when the task
	// was cleaned up (deleted, archived, or ended longer ago than the
	// retention policy keeps); its branch stays. Data: path, branch.
	WorktreeRemoved  = "WorktreeRemoved"
	TaskWaiting      = "TaskWaiting"
	TaskResumed      = "TaskResumed"
	TaskNeedsHuman   = "TaskNeedsHuman"
	HumanResolved    = "HumanResolved"
	ForkStarted      = "ForkStarted"
	JoinCompleted    = "JoinCompleted"
	GuardWarning     = "GuardWarning"
	GuardStopped     = "GuardStopped"
	MessageSent      = "MessageSent"
	MessageDelivered = "MessageDelivered"
	// ListRefused: the list is not served (another user's, writable by
	// others, a link in its .taskd); PathRefused: an operation on a task
	// met a link, or a path outside its list, and was refused. Both carry
	// "error" (and ListRefused "fix"). See docs/security.md.
	ListRefused = "ListRefused"
	PathRefused = "PathRefused"
)

// Events of loops.
const (
	LoopIteration = "LoopIteration"
	LoopExited    = "LoopExited"
)

// Event types of the subagent commands (the subagent commands' names). Their data has
// their fields in snake_case: session_id (the parent task's id),
// subagent_id, agent_type, permission_mode, task_description,
// spawn_timestamp, completion_timestamp, outcome, artifact_paths.
const (
	SubagentSpawned      = "SubagentSpawned"
	SubagentActive       = "SubagentActive"
	SubagentError        = "SubagentError"
	SubagentTimeout      = "SubagentTimeout"
	TranscriptEvent      = "TranscriptEvent"
	HandoffInitiated     = "HandoffInitiated"
	HandoffComplete      = "HandoffComplete"
	HandoffResolved      = "HandoffResolved"
	ConvergenceInitiated = "ConvergenceInitiated"
	ConvergenceComplete  = "ConvergenceComplete"
	ManualReviewRequired = "ManualReviewRequired"
)

// Events of trust: what taskd holds back, what a person decided, and what
// reaches a task's ancestors (docs/architecture.md).
const (
	// TaskHeld: a write the task needs failed (data: reason, retryAt); no
	// agent starts until it works. TaskHoldEnded: it worked.
	TaskHeld      = "TaskHeld"
	TaskHoldEnded = "TaskHoldEnded"
	// TaskCompletedByUser: the task file's status was set to completed
	// while taskd had the task in another state (data: state, the one it
	// had); it never runs again.
	TaskCompletedByUser = "TaskCompletedByUser"
	// ChildNeedsAttention, on a task: a task below it (data: descendant,
	// and child, the one on the way down) needs a person, failed or is
	// held (data: state, reason).
	ChildNeedsAttention = "ChildNeedsAttention"
)
