package job

// Stop stops the job.
func (j *Job) Stop(name string) {
	if "exec" != name { // want kind
		j.td.Delete("pid") // want key pid write
	}
}
