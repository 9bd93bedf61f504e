package install

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kardianos/service"
)

// Status is what Service.Status reports.
type Status struct {
	File      string // the unit or plist file
	Installed bool   // File exists
	Running   bool   // the service manager says the service runs
	Detail    string // what the manager said, when it was neither "running" nor "stopped"
	Logs      string // how to read the service's logs
}

// Status reports whether the service is installed and running. It fails
// when run as root and when there is no service manager (an error
// wrapping ErrNoServiceManager).
func (s *Service) Status(ctx context.Context) (Status, error) {
	st, _, err := s.status(ctx)
	return st, err
}

// status is Status, also returning the manager it asked.
func (s *Service) status(ctx context.Context) (Status, manager, error) {
	st := Status{File: s.plat.file(), Logs: s.plat.logs()}
	if s.euid == 0 {
		return st, nil, errRoot
	}
	m, err := s.manager(ctx, nil, "")
	if err != nil {
		return st, nil, err
	}
	st.Installed = s.exists(st.File)
	ks, err := m.Status()
	switch {
	case err == nil:
		st.Running = ks == service.StatusRunning
	case errors.Is(err, service.ErrNotInstalled):
		if st.Installed {
			st.Detail = "the service manager does not know it; 'taskd install' installs it again"
		}
	default:
		st.Detail = err.Error()
	}
	return st, m, nil
}

func (s *Service) notInstalled() error {
	return fmt.Errorf("%w (there is no %s); install it with 'taskd install'", ErrNotInstalled, s.plat.file())
}

// Start starts the installed service, and reports to w what it did. It
// fails with an error wrapping ErrNotInstalled when the service is not
// installed, and like Status.
func (s *Service) Start(ctx context.Context, w io.Writer) error {
	st, m, err := s.status(ctx)
	if err != nil {
		return err
	}
	if !st.Installed {
		return s.notInstalled()
	}
	if st.Running {
		fmt.Fprintln(w, "The taskd service is already running.")
		return nil
	}
	if err := s.plat.start(ctx, m); err != nil {
		return fmt.Errorf("start the service (its logs: %s): %w", s.plat.logs(), err)
	}
	fmt.Fprintln(w, "Started the taskd service.")
	return nil
}

// Stop stops the service until the next Start, login or boot. It fails
// with an error wrapping ErrNotInstalled when the service is not
// installed, and like Status.
func (s *Service) Stop(ctx context.Context, w io.Writer) error {
	st, m, err := s.status(ctx)
	if err != nil {
		return err
	}
	if !st.Installed {
		return s.notInstalled()
	}
	if !st.Running {
		fmt.Fprintln(w, "The taskd service is not running.")
		return nil
	}
	if err := s.plat.stop(ctx, m); err != nil {
		return fmt.Errorf("stop the service: %w", err)
	}
	fmt.Fprintln(w, "Stopped the taskd service.")
	return nil
}

// Uninstall stops the service and removes it, and reports to w what it
// did. A service that is not installed is not an error. It fails like
// Status, and when the manager fails to remove the service.
func (s *Service) Uninstall(ctx context.Context, w io.Writer) error {
	st, m, err := s.status(ctx)
	if err != nil {
		return err
	}
	if !st.Installed {
		fmt.Fprintf(w, "The taskd service is not installed (there is no %s); nothing to do.\n", st.File)
		return nil
	}
	if st.Running {
		if err := s.plat.stop(ctx, m); err != nil {
			return fmt.Errorf("stop the service: %w", err)
		}
	}
	if err := m.Uninstall(); err != nil {
		return fmt.Errorf("remove %s %s: %w", s.plat.kind(), st.File, err)
	}
	fmt.Fprintf(w, "Stopped and removed the taskd service: %s\n", st.File)
	return nil
}
