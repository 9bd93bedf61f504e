package taskfile

import "context"

type lockWaitKey struct{}

// WithLockWait returns a context whose lock waits are reported: a write
// made with it (Update, Create, Swap, Remove) calls fn with the lock's
// path when it finds a lock another writer holds (Claude Code, another
// process, another goroutine) and starts to wait for it, which can take
// as long as the holder keeps it fresh. fn is called from the writing
// goroutine, once per wait, before the wait; it must be quick. A caller
// that holds something others need while it writes (a place in a queue)
// can give it up there.
func WithLockWait(ctx context.Context, fn func(lock string)) context.Context {
	return context.WithValue(ctx, lockWaitKey{}, fn)
}

// lockWait tells ctx's WithLockWait function, if any, that the lock at
// path is held by another writer and is waited for.
func lockWait(ctx context.Context, path string) {
	if fn, ok := ctx.Value(lockWaitKey{}).(func(string)); ok {
		fn(path)
	}
}
