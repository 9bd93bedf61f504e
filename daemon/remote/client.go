package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A Client is what the coordinator and the workers of a prefix share: it
// publishes on the run subjects, signing what it publishes, and reads the
// last message of a run subject. It needs no administration of the
// streams: a worker's permissions are enough (docs/distributed.md).
type Client struct {
	Prefix string
	Conn   *Conn
	JS     jetstream.JetStream
	Signer *Signer
}

// NewClient returns a client of prefix on nc that signs with s.
func NewClient(nc *Conn, prefix string, s *Signer) (*Client, error) {
	js, err := jetstream.New(nc.Conn)
	if err != nil {
		return nil, err
	}
	return &Client{Prefix: prefix, Conn: nc, JS: js, Signer: s}, nil
}

// requestTimeout bounds one request to the server.
const requestTimeout = 5 * time.Second

// PublishMsg signs m and publishes it to its stream, waiting until the
// stream has stored it.
func (c *Client) PublishMsg(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	c.Signer.Sign(m)
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	ack, err := c.JS.PublishMsg(ctx, m, opts...)
	return ack, c.Conn.Explain(err)
}

// A Message is what Publish sends on a run subject: Data, with Header
// (nil: none). A non-empty ID de-duplicates it: the stream keeps one
// message with that id and the same signature (msgID).
type Message struct {
	Data   []byte
	ID     string
	Header nats.Header
}

// Publish publishes msg on the run subject kind of attempt id and waits
// for the stream to store it; dup reports that the stream already had a
// message with msg's ID.
func (c *Client) Publish(ctx context.Context, id, kind string, msg Message) (dup bool, err error) {
	m := &nats.Msg{Subject: runSubject(c.Prefix, id, kind), Data: msg.Data, Header: msg.Header}
	var opts []jetstream.PublishOpt
	if msg.ID != "" {
		c.Signer.Sign(m)
		opts = append(opts, jetstream.WithMsgID(msgID(msg.ID, m)))
	}
	ack, err := c.PublishMsg(ctx, m, opts...)
	if err != nil {
		return false, fmt.Errorf("publish %s of attempt %s: %w", kind, id, err)
	}
	return ack.Duplicate, nil
}

// msgID is the message id of signed message m, id and the start of its
// signature: the same message sent again has the same, and nobody without
// the signing key can store a message with it first — the runs stream
// de-duplicates ids across its subjects, which any worker's credentials
// may publish on, so an id anyone can guess could have a worker's End
// dropped as a duplicate.
func msgID(id string, m *nats.Msg) string {
	sig := m.Header.Get(SigHeader)
	return id + "." + sig[:min(len(sig), 22)]
}

// Last returns the last message on the run subject kind of attempt id,
// or nil if there is none. It asks the runs stream directly (its
// AllowDirect is set), so that a worker needs permission for exactly the
// subjects it may read.
func (c *Client) Last(ctx context.Context, id, kind string) (*nats.Msg, error) {
	return c.lastOf(ctx, runsStream(c.Prefix), runSubject(c.Prefix, id, kind))
}

// lastOf returns the last message of stream on subject (nil if none).
func (c *Client) lastOf(ctx context.Context, stream, subject string) (*nats.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	m, err := c.Conn.RequestWithContext(ctx, "$JS.API.DIRECT.GET."+stream+"."+subject, nil)
	if err != nil {
		return nil, c.Conn.Explain(fmt.Errorf("read the last message on %s: %w", subject, err))
	}
	switch status := m.Header.Get("Status"); status {
	case "":
		m.Subject = subject
		return m, nil
	case "404":
		return nil, nil
	default:
		code, _ := strconv.Atoi(status)
		return nil, fmt.Errorf("read the last message on %s: %s %s", subject, status, http.StatusText(code))
	}
}

// WrongLastSeq reports whether err is a stream's refusal of a message
// published with an expected last sequence that was not the last: the
// subject has moved on (another worker claimed the attempt, another
// coordinator wrote the lock).
func WrongLastSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
