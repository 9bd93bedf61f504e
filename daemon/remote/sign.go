package remote

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/taskd/taskd/internal/fsroot"
)

// Every message of a prefix is signed by the process that publishes it,
// with an ed25519 key (an nkey): the coordinator signs work and cancels,
// a worker its claims, output, ends and heartbeats. A worker runs only
// work signed by a key of its nats.coordinatorKeys; the coordinator takes
// only reports signed by a key of its nats.workerKeys, and of an attempt
// only those signed by the key of the worker that claimed it. The
// signature covers the subject, the offset header and the data, so that a
// signed message cannot be replayed as another attempt's or at another
// offset.

// The headers of a signed message.
const (
	KeyHeader = "Taskd-Key" // the signer's public key
	SigHeader = "Taskd-Sig" // the signature, base64 (URL alphabet, no padding)
)

// A Signer signs with one key. It is safe for concurrent use.
type Signer struct {
	kp  nkeys.KeyPair
	pub string
}

// LoadSigner reads the seed file path (as taskd keygen writes it). A file
// that others than its owner may read is refused, as ssh refuses such a
// key.
func LoadSigner(path string) (*Signer, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w; make one with taskd keygen %s", err, path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("signing key %s: others than its owner may read it (mode %o); chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	data, err := fsroot.ReadRegular(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	kp, err := nkeys.FromSeed(bytes.TrimSpace(data))
	if err != nil {
		return nil, fmt.Errorf("signing key %s is not an nkey seed (taskd keygen makes one): %w", path, err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return &Signer{kp: kp, pub: pub}, nil
}

// Keygen makes a new seed file at path, readable by its owner only, and
// returns its public key; if path holds a seed already, it returns that
// seed's public key and made is false.
func Keygen(path string) (pub string, made bool, err error) {
	if s, err := LoadSigner(path); err == nil {
		return s.pub, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", false, err
	}
	seed, _ := kp.Seed()
	pub, _ = kp.PublicKey()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, err
	}
	f, err := fsroot.OpenRegular(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, err
	}
	if _, err := f.Write(append(seed, '\n')); err != nil {
		f.Close()
		return "", false, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", false, err
	}
	return pub, true, f.Close()
}

// PublicKey is the signer's public key.
func (s *Signer) PublicKey() string { return s.pub }

// Sign signs m, setting its key and signature headers.
func (s *Signer) Sign(m *nats.Msg) {
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	sig, _ := s.kp.Sign(signed(m.Subject, m.Header.Get(OffsetHeader), m.Data))
	m.Header.Set(KeyHeader, s.pub)
	m.Header.Set(SigHeader, base64.RawURLEncoding.EncodeToString(sig))
}

func signed(subject, offset string, data []byte) []byte {
	b := make([]byte, 0, len(subject)+len(offset)+len(data)+2)
	b = append(b, subject...)
	b = append(b, '\n')
	b = append(b, offset...)
	b = append(b, '\n')
	return append(b, data...)
}

// Trust is the set of public keys whose signatures are accepted.
type Trust map[string]bool

// NewTrust checks keys, public nkeys, and returns them as a Trust; what
// names them in an error.
func NewTrust(what string, keys []string) (Trust, error) {
	t := Trust{}
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if !nkeys.IsValidPublicKey(k) {
			return nil, fmt.Errorf("%s: %q is not a public nkey (taskd keygen prints one)", what, k)
		}
		t[k] = true
	}
	return t, nil
}

// Errors of Verify.
var (
	ErrUnsigned  = errors.New("the message is not signed")
	ErrUntrusted = errors.New("the message is signed by a key that is not trusted")
	ErrBadSig    = errors.New("the message's signature does not verify")
)

// Verify checks the signature of a message on subject with headers hdr
// and data, and returns the key that signed it: a key of t.
func (t Trust) Verify(subject string, hdr nats.Header, data []byte) (string, error) {
	key, sig := hdr.Get(KeyHeader), hdr.Get(SigHeader)
	if key == "" || sig == "" {
		return "", ErrUnsigned
	}
	if !t[key] {
		return key, fmt.Errorf("%w: %s", ErrUntrusted, key)
	}
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return key, ErrBadSig
	}
	kp, err := nkeys.FromPublicKey(key)
	if err != nil {
		return key, ErrBadSig
	}
	if kp.Verify(signed(subject, hdr.Get(OffsetHeader), data), raw) != nil {
		return key, ErrBadSig
	}
	return key, nil
}

// expandHome is p with a leading ~/ made home.
func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return p
}
