// Package install installs taskd as a per-user service: a systemd --user
// unit on Linux (~/.config/systemd/user/taskd.service), a launchd agent on
// macOS (~/Library/LaunchAgents/com.github.taskd.taskd.plist). It is the
// only package that uses github.com/kardianos/service.
//
// The service execs the installed taskd binary directly, as
// "<absolute path>/taskd run --root DIR [--config FILE]", with nothing
// else set: on Linux it is wanted by default.target, restarted on failure
// after 5 seconds and logs to the journal; on macOS it runs at load, is
// kept alive and logs to ~/Library/Logs/taskd/. The unit and plist come
// from taskd's own templates (in kardianos/service v1.3.0's template
// syntax), not from kardianos's defaults, which are made for system
// services.
//
// The contract:
//
//   - Nothing is installed for root (euid 0), nor for a binary that 'go run'
//     built in a temporary directory; the error says what to do instead.
//   - Where there is no service manager for a user service (no systemd
//     user instance, as in most containers), every operation fails with an
//     error wrapping ErrNoServiceManager whose text says why and how to run
//     'taskd run' without one.
//   - Install is idempotent: an installed service is stopped, removed,
//     installed again and started, so that installing after an upgrade
//     runs the new binary with the new unit.
//   - DryRun shows the file and the commands Install would run, and changes
//     nothing. The file it shows is the one Install writes, byte for byte.
//   - Uninstall stops and removes the service; when it is not installed
//     there is nothing to do and no error.
//
// Rendering is pure (a binary path and flags give the file's text) and is
// tested with golden files; acting goes through a small interface that
// kardianos's service satisfies, and through a runner for the commands
// kardianos does not run (the lingering check, launchctl bootstrap), so
// that both can be tested without a service manager.
package install
