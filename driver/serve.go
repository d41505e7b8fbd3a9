package driver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/endpoint"
)

// Resource bounds applied when the Options leave them 0.
const (
	// DefaultMaxMessageBytes bounds a request: about 50k CIDR blocks, far
	// more than a fence needs. A larger message is refused from its 5-byte
	// gRPC length prefix, before it is read or decoded.
	DefaultMaxMessageBytes = 1 << 20
	// DefaultMaxStreams bounds concurrent RPCs per client connection.
	DefaultMaxStreams = 16
	// DefaultMaxInFlight bounds RPCs executing at once, over all
	// connections; more are refused with RESOURCE_EXHAUSTED.
	DefaultMaxInFlight = 64
)

// TLSFiles names the PEM files of the TCP endpoint's TLS: a server
// certificate and key, and optionally the CA that client certificates must
// chain to (then a client certificate is required).
type TLSFiles struct {
	Cert, Key, ClientCA string
}

func (t TLSFiles) enabled() bool { return t.Cert != "" || t.Key != "" || t.ClientCA != "" }

// config loads the files; errors name the file, never its content.
func (t TLSFiles) config() (*tls.Config, error) {
	if t.Cert == "" || t.Key == "" {
		return nil, errors.New("TLS needs both a certificate and a key file")
	}
	cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s / key %s: %w", t.Cert, t.Key, err)
	}
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if t.ClientCA != "" {
		pem, err := os.ReadFile(t.ClientCA)
		if err != nil {
			return nil, fmt.Errorf("TLS client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TLS client CA %s: no PEM certificate in it", t.ClientCA)
		}
		c.ClientCAs, c.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return c, nil
}

// serverOptions builds the gRPC server options: bounds, TLS on TCP, and the
// interceptors (in-flight bound first, so a refused call costs nothing more).
// network is the endpoint's scheme.
func (d *Driver) serverOptions(network string) ([]grpc.ServerOption, error) {
	maxMsg := d.o.MaxMessageBytes
	if maxMsg <= 0 {
		maxMsg = DefaultMaxMessageBytes
	}
	streams := d.o.MaxStreams
	if streams <= 0 {
		streams = DefaultMaxStreams
	}
	inFlight := d.o.MaxInFlight
	if inFlight <= 0 {
		inFlight = DefaultMaxInFlight
	}
	d.slots = make(chan struct{}, inFlight)
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(maxMsg),
		grpc.MaxConcurrentStreams(uint32(streams)),
		grpc.ChainUnaryInterceptor(d.boundInterceptor, d.recoverInterceptor, d.logInterceptor),
	}
	switch {
	case d.o.TLS.enabled() && network != endpoint.TCP:
		return nil, errors.New("TLS applies to tcp:// endpoints; a unix socket is protected by its file mode")
	case d.o.TLS.enabled():
		c, err := d.o.TLS.config()
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(c)))
	case network == endpoint.TCP:
		d.log.Warn("the TCP endpoint is plaintext: secrets cross the network in the clear; set TLS (--tls-cert, --tls-key)")
	}
	return opts, nil
}

// boundInterceptor refuses a call when DefaultMaxInFlight (or the option)
// calls are already running.
func (d *Driver) boundInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	select {
	case d.slots <- struct{}{}:
		defer func() { <-d.slots }()
		return h(ctx, req)
	default:
		return nil, status.Error(codes.ResourceExhausted, "too many calls in flight; retry later")
	}
}
