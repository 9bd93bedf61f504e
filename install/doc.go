// Package install installs taskd as a per-user service: a systemd --user
// unit on Linux, a launchd agent on macOS. It is the only package that uses
// github.com/kardianos/service.
package install
