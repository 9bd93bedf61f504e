module github.com/taskd/taskd

go 1.25.0

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/gofrs/flock v0.13.1
	github.com/google/renameio/v2 v2.0.2
	github.com/kardianos/service v1.3.0
)

require golang.org/x/sys v0.47.0
