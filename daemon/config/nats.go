package config

import (
	"fmt"
	"regexp"
	"time"
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
	// AckWait is how long a worker may stay silent before its attempts go
	// to another worker ("30s" unless set). Workers create the consumers,
	// so a worker's --ack-wait wins over this; it is here for workers
	// that read this file.
	AckWait string `json:"ackWait,omitempty"`
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
	if n.AckWait != "" {
		if d, err := time.ParseDuration(n.AckWait); err != nil || d < time.Second {
			return fmt.Errorf("nats.ackWait %q is not a duration of at least a second, such as \"30s\"", n.AckWait)
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
