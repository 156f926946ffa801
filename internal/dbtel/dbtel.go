package dbtel

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
)

// The conventions' attribute keys every database span of redcheck carries.
const (
	System     = attribute.Key("db.system.name")
	Operation  = attribute.Key("db.operation.name")
	Procedure  = attribute.Key("db.stored_procedure.name")
	Status     = attribute.Key("db.response.status_code")
	ServerAddr = attribute.Key("server.address")
	ServerPort = attribute.Key("server.port")
	ErrorType  = attribute.Key("error.type")
)

// The descriptions of the metrics the saver and the store share: one text
// each, so that an exporter that merges the two scopes (Prometheus) sees
// no conflict.
const (
	DurationDescription = "Duration of redcheck's operations (the saver's and the store's), each call one data point; a List's leaves out the time its caller spends between tuples."
	DataLossDescription = "Lost data redcheck detected: calls that failed with checkpoint.ErrDataLoss (ErrPrefixReset included), and violations the saver's Verify found."
)

// DurationBuckets are the bucket bounds, in seconds, that the database
// conventions advise for db.client.operation.duration.
var DurationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

// ServerAttrs are server.address and server.port of a *redis.Client with
// one address; none for a Cluster, a ring or a failover client.
func ServerAttrs(rdb redis.UniversalClient) []attribute.KeyValue {
	c, ok := rdb.(*redis.Client)
	if !ok {
		return nil
	}
	o := c.Options()
	switch {
	case o.Addr == "" || o.Addr == "FailoverClient":
		return nil
	case o.Network == "unix":
		return []attribute.KeyValue{ServerAddr.String(o.Addr)}
	}
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return []attribute.KeyValue{ServerAddr.String(o.Addr)}
	}
	out := []attribute.KeyValue{ServerAddr.String(host)}
	if p, err := strconv.Atoi(port); err == nil {
		out = append(out, ServerPort.Int(p))
	}
	return out
}

// RedisStatus is the prefix of the error Redis answered ("ERR", "OOM",
// "READONLY"...), "" when err holds none.
func RedisStatus(err error) string {
	var re redis.Error
	if !errors.As(err, &re) || errors.Is(err, redis.Nil) {
		return ""
	}
	code := re.Error()
	if i := strings.IndexByte(code, ' '); i >= 0 {
		code = code[:i]
	}
	if code == "" || len(code) > 32 || strings.TrimLeft(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != "" {
		return "ERR"
	}
	return code
}

// IsNetwork reports a connection error: a net.Error, or a connection
// closed midway (io.EOF, io.ErrUnexpectedEOF).
func IsNetwork(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// The error.type values every package gives the errors none of its own
// sentinels names.
const (
	KindCanceled = "canceled"
	KindDeadline = "deadline_exceeded"
	KindNetwork  = "network"
	KindOther    = "_OTHER"
)

// ErrorKind is the error.type of an error that none of a package's own
// sentinels names: a canceled or expired context, the status Redis
// answered (RedisStatus), a connection error, or KindOther.
func ErrorKind(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return KindDeadline
	}
	if code := RedisStatus(err); code != "" {
		return code
	}
	if IsNetwork(err) {
		return KindNetwork
	}
	return KindOther
}

// Redacted stands, in a span, for an error of kind Kind whose message may
// quote a value; Pkg names the package that withheld it.
type Redacted struct{ Pkg, Kind string }

func (r Redacted) Error() string {
	return r.Pkg + ": " + strings.ReplaceAll(r.Kind, "_", " ") + " (the message is withheld: it may quote a value)"
}
