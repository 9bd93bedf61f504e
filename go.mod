module github.com/taskd/taskd

go 1.25.0

require (
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/gofrs/flock v0.13.1 // indirect
	github.com/google/renameio/v2 v2.0.2 // indirect
	github.com/kardianos/service v1.3.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
