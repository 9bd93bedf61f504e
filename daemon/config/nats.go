package config

import (
	"fmt"
	"regexp"
	"time"

	"github.com/nats-io/nkeys"
)

// NATS is the "nats" section of the configuration file: where the NATS
// server with JetStream is, how to authenticate to it, and which attempts
// stay on this machine. docs/distributed.md documents every key.
//
//	"nats": {"url": "tls://nats.example.com:4222",
//	         "creds": "~/.config/taskd/taskd.creds",
//	         "tls": {"ca": "ca.pem", "cert": "client.pem", "key": "client-key.pem"},
//	         "local": ["exec", "nightly"]}
//
// A configuration without a url (and a daemon started without --nats) runs
// every agent on this machine, as if the section were absent.
type NATS struct {
	// URL is the server's address (nats://, tls://), or several separated
	// by commas.
	URL string `json:"url,omitempty"`
	// Creds is a credentials file (a user JWT and its nkey seed); NKey an
	// nkey seed file; User and Password, or Token, the other ways a server
	// may ask a client to log in.
	Creds    string `json:"creds,omitempty"`
	NKey     string `json:"nkey,omitempty"`
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
	Token    string `json:"token,omitempty"`
	TLS      *TLS   `json:"tls,omitempty"`
	// Prefix names the subjects (<prefix>.work.…, <prefix>.run.…) and
	// streams (<PREFIX>_WORK, <PREFIX>_RUNS) taskd uses: "taskd" unless
	// set. Coordinators and workers that work together use the same.
	Prefix string `json:"prefix,omitempty"`
	// Local lists profiles and lists whose attempts run on this machine
	// instead of on a worker: an entry names a profile or a list.
	Local []string `json:"local,omitempty"`
	// AckWait is how long a worker may take to claim an attempt it was
	// given before the server gives it to another ("30s" unless set). The
	// coordinator makes the consumers with it.
	AckWait string `json:"ackWait,omitempty"`

	// SigningKey is the file of this process's nkey seed (taskd keygen
	// makes one): the coordinator signs its attempts with it, a worker
	// its reports. A worker without one makes its own in its state
	// directory.
	SigningKey string `json:"signingKey,omitempty"`
	// WorkerKeys are, on the coordinator, the public keys of the workers
	// whose reports it accepts.
	WorkerKeys []string `json:"workerKeys,omitempty"`
	// CoordinatorKeys are, on a worker, the public keys of the
	// coordinators whose attempts it runs.
	CoordinatorKeys []string `json:"coordinatorKeys,omitempty"`
	// LostAfter is how long the coordinator waits, while it is connected,
	// for a heartbeat of a worker that holds an attempt before it records
	// the attempt lost ("30s" unless set).
	LostAfter string `json:"lostAfter,omitempty"`
	// Heartbeat is how often a worker that reads this file says it is
	// alive ("5s" unless set).
	Heartbeat string `json:"heartbeat,omitempty"`
}

// TLS is how a client reaches a server over TLS: the CA that signed the
// server's certificate (else the system's), and a client certificate and
// key when the server asks for one.
type TLS struct {
	CA         string `json:"ca,omitempty"`
	Cert       string `json:"cert,omitempty"`
	Key        string `json:"key,omitempty"`
	ServerName string `json:"serverName,omitempty"`
}

// DefaultNATSPrefix and DefaultAckWait are the NATS settings a
// configuration leaves out.
const (
	DefaultNATSPrefix = "taskd"
	DefaultAckWait    = 30 * time.Second
	DefaultLostAfter  = 30 * time.Second
	DefaultHeartbeat  = 5 * time.Second
)

// natsPrefix is what a prefix may be: one subject token, also usable in a
// stream name.
var natsPrefix = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

func (n *NATS) validate() error {
	if n == nil {
		return nil
	}
	if n.Prefix != "" && !natsPrefix.MatchString(n.Prefix) {
		return fmt.Errorf("nats.prefix %q must be 1 to 32 letters, digits, - or _", n.Prefix)
	}
	for _, d := range []struct {
		key, value string
		least      time.Duration
	}{{"ackWait", n.AckWait, time.Second}, {"lostAfter", n.LostAfter, time.Second}, {"heartbeat", n.Heartbeat, 100 * time.Millisecond}} {
		if d.value == "" {
			continue
		}
		if v, err := time.ParseDuration(d.value); err != nil || v < d.least {
			return fmt.Errorf("nats.%s %q is not a duration of at least %s, such as \"30s\"", d.key, d.value, d.least)
		}
	}
	for _, keys := range []struct {
		key  string
		list []string
	}{{"workerKeys", n.WorkerKeys}, {"coordinatorKeys", n.CoordinatorKeys}} {
		for _, k := range keys.list {
			if !nkeys.IsValidPublicKey(k) {
				return fmt.Errorf("nats.%s: %q is not a public nkey (taskd keygen FILE prints one)", keys.key, k)
			}
		}
	}
	if n.TLS != nil && (n.TLS.Cert == "") != (n.TLS.Key == "") {
		return fmt.Errorf("nats.tls: cert and key go together; give both or neither")
	}
	if n.Token != "" && (n.User != "" || n.Creds != "" || n.NKey != "") {
		return fmt.Errorf("nats: token excludes user, creds and nkey; give one way to log in")
	}
	return nil
}

// PrefixOr returns the prefix, or the default.
func (n *NATS) PrefixOr() string {
	if n == nil || n.Prefix == "" {
		return DefaultNATSPrefix
	}
	return n.Prefix
}

// AckWaitOr returns the ack wait, or the default.
func (n *NATS) AckWaitOr() time.Duration {
	if n == nil {
		return DefaultAckWait
	}
	return durationOr(n.AckWait, DefaultAckWait)
}

// LostAfterOr returns the time after which a silent worker is lost, or
// the default.
func (n *NATS) LostAfterOr() time.Duration {
	if n == nil {
		return DefaultLostAfter
	}
	return durationOr(n.LostAfter, DefaultLostAfter)
}

// HeartbeatOr returns a worker's heartbeat interval, or the default.
func (n *NATS) HeartbeatOr() time.Duration {
	if n == nil {
		return DefaultHeartbeat
	}
	return durationOr(n.Heartbeat, DefaultHeartbeat)
}
