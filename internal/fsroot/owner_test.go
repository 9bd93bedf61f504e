package fsroot_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taskd/taskd/internal/fsroot"
)

func TestCheckPrivate(t *testing.T) {
	tests := []struct {
		name    string
		mode    os.FileMode
		foreign bool
		want    error // nil: private
		fix     string
	}{
		{"private", 0o700, false, nil, ""},
		{"readable by others", 0o755, false, nil, ""},
		{"group writable", 0o770, false, fsroot.ErrWritable, "chmod go-w "},
		{"world writable", 0o777, false, fsroot.ErrWritable, "chmod go-w "},
		{"another user's, private", 0o700, true, fsroot.ErrNotOwned, "chown "},
		{"another user's, open", 0o755, true, fsroot.ErrNotOwned, "chown "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "list")
			os.Mkdir(p, 0o700)
			os.Chmod(p, tt.mode)
			if tt.foreign {
				if os.Geteuid() != 0 {
					t.Skip("needs root to chown")
				}
				if err := os.Chown(p, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			err := fsroot.CheckPrivate(p)
			if tt.want == nil {
				if err != nil {
					t.Errorf("CheckPrivate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.want) || !errors.Is(err, fsroot.ErrUnsafe) {
				t.Errorf("CheckPrivate = %v, want %v and ErrUnsafe", err, tt.want)
			}
			if err != nil && !strings.Contains(err.Error(), tt.fix+p) && !strings.Contains(err.Error(), tt.fix) {
				t.Errorf("CheckPrivate = %v, want the fix %q", err, tt.fix)
			}
		})
	}
}
