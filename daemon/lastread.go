package daemon

import "github.com/taskd/taskd/taskfile"

// maxLastReads bounds the task files a list keeps as the loop last read
// them (lastRead): past it they are forgotten all at once, and the jobs
// of those tasks read their files themselves.
const maxLastReads = 256

// keepRead keeps tf, task id's file as the loop has just read (or, a job
// having written it, known) it, for the job the loop may start on the
// task: the job starts from it instead of reading the file again
// (handRead). While a job works on the task nothing is kept: its writes
// are the job's, and its report is kept when it ends.
func (l *list) keepRead(id string, e *entry, tf *taskfile.Task) {
	if tf == nil || e == nil || e.job != nil || !e.owned {
		delete(l.lastRead, id)
		return
	}
	if l.lastRead == nil || len(l.lastRead) >= maxLastReads {
		l.lastRead = map[string]*taskfile.Task{}
	}
	l.lastRead[id] = tf
}

// handRead gives job j, about to start on task id of entry e, the file as
// the loop last read it, if that is what the loop acted on (its bytes
// hash to e's). The job decides on those bytes, and its first write
// starts from them: a file changed since is found under the write's
// locks (taskfile.Dir.UpdateFrom) and read again. A job that waits for
// its slot before it starts reads the file itself when it has the slot.
// The job gets its own parse of the bytes: the loop's stays the loop's.
func (l *list) handRead(id string, e *entry, j *work, waits bool) {
	tf, ok := l.lastRead[id]
	delete(l.lastRead, id)
	if !ok || waits || tf.ID != id || hashBytes(tf.Raw()) != e.hash {
		return
	}
	if t, err := taskfile.Parse(tf.Raw(), l.Dir.File(id), id); err == nil {
		j.Seen = t
	}
}
