package worker

import (
	"slices"
	"testing"
)

func TestMapPath(t *testing.T) {
	maps := []Mapping{{"/home/ann", "/srv/ann"}, {"/home/ann/src", "/work/src"}, {"/data", "/mnt/data"}}
	tests := []struct{ path, want string }{
		{"/home/ann", "/srv/ann"},
		{"/home/ann/notes", "/srv/ann/notes"},
		{"/home/ann/src/app", "/work/src/app"}, // the longest FROM wins
		{"/home/anna", "/home/anna"},           // a FROM is a whole directory
		{"/data", "/mnt/data"},
		{"/elsewhere", "/elsewhere"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := mapPath(maps, tt.path); got != tt.want {
			t.Errorf("mapPath(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestParseMapping(t *testing.T) {
	tests := []struct {
		in      string
		want    Mapping
		wantErr bool
	}{
		{"/a=/b", Mapping{"/a", "/b"}, false},
		{"/a/=/b/c/", Mapping{"/a", "/b/c"}, false},
		{"a=/b", Mapping{}, true},
		{"/a", Mapping{}, true},
		{"/a=b", Mapping{}, true},
	}
	for _, tt := range tests {
		got, err := ParseMapping(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseMapping(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseProfiles(t *testing.T) {
	if got, want := ParseProfiles(" claude, exec,,exec "), []string{"claude", "exec"}; !slices.Equal(got, want) {
		t.Errorf("ParseProfiles = %q, want %q", got, want)
	}
}
